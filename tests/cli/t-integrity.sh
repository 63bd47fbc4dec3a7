# integrity: the four places the tool once said "fine" (or died) where it
# had not checked, each reproduced on a store made from fixtures/, and
# store check, the tool's fsck.
V=german-numeric-logistic
POL=$FIX/policy/credit.yaml
PINS=$FIX/pins/german-numeric-logistic.yaml
head -n 201 "$FIX/german-credit-numeric.csv" > cases.csv

# flip FILE PATTERN-HEX DELTA BIT: flips BIT of the byte DELTA bytes after
# every match of the byte pattern in FILE (LMDB's free pages may hold
# older copies of a record; flipping them too is harmless).
flip() {
	python3 - "$@" <<'PY'
import sys
path, pat, delta, bit = sys.argv[1], bytes.fromhex(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = bytearray(open(path, "rb").read())
at, hits = data.find(pat), 0
while at >= 0:
    data[at + delta] ^= 1 << bit
    hits += 1
    at = data.find(pat, at + 1)
if hits == 0:
    sys.exit("flip: pattern not found")
open(path, "wb").write(data)
PY
}
# The start of the sample record of version $1: tag, format, lstr name.
samplerec() { printf '3001%02x000000%s' "$(printf '%s' "$1" | wc -c)" "$(hex "$1")"; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
# A fresh store with one version, its 200-case sample and two audits.
fresh() {
	rm -rf st
	$RBA -S st init > /dev/null &&
	$RBA -S st snapshot add "$FIX/german-credit-numeric.csv" > /dev/null &&
	$RBA -S st -q register "$PINS" --policy "$POL" > /dev/null &&
	$RBA -S st -q sample add $V cases.csv &&
	$RBA -S st -q audit $V && $RBA -S st -q audit $V
}
ok "a store to damage" fresh

# store check on a healthy store: exit 0 and what it checked
run 0 $RBA -S st store check
out_has "samples     1 samples in 1 chunks: 200 case ids looked up in 200 index entries"
out_has "history     2 records, chain and head; each audit record consistent by itself, by the rules export applies"
out_has "clean: no damage found"
run 0 $RBA -S st --json store check
ok "store check --json: clean" jq -e '.clean == true and .findings == [] and .checked.cases == 200' out
run 2 $RBA -S st store check extra
err_has "bad usage"
run 2 $RBA -S nostore store check
err_has "cannot open store 'nostore'"

# 1. A damaged sample record: audit --all names the version and exits 2,
# even with -q; version show and list say the sample is damaged.
ok "hole 1: flip a byte of the sample record" flip st/data.mdb "$(samplerec $V)" 8 2
run 2 $RBA -S st audit $V
err_has "does not match its seal"
run 2 $RBA -S st -q audit --all
err_has "'$V'"
err_has "tampered"
run 2 $RBA -S st audit --all
err_has "'$V'"
run 0 $RBA -S st version show $V
out_has "damaged"
out_lacks "sample      none"
run 0 $RBA -S st version list
out_has "damaged"
run 1 $RBA -S st store check
out_has "tampered samples '$V'"
run 1 $RBA -S st --json store check
ok "store check --json names the database and key" jq -e --arg v "$V" \
	'.clean == false and (.findings | map(select(.database == "samples" and .key == $v)) | length) >= 1' out
# ... and one damaged version does not stop the others
ok "hole 1: fresh store" fresh
sed "s/^version: .*/version: second/" "$PINS" > second.yaml
ok "a second version" $RBA -S st -q register second.yaml --policy "$POL"
ok "its sample" $RBA -S st -q sample add second cases.csv
ok "hole 1: flip the first version's sample record" flip st/data.mdb "$(samplerec $V)" 8 2
run 2 $RBA -S st -q audit --all
ok "the other version was audited" sh -c "$RBA -S st --json history second | jq -e 'length == 1' > /dev/null"

# A version without a sample is named too, and the run exits 2.
ok "fresh store" fresh
sed "s/^version: .*/version: nosample/" "$PINS" > nosample.yaml
ok "a version without a sample" $RBA -S st -q register nosample.yaml --policy "$POL"
run 2 $RBA -S st -q audit --all
err_has "'nosample'"
err_has "no audit sample"

# 2. A damaged case index: dispute says damaged (never "no case"), audit
# and store check say no.  Case 17's key "<len>V\x02" "17", then its value.
ok "hole 2: fresh store" fresh
run 0 $RBA -S st dispute $V 17
run 0 env REBUILD_AUDIT_TEST_WALK=after $RBA_TEST -S st -q audit $V
ok "hole 2: flip a byte of case 17's index key" flip st/data.mdb "$(hex "$V")0231373201" 25 6
run 2 $RBA -S st dispute $V 17
err_has "damaged"
ok "not reported as absent" sh -c "! grep -q 'no case' err"
run 2 $RBA -S st -q audit $V
err_has "case index"
# two threads: the workers sum the ids of the chunks they decode
run 2 $RBA -S st -q audit $V --threads 2
err_has "case index"
# the index walked after the pass, as when a write lands between the
# pass's read and the walk's (the test binary's seam)
run 2 env REBUILD_AUDIT_TEST_WALK=after $RBA_TEST -S st -q audit $V
err_has "case index"
run 2 $RBA -S st -q audit --all
run 1 $RBA -S st store check
out_has "samples '$V/17'"
# A case that was never there is still "no case".
ok "hole 2: fresh store" fresh
run 2 $RBA -S st dispute $V 9999
err_has "no case '9999'"
# A byte of an index entry's value (the chunk number).
ok "hole 2: flip case 18's chunk number" flip st/data.mdb "$(hex "$V")02313832" 29 0
run 2 $RBA -S st dispute $V 18
err_has "damaged"
run 2 $RBA -S st -q audit $V
err_has "case index"
run 2 $RBA -S st -q audit $V --threads 2
err_has "case index"
run 2 env REBUILD_AUDIT_TEST_WALK=after $RBA_TEST -S st -q audit $V --threads 2
err_has "case index"
run 1 $RBA -S st store check

# A flip in a branch page's separator key: the leaves are intact, but
# lookups for a range of cases go to the wrong leaf.  The walk of an
# audit does not read separators; its lookups of each leaf's first and
# last entry do.
ok "hole 2: fresh store" fresh
ok "hole 2: flip a separator of the index's branch page" python3 - st/data.mdb "$V" <<'PY'
import struct, sys
path, v = sys.argv[1], sys.argv[2].encode()
d = bytearray(open(path, "rb").read())
ps, hits = 4096, 0
for pg in range(len(d) // ps):
    base = pg * ps
    pgno, _, flags, lower, _ = struct.unpack_from("<QHHHH", d, base)
    if pgno != pg or not flags & 1:
        continue
    for i in range(1, (lower - 16) // 2):
        off = struct.unpack_from("<H", d, base + 16 + 2 * i)[0]
        ksize = struct.unpack_from("<H", d, base + off + 6)[0]
        key = d[base + off + 8:base + off + 8 + ksize]
        want = bytes([len(v)]) + v + b"\x02"
        if key.startswith(want) and len(key) > len(want) + 1:
            d[base + off + 8 + len(want) + 1] ^= 1  # "181" -> "191"
            hits += 1
            break
    if hits:
        break
if not hits:
    sys.exit("no separator found")
open(path, "wb").write(d)
PY
run 2 $RBA -S st -q audit $V
err_has "case index"
run 2 env REBUILD_AUDIT_TEST_WALK=after $RBA_TEST -S st -q audit $V
err_has "case index"
run 2 $RBA -S st -q audit --all
bad=0; absent=0
for c in $(seq 1 200); do
	$RBA -S st -q dispute $V $c > out 2> err
	grep -q "damaged" err && bad=$((bad + 1))
	grep -q "no case" err && absent=$((absent + 1))
done
ok "some disputes say damaged ($bad)" test $bad -gt 0
ok "no dispute says 'no case' ($absent)" test $absent -eq 0
run 1 $RBA -S st store check
out_has "samples '$V/"

# 3. Decisions made by another artifact are never bit-identical.
ok "hole 3: fresh store" fresh
sed 's/lr: 0.01,/lr: 0.01000001,/' "$PINS" > lr7.yaml
ok "pins that differ in the 7th digit of lr" sh -c "! cmp -s lr7.yaml '$PINS'"
old=$($RBA -S st --json version show $V | jq -r .artifact)
run 0 $RBA -S st register lr7.yaml --replace
err_has "warning"
err_has "$(printf '%s' "$old" | cut -c1-19)"
new=$($RBA -S st --json version show $V | jq -r .artifact)
ok "a different artifact" test "$old" != "$new"
ok "the policy was kept" sh -c "$RBA -S st --json version show $V | jq -e '.policy != null' > /dev/null"
# a dispute before any audit of the new pin: the decision is another
# artifact's, and nothing on record vouches for it
run 1 $RBA -S st dispute $V 3
out_has "decided by  $(printf '%s' "$old" | cut -c1-23) (another artifact than the rebuilt one)"
out_lacks "bit-identical"
out_has "escalate: the stored decision was made by artifact $old"
run 1 $RBA -S st --json dispute $V 3
ok "dispute --json names the decisions' artifact" jq -e --arg o "$old" \
	'.digests.artifact_decisions == $o and .answer == "escalate"' out
run 0 $RBA -S st policy set $V "$POL"
err_empty
sed 's/below: 0.30/below: 0.31/' "$POL" > pol31.yaml
run 0 $RBA -S st policy set $V pol31.yaml
err_has "the policy the sample of '$V' was added under, in decision band 1: it judges only samples added from now on"
run 0 $RBA -S st -q policy set $V "$POL"
run 1 $RBA -S st audit $V
out_lacks ": bit-identical"
out_has "decisions made by"
out_has "$(printf '%s' "$old" | cut -c1-19)"
out_has "$(printf '%s' "$new" | cut -c1-19)"
run 1 $RBA -S st --json audit $V
ok "audit --json names both artifacts" jq -e --arg o "$old" --arg n "$new" \
	'.audits[0] | .verdict != "bit-identical" and .digests.artifact_decisions == $o and .digests.artifact_rebuilt == $n' out
run 0 $RBA -S st history $V
out_has "$(printf '%s' "$old" | cut -c8-19)"
out_has "$(printf '%s' "$new" | cut -c8-19)"
run 0 $RBA -S st --json history $V
ok "history names the artifact of each audit" jq -e --arg o "$old" --arg n "$new" \
	'(map(.record.digests.artifact_rebuilt) | index($n)) != null and (map(.record.digests.artifact_decisions) | index($o)) != null and (map(.record.artifact_old) | index($o)) != null' out
dcase=$($RBA -S st --json sample show $V 3 | jq -r .case)
$RBA -S st dispute $V "$dcase" > out 2> err
ok "dispute names the artifact that made the decision" grep -qF "$(printf '%s' "$old" | cut -c1-19)" out

# A sample of several chunks (20,000 cases): the pass's
# helper thread runs, and at one thread the case index is walked in the
# waits of the pass's two threads (store_sample_stream_indexed), at two
# on a thread of its own.  Every way holds a sound index and names a
# damaged one.
awk -F, 'NR == 1 { print; next } { rows[++n] = $0 }
	END { for (i = 1; i <= 20000; i++) { r = rows[(i - 1) % n + 1];
		sub(/^[^,]*/, i, r); print r } }' "$FIX/german-credit-numeric.csv" > big.csv
big() {
	rm -rf st
	$RBA -S st init > /dev/null &&
	$RBA -S st snapshot add "$FIX/german-credit-numeric.csv" > /dev/null &&
	$RBA -S st -q register "$PINS" --policy "$POL" > /dev/null &&
	$RBA -S st -q sample add $V big.csv
}
ok "several chunks: a store" big
run 0 $RBA -S st --json sample show $V
ok "several chunks" sh -c "jq -e '.chunks >= 3 and .cases == 20000' out > /dev/null"
run 0 $RBA -S st -q audit $V
run 0 $RBA -S st -q audit $V --threads 2
run 0 env REBUILD_AUDIT_TEST_WALK=after $RBA_TEST -S st -q audit $V
# Case 3000 (chunk 0) indexed in chunk 1: the walk's sum is not the
# chunks' (bit 0 of its chunk number's low byte, 30 bytes on).
ok "several chunks: case 3000 indexed in chunk 1" flip st/data.mdb "$(hex "$V")0233303030" 30 0
for t in 1 2; do
	run 2 $RBA -S st -q audit $V --threads $t
	err_has "the case index of version '$V' is damaged: its entries are not the case ids of the chunks"
done
run 2 env REBUILD_AUDIT_TEST_WALK=after $RBA_TEST -S st -q audit $V
err_has "its entries are not the case ids of the chunks"
# Case 18000's chunk number out of range: the walk's own error.
ok "several chunks: fresh store" big
ok "several chunks: case 18000 256 chunks on" flip st/data.mdb "$(hex "$V")023138303030" 32 0
for t in 1 2; do
	run 2 $RBA -S st -q audit $V --threads $t
	err_has "case index"
	err_has "malformed"
done
run 1 $RBA -S st store check

# 4. Structural damage never kills the process (sanitizer builds keep
# their own fault handlers, which report a fault as the bug it would be)
[ -n "${RBA_SANITIZED:-}" ] && return 0
# A flip in the node header of the versions leaf makes LMDB read past
# the map: the node of the version record (tag 20, format 02) held in
# the leaf after its key, or, once it outgrows a node, in overflow pages
# (the node's flags F_BIGDATA, 01 00, then the key's size and the key).
flip_version_node() {
	flip st/data.mdb "$(hex "$V")2002" -6 5 2> /dev/null ||
		flip st/data.mdb "0100$(printf '%02x' ${#V})00$(hex "$V")" -2 5
}
ok "hole 4: fresh store" fresh
ok "hole 4: flip the version record's node size" flip_version_node
for cmd in "version list" "-q audit --all" "version show $V" "store check" "dispute $V 7"; do
	$RBA -S st $cmd > out 2> err
	got=$?
	ok "no signal death: $cmd (exit $got)" test "$got" -lt 128
	ok "not exit 0: $cmd" test "$got" -ne 0
	ok "one line: $cmd" test "$(wc -l < err)" -le 1
done

# An outside anchor for the history: history head, and --verify --head.
ok "anchor: fresh store" fresh
run 0 $RBA -S st history head
out_has "history head: record 2, sha256:"
run 0 $RBA -S st --json history head
ok "history head --json" jq -e '.id == 2 and (.digest | startswith("sha256:"))' out
h2=$($RBA -S st -q history head)
ok "history head -q prints the digest alone" test "$(printf '%s' "$h2" | wc -c)" -eq 71
cp -r st st-old
ok "a third audit" $RBA -S st -q audit $V
run 0 $RBA -S st history --verify --head "$h2"
out_has "history intact: 3 records, the anchored head is record 2"
h3=$($RBA -S st -q history head)
# st-old is st rolled back to before the third audit: self-consistent, so
# only the anchor sees it.
run 0 $RBA -S st-old history --verify
run 1 $RBA -S st-old history --verify --head "$h3"
out_has "history does not hold the anchored head $h3"
run 1 $RBA -S st-old --json history --verify --head "$h3"
ok "--json: head not found" jq -e '.head_found == false and .intact == false and .records == 2' out
run 2 $RBA -S st history --verify --head nonsense
err_has "--head needs a digest"
run 2 $RBA -S st history --head "$h3"
err_has "--head goes with --verify"
# the head of an empty history is the zero digest, held by every history
run 0 $RBA -S empty init
zero=sha256:0000000000000000000000000000000000000000000000000000000000000000
run 0 $RBA -S empty -q history head
out_has "$zero"
run 0 $RBA -S st history --verify --head "$zero"

# history of a version the store does not hold; --json on an empty store
run 2 $RBA -S st history nosuch
err_is "rebuild-audit: cannot read history 'nosuch': no version 'nosuch' in the store"
run 0 $RBA -S empty --json history
ok "empty --json history is []" test "$(cat out)" = "[]"
# --json --verify counts every record held, also when the chain breaks
ok "break the chain" flip st/data.mdb "$(hex '"schema": "rebuild-audit/audit/v1"')" 30 1
run 1 $RBA -S st --json history --verify
ok "--json --verify: records held" jq -e '.intact == false and .records == 3' out
run 2 $RBA -S st -q audit $V
err_has "the history is broken"

# dispute warns when a stored score contradicts its stored decision
{
	echo "case,score,decision,$(head -n 1 "$FIX/german-credit-numeric.csv")"
	sed -n '2,4p' "$FIX/german-credit-numeric.csv" | awk '{
		n++; s = (n == 2) ? "0.1" : "0.9"; d = (n == 2) ? "decline" : "decline"
		printf "c%d,%s,%s,%s\n", n, s, d, $0 }'
} > scored.csv
ok "contradiction: fresh store" fresh
run 0 $RBA -S st -q sample add $V scored.csv --id-column case --score-column score --decision-column decision
run 0 $RBA -S st dispute $V c2
out_has "warning: the stored score 0.1 gives 'approve' under the policy in force, but the stored decision is 'decline'"
run 0 $RBA -S st --json dispute $V c2
ok "--json warnings" jq -e '.warnings | length == 1' out
$RBA -S st dispute $V c1 > out 2> err
out_lacks "warning:"

# A meta page whose page size reads as zero: LMDB divides by it as the
# store opens (SIGFPE), caught like the other faults (found by fuzz_store).
mkdir fpe
cp "$FIX/fuzz/store/crash-sigfpe-zero-page-size.mdb" fpe/data.mdb
run 2 $RBA -S fpe store check
err_is "rebuild-audit: cannot read store 'fpe': the store is damaged: reading it faulted (SIGFPE); run 'rebuild-audit store check'"

