# t-export.sh - export and verify: signed evidence files, checked by
# minisign, jq and the JSON schema, and by verify's consistency check.
V=german-numeric-logistic
SCHEMA=$FIX/evidence/predicate-v4.schema.json
JSONSCHEMA=/usr/bin/jsonschema
jq_out() { jq -e "$1" out > /dev/null; }
valid_schema() { "$JSONSCHEMA" -i "$1" "$SCHEMA" > /dev/null 2>&1; }
# The key as minisign signs with it, for re-signed edits.
resign() { minisign -S -s k.key -m "$1" -t "$2" > /dev/null 2>&1; }
tcomment() { sed -n '3s/^trusted comment: //p' "$1"; }

ok "minisign installed" command -v minisign
ok "jq installed" command -v jq
ok "jsonschema installed (python3-jsonschema)" test -x "$JSONSCHEMA"

# A store with one audited version, and a key pair.
run 0 $RBA init
run 0 $RBA snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA register "$FIX/pins/german-numeric-logistic.yaml" --policy "$FIX/policy/credit.yaml"
head -n 60 "$FIX/german-credit-numeric.csv" > cases.csv
run 0 $RBA sample add $V cases.csv
run 0 $RBA audit $V
run 0 $RBA keygen -o k

# ---- export: the evidence and its signature --------------------------------
run 0 $RBA export $V -k k.key -o ev.json
out_has 'evidence: ev.json ('
out_has 'signature: ev.json.minisig'
out_has "audit 1 of version $V at "
out_has 'bit-identical'
out_has 'guarantee: the rebuilt artifact is bit-identical to the pinned one'
err_empty
cp out export.out
cp err export.err
ok "evidence written" [ -s ev.json ]
ok "signature written" [ -s ev.json.minisig ]
ok "no temporaries left" [ "$(ls | grep -c '\.tmp-')" = 0 ]
ok "digest printed is the file's" grep -qF "sha256:$(sha256sum ev.json | cut -c 1-64)" out
run 0 minisign -Vm ev.json -p k.pub
out_has "Trusted comment: rebuild-audit evidence: version $V verdict bit-identical audit 1 at "
out_has ' file ev.json'
run 0 $RBA verify ev.json -p k.pub
out_has "evidence consistent: version $V, audit 1 at "
out_has 'verdict bit-identical'
out_has 'guarantee: the rebuilt artifact is bit-identical'
err_empty
run 0 $RBA --json verify ev.json -p k.pub
ok "verify --json names the evidence" jq_out ".valid == true and .evidence.version == \"$V\" and .evidence.verdict == \"bit-identical\" and .evidence.audit_id == 1 and .evidence.consistent == true"

# jq reads it; the schema accepts it; the texts hash to their digests
# with standard tools.
ok "jq parses the evidence" jq -e . ev.json
ok "statement type" test "$(jq -r ._type ev.json)" = "https://in-toto.io/Statement/v1"
ok "predicate type" test "$(jq -r .predicateType ev.json)" = "https://rebuild-audit.dev/audit-evidence/v4"
ok "verdict" test "$(jq -r .predicate.verdict ev.json)" = bit-identical
ok "subject is the artifact" test "$(jq -r '.subject[0].name' ev.json)" = "$V.artifact"
ok "subject digest is the version's artifact" \
	test "sha256:$(jq -r '.subject[0].digest.sha256' ev.json)" = "$(jq -r .predicate.artifact.pinned ev.json)"
ok "the schema accepts the evidence" valid_schema ev.json
ok "pins text hashes to its digest (sha256sum)" \
	test "sha256:$(jq -j .predicate.pins.text ev.json | sha256sum | cut -c 1-64)" = "$(jq -r .predicate.pins.digest ev.json)"
ok "policy text hashes to its digest (sha256sum)" \
	test "sha256:$(jq -j .predicate.policy.text ev.json | sha256sum | cut -c 1-64)" = "$(jq -r .predicate.policy.digest ev.json)"
ok "policy is the one given at register" \
	test "$(jq -r .predicate.policy.digest ev.json)" = "sha256:$(sha256sum < "$FIX/policy/credit.yaml" | cut -c 1-64)"
ok "the record hashes to its digest" \
	test "sha256:$(jq -j .predicate.record ev.json | sha256sum | cut -c 1-64)" = "$(jq -r .predicate.audit.record_digest ev.json)"
$RBA --json history > hist.json
ok "the chain digest is the store's" \
	test "$(jq -r '.[] | select(.id == 1) | .digest' hist.json)" = "$(jq -r .predicate.audit.chain_digest ev.json)"
ok "the embedded record is the store's" \
	test "$(jq -Sc '.[] | select(.id == 1) | .record' hist.json)" = "$(jq -Sc '.predicate.record | fromjson' ev.json)"
ok "no applicant inputs by default" sh -c '! grep -q "\"inputs\":" ev.json'
# The times in it are the history's: the audit's (and in its record) and
# when its policy was declared (the earlier audits since then: none).
ok "no timestamp but the history's" \
	test "$(grep -cE '[0-9]{4}-[0-9]{2}-[0-9]{2}T' ev.json)" = 4
ok "the times: the audit's and its policy's declaration" \
	test "$(grep -E '[0-9]{4}-[0-9]{2}-[0-9]{2}T' ev.json | grep -v '"record"' | sed 's/:.*//' | tr -d ' \n')" = '"time""earlier_since""declared_at"'
ok "declared no later than the audit" jq -e '.predicate.policy.declared_at <= .predicate.audit.time and .predicate.history.earlier_audits == []' ev.json
# The schema is not a rubber stamp.
jq '.predicate.verdict = "maybe"' ev.json > bad.json
ok "the schema refuses an unknown verdict" sh -c '! "$0" -i bad.json "$1" > /dev/null 2>&1' "$JSONSCHEMA" "$SCHEMA"
jq 'del(.predicate.results.flips)' ev.json > bad.json
ok "the schema refuses a missing field" sh -c '! "$0" -i bad.json "$1" > /dev/null 2>&1' "$JSONSCHEMA" "$SCHEMA"

# Deterministic: the same record gives the same JSON; the same name the
# same signature too.
cp ev.json ev.saved
cp ev.json.minisig ev.saved.minisig
run 0 $RBA -q export $V -k k.key -o ev2.json
out_empty
ok "the same record twice: byte-identical JSON" cmp -s ev.json ev2.json
ok "the signature names its own file" grep -q 'file ev2.json$' ev2.json.minisig
run 0 $RBA export $V --audit 1 -k k.key -o ev.json --force
ok "forced re-export: same evidence" cmp -s ev.json ev.saved
ok "forced re-export: same signature" cmp -s ev.json.minisig ev.saved.minisig
run 0 $RBA export $V --audit latest -k k.key -o ev3.json
ok "--audit latest is the newest record" cmp -s ev3.json ev.saved
run 0 $RBA --json export $V -k k.key -o ev4.json
ok "export --json parses" jq_out ".file == \"ev4.json\" and .signature == \"ev4.json.minisig\" and .audit_id == 1 and .verdict == \"bit-identical\" and .inputs_included == false and (.digest | startswith(\"sha256:\"))"

# No overwrite without --force, whichever file is there.
run 2 $RBA export $V -k k.key -o ev.json
err_is "rebuild-audit: cannot export 'ev.json': already exists (--force replaces the evidence and its signature)"
ok "evidence untouched" cmp -s ev.json ev.saved
ok "signature untouched" cmp -s ev.json.minisig ev.saved.minisig
cp ev.saved.minisig lone.json.minisig
run 2 $RBA export $V -k k.key -o lone.json
err_is "rebuild-audit: cannot export 'lone.json.minisig': already exists (--force replaces the evidence and its signature)"
ok "nothing written beside a lone signature" [ ! -e lone.json ]

# No secret key byte in any output.
secret=$(sed -n 2p k.key | cut -c 90-150)
ok "secret key mode 600" [ "$(stat -c %a k.key)" = 600 ]
ok "no secret key bytes in the evidence, signature or export's output" \
	sh -c '! grep -qF "$0" ev.json ev.json.minisig export.out export.err' "$secret"

# ---- export: what it refuses -------------------------------------------------
run 2 $RBA export $V -k k.key -o e.json --audit 99
err_is "rebuild-audit: cannot export '$V': no audit record 99 in the history"
run 2 $RBA export nope -k k.key -o e.json
err_is "rebuild-audit: cannot export 'nope': no audit of version 'nope' in the history: run 'rebuild-audit audit nope' first"
run 2 $RBA export $V -k k.key -o e.json --audit 0
err_has "bad usage 'export': --audit takes a record id or 'latest', not '0'"
run 2 $RBA export $V -k k.key -o e.json --audit x1
err_has "bad usage 'export'"
run 2 $RBA export $V -o e.json
err_has "-k KEY is required"
run 2 $RBA export $V -k k.key
err_has "-o FILE is required"
run 2 $RBA export -k k.key -o e.json
err_has "VERSION is required"
run 2 $RBA export $V -k k.key -o e.json --bogus
err_has "unknown option '--bogus'"
run 2 $RBA export $V -k missing.key -o e.json
err_is "rebuild-audit: cannot read secret key 'missing.key': no such file or directory"
run 2 $RBA export $V -k k.pub -o e.json
err_is "rebuild-audit: cannot read secret key 'k.pub': this is a public key, not a secret key (give the .key file)"
out_empty
ok "no evidence written from a public key" test ! -e e.json
run 2 $RBA export $V -k "$FIX/keys/minisign-test-only-enc.key" -o e.json
err_is "rebuild-audit: cannot read secret key '$FIX/keys/minisign-test-only-enc.key': the key is passphrase-protected: give --passphrase-file"
run 2 $RBA -S nowhere export $V -k k.key -o e.json
err_has "cannot open store 'nowhere'"
run 2 $RBA export $V -k k.key -o no/such/dir/e.json
err_has "no such file or directory"
ok "refusals wrote nothing" sh -c '[ ! -e e.json ] && [ ! -e e.json.minisig ] && [ "$(ls | grep -c "\.tmp-")" = 0 ]'
run 0 $RBA export -h
out_has 'export VERSION -k KEY -o FILE'

# A record that did not measure is not exported: it attests nothing.
sed 's/^version: .*/version: nopol/' "$FIX/pins/german-numeric-logistic.yaml" > nopol.yaml
run 0 $RBA register nopol.yaml
run 0 $RBA sample add nopol cases.csv --policy "$FIX/policy/credit.yaml"
run 2 $RBA audit nopol
run 2 $RBA export nopol -k k.key -o nopol.json
err_has "audit record 2 of version 'nopol' did not measure (not-measured: version 'nopol' has no policy"
run 2 $RBA export $V --audit 2 -k k.key -o nopol.json
err_is "rebuild-audit: cannot export '$V': audit record 2 is of version 'nopol', not '$V'"
ok "nothing written for a not-measured record" [ ! -e nopol.json ]

# ---- verify: minisign's signatures, and files that are not evidence ----------
# A key pair and a signature made by minisign itself.
run 0 minisign -G -W -p m.pub -s m.key
run 0 minisign -S -s m.key -m ev.json -x ev.m.minisig -t 'signed with minisign'
run 0 $RBA verify ev.json -p m.pub -x ev.m.minisig
out_has 'trusted comment: signed with minisign'
out_has "evidence consistent: version $V"
run 1 $RBA verify ev.json -p k.pub -x ev.m.minisig
err_has 'signed by key'
# Another file with a good signature: only the signature is checked.
printf 'not evidence\n' > note.txt
run 0 minisign -S -s k.key -m note.txt -t 'a note'
run 0 $RBA verify note.txt -p k.pub
out_has 'contents: not a rebuild-audit evidence file; only the signature was checked'
run 0 $RBA --json verify note.txt -p k.pub
ok "verify --json: no evidence" jq_out '.valid == true and .evidence == null'
# ... unless its trusted comment claims it is evidence.
run 0 minisign -S -s k.key -m note.txt -t "$(tcomment ev.json.minisig)"
run 1 $RBA verify note.txt -p k.pub
err_is "rebuild-audit: verification failed 'note.txt': the trusted comment claims evidence, but the file is not JSON (byte 1: unexpected character)"

# ---- verify: evidence edited and re-signed with the right key ---------------
TC=$(tcomment ev.json.minisig)
edit_check() { # sed-expression, expected reason
	sed "$1" ev.json > x.json
	if cmp -s x.json ev.json; then fail "edit '$1' changed nothing"; return; fi
	resign x.json "$TC"
	run 0 minisign -Vm x.json -p k.pub
	run 1 $RBA verify x.json -p k.pub
	err_has "$2"
	out_empty
}
edit_check 's/"verdict": "bit-identical"/"verdict": "metric-equivalent"/' \
	"verdict metric-equivalent, but the rebuilt artifact is the pinned one"
edit_check 's/"verdict": "bit-identical"/"verdict": "not-reproducible"/' \
	"verdict not-reproducible without a reason"
edit_check 's/epochs: 30/epochs: 31/' \
	"the pins text does not hash to predicate.pins.digest"
edit_check 's/max_flips: 0}/max_flips: 5}/' \
	"the policy text does not hash to predicate.policy.digest"
edit_check 's/"flips": 0,/"flips": 2,/' \
	"verdict bit-identical with 2 decision flips, over the tolerance of 0"
edit_check 's/"max_score_delta": 0.0005/"max_score_delta": 0.5/' \
	"the rule, tolerance or near-threshold rule stated in predicate.policy is not the policy text's"
edit_check 's/for any input/for most inputs/' \
	"predicate.guarantee is not the guarantee of verdict bit-identical"
edit_check 's/\\"exit_status\\": 0/\\"exit_status\\": 1/' \
	"the embedded audit record does not hash to predicate.audit.record_digest"
edit_check 's/"exit_status": 0/"exit_status": 1/' \
	"verdict bit-identical with exit status 1, but a yes that was not ad hoc exits 0"
edit_check 's/"ad_hoc": false/"ad_hoc": true/' \
	"verdict bit-identical with exit status 0, but the audit was ad hoc"
edit_check 's/"judged_by": "version"/"judged_by": "sample"/' \
	"the predicate does not agree with its embedded audit record at line"
edit_check 's/"id": 1,/"id": 7,/' \
	"do not give predicate.audit.chain_digest"
edit_check 's/^  "_type"/   "_type"/' \
	"not in the canonical form of rebuild-audit-evidence(5) at line 2"
# The right contents under a trusted comment naming other evidence.
cp ev.json x.json
resign x.json "$(printf '%s' "$TC" | sed 's/audit 1 at/audit 9 at/')"
run 1 $RBA verify x.json -p k.pub
err_has "the trusted comment does not name this evidence"
# A later version of the format cannot be checked here.
sed 's|audit-evidence/v4"|audit-evidence/v5"|' ev.json > x.json
resign x.json "$TC"
run 2 $RBA verify x.json -p k.pub
err_is "rebuild-audit: cannot check evidence 'x.json': predicateType https://rebuild-audit.dev/audit-evidence/v5 is not https://rebuild-audit.dev/audit-evidence/v1, https://rebuild-audit.dev/audit-evidence/v2, https://rebuild-audit.dev/audit-evidence/v3 or https://rebuild-audit.dev/audit-evidence/v4, which this tool checks"

# ---- any single byte changed: both minisign and verify refuse ---------------
# In the evidence (spread over the whole file), then every byte of the
# trusted comment and signature lines.  A base64 character is replaced by
# the one 32 places away (minisign 0.11 ignores the unused low bits of the
# last character before '='); any other byte by one that differs.
flip_byte() { # file offset
	c=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null)
	r=$(printf '%s' "$c" | tr 'A-Za-z0-9+/' 'g-z0-9+/A-Za-f')
	if [ "$r" = "$c" ] || [ -z "$c" ]; then
		if [ "$c" = x ]; then r=y; else r=x; fi
	fi
	printf '%s' "$r" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
size=$(wc -c < ev.saved)
missed=
tried=0
i=0
while [ $i -lt "$size" ]; do
	cp ev.saved ev.json
	cp ev.saved.minisig ev.json.minisig
	flip_byte ev.json $i
	$RBA -q verify ev.json -p k.pub > /dev/null 2>&1 && missed="$missed e$i"
	minisign -q -Vm ev.json -p k.pub > /dev/null 2>&1 && missed="$missed m$i"
	tried=$((tried + 1))
	i=$((i + size / 97 + 1))
done
ok "evidence byte changes refused by both (missed:$missed)" [ -z "$missed" ]
ok "the loop covered the evidence" [ $tried -gt 90 ]
cp ev.saved ev.json
start=$(head -n 1 ev.saved.minisig | wc -c)
size=$(wc -c < ev.saved.minisig)
missed=
i=$start
while [ $i -lt "$size" ]; do
	cp ev.saved.minisig ev.json.minisig
	flip_byte ev.json.minisig $i
	if ! cmp -s ev.json.minisig ev.saved.minisig; then
		$RBA -q verify ev.json -p k.pub > /dev/null 2>&1 && missed="$missed e$i"
		minisign -q -Vm ev.json -p k.pub > /dev/null 2>&1 && missed="$missed m$i"
	fi
	i=$((i + 1))
done
ok "signature and trusted comment byte changes refused by both (missed:$missed)" [ -z "$missed" ]
ok "the loop covered the signature" [ $((size - start)) -gt 300 ]
cp ev.saved.minisig ev.json.minisig
run 0 $RBA verify ev.json -p k.pub

# ---- the other verdicts --------------------------------------------------------
# Stored scores from a column the model does not give: not reproducible,
# with flipped cases (their inputs only on request).
awk -F, 'NR == 1 { print $0 ",score"; next } { print $0 "," (NR % 3 ? "0.1" : "0.9") }' cases.csv > scored.csv
run 0 $RBA sample add $V scored.csv --score-column score
run 1 $RBA audit $V
run 0 $RBA export $V -k k.key -o nr.json
out_has 'not-reproducible'
out_has 'guarantee: none: '
run 0 minisign -Vm nr.json -p k.pub
run 0 $RBA verify nr.json -p k.pub
out_has 'verdict not-reproducible'
ok "the schema accepts not-reproducible evidence" valid_schema nr.json
ok "reasons are listed" jq -e '.predicate.reasons | length > 0' nr.json
ok "flipped cases listed with scores and decisions" \
	jq -e '.predicate.results.flips > 0 and (.predicate.results.flipped_cases | length) == .predicate.results.flips and (.predicate.results.flipped_cases[0] | has("stored_score") and has("rebuilt_decision") and has("margin"))' nr.json
ok "no inputs without --include-inputs" jq -e '.predicate.inputs_included == false and ([.predicate.results.flipped_cases[] | has("inputs")] | any | not)' nr.json
run 0 $RBA export $V -k k.key -o in.json --include-inputs
run 0 $RBA verify in.json -p k.pub
ok "the schema accepts evidence with inputs" valid_schema in.json
ok "inputs of every flipped case" jq -e '.predicate.inputs_included and ([.predicate.results.flipped_cases[] | .inputs.id == .id] | all)' in.json
ok "inputs are the stored text" \
	test "$(jq -r '.predicate.results.flipped_cases[0] | .id + "," + .inputs.a1 + "," + .inputs.a2' in.json)" = \
	     "$(awk -F, -v id="$(jq -r '.predicate.results.flipped_cases[0].id' in.json)" '$1 == id { print $1 "," $2 "," $3 }' scored.csv)"
# The sample replaced since the audit: its inputs are no longer the ones
# audited.
run 0 $RBA sample add $V cases.csv
run 2 $RBA export $V --audit 3 -k k.key -o in2.json --include-inputs
err_has "changed since audit 3"
err_has "its inputs cannot be included"
run 2 $RBA export $V --audit 3 -k k.key -o in2.json --cases
err_has "changed since audit 3"
err_has "its cases cannot be written"
run 0 $RBA export $V --audit 3 -k k.key -o in2.json

# Metric-equivalent: the version's artifact is its rebuild with one low
# bit of one weight changed, under a policy without the near-threshold
# rule.
run 0 $RBA version export-artifact $V a.bin
n=$(wc -c < a.bin)
off=$((n - 12))
b=$(od -An -tu1 -j $off -N1 a.bin | tr -d ' ')
printf "$(printf '\\%03o' $((b ^ 1)))" | dd of=a.bin bs=1 seek=$off conv=notrunc 2>/dev/null
sed 's/^version: .*/version: nearby/' "$FIX/pins/german-numeric-logistic.yaml" > nearby.yaml
run 0 $RBA register nearby.yaml --artifact a.bin --policy "$FIX/policy/audit-tolerant.yaml"
run 0 $RBA sample add nearby cases.csv
run 0 $RBA audit nearby
out_has 'metric-equivalent'
run 0 $RBA export nearby -k k.key -o me.json
out_has 'guarantee: a rebuild of version nearby from its pins reproduces every decision on the audit sample of 59 cases and every score within 0.0005'
run 0 minisign -Vm me.json -p k.pub
run 0 $RBA verify me.json -p k.pub
out_has 'verdict metric-equivalent'
ok "the schema accepts metric-equivalent evidence" valid_schema me.json
ok "metric-equivalent: digests differ" jq -e '.predicate.artifact.bit_identical == false and .predicate.artifact.rebuilt != .predicate.artifact.pinned' me.json

# ---- killed at random points -------------------------------------------------
# 200 exports killed with SIGKILL after a random few milliseconds,
# alternating between two records so that a new evidence file beside an
# old signature would show.  Whatever is left must be whole, and the two
# files, when both exist, must belong together.  Export pauses 3 ms
# before each step that creates or renames a file, so that the kills land
# in every window between two steps, not only in the long ones.
mkdir refA refB
run 0 $RBA -q export $V --audit 1 -k k.key -o refA/kill.json
run 0 $RBA -q export $V --audit 3 -k k.key -o refB/kill.json
ok "the two records give different evidence" sh -c '! cmp -s refA/kill.json refB/kill.json'
# The kills are spread over the time one export takes here (slower under
# sanitizers), and a little beyond.
t0=$(date +%s%N)
REBUILD_AUDIT_TEST_EVIDENCE_PAUSE_MS=3 $RBA_TEST -q export $V --audit 1 -k k.key -o timing.json
t1=$(date +%s%N)
span=$(( (t1 - t0) / 1000000 + 5 ))
[ $span -lt 999 ] || span=999
seed=$(date +%s)
delays=$(awk -v s="$seed" -v n="$span" 'BEGIN { srand(s); for (i = 0; i < 200; i++) printf "%d ", int(rand() * n) }')
bad=
midway=0
i=0
# One export of record $2 killed after $1 ms; what is left is checked.
kill_once() {
	REBUILD_AUDIT_TEST_EVIDENCE_PAUSE_MS=3 $RBA_TEST -q export $V --audit $2 -k k.key \
		-o kill.json --force > /dev/null 2>&1 &
	pid=$!
	sleep "$(printf '0.%03d' "$1")"
	kill -9 $pid 2> /dev/null
	wait $pid 2> /dev/null
	ev=none
	if [ -e kill.json ]; then
		if cmp -s kill.json refA/kill.json; then ev=A
		elif cmp -s kill.json refB/kill.json; then ev=B
		else bad="$bad $i:torn-evidence"; fi
	fi
	if [ -e kill.json.minisig ]; then
		if cmp -s kill.json.minisig refA/kill.json.minisig; then sg=A
		elif cmp -s kill.json.minisig refB/kill.json.minisig; then sg=B
		else sg=torn; bad="$bad $i:torn-signature"; fi
		if [ "$ev" != "$sg" ]; then bad="$bad $i:evidence-$ev-signature-$sg"; fi
	fi
	if ls | grep -q '^kill\.json.*\.tmp-'; then midway=$((midway + 1)); fi
	i=$((i + 1))
}
for ms in $delays; do
	if [ $((i % 2)) = 0 ]; then a=1; else a=3; fi
	if [ $((i % 25)) = 0 ]; then rm -f kill.json kill.json.minisig; fi
	kill_once $ms $a
done
# The test is only worth its name if some kill landed while a file was
# being written: until one does, kill more, at fresh delays over the
# span (at most 50 more).
retries=$(awk -v s="$seed" -v n="$span" 'BEGIN { srand(s + 2); for (i = 0; i < 50; i++) printf "%d ", int(rand() * n) }')
tries=0
for ms in $retries; do
	[ $midway = 0 ] || break
	kill_once $ms $((tries % 2 * 2 + 1))
	tries=$((tries + 1))
done
ok "$i kills: never a torn file, never a mismatched pair (seed $seed:$bad)" [ -z "$bad" ]
ok "a kill landed while files were being written (seed $seed, span $span ms, $tries retries)" [ $midway -gt 0 ]
run 0 $RBA export $V --audit 1 -k k.key -o kill.json --force
ok "the next run removes every temporary" [ "$(ls | grep -c '\.tmp-')" = 0 ]
run 0 minisign -Vm kill.json -p k.pub
run 0 $RBA verify kill.json -p k.pub
ok "the final pair is record 1's" cmp -s kill.json refA/kill.json

# Forced exports to one name at the same time take turns: the pair left
# belongs together.  Each starts after a random delay and pauses a random
# time before each step, so that unserialized writers would interleave.
bad=
plan=$(awk -v s="$seed" 'BEGIN { srand(s + 1); for (i = 0; i < 60; i++) printf "%d:%d ", int(rand() * 25), 1 + int(rand() * 6) }')
i=0
pids=
for step in $plan; do
	if [ $((i % 2)) = 0 ]; then a=1; else a=3; fi
	(sleep "$(printf '0.%03d' "${step%%:*}")"; REBUILD_AUDIT_TEST_EVIDENCE_PAUSE_MS=${step##*:} \
		exec $RBA_TEST -q export $V --audit $a -k k.key -o kill.json --force) > /dev/null 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
	if [ $((i % 6)) = 0 ]; then
		for p in $pids; do wait $p || bad="$bad $i:exit"; done
		pids=
		if cmp -s kill.json refA/kill.json; then
			cmp -s kill.json.minisig refA/kill.json.minisig || bad="$bad $i:A"
		elif cmp -s kill.json refB/kill.json; then
			cmp -s kill.json.minisig refB/kill.json.minisig || bad="$bad $i:B"
		else
			bad="$bad $i:torn"
		fi
	fi
done
ok "concurrent forced exports leave a matching pair (seed $seed:$bad)" [ -z "$bad" ]
ok "and no temporaries" [ "$(ls | grep -c '\.tmp-')" = 0 ]

# ---- a passphrase-protected key (scrypt at minisign's cost: slow) ------------
if [ "${RBA_SLOW:-0}" = 1 ]; then
	run 0 $RBA export $V -k "$FIX/keys/minisign-test-only-enc.key" \
		--passphrase-file "$FIX/keys/minisign-test-only-enc.passphrase" -o enc.json
	run 0 minisign -Vm enc.json -p "$FIX/keys/minisign-test-only-enc.pub"
	run 0 $RBA verify enc.json -p "$FIX/keys/minisign-test-only-enc.pub"
fi
run 2 $RBA export $V -k k.key --passphrase-file missing.pass -o p.json
err_has "cannot read passphrase 'missing.pass'"

# ---- decisions made by another artifact; the history head ------------------
# A version audited, then replaced by pins whose lr differs in the 7th
# digit (another artifact) while its sample keeps the decisions of the
# first: the evidence names both and is never bit-identical.
R=lr7
sed 's/^version: .*/version: lr7/' "$FIX/pins/german-numeric-logistic.yaml" > lr7-a.yaml
sed 's/lr: 0.01,/lr: 0.01000001,/' lr7-a.yaml > lr7-b.yaml
ok "pins that differ in the 7th digit of lr" sh -c '! cmp -s lr7-a.yaml lr7-b.yaml'
run 0 $RBA register lr7-a.yaml --policy "$FIX/policy/credit.yaml"
run 0 $RBA sample add $R cases.csv
run 0 $RBA audit $R
first=$($RBA --json history $R | jq '.[0].id')
old=$($RBA --json version show $R | jq -r .artifact)
run 0 $RBA register lr7-b.yaml --replace
new=$($RBA --json version show $R | jq -r .artifact)
ok "a different artifact" test "$old" != "$new"
reg=$($RBA --json history $R | jq '.[0].id')
ok "register --replace appended a record" test "$reg" -gt "$first"
# "latest" right after the replacement is the audit before it, never the
# register record; that one by id is refused in one line.
run 0 $RBA export $R --audit latest -k k.key -o before.json
out_has "audit $first of version $R at "
ok "latest: the previous audit record" test "$(jq .predicate.audit.id before.json)" = "$first"
ok "latest: an audit record" test "$(jq -r .predicate.audit.record_schema before.json)" = rebuild-audit/audit/v1
ok "latest: bit-identical, all three artifacts the old one" \
	jq -e --arg o "$old" '.predicate.verdict == "bit-identical" and .predicate.artifact.pinned == $o and .predicate.artifact.rebuilt == $o and .predicate.artifact.decisions == $o and .predicate.artifact.decisions_by_rebuilt' before.json
ok "the head is the register record" test "$(jq .predicate.history.head.id before.json)" = "$reg"
ok "the head is the store's head" test "$(jq -r .predicate.history.head.digest before.json)" = "$($RBA -q history head)"
run 0 $RBA verify before.json -p k.pub
run 2 $RBA export $R --audit "$reg" -k k.key -o reg.json
err_is "rebuild-audit: cannot export '$R': history record $reg is a register record ('replace') of version '$R', not an audit: it attests no verdict"
ok "nothing written for a register record" sh -c '[ ! -e reg.json ] && [ ! -e reg.json.minisig ]'

# Audited now: the rebuild is the new pinned artifact, the decisions
# the old one's, and the near-threshold rule applies.
run 1 $RBA audit $R
run 0 $RBA export $R -k k.key -o lr7.json
head=$($RBA -q history head)
out_lacks ": bit-identical"
out_has "history head: record $($RBA --json history head | jq .id), $head"
ok "not bit-identical" jq -e '.predicate.verdict != "bit-identical"' lr7.json
ok "names both artifacts" jq -e --arg o "$old" --arg n "$new" \
	'.predicate.artifact.pinned == $n and .predicate.artifact.rebuilt == $n and .predicate.artifact.decisions == $o and (.predicate.artifact.decisions_by_rebuilt | not)' lr7.json
ok "the guarantee names both" jq -e --arg o "$old" --arg n "$new" \
	'(.predicate.guarantee | contains($o) and contains($n) and contains("stored decisions of its audit sample were made by artifact"))' lr7.json
ok "the embedded record names the decisions' artifact" \
	jq -e --arg o "$old" '.predicate.record | fromjson | .digests.artifact_decisions == $o' lr7.json
ok "the evidence carries the history head at export" \
	test "$(jq -r .predicate.history.head.digest lr7.json)" = "$head"
ok "the schema accepts it" valid_schema lr7.json
run 0 minisign -Vm lr7.json -p k.pub
run 0 $RBA verify lr7.json -p k.pub
out_has "evidence consistent: version $R"
out_has 'verdict not-reproducible'
out_has "history head at export: record "
out_has "keep this head, and check it later on the store with 'rebuild-audit history --verify --head $head'"
run 0 $RBA --json verify lr7.json -p k.pub
ok "verify --json gives the head" jq_out ".evidence.history_head.digest == \"$head\""
run 0 $RBA history --verify --head "$(jq -r .predicate.history.head.digest lr7.json)"
# Edited to bit-identical and re-signed: refused.
sed 's/"verdict": "not-reproducible"/"verdict": "bit-identical"/' lr7.json > x.json
resign x.json "$(tcomment lr7.json.minisig)"
run 1 $RBA verify x.json -p k.pub
err_has "verdict bit-identical"

# A policy without the near-threshold rule set after the sample was
# added is looser: it judges only samples added after it, so this one
# is still judged by the policy it was added under.
run 0 $RBA policy set $R "$FIX/policy/audit-tolerant.yaml"
err_has "is looser than"
err_has "audits still judge this sample by"
run 1 $RBA audit $R
out_has "this sample is judged by"
# Declared before the sample: metric-equivalent, the pinned artifact
# reproducing the old one's decisions within the tolerance, not bit for
# bit.
R=lr7t
sed 's/^version: .*/version: lr7t/' lr7-a.yaml > lr7t-a.yaml
sed 's/^version: .*/version: lr7t/' lr7-b.yaml > lr7t-b.yaml
run 0 $RBA register lr7t-a.yaml --policy "$FIX/policy/audit-tolerant.yaml"
run 0 $RBA sample add $R cases.csv
old=$($RBA --json version show $R | jq -r .artifact)
run 0 $RBA register lr7t-b.yaml --replace
new=$($RBA --json version show $R | jq -r .artifact)
run 0 $RBA audit $R
out_has 'metric-equivalent'
run 0 $RBA export $R -k k.key -o lr7m.json
out_has "guarantee: the stored decisions of the audit sample were made by artifact $old, not by the pinned $new"
out_has 'not bit for bit'
ok "metric-equivalent, the rebuild the pinned artifact" jq -e --arg o "$old" --arg n "$new" \
	'.predicate.verdict == "metric-equivalent" and .predicate.artifact.bit_identical and .predicate.artifact.rebuilt == $n and .predicate.artifact.decisions == $o' lr7m.json
ok "the schema accepts it" valid_schema lr7m.json
ok "its head is the store's" test "$(jq -r .predicate.history.head.digest lr7m.json)" = "$($RBA -q history head)"
run 0 minisign -Vm lr7m.json -p k.pub
run 0 $RBA verify lr7m.json -p k.pub
out_has 'verdict metric-equivalent'
# The head kept from an earlier file is still in the history.
run 0 $RBA history --verify --head "$(jq -r .predicate.history.head.digest before.json)"
