# t-diff-xgboost.sh - diff of two XGBoost JSON models (model/xgboost.h):
# the same bytes or the same model in one line, exit 0; two models
# trained here at eta 0.3 and 0.1 differ from their first tree on; a
# split's default direction, its feature (by name) and threshold, the
# number of classes; an XGBoost model against one of ours is two kinds;
# a damaged file is one line.  Needs python3-xgboost (make deps).
py=/usr/bin/python3
ok "python3-xgboost is installed (make deps)" $py -c 'import xgboost'
X=$FIX/xgboost
# train.py ETA OUT: 10 rounds of depth 3 on German credit, nthread 1
cat > train.py <<'EOF'
import sys
import numpy as np
import xgboost as xgb
rows = open(sys.argv[3]).read().split("\n")
head = rows[0].split(",")
d = np.array([[float(v) for v in r.split(",")] for r in rows[1:] if r])
x, y = d[:, 1:-1], (d[:, -1] == 2).astype(int)
p = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": 3,
     "eta": float(sys.argv[1]), "nthread": 1, "seed": 0}
b = xgb.train(p, xgb.DMatrix(x, label=y, feature_names=head[1:-1]), num_boost_round=10)
b.save_model(sys.argv[2])
EOF
ok "trains at eta 0.3" $py train.py 0.3 e3.json "$FIX/german-credit-numeric.csv"
ok "trains at eta 0.1" $py train.py 0.1 e1.json "$FIX/german-credit-numeric.csv"
ok "trains at eta 0.3 again" $py train.py 0.3 e3b.json "$FIX/german-credit-numeric.csv"

# the same bytes: one line, exit 0
out_is_line() { printf '%s\n' "$1" > .want; cmp -s out .want; }
run 0 $RBA diff e3.json e3b.json
ok "the same bytes: one line" out_is_line "identical: sha256:$(sha256sum e3.json | cut -c 1-64) ($(wc -c < e3.json) bytes)"
# the same model in other bytes (indented, members reordered): one line, exit 0
$py -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"), indent=2, sort_keys=True)' e3.json e3i.json
ok "the reformatted file's bytes differ" sh -c '! cmp -s e3.json e3i.json'
run 0 $RBA diff e3.json e3i.json
ok "the same model: one line" test "$(wc -l < out)" -eq 1
out_has "same model: every value that scores is equal (objective, features, base margin, 10 trees node for node); the files' bytes differ: sha256:$(sha256sum e3.json | cut -c 1-64) and sha256:$(sha256sum e3i.json | cut -c 1-64)"
run 0 $RBA --json diff e3.json e3i.json
ok "--json: the same model, not the same bytes" jq -e '.identical == false and .same_model == true and .kind == "xgboost" and .trees.identical == 10' out

# eta 0.3 against 0.1: the first tree's first leaf differs
run 1 $RBA diff e3.json e1.json
out_has "artifacts differ: xgboost 'e3.json' against 'e1.json'"
out_has "base margins           1         same (1 values)"
out_has "trees       10 and 10, 0 identical; first that differs: tree 1, node 4: leaf value 0.262500018 against 0.0874999985 (13841204 ulps)"
ok "no bin edges or standardization lines (not in an XGBoost file)" sh -c '! grep -q "bin edges\|standardization" out'
err_empty
run 1 $RBA --json diff e3.json e1.json
ok "--json: trees" jq -e '.kind == "xgboost" and .same_model == false and .trees.a == 10 and .trees.identical == 0 and .trees.first_differing.tree == 1 and .trees.first_differing.node == 4' out

# edit TREE FIELD INDEX EXPR: a copy of the fixture binary.json with one value changed
edit() {
	$py - "$X/binary.json" "$@" <<'EOF'
import json, sys
src, t, f, i, e, out = sys.argv[1:7]
d = json.load(open(src))
tr = d["learner"]["gradient_booster"]["model"]["trees"][int(t)]
v = tr[f][int(i)]
tr[f][int(i)] = eval(e)
json.dump(d, open(out, "w"))
EOF
}
edit 3 default_left 0 '1 - v' dl.json
run 1 $RBA diff "$X/binary.json" dl.json
out_has "trees       20 and 20, 19 identical; first that differs: tree 4, node 1: missing values go right against left"
edit 5 split_indices 0 '(v + 1) % 24' sf.json
run 1 $RBA diff "$X/binary.json" sf.json
out_has "trees       20 and 20, 19 identical; first that differs: tree 6, node 1: split on feature '$($py -c "import json; d=json.load(open('$X/binary.json')); t=d['learner']['gradient_booster']['model']['trees'][5]; print(d['learner']['feature_names'][t['split_indices'][0]])")' against '"
edit 19 split_conditions 0 'v + 0.5' st.json
run 1 $RBA diff "$X/binary.json" st.json
out_has "trees       20 and 20, 19 identical; first that differs: tree 20, node 1: threshold"
run 1 $RBA diff "$X/binary.json" "$X/multi.json"
out_has "inputs      2 classes against 3"

# an XGBoost model against one of ours: two kinds, exit 2, one line
run 0 $RBA train "$FIX/pins/german-numeric-gbdt.yaml" -o g1.bin --snapshot "$FIX/german-credit-numeric.csv" --no-keep
run 2 $RBA diff e3.json g1.bin
err_is "rebuild-audit: cannot diff 'e3.json' and 'g1.bin': artifacts of two kinds: an XGBoost model and a forest"
out_empty
# a damaged file: the loader's line with the JSON path
sed 's/"left_children":\[1,/"left_children":[99,/' e3.json > bad-child.json
run 2 $RBA diff e3.json bad-child.json
err_is "rebuild-audit: cannot load artifact 'bad-child.json': \$.learner.gradient_booster.model.trees[0].left_children[0]: child index 99 out of range"
out_empty
head -c 200 e3.json > cut.json
run 2 $RBA diff cut.json e3.json
ok "a truncated file: one line naming it" sh -c "test \$(wc -l < err) -eq 1 && grep -q \"cannot load artifact 'cut.json\" err"
run 0 $RBA diff --help
out_has "where two artifacts (ours, or XGBoost JSON models) differ"
