# fleet: store snapshot, audit --all --shard K/N --records-out DIR -k KEY
# (workers run here as plain processes) and history import: the stable
# shard rule, the read-only snapshot, a killed worker and its rerun, and
# every refusal of the import (a changed byte, an unknown key, an unknown
# version, another store head, a record imported twice).
sh "$TOP/tests/fleet-store.sh" "$RBA" st 6 2 > /dev/null 2>&1
ok "a store of six versions" test "$($RBA -S st version list | wc -l)" = 6
$RBA keygen -o w > /dev/null 2>&1
$RBA keygen -o other > /dev/null 2>&1
$RBA -S st version list | awk '{print $1}' | sort > all.txt

# usage
run 2 $RBA -S st audit --shard 0/2 --records-out r -k w.key
err_has "go with --all"
run 2 $RBA -S st audit --all --shard 2/2 --records-out r -k w.key
err_has "--shard takes K/N with 0 <= K < N"
run 2 $RBA -S st audit --all --shard 0/2
err_has "go with --records-out DIR"
run 2 $RBA -S st audit --all --records-out r
err_has "needs -k KEY"
run 2 $RBA -S st audit --all --records-out r -k w.key --policy "$FIX/policy/credit.yaml"
err_has "no --policy"
run 2 $RBA -S st history import r
err_has "needs the workers' public key"
run 2 $RBA -S st history import -p w.pub
err_has "needs a records DIR"

# the hash rule: a partition by name, the same whatever the order
for k in 0 1 2; do $RBA -S st audit --all --shard $k/3 --split hash --list > list$k.txt; done
cat list0.txt list1.txt list2.txt | sort > union.txt
ok "three shards cover every version once" cmp -s union.txt all.txt
for v in $(cat list1.txt); do
	h=$(printf %s "$v" | sha256sum | cut -c1-16)
	ok "shard of $v is its digest mod 3" test "$(python3 -c "print(int('$h', 16) % 3)")" = 1
done

# the balanced rule (the default): a partition too, shown whole by
# --shards N --list with each shard's expected load
for k in 0 1 2; do $RBA -S st audit --all --shard $k/3 --list > blist$k.txt; done
cat blist0.txt blist1.txt blist2.txt | sort > bunion.txt
ok "three balanced shards cover every version once" cmp -s bunion.txt all.txt
run 0 $RBA -S st audit --all --shards 3 --list
out_has "shard 0/3: "
out_has "estimated from the pins"
out_has "split balanced: largest shard"
run 0 $RBA -S st --json audit --all --shards 3 --list
for k in 0 1 2; do
	jq -r ".versions[] | select(.shard == $k) | .version" out > jl$k.txt
	ok "the whole split's shard $k is --shard $k/3's" cmp -s jl$k.txt blist$k.txt
done
ok "json: a load per shard" test "$(jq '.load | length' out)" = 3
run 2 $RBA -S st audit --all --list
err_has "--list needs --shard K/N (its versions) or --shards N (the whole split)"
run 2 $RBA -S st audit --all --shards 3 --shard 0/3 --list
err_has "--shards N goes with --list, without --shard"
run 2 $RBA -S st audit --all --shards 0 --list
err_has "--shards takes N with 1 <= N <= 65536, not '0'"
run 2 $RBA -S st audit --all --shard 0/3 --split random --list
err_has "--split takes balanced or hash, not 'random'"
run 2 $RBA -S st history import r -p w.pub --split random
err_has "--split takes balanced or hash, not 'random'"

# keygen --check: a probe signed with the secret key, verified with the public
run 0 $RBA keygen --check w.key w.pub
out_has "key pair matches: key id"
run 1 $RBA keygen --check w.key other.pub
err_has "rebuild-audit: keys do not match 'w.key': its key id is"
run 2 $RBA keygen --check w.key missing.pub
err_has "cannot read public key 'missing.pub'"
run 2 $RBA keygen --check w.key
err_has "--check needs KEY and PUB"
run 0 $RBA -q keygen --check "$FIX/keys/minisign-test-only-enc.key" "$FIX/keys/minisign-test-only-enc.pub" \
	--passphrase-file "$FIX/keys/minisign-test-only-enc.passphrase"
out_empty
run 2 $RBA keygen --check "$FIX/keys/minisign-test-only-enc.key" "$FIX/keys/minisign-test-only-enc.pub"
err_has "the key is passphrase-protected: give --passphrase-file"
run 2 $RBA keygen --check w.key w.pub -o x
err_has "--check takes no -o or --comment"

# store snapshot: a read-only copy with its head; workers refuse the rest
run 0 $RBA -S st store snapshot snap
out_has "snapshot 'snap' of store"
out_has "history head record 0, sha256:0000"
run 2 $RBA -S st store snapshot snap
err_has "exists: a snapshot is made into a new directory"
ok "snapshot directory is read-only" test "$(stat -c %a snap)" = 555
ok "snapshot data is read-only" test "$(stat -c %a snap/data.mdb)" = 444
ok "no lock file in the snapshot" test ! -e snap/lock.mdb
run 0 $RBA -S snap store check
run 0 $RBA -S snap version list
ok "reading a snapshot leaves no lock file" test ! -e snap/lock.mdb
run 2 $RBA -S st audit --all --records-out r -k w.key
err_is "rebuild-audit: cannot open snapshot 'st': not a snapshot made by 'rebuild-audit store snapshot' (no rebuild-audit-snapshot file): workers read only snapshots, never the store itself"
cp -r snap snapw && chmod u+w snapw/data.mdb
run 2 $RBA -S snapw audit --all --records-out r -k w.key
err_is "rebuild-audit: cannot open snapshot 'snapw': a worker could write to 'snapw/data.mdb': a snapshot is read-only (chmod a-w, as 'store snapshot' leaves it)"
head0=$($RBA -S st -q history head)
run 2 $RBA -S snap audit --all --records-out r -k w.key --head sha256:1111111111111111111111111111111111111111111111111111111111111111
err_has "not the sha256:1111111111111111111111111111111111111111111111111111111111111111 this run was told to use"
ok "no record written by a refused worker" test ! -e r

# a serial audit --all on a copy: what the merged history must say
cp -r st serial
$RBA -S serial --json audit --all > serial.json
jq -r '.audits[] | "\(.version) \(.verdict)"' serial.json | sort > serial.txt

# two workers, the second killed after its first record: what a kill
# leaves (records are written atomically, so only whole ones and
# temporaries) is made by removing the records after the first
run 0 $RBA -S snap audit --all --shard 0/2 --records-out rec -k w.key --head "$head0" -q
out_empty
run 0 $RBA -S snap audit --all --shard 1/2 --records-out killed -k w.key -q
$RBA -S snap audit --all --shard 1/2 --list > list1of2.txt
ok "shard 1/2 of the snapshot holds two versions or more" test "$(wc -l < list1of2.txt)" -ge 2
keep=$(head -n 1 list1of2.txt)
for f in killed/*.json; do
	case $f in killed/$keep.*) mv "$f" "$f.minisig" rec/ ;; *) : ;; esac
done
echo partial > "rec/$(sed -n 2p list1of2.txt).0000000000000000.json.tmp-999999-0"
lost=$(sed -n '2,$p' list1of2.txt | sort)
run 2 $RBA -S st history import rec -p w.pub
for v in $lost; do err_has "rebuild-audit: not audited '$v': no worker record for this snapshot; rerun shard 1/2"; done
nlost=$(echo "$lost" | wc -w)
if [ "$nlost" = 1 ]; then out_has "0 refused, 1 version without a record"; else out_has "0 refused, $nlost versions without a record"; fi
# imported again before the rerun: the same versions are still missing
run 2 $RBA -S st history import rec -p w.pub
for v in $lost; do err_has "rebuild-audit: not audited '$v': no worker record for this snapshot; rerun shard 1/2"; done
ok "imported records moved into imported/" test "$(ls rec/imported/*.json | wc -l)" = $((6 - $(echo "$lost" | wc -w)))
# the rerun of shard 1/2 into the same directory skips what is done
run 0 $RBA -v -S snap audit --all --shard 1/2 --records-out rec -k w.key --head "$head0" -q
err_has "rebuild-audit: skipped '$keep': rec holds its record for this snapshot"
mkdir empty
run 0 $RBA -S st history import empty rec -p w.pub
out_has "$(echo "$lost" | wc -w) imported, 0 refused, 0 versions without a record; worst verdict: bit-identical (exit 0)"
# two directories, one giving nothing: that one is named
out_has "nothing to import 'empty': it holds no record"
out_lacks "nothing to import 'rec'"
# a finished directory imported again: nothing to do, and no false
# "no worker record" line
before=$(txnid st)
run 0 $RBA -S st history import rec -p w.pub
out_is_line() { printf '%s\n' "$1" > .want_out; if cmp -s out .want_out; then pass; else fail "stdout is not '$1'"; fi; }
out_is_line "nothing to import 'rec': its 6 records were imported before and every version is covered; worst verdict: bit-identical (exit 0)"
err_empty
ok "nothing written by an import with nothing to do" test "$(txnid st)" = "$before"
# two directories with nothing to import: each is named, not the first only
run 0 $RBA -S st history import rec empty -p w.pub
printf '%s\n' "nothing to import 'rec': its 6 records were imported before" \
	"nothing to import 'empty': it holds no record and every version is covered; worst verdict: bit-identical (exit 0)" > two.want
ok "two directories with nothing: each named on its line" cmp -s out two.want
err_empty
run 0 $RBA -S st --json history import rec empty -p w.pub
ok "json: each directory with its records and those imported before" test "$(jq -c '[.directories[] | [.dir, .records, .imported_before]]' out)" = '[["rec",0,6],["empty",0,0]]'
$RBA -S st --json history | jq -r '.[].record.version' | sort > audited.txt
ok "every version audited exactly once" cmp -s audited.txt all.txt
$RBA -S st --json history | jq -r '.[].record | "\(.version) \(.verdict)"' | sort > merged.txt
ok "the merged history has the serial verdicts" cmp -s merged.txt serial.txt
run 0 $RBA -S st history --verify
run 0 $RBA -S st store check
# an imported audit is exported and verified as any other
run 0 $RBA -S st export "$keep" -k w.key -o ev.json
run 0 $RBA verify ev.json -p w.pub
ok "the history record is the signed file, byte for byte" test \
  "$(jq -j .predicate.record ev.json | sha256sum | cut -c1-64)" = "$(sha256sum rec/imported/$keep.*.json | cut -c1-64)"

# tampering: every bad record refused with its reason, the rest imported
run 0 $RBA -S st store snapshot snap1
head1=$($RBA -S st -q history head)
run 0 $RBA -S snap1 audit --all --records-out rec1 -k w.key -q
mkdir bad
v1=$(sed -n 1p all.txt) v2=$(sed -n 2p all.txt)
f=$(ls rec1/$v1.*.json)
sed 's/"cases": 1000/"cases": 1001/' "$f" > bad/changed-byte.json
cp "$f.minisig" bad/changed-byte.json.minisig
ok "one byte changed" test "$(cmp -l "$f" bad/changed-byte.json | wc -l)" = 1
run 0 $RBA -S snap1 audit --all --records-out other-rec -k other.key -q
cp "$(ls other-rec/$v2.*.json)" bad/unknown-key.json
cp "$(ls other-rec/$v2.*.json.minisig)" bad/unknown-key.json.minisig
# a copy of the store (same id and head) with one more version
cp -r st st2
sed -e 's/^version: .*/version: extra-version/' "$FIX/pins/german-categorical-logistic.yaml" > extra.yaml
$RBA -S st2 -q register extra.yaml --policy "$FIX/policy/credit.yaml" > /dev/null
$RBA -S st2 -q sample add extra-version "$FIX/german-credit.csv" > /dev/null
run 0 $RBA -S st2 store snapshot snap2
run 0 $RBA -S snap2 audit --all --records-out rec2 -k w.key -q
cp rec2/extra-version.*.json bad/unknown-version.json
cp rec2/extra-version.*.json.minisig bad/unknown-version.json.minisig
# a copy whose history went on: another head
cp -r st st3
$RBA -S st3 -q audit "$v1" > /dev/null
run 0 $RBA -S st3 store snapshot snap3
run 0 $RBA -S snap3 audit --all --records-out rec3 -k w.key -q
cp "$(ls rec3/$v2.*.json)" bad/other-head.json
cp "$(ls rec3/$v2.*.json.minisig)" bad/other-head.json.minisig
# a record the first import took
cp "$(ls rec/imported/$v1.*.json)" bad/again.json
cp "$(ls rec/imported/$v1.*.json.minisig)" bad/again.json.minisig
before=$(txnid st)
run 2 $RBA -S st history import bad -p w.pub
ok "nothing written when every record is refused" test "$(txnid st)" = "$before"
# a whole run signed with a key the import was not given: one refusal per
# record, and each version it held named as not audited (its record was
# refused: not "no worker record")
run 2 $RBA -S st history import other-rec -p w.pub
ok "wrong key: a refusal and a 'not audited' line per record, nothing else" test "$(wc -l < err)" = 12
ok "wrong key: six refusals" test "$(grep -c "which is not a worker key given with -p" err)" = 6
for v in $(cat all.txt); do err_has "rebuild-audit: not audited '$v': its record was refused"; done
ok "wrong key: no misleading 'no worker record' line" sh -c '! grep -q "no worker record" err'
out_has "0 imported, 6 refused, 6 versions without a record"
run 2 $RBA -S st history import rec1 bad -p w.pub
err_has "rebuild-audit: refused record 'bad/changed-byte.json': the signature does not verify: the record or its signature was changed"
err_has "rebuild-audit: refused record 'bad/unknown-key.json': signed by key $(sed -n 2p other.pub | base64 -d | od -A n -t x1 -j 2 -N 8 | tr -d ' \n' | sed 's/\(..\)/\1 /g' | awk '{for (i = NF; i > 0; i--) printf "%s", toupper($i)}'), which is not a worker key given with -p"
err_has "rebuild-audit: refused record 'bad/unknown-version.json': no version 'extra-version' in this store"
err_has "rebuild-audit: refused record 'bad/other-head.json': made against snapshot head record $($RBA -S st3 --json history head | jq .id) $($RBA -S st3 -q history head), which this store's history does not hold"
err_has "rebuild-audit: refused record 'bad/again.json': already imported as history record"
ok "five refusals, nothing else on stderr" test "$(wc -l < err)" = 5
out_has "6 imported, 5 refused, 0 versions without a record; worst verdict: bit-identical (exit 2)"
ok "refused records stay where they are" test "$(ls bad/*.json | wc -l)" = 5
run 0 $RBA -S st history --verify
run 0 $RBA -S st store check
# the same directory again: each record already imported
cp rec1/imported/* rec1/
run 2 $RBA -S st --json history import rec1 -p w.pub
ok "json: six refused as already imported" test "$(jq '[.refused[] | select(.reason | startswith("already imported"))] | length' out)" = 6
ok "json: exit status" test "$(jq .exit_status out)" = 2
$RBA -S st --json history | jq -r '.[].record | "\(.version) \(.worker.snapshot_head)"' | sort | uniq -d > dups.txt
ok "no version audited twice against one snapshot" test ! -s dups.txt
# a record that contradicts itself, signed with the worker key: verdict
# bit-identical with 7 flips and a rebuilt artifact that is not the
# pinned one; refused by the import with export's rules, nothing appended
tcomment() { sed -n '3s/^trusted comment: //p' "$1"; }
run 0 $RBA -S st store snapshot snap4
run 0 $RBA -S snap4 audit --all --records-out rec4 -k w.key -q
mkdir forged
f=$(ls rec4/$v1.*.json)
sed -E 's/"flips": 0,/"flips": 7,/; s/("artifact_rebuilt": "sha256:)[0-9a-f]{64}/\1eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/' "$f" > forged/forged.json
ok "the forged record differs in two places" test "$(cmp -l "$f" forged/forged.json | wc -l)" -gt 2
minisign -S -s w.key -m forged/forged.json -t "$(tcomment "$f.minisig")" > /dev/null 2>&1
run 0 minisign -Vm forged/forged.json -p w.pub
before=$(txnid st)
run 2 $RBA -S st history import forged -p w.pub
err_has "rebuild-audit: refused record 'forged/forged.json': inconsistent: verdict bit-identical, but the rebuilt artifact sha256:eeeeeeee"
ok "nothing appended for the forged record" test "$(txnid st)" = "$before"
ok "the forged record stays where it is" test -e forged/forged.json
run 0 $RBA -S st store check
# an audit of an older snapshot imported after a newer audit of its
# version: refused, so it never becomes the version's latest
run 0 $RBA -S st -q audit "$v1"
newer=$($RBA -S st --json history "$v1" | jq '.[0].id')
cp "$f" "$f.minisig" forged/
rm forged/forged.json forged/forged.json.minisig
before=$(txnid st)
run 2 $RBA -S st history import forged -p w.pub
err_has "rebuild-audit: refused record 'forged/$(basename "$f")': an audit of version '$v1' was committed after the snapshot it was made from (history record $newer, after snapshot head record"
ok "nothing appended for the older audit" test "$(txnid st)" = "$before"
ok "the version's latest is still the newer audit" test "$($RBA -S st --json history "$v1" | jq '.[0].id')" = "$newer"
# the rest of that snapshot's records import (the versions audited since
# it are refused one line each)
run 2 $RBA -S st history import rec4 -p w.pub
out_has "5 imported, 1 refused"
err_has "refused record 'rec4/$v1."
# --set-aside: a refused record (here one forged with the worker key) is
# moved with its signature into DIR/refused/ beside a note of why, never
# deleted; its version is named with its shard, so the rerun of that
# shard audits it again (a record set aside is not the worker's), and
# the next import of the directory no longer trips on it
run 0 $RBA -S st store snapshot snap5
run 0 $RBA -S snap5 audit --all --shard 0/2 --records-out rec5 -k w.key -q
run 0 $RBA -S snap5 audit --all --shard 1/2 --records-out rec5 -k w.key -q
v5=$($RBA -S snap5 audit --all --shard 1/2 --list | head -n 1)
f5=$(ls rec5/$v5.*.json)
b5=$(basename "$f5")
sed -E 's/"flips": 0,/"flips": 7,/; s/("artifact_rebuilt": "sha256:)[0-9a-f]{64}/\1eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/' "$f5" > forged5.json
minisign -S -s w.key -m forged5.json -t "$(tcomment "$f5.minisig")" > /dev/null 2>&1
mv forged5.json "$f5"
mv forged5.json.minisig "$f5.minisig"
cp "$f5" forged5.copy
run 2 $RBA -S st history import rec5 -p w.pub --set-aside
err_has "rebuild-audit: refused record 'rec5/$b5': inconsistent: verdict bit-identical"
err_has "rebuild-audit: not audited '$v5': its record was refused; rerun shard 1/2"
ok "one refusal, one version named, nothing else" test "$(wc -l < err)" = 2
out_has "set aside rec5/refused/$b5"
out_has "5 imported, 1 refused, 1 version without a record; worst verdict: bit-identical (exit 2)"
ok "the refused record is in refused/, byte for byte" cmp -s rec5/refused/$b5 forged5.copy
ok "its signature beside it" test -f rec5/refused/$b5.minisig
ok "no record left at the top of the directory" test -z "$(ls rec5/*.json 2> /dev/null)"
ok "a note says when and why" grep -q "^20[0-9-]*T[0-9:]*Z refused by history import: inconsistent: verdict bit-identical" rec5/refused/$b5.why
run 2 $RBA -S st history import rec5 -p w.pub --set-aside
err_is "rebuild-audit: not audited '$v5': no worker record for this snapshot; rerun shard 1/2"
run 0 $RBA -v -S snap5 audit --all --shard 1/2 --records-out rec5 -k w.key -q
err_lacks() { if grep -qF -- "$1" err; then fail "stderr has '$1'"; else pass; fi; }
err_lacks "skipped '$v5'"
run 0 $RBA -S st history import rec5 -p w.pub --set-aside
out_has "1 imported, 0 refused, 0 versions without a record; worst verdict: bit-identical (exit 0), with the 5 records imported before"
# a name already taken in refused/ is never replaced
cp forged5.copy rec5/$b5
cp rec5/refused/$b5.minisig rec5/$b5.minisig
echo keep > keep.note
cp keep.note rec5/refused/${b5%.json}.2.json.why
run 2 $RBA -S st history import rec5 -p w.pub --set-aside
out_has "set aside rec5/refused/${b5%.json}.3.json"
ok "the first set-aside record is unchanged" cmp -s rec5/refused/$b5 forged5.copy
ok "a note already there is unchanged" cmp -s rec5/refused/${b5%.json}.2.json.why keep.note
ok "the second one has its own name" cmp -s rec5/refused/${b5%.json}.3.json forged5.copy
# when it cannot be set aside (refused/ is a file here), it stays, said
mkdir rec6
cp forged5.copy rec6/$b5
cp rec5/refused/$b5.minisig rec6/$b5.minisig
: > rec6/refused
run 2 $RBA -S st history import rec6 -p w.pub --set-aside
err_has "rebuild-audit: warning: refused 'rec6/$b5' but could not set it aside in refused/: "
ok "a record that could not be set aside stays where it was" cmp -s rec6/$b5 forged5.copy
run 0 $RBA -S st history --verify
# a broken history stops the import once it holds the records it read,
# said as such (not a fault of reading the store)
cp -r st st-broken
python3 - st-broken/data.mdb <<'PY'
import sys
path, pat = sys.argv[1], b'"schema": "rebuild-audit/audit/v1"'
data = bytearray(open(path, "rb").read())
at = data.find(pat)
while at >= 0:
    data[at + 30] ^= 2
    at = data.find(pat, at + 1)
open(path, "wb").write(data)
PY
run 2 $RBA -S st-broken history import rec6 -p w.pub
err_has "rebuild-audit: cannot import 'st-broken': the history is broken: tampered: history record "
# contrib/kubernetes: the manifests' shape (no cluster here)
ok "kubernetes manifests have their shape" python3 "$TOP/tests/check-k8s.py" "$TOP/contrib/kubernetes"
mkdir k8s
sed 's/completionMode: Indexed/completionMode: NonIndexed/' "$TOP/contrib/kubernetes/rebuild-audit-shards.yaml" > k8s/rebuild-audit-shards.yaml
sed 's/readOnly: true}/}/' "$TOP/contrib/kubernetes/rebuild-audit-nightly.yaml" > k8s/rebuild-audit-nightly.yaml
python3 "$TOP/tests/check-k8s.py" k8s > k8s.out
ok "the shape check sees a Job that is not Indexed" grep -q "completionMode Indexed" k8s.out
ok "the shape check sees the manifests' errors only" test "$(wc -l < k8s.out)" = 1
chmod -R u+w . 2> /dev/null
