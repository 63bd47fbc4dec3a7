# t-xgboost.sh - score MODEL.json: XGBoost 1.7 models (python3-xgboost,
# installed by `make test-deps`; without it this test fails) scored natively.
# A model trained here on German credit cases with gaps (empty fields,
# NaN, NA) is scored by `score --margin` and `score`, and each margin
# must be the bits of Booster.predict(output_margin=True), each
# probability within one ulp of Booster.predict (and is counted equal
# where it is).  Then bad model files and cases: exit 2, one line.
py=/usr/bin/python3
ok "python3-xgboost is installed (make test-deps)" $py -c 'import xgboost'
C=$FIX/xgboost/cases.csv

# train.py OBJECTIVE ROUNDS DEPTH OUT: trains on cases.csv (the missing
# texts as NaN), writes OUT.json and OUT.xgb: per case its id, its
# margins and probabilities as float32 hex words.
cat > train.py <<'EOF'
import csv, struct, sys
import numpy as np
import xgboost as xgb
obj, rounds, depth, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = list(csv.reader(open(sys.argv[5])))
head, body = rows[0], rows[1:]
names = head[1:]
x = np.array([[np.nan if v in ("", "NA", "NaN", "nan") else float(v) for v in r[1:]]
              for r in body], dtype=np.float32)
a3 = x[:, names.index("a3")]
a1 = x[:, names.index("a1")]
y = np.where(a3 < 2, 0, np.where(a3 == 2, 1, 2)) if obj.startswith("multi") else (a1 > 2).astype(int)
p = {"objective": obj, "max_depth": depth, "eta": 0.2, "nthread": 1, "seed": 1,
     "tree_method": "hist"}
if obj.startswith("multi"):
    p["num_class"] = 3
d = xgb.DMatrix(x, label=y, feature_names=names, missing=np.nan, nthread=1)
b = xgb.train(p, d, num_boost_round=rounds)
b.save_model(out + ".json")
m = b.predict(d, output_margin=True).reshape(len(body), -1)
q = b.predict(d).reshape(len(body), -1)
h = lambda v: "%08x" % struct.unpack("<I", struct.pack("<f", float(v)))[0]
with open(out + ".xgb", "w") as f:
    for r, mm, qq in zip(body, m, q):
        f.write(" ".join([r[0]] + [h(v) for v in mm] + [h(v) for v in qq]) + "\n")
EOF
# ours.py CSV: our report's numbers as float32 hex words, one case a line.
cat > ours.py <<'EOF'
import csv, struct, sys
h = lambda v: "%08x" % struct.unpack("<I", struct.pack("<f", float(v)))[0]
rows = list(csv.reader(open(sys.argv[1])))
for r in rows[1:]:
    print(" ".join([r[0]] + [h(v) for v in r[1:]]))
EOF
# cmp.py XGB OURS K MODE: margins (MODE m: fields 1..K) must be equal;
# probabilities (MODE p: XGBoost's after its K margins) within an ulp.
cat > cmp.py <<'EOF'
import sys
xgb = [l.split() for l in open(sys.argv[1])]
ours = [l.split() for l in open(sys.argv[2])]
K, mode = int(sys.argv[3]), sys.argv[4]
assert len(xgb) == len(ours) == 1000, (len(xgb), len(ours))
worst = same = n = 0
for a, b in zip(xgb, ours):
    assert a[0] == b[0]
    theirs = a[1:1 + K] if mode == "m" else a[1 + K:]
    mine = b[1:]
    assert len(mine) == len(theirs), (mine, theirs)
    for t, o in zip(theirs, mine):
        u = abs(int(t, 16) - int(o, 16))
        worst = max(worst, u)
        same += u == 0
        n += 1
print("values=%d equal=%d worst_ulp=%d" % (n, same, worst))
sys.exit(0 if worst <= (0 if mode == "m" else 1) else 1)
EOF

for spec in "binary:logistic 40 5 1" "multi:softprob 12 4 3" "reg:logistic 15 3 1"; do
	set -- $spec
	obj=$1 K=$4
	run 0 $py train.py "$obj" "$2" "$3" model "$C"
	run 0 $RBA score model.json "$C" --margin
	err_empty
	if [ "$K" = 1 ]; then
		ok "$obj: header id,margin" [ "$(head -n 1 out)" = "id,margin" ]
	else
		ok "$obj: header id,m_0,m_1,m_2" [ "$(head -n 1 out)" = "id,m_0,m_1,m_2" ]
	fi
	$py ours.py out > ours.m
	run 0 $py cmp.py model.xgb ours.m "$K" m
	echo "  $obj margins: $(cat out)"
	run 0 $RBA score model.json "$C"
	$py ours.py out > ours.p
	run 0 $py cmp.py model.xgb ours.p "$K" p
	echo "  $obj probabilities: $(cat out)"
done

# JSON report and the artifact digest: the file's SHA-256.
run 0 $py train.py binary:logistic 10 3 m "$C"
run 0 $RBA --json score m.json "$C" --margin
ok "json: margins" jq -e '.cases | length == 1000 and (.[0].margin | type) == "number"' out
ok "json: the digest is the file's" jq -e --arg d "sha256:$(sha256sum m.json | cut -d' ' -f1)" '.artifact == $d' out
run 0 $RBA --json score m.json "$C"
ok "json: score and probabilities" jq -e '.cases[0] | (.score | type) == "number" and (.probabilities | keys) == ["0","1"]' out
run 0 $RBA score m.json "$C" --policy "$FIX/policy/credit.yaml"
ok "a policy decides XGBoost scores too" [ "$(head -n 1 out)" = "id,score,decision" ]

# Bad model files: exit 2, one line naming the file and the JSON path.
T0='$.learner.gradient_booster.model.trees[0]'
sed 's/"left_children":\[1,/"left_children":[99,/' m.json > bad-child.json
run 2 $RBA score bad-child.json "$C"
out_empty
err_is "rebuild-audit: cannot load artifact 'bad-child.json': $T0.left_children[0]: child index 99 out of range"
# the first tree's root gets itself as its right child: a cycle
cat > cycle.py <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'"right_children":\[([^]]*)\]', t)
v = m.group(1).split(",")
assert v[0] != "-1", "tree 0 is a leaf"
v[0] = "0"
sys.stdout.write(t[:m.start(1)] + ",".join(v) + t[m.end(1):])
EOF
run 0 $py cycle.py m.json
mv out cycle.json
run 2 $RBA score cycle.json "$C"
out_empty
err_is "rebuild-audit: cannot load artifact 'cycle.json': $T0.right_children[0]: node 0 is reached twice (a cycle or a shared node)"
head -c 3000 m.json > trunc.json
run 2 $RBA score trunc.json "$C"
out_empty
err_has "rebuild-audit: cannot load artifact 'trunc.json:1:"
ok "truncated: one line" [ "$(wc -l < err)" = 1 ]
# a key given twice: XGBoost takes the last, so the value read first is
# not the one it scores with; refused at the second key, by name
cat > dup.py <<'EOF'
import sys
t = open(sys.argv[1]).read()
key, value = sys.argv[2], sys.argv[3]
i = t.index('"%s":' % key)
t = t[:i] + '"%s":%s,' % (key, value) + t[i:]
j = t.index('"%s":' % key, i + 1)
open(sys.argv[4], "w").write(t)
print(j + 1)
EOF
run 0 $py dup.py m.json base_score '"9E-1"' dup-base.json
col=$(cat out)
run 0 $py -c 'import sys, xgboost as x; b = x.Booster(); b.load_model(sys.argv[1]); print(b.save_config())' dup-base.json
ok "XGBoost takes the last base_score" grep -q '"base_score":"5E-1"' out
run 2 $RBA score dup-base.json "$C" --margin
out_empty
err_is "rebuild-audit: cannot load artifact 'dup-base.json:1:$col': duplicate key 'base_score'"
run 0 $py dup.py m.json split_conditions '[9E9]' dup-split.json
col=$(cat out)
run 2 $RBA score dup-split.json "$C"
out_empty
err_is "rebuild-audit: cannot load artifact 'dup-split.json:1:$col': duplicate key 'split_conditions'"
# a categorical model as XGBoost 1.7 writes it (enable_categorical: a
# NaN split condition, which is not JSON): refused by name at its path
cat > cat.py <<'EOF'
import sys
import numpy as np
import xgboost as xgb
r = np.random.RandomState(1)
a = r.rand(200)
c = r.randint(0, 3, 200).astype(np.float32)
x = np.stack([a, c], axis=1).astype(np.float32)
y = ((a > 0.5) ^ (c == 1)).astype(int)
d = xgb.DMatrix(x, label=y, feature_names=["a1", "a2"], feature_types=["q", "c"],
                enable_categorical=True)
p = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": 3,
     "nthread": 1, "seed": 1, "max_cat_to_onehot": 1}
xgb.train(p, d, num_boost_round=3).save_model(sys.argv[1])
EOF
run 0 $py cat.py cat.json
ok "the categorical model holds XGBoost's NaN" grep -q ',NaN,' cat.json
run 2 $RBA score cat.json "$C"
out_empty
err_is "rebuild-audit: cannot load artifact 'cat.json': \$.learner.feature_types[1]: categorical features are not supported"
# XGBoost's Infinity where a finite number must be: refused at its path
cat > inf.py <<'EOF'
import re, sys
import xgboost as xgb
t = open(sys.argv[1]).read()
t = re.sub(r'"split_conditions":\[[^,]*,', '"split_conditions":[1E39,', t, count=1)
open(sys.argv[2] + ".tmp", "w").write(t)
b = xgb.Booster()
b.load_model(sys.argv[2] + ".tmp")
b.save_model(sys.argv[2])
EOF
run 0 $py inf.py m.json inf.json
ok "XGBoost writes the overflow as Infinity" grep -q '"split_conditions":\[Infinity,' inf.json
run 2 $RBA score inf.json "$C"
err_is "rebuild-audit: cannot load artifact 'inf.json': $T0.split_conditions[0]: must be a finite float32"
# over the reader's 64 MiB: which file, its size, the limit
cp m.json pad.json
head -c 67108864 /dev/zero | tr '\0' ' ' >> pad.json
run 2 $RBA score pad.json "$C"
err_is "rebuild-audit: cannot load artifact 'pad.json': 'pad.json' has $(wc -c < pad.json) bytes, over the limit of 67108864 bytes (64 MiB) for an XGBoost model"
rm -f pad.json
sed 's/"binary:logistic"/"reg:squarederror"/' m.json > obj.json
run 2 $RBA score obj.json "$C"
err_is "rebuild-audit: cannot load artifact 'obj.json': \$.learner.objective.name: objective 'reg:squarederror' is not supported (binary:logistic, reg:logistic, multi:softprob)"
sed 's/"name":"gbtree"/"name":"dart"/' m.json > dart.json
run 2 $RBA score dart.json "$C"
err_is "rebuild-audit: cannot load artifact 'dart.json': \$.learner.gradient_booster.name: booster 'dart' is not supported (gbtree only)"
# a feature name the cases lack
cut -d, -f1-6,8- "$C" > no-a6.csv
run 2 $RBA score m.json no-a6.csv
out_empty
err_is "rebuild-audit: cannot score 'no-a6.csv:1': the cases lack input column 'a6'"
# a field that is neither a number nor a missing text
sed '3s/^2,2,48,/2,2,n\/a,/' "$C" > na.csv
run 2 $RBA score m.json na.csv
out_empty
err_is "rebuild-audit: cannot score 'na.csv:3': column 'a2' needs a number, not 'n/a'"
# --margin: XGBoost models only, and no decisions
run 0 $RBA train "$FIX/pins/german-numeric-gbdt.yaml" --snapshot "$FIX/german-credit-numeric.csv" -o ours.bin
run 2 $RBA score ours.bin "$FIX/german-credit-numeric.csv" --margin
out_empty
err_has "--margin is for XGBoost models"
run 2 $RBA score m.json "$C" --margin --policy "$FIX/policy/credit.yaml"
out_empty
# our own networks still refuse a gap without an imputation (our trees
# take it: the empty field is their default missing value)
sed '2s/^1,1,6,/1,1,,/' "$FIX/german-credit-numeric.csv" > gap.csv
run 0 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$FIX/german-credit-numeric.csv" -o net.bin
run 2 $RBA score net.bin gap.csv
out_empty
run 0 $RBA score ours.bin gap.csv
# evaluate takes pins or our artifacts: an XGBoost model is named as one
run 2 $RBA evaluate m.json
out_empty
err_is "rebuild-audit: cannot evaluate 'm.json': an XGBoost model has no evaluation contract here (score scores it; evaluate takes pins or our artifacts)"
