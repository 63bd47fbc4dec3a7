#!/bin/sh
# seeds.sh RBA - (re)makes the seed corpora fixtures/fuzz/<target>/seed-*
# from fixtures/ and from a scratch store built with the binary RBA.
# Crash inputs (crash-*), hand-made mutations (mut-*) and dictionaries
# are kept as they are.  Run by
# hand when a format changes; make check only replays what is kept.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
RBA=${1:?usage: seeds.sh path/to/rebuild-audit}
FIX=$top/fixtures
out=$FIX/fuzz
w=$(mktemp -d "${TMPDIR:-/tmp}/rba-seeds.XXXXXX")
trap 'rm -rf "$w"' EXIT INT TERM
for t in artifact chunk csv evidence note pins policy report sign store xgboost; do
	mkdir -p "$out/$t"
	rm -f "$out/$t"/seed-*
done

# csv: the heads of the real files, every invalid snapshot, a few shapes.
head -n 6 "$FIX/german-credit.csv" > "$out/csv/seed-german-head.csv"
head -n 6 "$FIX/german-credit-numeric.csv" > "$out/csv/seed-numeric-head.csv"
for f in "$FIX"/invalid/snap-*.csv; do cp "$f" "$out/csv/seed-$(basename "$f")"; done
printf '\357\273\277id,"a ""q""",b\r\n1,"x,y",2.5\r\n2,,-1e3\r\n' > "$out/csv/seed-bom-crlf-quotes.csv"
printf 'a,b\n"multi\nline",1\n' > "$out/csv/seed-multiline.csv"

# xgboost: the fixture models XGBoost wrote (fixtures/xgboost/make.py).
for f in "$FIX"/xgboost/*.json; do cp "$f" "$out/xgboost/seed-$(basename "$f")"; done

# pins and policy: the valid fixtures and every invalid one.
for f in "$FIX"/pins/*.yaml "$FIX"/invalid/pins-*.yaml; do cp "$f" "$out/pins/seed-$(basename "$f")"; done
for f in "$FIX"/policy/*.yaml "$FIX"/invalid/policy-*.yaml; do cp "$f" "$out/policy/seed-$(basename "$f")"; done

# sign: selector byte (0 public key, 1 secret key, 2 signature) + file.
i=0
for f in "$FIX"/keys/*.pub; do
	{ printf '\000'; cat "$f"; } > "$out/sign/seed-pub-$i"; i=$((i + 1))
done
for f in "$FIX"/keys/*.key; do
	{ printf '\001'; cat "$f"; } > "$out/sign/seed-key-$i"; i=$((i + 1))
done
for f in "$FIX"/keys/message.txt*.minisig; do
	{ printf '\002'; cat "$f"; } > "$out/sign/seed-sig-$i"; i=$((i + 1))
done

# A small store: a synthetic snapshot, a version, a sample, an audit,
# evidence.  Its artifact, chunks, evidence and data.mdb are seeds.
cd "$w"
S="$RBA -S st"
$S init > /dev/null
cp st/data.mdb "$out/store/seed-empty.mdb"
V=german-numeric-logistic
$S snapshot add "$FIX/german-credit-numeric.csv" > /dev/null
$S register "$FIX/pins/$V.yaml" --policy "$FIX/policy/credit.yaml" > /dev/null
head -n 9 "$FIX/german-credit-numeric.csv" > cases.csv
$S sample add $V cases.csv > /dev/null
$S audit $V > /dev/null
$RBA keygen -o k > /dev/null
$S export $V -k k.key -o ev.json > /dev/null
$S version export-artifact $V "$out/artifact/seed-$V.bin" > /dev/null
$RBA train "$FIX/pins/german-numeric-mlp.yaml" -o "$out/artifact/seed-mlp.bin" \
	--snapshot "$FIX/german-credit-numeric.csv" > /dev/null
tc=$(sed -n '3s/^trusted comment: //p' ev.json.minisig)
cp ev.json "$out/evidence/seed-evidence.json"
{ printf '%s\000' "$tc"; cat ev.json; } > "$out/evidence/seed-evidence-comment.json"

# report: verified evidence the harness mutates: the first formats, audit
# v2 and v3 (every case), dispute v2, under a policy with statements v3,
# and with a level unseen in training v4.
cp "$FIX/evidence/v1/v1-not-reproducible.json" "$out/report/seed-audit-v1.json"
cp "$FIX/evidence/dispute-v1.json" "$out/report/seed-dispute-v1.json"
cp ev.json "$out/report/seed-audit-v2.json"
$S export $V -k k.key -o ev3.json --cases > /dev/null
cp ev3.json "$out/report/seed-audit-v3.json"
$S dispute $V 3 --export -k k.key -o dv2.json > /dev/null || true
cp dv2.json "$out/report/seed-dispute-v2.json"

# More chunk shapes: text columns (dictionaries), an id column, stored
# scores and decisions from columns.
$S snapshot add "$FIX/german-credit.csv" > /dev/null
$S register "$FIX/pins/german-categorical-logistic.yaml" --policy "$FIX/policy/credit.yaml" > /dev/null
head -n 7 "$FIX/german-credit.csv" | awk -F, 'BEGIN { OFS = "," }
	NR == 1 { print "case", $0, "score", "decision"; next }
	{ print "c-" NR, $0, (NR % 2 ? "0.25" : "0.75"), (NR % 2 ? "approve" : "review") }' > cat.csv
$S sample add german-categorical-logistic cat.csv --id-column case \
	--score-column score --decision-column decision > /dev/null
# report: dispute evidence v3, under a policy with reason statements.
R3="$RBA -S st3"
$R3 init > /dev/null
$R3 snapshot add "$FIX/german-credit.csv" > /dev/null
$R3 register "$FIX/pins/german-categorical-logistic.yaml" --policy "$FIX/policy/credit-statements.yaml" > /dev/null
head -n 21 "$FIX/german-credit.csv" > c3.csv
$R3 sample add german-categorical-logistic c3.csv > /dev/null
$R3 audit german-categorical-logistic > /dev/null
$R3 dispute german-categorical-logistic 2 --export -k k.key -o dv3.json > /dev/null 2>&1
cp dv3.json "$out/report/seed-dispute-v3.json"
# report: dispute evidence v4, a level unseen in training in a native
# categorical column (purpose A499).
R4="$RBA -S st4"
$R4 init > /dev/null
$R4 snapshot add "$FIX/german-credit.csv" > /dev/null
$R4 register "$FIX/pins/german-native-gbdt.yaml" --policy "$FIX/policy/credit.yaml" > /dev/null
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "purpose") pc = i }
	NR == 3 { $pc = "A499" } NR <= 21 { print }' OFS=, "$FIX/german-credit.csv" > c4.csv
$R4 sample add german-native-gbdt c4.csv > /dev/null
$R4 dispute german-native-gbdt 2 --export -k k.key -o dv4.json > /dev/null 2>&1
cp dv4.json "$out/report/seed-dispute-v4.json"
# evidence: the same, with its trusted comment (dispute_evidence_check)
{ printf '%s\000' "$(sed -n '3s/^trusted comment: //p' dv4.json.minisig)"; cat dv4.json; } \
	> "$out/evidence/seed-dispute-v4-comment.json"
# chunk: the sample chunks of the store (tests/fuzz/chunks.py).
mdb_dump -s samples st | python3 "$top/tests/fuzz/chunks.py" "$out/chunk"

# store: an empty store, and one with every kind of record on a
# snapshot of 80 rows (to keep it small), before and after one more
# snapshot.
head -n 81 "$FIX/german-credit-numeric.csv" > small.csv
R="$RBA -S st2"
$R init > /dev/null
d=$($R snapshot add small.csv)
sed -e "s|^snapshot: .*|snapshot: $d|" "$FIX/pins/$V.yaml" > small.yaml
$R register small.yaml --policy "$FIX/policy/credit.yaml" > /dev/null
$R sample add $V cases.csv > /dev/null
$R audit $V > /dev/null
$R dispute $V 3 > /dev/null || true
cp st2/data.mdb "$out/store/seed-audited.mdb"
$R snapshot add cases.csv > /dev/null
cp st2/data.mdb "$out/store/seed-two-snapshots.mdb"
# note: selector byte (0 a checkpoint, 1 a verifier key, 2 an inclusion
# proof, 3 a consistency proof) + the file, from the audited store st2.
$R -q history checkpoint -k k.key -o ck
$R -q policy set $V "$FIX/policy/credit.yaml"
$R -q history checkpoint -k k.key -o ck2
{ printf '\000'; cat ck; } > "$out/note/seed-checkpoint"
$R history cosign ck2 -k k.key --vkey "$($R history vkey -p k.pub)" --state w.state -o ckw --origin w.example/w > /dev/null
{ printf '\000'; cat ckw; } > "$out/note/seed-cosigned"
{ printf '\001'; $R history vkey -p k.pub; } > "$out/note/seed-vkey"
{ printf '\002'; $R --json history prove 1 --checkpoint ck2; } > "$out/note/seed-inclusion.json"
{ printf '\003'; $R --json history consistency ck ck2; } > "$out/note/seed-consistency.json"
chmod 644 "$out"/store/*
ls -l "$out"/*/ | awk '$5 > 0 { n++; b += $5 } END { printf "seeds: %d files, %d bytes\n", n, b }'
