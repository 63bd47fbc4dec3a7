# audit: the three verdicts, the near-threshold rule, the links that
# changed, tampering, --all and -q for cron, concurrent audits.
V=german-categorical-mlp
POL=$FIX/policy/credit.yaml
TOL=$FIX/policy/audit-tolerant.yaml

# flip_bit FILE OFFSET: flips the lowest bit of the byte at OFFSET.
flip_bit() {
	b=$(od -A n -t u1 -j "$2" -N 1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null
}
# tamper STORE DB KEYPREFIX VALUEPREFIX: changes one hex digit of the
# first long value under a key starting with KEYPREFIX (hex) whose value
# starts with VALUEPREFIX (hex), with the LMDB tools.
tamper() {
	mdb_dump -s "$2" "$1" > dump.txt
	awk -v k=" $3" -v v=" $4" 'BEGIN { done = 0 }
		!done && index(prev, k) == 1 && index($0, v) == 1 && length($0) > 400 {
			c = substr($0, 301, 1); $0 = substr($0, 1, 300) (c == "0" ? "1" : "0") substr($0, 302); done = 1 }
		{ print; prev = $0 }' dump.txt > dump2.txt
	ok "a value of $2 was altered" test "$(cmp -s dump.txt dump2.txt; echo $?)" = 1
	run 0 mdb_load -s "$2" -f dump2.txt "$1"
}

run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$FIX/german-credit.csv"
run 0 $RBA -S st -q register "$FIX/pins/german-categorical-mlp.yaml" --policy "$POL"

# no sample yet: could not measure, nothing recorded
run 2 $RBA -S st audit $V
err_is "rebuild-audit: cannot audit '$V': version '$V' has no audit sample (add one with 'rebuild-audit sample add $V CASES.csv')"
run 2 $RBA -S st audit nope
err_is "rebuild-audit: cannot audit 'nope': no version 'nope' in the store"
# audit --all names every version it could not audit, even with -q
run 2 $RBA -S st audit --all
err_is "rebuild-audit: cannot audit '$V': version '$V' has no audit sample (add one with 'rebuild-audit sample add $V CASES.csv')"
run 2 $RBA -S st -q audit --all
err_is "rebuild-audit: cannot audit '$V': version '$V' has no audit sample (add one with 'rebuild-audit sample add $V CASES.csv')"
run 0 $RBA -S empty init
run 2 $RBA -S empty audit --all
err_is "rebuild-audit: nothing to audit 'empty': the store holds no version"

run 0 $RBA -S st -q sample add $V "$FIX/german-credit.csv"

# 1. strict mode: bit-identical, zero flips, zero delta
run 0 $RBA -S st audit $V
out_has "audit $V: bit-identical (exit 0)"
out_has "sample        1000 cases, 0 flips, max score delta 0"
out_has "(identical)"
out_has "recorded      history record 1"
# the crontab line of the man page and README, word for word
run 0 $RBA -S st audit --all -q
out_empty
err_empty
run 0 env REBUILD_AUDIT_STORE=st $RBA -q audit --all
out_empty
run 0 $RBA -S st --json audit $V
ok "bit-identical in JSON" jq -e '.exit_status == 0 and (.audits | length) == 1 and
	.audits[0].verdict == "bit-identical" and .audits[0].sample.flips == 0 and
	.audits[0].sample.max_score_delta == 0 and .audits[0].sample.cases == 1000 and
	.audits[0].digests.artifact_rebuilt == .audits[0].digests.artifact_pinned and
	.audits[0].links.config.state == "same" and .audits[0].verified.sample' out
run 0 $RBA -S st -q audit $V
out_empty
run 0 $RBA -S st audit --threads 2 $V
out_has "bit-identical"

# 2. one weight off by its last bit: metric-equivalent within tolerance
run 0 $RBA -S st version export-artifact $V orig.bin
cp orig.bin flipped.bin
size=$(wc -c < flipped.bin)
# the file ends with the output layer: 2 x 32 weights, then 2 biases
flip_bit flipped.bin $((size - 12))
ok "exactly one byte differs" test "$(cmp -l orig.bin flipped.bin | wc -l)" -eq 1
sed 's/^version: .*/version: flipped/' "$FIX/pins/german-categorical-mlp.yaml" > flipped.yaml
run 0 $RBA -S st -q register flipped.yaml --artifact flipped.bin --policy "$TOL"
run 0 $RBA -S st -q sample add flipped "$FIX/german-credit.csv"
run 0 $RBA -S st audit flipped
out_has "audit flipped: metric-equivalent (exit 0)"
out_has "(differs)"
out_has "0 flips"
out_has "config         unknown"
run 0 $RBA -S st --json audit flipped
ok "a non-zero delta within the tolerance" jq -e '.audits[0] | .verdict == "metric-equivalent" and
	.sample.flips == 0 and .sample.max_score_delta > 0 and .sample.max_score_delta <= 0.0005' out

# 3. the near-threshold rule turns it into not-reproducible
run 1 $RBA -S st audit --policy "$POL" flipped
out_has "audit flipped: NOT REPRODUCIBLE, ad hoc (exit 1)"
out_has "near-threshold rule: 3 audit cases lie within 0.001 of a band edge"
out_has "warning: the sample's decisions were made under policy"

# 4. pins edited after registration (learning rate): not-reproducible, config
sed 's/lr: 0.02/lr: 0.03/' "$FIX/pins/german-categorical-mlp.yaml" > edited.yaml
run 0 $RBA -S st -q register edited.yaml --artifact orig.bin --policy "$POL" --replace
run 1 $RBA -S st audit $V
out_has "audit $V: NOT REPRODUCIBLE (exit 1)"
out_has "decision flips on the audit sample of 1000 cases (tolerance 0)"
out_has "config         CHANGED  sha256:"
out_has "(the pins were edited after the artifact was trained)"
out_has "code revision  same"
out_has "trainer ABI    same"
out_has "flipped cases (margin: distance of the stored score to the nearest band edge):"
out_has "(edge 0."
run 1 $RBA -S st --json audit $V
ok "flipped cases with margins and the config link in JSON" jq -e '.audits[0] |
	.verdict == "not-reproducible" and .sample.flips > 0 and
	(.sample.flipped_cases | length) == .sample.flips and
	(.sample.flipped_cases | all(.margin >= 0 and .stored_decision != .rebuilt_decision)) and
	.links.config.state == "changed" and .links.code_revision.state == "same" and
	.links.trainer_abi.state == "same" and .links.environment.state == "same"' out

# --all for cron: every version with a sample; -q shows only the others
run 1 $RBA -S st audit --all
out_has "audit flipped: metric-equivalent"
out_has "audit $V: NOT REPRODUCIBLE"
run 1 $RBA -S st -q audit --all
out_lacks "audit flipped"
out_has "audit $V: NOT REPRODUCIBLE"
run 1 $RBA -S st --json audit --all
ok "--all --json: two audits, exit 1" jq -e '.exit_status == 1 and (.audits | length) == 2' out

# usage
run 2 $RBA -S st audit
err_has "bad usage 'audit': audit needs a VERSION or --all"
run 2 $RBA -S st audit --all $V
err_has "bad usage 'audit': --all takes no VERSION"
run 2 $RBA -S st audit --threads 0 $V
err_has "--threads takes a number from 1 to 64"
run 2 $RBA -S st audit --policy nope.yaml $V
err_has "rebuild-audit: invalid policy 'nope.yaml':"
run 0 $RBA audit -h
out_has "usage: rebuild-audit audit VERSION... [--policy P] [--threads N]"

# 5. tampering: exit 2 naming what was tampered with; recorded as not-measured
run 0 $RBA -S st -q register "$FIX/pins/german-categorical-mlp.yaml" --policy "$POL" --replace
run 0 $RBA -S st -q sample add $V "$FIX/german-credit.csv"
run 0 $RBA -S st -q audit $V
art=$($RBA -S st --json version show $V | jq -r .artifact | cut -c8-15)
# a sample chunk's key: the name's length and bytes, then 01; the
# sample added again above is the second generation: 10, 00000001, 01
vkey=$(printf '%02x' ${#V})$(printf %s "$V" | od -A n -t x1 | tr -d ' \n')
mdb_dump -s samples st > gen.txt
ok "the replacing sample is generation 1" grep -q "^ ${vkey}100000000101" gen.txt
vkey=${vkey}100000000101
for what in artifact snapshot sample; do
	rm -rf t-$what
	cp -r st t-$what
	case $what in
	artifact) tamper t-$what blobs "$art" 11 ;;
	snapshot) tamper t-$what blobs 9a5fb325 11 ;;
	sample) tamper t-$what samples "$vkey" 31 ;;
	esac
	n0=$($RBA -S t-$what --json history $V | jq length)
	run 2 $RBA -S t-$what audit $V
	err_has "rebuild-audit: cannot audit '$V': tampered: the"
	err_has "$what"
	out_has "audit $V: NOT MEASURED (exit 2)"
	run 0 $RBA -S t-$what --json history $V
	ok "$what: one more record, not-measured" jq -e --argjson n "$n0" \
		'length == $n + 1 and .[0].record.verdict == "not-measured" and .[0].record.error == "tampered"' out
	ok "$what: nothing recorded as reproducible after the tampering" \
		jq -e '[.[0].record.verdict] | inside(["not-measured"])' out
	run 2 $RBA -S t-$what -q audit --all
	err_has "tampered"
done

# two audits started at once both finish and are both recorded
n0=$($RBA -S st --json history | jq length)
$RBA -S st -q audit $V > a1.out 2> a1.err &
p1=$!
$RBA -S st -q audit flipped > a2.out 2> a2.err &
p2=$!
wait $p1
s1=$?
wait $p2
s2=$?
ok "first concurrent audit exits 0" test $s1 -eq 0
ok "second concurrent audit exits 0" test $s2 -eq 0
run 0 $RBA -S st --json history
ok "both concurrent audits are recorded" jq -e --argjson n "$n0" \
	'length == $n + 2 and ([.[0].version, .[1].version] | sort) == ["flipped", "german-categorical-mlp"]' out
run 0 $RBA -S st history --verify
out_has "history intact"

# a multiclass model under an argmax policy: the probability vectors
run 0 $RBA snapshot synth --rows 4000 --features 32 --classes 4 --noise 0.3 --seed 0 -o synth.csv
run 0 $RBA -S mc init
run 0 $RBA -S mc snapshot add synth.csv
run 0 $RBA -S mc -q register "$FIX/pins/synth-chapter.yaml" --policy "$FIX/policy/argmax.yaml"
run 0 $RBA -S mc sample add synth-chapter synth.csv
out_has "4000 cases"
run 0 $RBA -S mc audit synth-chapter
out_has "audit synth-chapter: bit-identical (exit 0)"
out_has "4000 cases, 0 flips, max score delta 0"
run 0 $RBA -S mc --json dispute synth-chapter 17
ok "argmax dispute: vectors and the half gap" jq -e '.answer == "stands" and
	(.stored.probabilities | length) == 4 and .rebuilt.probabilities == .stored.probabilities and
	.edge == null and .margin > 0' out
run 2 $RBA -S mc audit --policy "$POL" synth-chapter
err_has "the policy decides by score bands, but the model has no positive class"

# a sample of several chunks (8,192 cases each) on one thread and on
# more: the same verdict and tally, and the case index summed from every
# chunk under its own number (a chunk summed under another's fails the
# audit).  Nine chunks fill the queue of two and three threads (twice
# the threads), where the reading thread scores chunks too.
awk -F, 'NR == 1 { print; next } { row[NR - 1] = substr($0, index($0, ",") + 1); n = NR - 1 }
	END { for (i = 0; i < 70000; i++) print (i + 1) "," row[i % n + 1] }' \
	"$FIX/german-credit.csv" > chunks.csv
run 0 $RBA -S st -q sample add $V chunks.csv
for t in 1 2 3; do
	run 0 $RBA -S st --json audit $V --threads $t
	ok "nine chunks, $t threads: bit-identical" jq -e '.audits[0].verdict == "bit-identical" and
		.audits[0].sample.cases == 70000 and .audits[0].sample.flips == 0' out
	jq -c '.audits[0].sample' out > "tally-$t"
done
ok "nine chunks: one tally at 1, 2 and 3 threads" sh -c 'cmp tally-1 tally-2 && cmp tally-1 tally-3'
