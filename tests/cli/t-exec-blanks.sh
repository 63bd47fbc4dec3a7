# t-exec-blanks.sh - an exec XGBoost version on a table with 10 % of its
# numeric fields blank (fixtures/german-credit-numeric-missing.csv,
# bench/blank.awk seed 1 over German credit): trained outside the tool
# by the example's script with xgboost at nthread 2, registered with
# --artifact, sampled with blank fields, audited bit-identical against
# the sandboxed rebuild at nthread 1, exported and verified; a case with
# blanks disputed with reasons equal to XGBoost's pred_contribs; a
# second commit that changes the script's max_depth is not
# reproducible.  A snapshot that does not read under the pins is said of
# the cases file being added, one line, the store unchanged.  A trainer
# whose covers are 0 (XGBoost's pred_contribs NaN): the dispute gives no
# reasons and escalates, naming the tree and node.  An artifact of 600
# MiB, given or trained within limits.output: the file, its size and
# the limit named.  Needs bubblewrap, git (make deps) and python3-xgboost
# (make test-deps).
EX=$TOP/contrib/examples/xgboost
POL=$EX/policy.yaml
NM=$FIX/german-credit-numeric-missing.csv
py=/usr/bin/python3
mkdir -p tmp
TMPDIR=$PWD/tmp
export TMPDIR

# the table: bench/blank.awk's 10 % of German credit's numeric fields
awk -v seed=1 -v pct=10 -v keep=id,class -f "$TOP/bench/blank.awk" \
	"$FIX/german-credit-numeric.csv" > blank.csv
ok "the fixture is blank.awk seed 1 at 10 % over German credit" cmp -s blank.csv "$NM"
ok "about 10 % of the numeric fields are blank" awk -F, '
	NR > 1 { for (i = 2; i < NF; i++) { n++; if ($i == "") b++ } }
	END { exit !(b > 0.09 * n && b < 0.11 * n) }' "$NM"

git_commit() { git -C repo -c user.name=test -c user.email=test@example.org commit -q "$@"; }
mkdir repo
cp "$EX/train.py" "$EX/score.py" repo/
git -C repo init -q
git -C repo add .
git_commit -m "credit model"
C1=$(git -C repo rev-parse HEAD)

run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$NM"
SNAP=$(grep -o 'sha256:[0-9a-f]*' out | head -n 1)
head -n 201 "$NM" > cases.csv
ok "the cases hold blank numeric fields" grep -q ',,' cases.csv

# pins VERSION COMMIT [SED]: the example's pins at nthread 1
pins() {
	sed -e "s|@SNAPSHOT@|$SNAP|; s|@REPO@|$PWD/repo|; s|@COMMIT@|$2|" \
	    -e "s|@ETA@|0.3|; s|@THREADS@|1|g; s|^version: .*|version: $1|" \
	    ${3:+-e "$3"} "$EX/pins.yaml.in"
}
dump() { mdb_dump -a st > "$1" 2>&1; }

# ---- trained outside the tool at nthread 2 --------------------------------
printf '{"eta": 0.3, "max_depth": 4, "rounds": 40, "subsample": 1.0}\n' > params.json
run 0 env OMP_NUM_THREADS=2 $py repo/train.py "$NM" params.json model.json 7 2
ok "the model is XGBoost's own JSON" sh -c "head -c 1 model.json | grep -q '{'"
pins xgb-blanks "$C1" > p1.yaml
run 0 $RBA -S st --json register p1.yaml --artifact model.json --policy "$POL"
ok "register --artifact keeps the file's digest" \
	test "$(jq -r .artifact out)" = "sha256:$(sha256sum model.json | cut -d' ' -f1)"

# ---- sample, audit at nthread 1, export, verify ---------------------------
run 0 $RBA -S st sample add xgb-blanks cases.csv
out_has '200 cases'
run 0 $RBA -S st sample export xgb-blanks ex.csv
ok "the sample keeps the blank fields byte for byte" cmp -s ex.csv cases.csv
run 0 $RBA -S st --json audit xgb-blanks
jq '.audits[0]' out > rec.json
ok "audit against the sandboxed rebuild at nthread 1: bit-identical" \
	test "$(jq -r .verdict rec.json)" = bit-identical
ok "the rebuild ran the commit in the sandbox" sh -c \
	"jq -e '.trainer.commit == \"$C1\" and (.trainer.sandbox | startswith(\"bubblewrap\"))' rec.json"
ok "200 cases, 0 flips" sh -c "jq -e '.sample.cases == 200 and .sample.flips == 0' rec.json"
run 0 $RBA -S st store check
run 0 $RBA keygen -o key
run 0 $RBA -S st export xgb-blanks -k key.key -o ev.json
run 0 $RBA verify ev.json -p key.pub
out_has 'bit-identical'

# ---- a case with blanks disputed: reasons equal pred_contribs ------------
id=$(awk -F, 'NR > 1 && $2 == "" { print $1; exit }' cases.csv)
ok "case $id has a blank first input" test -n "$id"
run 0 $RBA -S st dispute xgb-blanks "$id" --show-inputs
out_has '  a1     missing'
out_has 'scored as stored: no retrain'
run 0 $RBA -S st --json dispute xgb-blanks "$id"
mv out d.json
ok "dispute: exact TreeSHAP reasons that add up to the margin" jq -e '
	.explanation.ok and .explanation.method == "treeshap" and .explanation.sum_ok and
	((.explanation.baseline + ([.explanation.contributions[].contribution] | add)
	  - .explanation.margin) | fabs) <= 1e-9' d.json
jq -r '.explanation.contributions[] | "\(.column) \(.contribution)"' d.json > ours.txt
$py - model.json cases.csv "$id" > theirs.txt <<'PY'
import csv, sys
import numpy as np
import xgboost as xgb
b = xgb.Booster()
b.load_model(sys.argv[1])
rows = list(csv.reader(open(sys.argv[2])))
h = rows[0]
r = [x for x in rows[1:] if x[h.index("id")] == sys.argv[3]][0]
names = b.feature_names
x = np.array([[float(r[h.index(n)]) if r[h.index(n)] != "" else np.nan for n in names]], dtype=np.float32)
c = b.predict(xgb.DMatrix(x, feature_names=names), pred_contribs=True)[0]
for n, v in zip(names, c[:-1]):
    print(n, repr(float(v)))
PY
ok "dispute: each of the 24 contributions within 1e-5 of XGBoost's pred_contribs" \
	awk 'NR == FNR { t[$1] = $2; next } { d = $2 - t[$1]; if (!($1 in t) || d > 1e-5 || d < -1e-5) bad = 1; n++ }
	     END { exit bad || n != 24 }' theirs.txt ours.txt
run 0 $RBA -S st dispute xgb-blanks "$id" --export -k key.key -o dx.json
run 0 $RBA verify dx.json -p key.pub

# ---- a second commit changes max_depth: not reproducible ------------------
sed -i 's/^    rounds = int(params.pop("rounds", 50))$/&\n    params["max_depth"] = 3/' repo/train.py
ok "the second commit changes max_depth" grep -q 'params\["max_depth"\] = 3' repo/train.py
git_commit -am "max_depth 3"
C2=$(git -C repo rev-parse HEAD)
pins xgb-depth "$C2" > p2.yaml
run 0 $RBA -S st -q register p2.yaml --artifact model.json --policy "$POL"
run 0 $RBA -S st -q sample add xgb-depth cases.csv
run 1 $RBA -S st --json audit xgb-depth
jq '.audits[0]' out > rec2.json
ok "max_depth changed: not-reproducible" test "$(jq -r .verdict rec2.json)" = not-reproducible
ok "the rebuild ran commit 2" sh -c "jq -e '.trainer.commit == \"$C2\"' rec2.json"
ok "the rebuilt artifact differs and decisions flip" sh -c \
	"jq -e '.digests.artifact_pinned != .digests.artifact_rebuilt and .sample.flips > 0' rec2.json"

# ---- a snapshot that does not read under the pins --------------------------
# data.missing [NA]: the blank fields of the snapshot are not missing
# values; the refusal names the cases file being added and the snapshot
# by its digest, line and column
pins xgb-na "$C1" 's|^  id: id$|  id: id\n  missing: [NA]|' > pna.yaml
run 0 $RBA -S st -q register pna.yaml --artifact model.json --policy "$POL"
dump before.txt
run 2 $RBA -S st sample add xgb-na cases.csv
err_is "rebuild-audit: cannot add sample 'cases.csv': version 'xgb-na': its snapshot $SNAP, read under its pins (line 2, column 3): empty field in numeric column 'a1'"
dump after.txt
ok "data.missing [NA]: the store is unchanged" cmp -s before.txt after.txt
# a field of the cases file that is not a number: its line and column
awk -F, -v OFS=, 'NR == 3 { $4 = "?" } { print }' cases.csv > q.csv
dump before.txt
run 2 $RBA -S st sample add xgb-blanks q.csv
err_has "rebuild-audit: cannot add sample 'q.csv:3:"
err_has "': column 'a3' needs a number, not '?'"
dump after.txt
ok "a '?' in the cases: the store is unchanged" cmp -s before.txt after.txt

# ---- covers of 0: reasons that cannot be computed exactly are none -------
# a trainer that writes every cover (sum_hessian) as 0: XGBoost's
# pred_contribs are NaN, so the dispute gives no reasons and escalates,
# naming the tree and the node
cat > repo/zero.py <<'EOF'
import json, runpy, sys
runpy.run_path("train.py", run_name="__main__")
m = json.load(open(sys.argv[3]))
for t in m["learner"]["gradient_booster"]["model"]["trees"]:
    t["sum_hessian"] = [0.0] * len(t["sum_hessian"])
json.dump(m, open(sys.argv[3], "w"), separators=(",", ":"))
EOF
git -C repo add zero.py
git_commit -m "covers of 0"
C3=$(git -C repo rev-parse HEAD)
pins xgb-zero "$C3" 's|/usr/bin/python3, train.py,|/usr/bin/python3, zero.py,|' > pz.yaml
run 0 $RBA -S st -q register pz.yaml --policy "$POL"
run 0 $RBA -S st -q sample add xgb-zero cases.csv
run 0 $RBA -S st audit xgb-zero
out_has 'bit-identical'
run 0 $RBA -S st version export-artifact xgb-zero zero.json
run 0 $py -c '
import sys, numpy as np, xgboost as xgb
b = xgb.Booster(); b.load_model(sys.argv[1])
x = np.ones((1, len(b.feature_names)), dtype=np.float32)
c = b.predict(xgb.DMatrix(x, feature_names=b.feature_names), pred_contribs=True)
print("nan" if np.isnan(c).all() else "finite")' zero.json
ok "XGBoost's pred_contribs of the model are NaN" grep -qx nan out
dump before.txt
run 1 $RBA -S st dispute xgb-zero "$id"
out_has 'escalate: the principal reasons could not be computed: exact TreeSHAP is not defined for this model: tree 0 node 0 is a split whose cover (sum_hessian) is 0'
out_lacks 'stands'
out_lacks 'reasons     log-odds'
run 1 $RBA -S st --json dispute xgb-zero "$id"
ok "covers of 0: no contributions, the answer escalates" jq -e '
	.answer == "escalate" and (.explanation.ok | not) and
	((.explanation.contributions // []) | length) == 0' out
dump after.txt
ok "covers of 0: the store is unchanged" cmp -s before.txt after.txt
run 1 $RBA -S st dispute xgb-zero "$id" --export -k key.key -o dz.json
run 0 $RBA verify dz.json -p key.pub
out_has 'escalate'

# ---- an artifact over the 512 MiB an artifact may have --------------------
# (sparse files: no disk is used, and none of it is read) which input,
# its size and the limit, not "input exceeds a size limit"
truncate -s 600M huge.json
pins xgb-huge "$C1" > ph.yaml
dump before.txt
run 2 $RBA -S st register ph.yaml --artifact huge.json --policy "$POL"
err_has "'huge.json' has 629145600 bytes, over the limit of 536870912 bytes (512 MiB) for this input"
ok "--artifact of 600 MiB: one line" test "$(wc -l < err)" -eq 1
dump after.txt
ok "--artifact of 600 MiB: the store is unchanged" cmp -s before.txt after.txt
rm -f huge.json
# a trainer's artifact of 600 MiB within limits.output (1 GiB)
printf 'import sys\nopen(sys.argv[3], "w").truncate(600 << 20)\n' > repo/huge.py
git -C repo add huge.py
git_commit -m "an artifact of 600 MiB"
C4=$(git -C repo rev-parse HEAD)
pins xgb-huge "$C4" 's|/usr/bin/python3, train.py,|/usr/bin/python3, huge.py,|; s|output: 16777216|output: 1073741824|' > ph.yaml
ok "the pins allow 1 GiB of output" grep -q 'output: 1073741824' ph.yaml
dump before.txt
run 2 $RBA -S st register ph.yaml --policy "$POL"
err_has "wrote /out/model.json of 629145600 bytes, over the limit of 536870912 bytes (512 MiB) for an artifact"
ok "a trainer's 600 MiB: one line" test "$(wc -l < err)" -eq 1
dump after.txt
ok "a trainer's 600 MiB: the store is unchanged" cmp -s before.txt after.txt
