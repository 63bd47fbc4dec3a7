# tlog: the history as a transparency log (rebuild-audit-evidence(5),
# TRANSPARENCY LOG): history vkey, checkpoint, prove, consistency,
# watch and cosign; a fork (a copy of the store that grows another way),
# a rewritten record, a truncated (rolled back) history and a
# checkpoint signed by another key, each refused with one line; the log
# of a store made before it; evidence v4 and verify --vkey/--checkpoint;
# a fleet import's records are leaves like any.
KEY=$FIX/keys/rba-test-only.key
PUB=$FIX/keys/rba-test-only.pub
OKEY=$FIX/keys/minisign-test-only.key
OPUB=$FIX/keys/minisign-test-only.pub
V=german-categorical-logistic
P=$FIX/policy/credit.yaml
lines() { test "$(wc -l < "$1")" = "$2"; }

$RBA -S st -q init
$RBA -S st -q snapshot add "$FIX/german-credit.csv" > /dev/null
$RBA -S st -q register "$FIX/pins/$V.yaml" --policy "$P" > /dev/null
$RBA -S st -q sample add $V "$FIX/german-credit.csv"
$RBA -S st -q audit $V
for i in 1 2 3 4; do $RBA -S st -q policy set $V "$P"; done
ID=$($RBA -S st --json history head | jq -r .store_id)
ORIGIN=rebuild-audit.dev/store/$ID

# ---- vkey -------------------------------------------------------------------
run 0 $RBA -S st history vkey -p "$PUB"
out_has "$ORIGIN+"
cp out vkey
ok "a verifier key NAME+HASH8+BASE64(0x01 || key)" grep -Eq "^$ORIGIN\+[0-9a-f]{8}\+A[A-Za-z0-9+/]{43}$" vkey
run 0 $RBA history vkey -p "$PUB" --origin example.com/log
out_has "example.com/log+"
run 2 $RBA history vkey -p "$PUB" --origin "a b"
err_is "rebuild-audit: bad origin 'a b': 'a b' is not a key name (non-empty UTF-8 without spaces or '+')"
run 0 $RBA -S st history vkey -p "$OPUB"
cp out ovkey

# ---- checkpoint ---------------------------------------------------------------
run 0 $RBA -S st history checkpoint -k "$KEY" -o ck5
out_has "checkpoint: ck5, 5 records of $ORIGIN"
ok "origin, size, root, a blank line, one signature line" sh -c "
	sed -n 1p ck5 | grep -qx '$ORIGIN' && sed -n 2p ck5 | grep -qx 5 &&
	sed -n 3p ck5 | grep -Eqx '[A-Za-z0-9+/]{43}=' && sed -n 4p ck5 | grep -qx '' &&
	sed -n 5p ck5 | grep -q '^— $ORIGIN ' && test \$(wc -l < ck5) = 5"
T=$(txnid st)
run 2 $RBA -S st history checkpoint -k "$KEY" -o ck5
err_is "rebuild-audit: cannot write checkpoint 'ck5': exists (use --force to replace it)"
run 0 $RBA -S st -q history checkpoint -k "$KEY" -o ck5 --force
ok "a checkpoint writes nothing to the store" test "$(txnid st)" = "$T"
run 2 $RBA -S st history checkpoint -o x
err_has "needs the log's key: -k KEY"
run 2 $RBA -S st history checkpoint -k "$KEY" -o x --vkey vkey
err_has "history checkpoint takes no --vkey"

# ---- prove ----------------------------------------------------------------
run 0 $RBA -S st --json history prove 3 --checkpoint ck5
ok "index, tree_size, leaf (the record's bytes), proof" jq -e '
	.index == 2 and .tree_size == 5 and (.proof | length) == 3 and (keys | length) == 4' out
ok "the leaf is record 3 as the history holds it" sh -c \
	"test \"\$(jq -r .leaf out | base64 -d | sha256sum | cut -c1-64)\" = \
	\"\$($RBA -S st --json history | jq -r '.[] | select(.id == 3) | .record' | jq -cj . | sha256sum | cut -c1-64)\" ||
	 jq -r .leaf out | base64 -d | jq -e '.schema == \"rebuild-audit/policy-set/v1\"'"
cp out p3.json
run 0 $RBA -S st history prove 3 --checkpoint ck5
out_has "record 3 (leaf 2) is in the tree of 5 records of $ORIGIN: the proof checks"
run 2 $RBA -S st history prove 6 --checkpoint ck5
err_is "rebuild-audit: cannot prove '6': record 6 is not in the checkpoint's tree of 5 records"
run 2 $RBA -S st history prove 0 --checkpoint ck5
err_has "N is a history record id"
# offline, without a store: the proof checked against the checkpoint
run 0 $RBA -S nowhere history prove 3 --checkpoint ck5 --proof p3.json
run 1 $RBA -S nowhere history prove 4 --checkpoint ck5 --proof p3.json
err_is "rebuild-audit: proof refused 'p3.json': the proof is of leaf 2 in a tree of 5 records, not of record 4 in the checkpoint's 5"
jq '.proof[1] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="' p3.json > bad.json
run 1 $RBA -S nowhere history prove 3 --checkpoint ck5 --proof bad.json
err_is "rebuild-audit: proof refused 'bad.json': the inclusion proof of record 3 does not check against the checkpoint's root"
jq '.extra = 1' p3.json > bad.json
run 2 $RBA -S nowhere history prove 3 --checkpoint ck5 --proof bad.json
err_is "rebuild-audit: cannot check proof 'bad.json': an unknown member 'extra'"

# ---- consistency and watch while the log grows ---------------------------------
$RBA -S st -q policy set $V "$P"
$RBA -S st -q policy set $V "$P"
run 0 $RBA -S st -q history checkpoint -k "$KEY" -o ck7
run 0 $RBA -S st --json history consistency ck5 ck7 --vkey vkey
ok "old_size, new_size, proof" jq -e '.old_size == 5 and .new_size == 7 and (.proof | length) > 0 and (keys | length) == 3' out
cp out c57.json
run 0 $RBA -S nowhere -q history consistency ck5 ck7 --proof c57.json
run 1 $RBA -S nowhere history consistency ck7 ck5
err_is "rebuild-audit: inconsistent checkpoints 'ck5': the newer checkpoint signs 5 records, fewer than the 7 the older signs: the history was cut short"
run 0 $RBA -S st history watch ck5 --vkey vkey
out_empty
err_empty
run 0 $RBA -S st -v history watch ck7
out_has "the log of 7 records extends checkpoint 'ck7'"

# a checkpoint signed by another key: refused, one line
run 0 $RBA -S st -q history checkpoint -k "$OKEY" -o other.ck
run 1 $RBA -S st history watch other.ck --vkey vkey
ok "one line" lines err 1
err_has "rebuild-audit: checkpoint refused 'other.ck': the checkpoint is not signed by $ORIGIN+"
run 1 $RBA -S st history consistency ck5 other.ck --vkey vkey
ok "one line" lines err 1
err_has "is not signed by"

# ---- the witness ----------------------------------------------------------
$RBA keygen -o wit > /dev/null 2>&1
run 0 $RBA -S st history cosign ck5 -k wit.key --vkey vkey --state w.state -o ck5w --origin witness.example/w1
ok "the log's line, then the witness's" sh -c "tail -n 2 ck5w | sed -n 1p | grep -q '^— $ORIGIN ' && tail -n 1 ck5w | grep -q '^— witness.example/w1 '"
ok "the state is the checkpoint cosigned" cmp -s ck5w w.state
run 0 $RBA -S st history vkey -p wit.pub --origin witness.example/w1
cp out wvkey
run 0 $RBA -S st history watch ck5w --vkey vkey --vkey wvkey
run 0 $RBA -S st history cosign ck7 -k wit.key --vkey vkey --state w.state -o ck7w --origin witness.example/w1
ok "the state follows" cmp -s ck7w w.state
run 1 $RBA -S st history cosign ck5 -k wit.key --vkey vkey --state w.state -o x --origin witness.example/w1
err_is "rebuild-audit: cosigning refused 'ck5': not consistent with the checkpoint of 7 records this witness cosigned last: the newer checkpoint signs 5 records, fewer than the 7 the older signs: the history was cut short"
ok "nothing written" test ! -e x
run 1 $RBA -S st history cosign other.ck -k wit.key --vkey vkey --state w.state -o x --origin witness.example/w1
err_has "rebuild-audit: cosigning refused 'other.ck': the checkpoint is not signed by $ORIGIN+"
run 2 $RBA -S st history cosign ck7 -k wit.key --vkey vkey -o x
err_has "history cosign needs"

# ---- a fork: a copy of the store that grows another way ------------------------
cp -a st fork
$RBA -S st -q policy set $V "$P"
sed 's/max_score_delta: 0.0005/max_score_delta: 0.0001/' "$P" > strict.yaml
ok "a stricter policy" test "$(cmp -s "$P" strict.yaml; echo $?)" = 1
$RBA -S fork -q policy set $V strict.yaml
run 0 $RBA -S st -q history checkpoint -k "$KEY" -o a8
run 0 $RBA -S fork -q history checkpoint -k "$KEY" -o b8
ok "one origin: the copy is the same store" test "$(sed -n 1p a8)" = "$(sed -n 1p b8)"
run 1 $RBA -S st history consistency a8 b8 --vkey vkey
ok "one line" lines err 1
err_has "rebuild-audit: inconsistent checkpoints 'b8': two trees of 8 records with roots "
err_has ": a fork, or a rewritten record"
run 0 $RBA -S st -q history consistency ck7 a8
run 0 $RBA -S fork -q history consistency ck7 b8
run 1 $RBA -S fork history watch a8 --vkey vkey
out_has "history watch: the store's log is not consistent with the checkpoint kept"
out_has "the history was rewritten or replaced (a fork)"
err_empty
run 1 $RBA -S fork history prove 8 --checkpoint a8
ok "one line" lines err 1
err_has "rebuild-audit: not in the checkpoint's log 'a8': the store's tree of 8 records has root "
# the witness that cosigned st's log refuses the fork's
run 0 $RBA -S st -q history cosign a8 -k wit.key --vkey vkey --state w.state -o a8w --origin witness.example/w1
cp w.state w.before
$RBA -S fork -q policy set $V "$P"
run 0 $RBA -S fork -q history checkpoint -k "$KEY" -o b9
run 1 $RBA -S fork history cosign b9 -k wit.key --vkey vkey --state w.state -o x --origin witness.example/w1
ok "one line" lines err 1
err_has "rebuild-audit: cosigning refused 'b9': not consistent with the checkpoint of 8 records this witness cosigned last: the tree of 8 records with root "
ok "the witness's state unchanged" cmp -s w.state w.before
ok "nothing written" test ! -e x

# ---- a truncated history: the store rolled back to a copy -----------------------
cp -a st old
$RBA -S st -q policy set $V "$P"
$RBA -S st -q policy set $V "$P"
run 0 $RBA -S st -q history checkpoint -k "$KEY" -o a10
run 1 $RBA -S old history watch a10
out_has "finding:     the history holds 8 records, fewer than the 10 the checkpoint signs: the history was cut short or rolled back"
run 1 $RBA -S old history prove 2 --checkpoint a10
err_is "rebuild-audit: not in the checkpoint's log 'a10': the history holds 8 records, fewer than the 10 the checkpoint signs: the history was cut short, or this is another log"
run 0 $RBA -S old -q history checkpoint -k "$KEY" -o o8
run 1 $RBA -S st history consistency a10 o8
err_has "the newer checkpoint signs 8 records, fewer than the 10 the older signs: the history was cut short"

# ---- a rewritten record: one byte of record 3 changed in place ------------------
cp -a st rw
mdb_dump -s history rw > h.txt
awk 'BEGIN { n = 0 } /^ 40/ { n++; if (n == 3) { l = length($0); c = substr($0, l - 3, 1);
	$0 = substr($0, 1, l - 4) (c == "0" ? "1" : "0") substr($0, l - 2) } } { print }' h.txt > h2.txt
ok "a history record was altered" test "$(cmp -s h.txt h2.txt; echo $?)" = 1
run 0 mdb_load -s history -f h2.txt rw
run 1 $RBA -S rw history watch a10
out_has "finding:     the history's chain is broken: tampered: history record 3 does not match its digest"
out_has "first record at fault: 3"
run 2 $RBA -S rw history prove 3 --checkpoint a10
err_has "tampered: history record 3 does not match its digest"
run 1 $RBA -S rw store check
out_has "history"

# ---- a stored hash of the log changed: found, and no audit extends it ----------
cp -a st dl
mdb_dump -s tlog dl > t.txt
awk 'BEGIN { n = 0 } /^ 6001/ { n++; if (n == 4) { c = substr($0, 10, 1);
	$0 = substr($0, 1, 9) (c == "0" ? "1" : "0") substr($0, 11) } } { print }' t.txt > t2.txt
ok "a stored hash was altered" test "$(cmp -s t.txt t2.txt; echo $?)" = 1
run 0 mdb_load -s tlog -f t2.txt dl
run 1 $RBA -S dl store check
out_has "tlog"
out_has "is not what the log holds"
T=$(txnid dl)
run 2 $RBA -S dl audit $V
err_has "the history is broken: tampered: history record "
err_has "is not what the log holds"
ok "nothing appended" test "$(txnid dl)" = "$T"
run 1 $RBA -S dl history watch ck5
out_has "is not what the log holds"

# ---- store check, and a store made before the log ------------------------------
run 0 $RBA -S st store check
out_has "log         10 of the 10 records as leaves of the Merkle tree, its 18 stored hashes each recomputed from the records"
run 0 $RBA -S st --json store check
ok "store check --json counts the log" jq -e '.checked.tlog_kept == 10 and .checked.tlog_hashes == 18' out
# the same store without its log database (as before the log)
mdb_dump -a st | awk '/^database=/ { skip = ($0 == "database=tlog") } !skip { print }' > nolog.txt
ok "the dump has no log" test "$(grep -c '^database=tlog' nolog.txt)" = 0
mkdir pre
run 0 mdb_load -f nolog.txt pre
ok "the store made before the log has no log database" sh -c "! mdb_stat -a pre | grep -q 'Status of tlog'"
run 0 $RBA -S pre store check
out_has "log         0 of the 10 records as leaves of the Merkle tree, its 0 stored hashes each recomputed from the records (the next append adds the rest)"
run 0 $RBA -S pre -q history consistency ck5 a10
run 0 $RBA -S pre history watch a10
T=$(txnid pre)
run 0 $RBA -S pre -q history prove 4 --checkpoint a10
ok "a read of the log writes nothing" test "$(txnid pre)" = "$T"
$RBA -S pre -q policy set $V "$P"
run 0 $RBA -S pre store check
out_has "log         11 of the 11 records as leaves of the Merkle tree, its 19 stored hashes"
run 0 $RBA -S pre history watch a10

# ---- evidence v4 ---------------------------------------------------------------
run 0 $RBA -S st export $V -k "$KEY" -o ev.json
out_has "log: the checkpoint of 10 records of $ORIGIN, and the inclusion proof of record 1 in it"
ok "v4 with the log" jq -e '.predicateType == "https://rebuild-audit.dev/audit-evidence/v4" and
	.predicate.log.index == 0 and .predicate.log.tree_size == 10 and .predicate.history.head.id == 10' ev.json
ok "the v4 schema accepts it" /usr/bin/jsonschema -i ev.json "$FIX/evidence/predicate-v4.schema.json"
run 0 $RBA verify ev.json -p "$PUB"
out_has "log: the checkpoint of 10 records of $ORIGIN is signed by $ORIGIN+"
out_has "(this file's key, verified)"
out_has "log: audit record 1 is leaf 0 of that tree: its inclusion proof (4 hashes) checks against the checkpoint's root"
run 0 $RBA verify ev.json --vkey vkey
run 1 $RBA verify ev.json -p "$PUB" --vkey ovkey
ok "one line" lines err 1
err_has "rebuild-audit: verification failed 'ev.json': the checkpoint is not signed by $ORIGIN+"
# a newer checkpoint: the log grew consistently, by the store's proof or a given one
$RBA -S st -q policy set $V "$P"
run 0 $RBA -S st -q history checkpoint -k "$KEY" -o a11
run 0 $RBA -S st verify ev.json --vkey vkey --checkpoint a11
out_has "log: checkpoint 'a11' of 11 records extends it"
$RBA -S st --json history consistency a10 a11 > c1011.json
run 0 $RBA -S nowhere verify ev.json --vkey vkey --checkpoint a11 --proof c1011.json
run 1 $RBA -S fork verify ev.json --vkey vkey --checkpoint b9
err_has "rebuild-audit: verification failed 'ev.json': "
run 1 $RBA -S nowhere verify ev.json --vkey vkey --checkpoint ck7
err_is "rebuild-audit: verification failed 'ev.json': the newer checkpoint signs 7 records, fewer than the 10 the older signs: the history was cut short"
# a changed proof hash, the file signed again: check 8 refuses it
H=$(jq -r '.predicate.log.proof[0]' ev.json)
sed "s|\"$H\"|\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"|" ev.json > x.json
ok "one hash changed" test "$(cmp -l ev.json x.json | wc -l)" -gt 0
minisign -S -s "$KEY" -m x.json -t "$(sed -n 's/^trusted comment: //p' ev.json.minisig)" > /dev/null 2>&1
run 1 $RBA verify x.json -p "$PUB"
ok "one line" lines err 1
err_is "rebuild-audit: verification failed 'x.json': the inclusion proof of audit record 1 does not check against the checkpoint's root: the record is not the log's leaf 0"
# export with a checkpoint a witness cosigned
run 0 $RBA -S st -q history cosign a11 -k wit.key --vkey vkey --state w2.state -o a11w --origin witness.example/w1
run 0 $RBA -S st -q export $V -k "$KEY" -o evw.json --checkpoint a11w
run 0 $RBA verify evw.json -p "$PUB" --vkey wvkey
out_has "witness.example/w1+"
out_has "(--vkey, verified)"
run 2 $RBA -S st export $V -k "$KEY" -o x3.json --checkpoint other.ck
err_has "the checkpoint is not signed by the export key under its origin"
run 2 $RBA -S fork export $V -k "$KEY" -o x3.json --checkpoint a8
err_is "rebuild-audit: cannot export '$V': the checkpoint's tree of 8 records is not this store's log"
# the report page shows the checkpoint, its signers and the proof
run 0 $RBA report evw.json -o evw.html -p "$PUB"
ok "the checkpoint on the page" grep -q 'id="checkpoint"' evw.html
ok "its signers" sh -c "grep -q 'verified: the key that signed this file' evw.html && grep -q 'witness.example/w1' evw.html"
ok "the proof's result" grep -q 'it checks against the checkpoint' evw.html
# older evidence still verifies; it carries no checkpoint for --vkey
run 0 $RBA verify "$FIX/evidence/v1/v1-bit-identical.json" -p "$PUB"
run 1 $RBA verify "$FIX/evidence/v1/v1-bit-identical.json" -p "$PUB" --vkey vkey
err_is "rebuild-audit: verification failed '$FIX/evidence/v1/v1-bit-identical.json': the file carries no checkpoint of the history's log (only audit-evidence/v4 does)"

# ---- a fleet import: its records are leaves like any --------------------------
run 0 $RBA -S st -q store snapshot snap
$RBA -S snap -q audit --all --shard 0/1 --records-out recs -k "$KEY" > /dev/null 2>&1
run 0 $RBA -S st -q history import recs -p "$PUB"
N=$($RBA -S st --json history head | jq .id)
ok "the import appended a record" test "$N" = 12
run 0 $RBA -S st -q history checkpoint -k "$KEY" -o a12
ok "the checkpoint after the import covers it" test "$(sed -n 2p a12)" = 12
run 0 $RBA -S st -q history prove 12 --checkpoint a12
run 0 $RBA -S st -q history consistency a11 a12
run 0 $RBA -S st -q store check
