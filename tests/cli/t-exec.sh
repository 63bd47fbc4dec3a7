# t-exec.sh - exec trainers (rebuild-audit-pins(5), TRAINER): a real
# XGBoost script (contrib/examples/xgboost) at a git commit this test
# makes, trained in the bubblewrap sandbox, registered, sampled, audited
# bit-identical at nthread 1 and 2, exported and verified (and the
# scikit-learn example bit-identical too); a second
# commit that changes eta is not reproducible with the changed links
# named; every input that cannot run is exit 2 with one line and leaves
# the store as it was; a kill -9 of an audit leaves no process and no
# work directory.  Needs bubblewrap, git, python3-xgboost and python3-sklearn (make deps).
EX=$TOP/contrib/examples/xgboost
POL=$EX/policy.yaml
CSV=$FIX/german-credit-numeric.csv
mkdir -p tmp
TMPDIR=$PWD/tmp
export TMPDIR

git_commit() { git -C repo -c user.name=test -c user.email=test@example.org commit -q "$@"; }
mkdir repo
cp "$EX/train.py" "$EX/score.py" "$TOP/tests/cli/exec/bad.py" repo/
git -C repo init -q
git -C repo add .
git_commit -m "credit model"
C1=$(git -C repo rev-parse HEAD)
T1=$(git -C repo rev-parse "$C1^{tree}")

run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$CSV"
SNAP=$(grep -o 'sha256:[0-9a-f]*' out | head -n 1)
head -n 201 "$CSV" > cases.csv

# pins VERSION COMMIT THREADS [SED]: an exec pins file from the example's
pins() {
	sed -e "s|@SNAPSHOT@|$SNAP|; s|@REPO@|$PWD/repo|; s|@COMMIT@|$2|" \
	    -e "s|@ETA@|0.3|; s|@THREADS@|$3|g; s|^version: .*|version: $1|" \
	    ${4:+-e "$4"} "$EX/pins.yaml.in"
}
# dump: every database of the store, for "nothing changed"
dump() { mdb_dump -a st > "$1" 2>&1; }
# no_leftovers WHAT: no sandboxed process of this test, no work directory
no_leftovers() {
	# a killed sandbox's processes may take a moment to be reaped: wait
	# up to 15 s for them to go (a loaded machine), then judge
	i=0
	while [ $i -lt 150 ] && { ps -eo args | grep -v grep | grep -qF "$PWD/repo" ||
	    ps -eo args | grep -v grep | grep -q 'bad.py'; }; do
		sleep 0.1
		i=$((i + 1))
	done
	ok "$1: no process of the sandbox is left" \
		sh -c "! ps -eo args | grep -v grep | grep -qF '$PWD/repo'  && ! ps -eo args | grep -v grep | grep -q 'bad.py'"
	ok "$1: no work directory is left" sh -c "[ -z \"\$(ls tmp)\" ]"
}

# ---- registered at nthread 1 and 2: the same bytes ------------------------
pins xgb-credit "$C1" 1 > p1.yaml
pins xgb-credit-t2 "$C1" 2 > p2.yaml
run 0 $RBA check p1.yaml
out_has 'kind: exec'
out_has "revision: $C1"
run 0 $RBA -S st --json register p1.yaml --policy "$POL"
A1=$(jq -r .artifact out)
ok "register names the commit and its tree" sh -c "jq -r .trainer.tree out | grep -qx $T1"
run 0 $RBA -S st --json register p2.yaml --policy "$POL"
ok "nthread 2 trains the same artifact as nthread 1" test "$(jq -r .artifact out)" = "$A1"
# the repository as a URL git clones (file://): the same bytes
pins xgb-url "$C1" 1 "s|repository: .*|repository: file://$PWD/repo|" > pu.yaml
run 0 $RBA -S st --json register pu.yaml --policy "$POL"
ok "a file:// URL of the repository trains the same artifact" test "$(jq -r .artifact out)" = "$A1"
run 0 $RBA -S st version export-artifact xgb-credit model.json
ok "the pinned digest is sha256sum of the model file" \
	test "sha256:$(sha256sum model.json | cut -d' ' -f1)" = "$A1"
ok "the artifact is XGBoost's own JSON" sh -c "head -c 1 model.json | grep -q '{'"
run 0 $RBA -S st version show xgb-credit
# (quoted when the commit starts with a digit, as any such string)
ok "the pins' code_revision is the commit" grep -Eq "^code_revision: \"?$C1\"?\$" out
out_has "trainer       exec: $PWD/repo at commit $C1 (xgboost-json)"
RUN=$(sed -n 's/^run  *//p' out)
run 0 $RBA -S st runs show "$RUN"
out_has "at commit $C1 (tree $T1)"
out_has 'exit status   0'
out_has 'metric        train_accuracy'
run 0 $RBA -S st --json runs show "$RUN"
ok "the run record keeps the command as run and both streams' digests" sh -c \
	"jq -e '.schema == \"rebuild-audit/run-exec/v1\" and .trainer.command[2] == \"/in/snapshot.csv\" and (.stderr.sha256 | startswith(\"sha256:\"))' out"
no_leftovers register

# ---- sample, audit, export, verify --------------------------------------
run 0 $RBA -S st sample add xgb-credit cases.csv
out_has '200 cases'
run 0 $RBA -S st sample add xgb-credit-t2 cases.csv
run 0 $RBA -S st --json audit xgb-credit
jq '.audits[0]' out > rec.json && mv rec.json out
ok "audit at nthread 1: bit-identical" test "$(jq -r .verdict out)" = bit-identical
ok "the record names the commit, the tree and the sandbox" sh -c \
	"jq -e '.trainer.commit == \"$C1\" and .trainer.tree == \"$T1\" and (.trainer.sandbox | startswith(\"bubblewrap\"))' out"
ok "the environment record names the declared packages" sh -c \
	"jq -r .environment_records.current out | grep -q '^pkg.python3_xgboost='"
ok "and the probe's output" sh -c "jq -r .environment_records.current out | grep -q '^probe.001=1\\.7'"
run 0 $RBA -S st audit xgb-credit-t2
out_has 'bit-identical'
out_has "rebuilt by    commit $(echo $C1 | cut -c1-12)"
no_leftovers audit

run 0 $RBA keygen -o key
run 0 $RBA -S st export xgb-credit -k key.key -o ev.json
run 0 minisign -V -p key.pub -m ev.json
run 0 $RBA verify ev.json -p key.pub
out_has 'bit-identical'
ok "the evidence holds to the predicate's JSON schema" \
	/usr/bin/jsonschema -i ev.json "$FIX/evidence/predicate-v4.schema.json"
ok "the evidence names the exec trainer" sh -c \
	"jq -e '.predicate.trainer.kind == \"exec\" and .predicate.trainer.commit == \"$C1\"' ev.json"

# the trainer member edited and re-signed: refused
TC=$(sed -n '3s/^trusted comment: //p' ev.json.minisig)
resign_check() { # sed-expression, expected reason
	sed "$1" ev.json > x.json
	ok "the edit '$1' changes the evidence" sh -c '! cmp -s x.json ev.json'
	minisign -S -s key.key -m x.json -t "$TC" > /dev/null 2>&1
	run 0 minisign -Vm x.json -p key.pub
	run 1 $RBA verify x.json -p key.pub
	err_has "$2"
}
resign_check "s/\"tree\": \"$T1\"/\"tree\": \"$C1\"/" 'does not agree with its embedded audit record'
resign_check 's/"sandbox": "bubblewrap [^"]*"/"sandbox": "none"/' "does not name the sandbox 'none'"

# dispute: XGBoost JSON is scored natively, so the reasons are the exact
# TreeSHAP of the stored model, adding up to its margin and agreeing with
# XGBoost's own pred_contribs
run 0 $RBA -S st dispute xgb-credit 5
out_has 'scored as stored: no retrain, audit record'
run 0 $RBA -S st --json dispute xgb-credit 5 --reasons 4
mv out d5.json
ok "dispute: exact TreeSHAP reasons that add up to the margin" jq -e '
	.explanation.ok and .explanation.method == "treeshap" and
	((.explanation.baseline + ([.explanation.contributions[].contribution] | add)
	  - .explanation.margin) | fabs) <= 1e-9 and .explanation.sum_ok' d5.json
jq -r '.explanation.contributions[] | "\(.column) \(.contribution)"' d5.json > ours.txt
/usr/bin/python3 - model.json cases.csv 5 > theirs.txt <<'PY'
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
ok "dispute: each contribution within 1e-5 of XGBoost's pred_contribs" \
	awk 'NR == FNR { t[$1] = $2; next } { d = $2 - t[$1]; if (!($1 in t) || d > 1e-5 || d < -1e-5) bad = 1; n++ }
	     END { exit bad || n != 24 }' theirs.txt ours.txt

# a format read only by its score command: the standing, and plainly no
# reasons for it
pins xgb-opaque "$C1" 1 "s|format: xgboost-json|format: opaque|" > po.yaml
run 0 $RBA -S st -q register po.yaml --policy "$POL"
run 0 $RBA -S st -q sample add xgb-opaque cases.csv
run 0 $RBA -S st -q audit xgb-opaque
run 1 $RBA -S st dispute xgb-opaque 5
out_has 'decision'
out_has 'scored as stored: no retrain, audit record'
out_has 'escalate: the principal reasons could not be computed'
out_has 'no reasons are available for format opaque'

# ---- the report of exec versions (rebuild-audit(1), report) --------------
# the audit page names what ran and where; a variable passed into the
# sandbox that changed since registration is a changed field beside it
pins xgb-env "$C1" 1 "s|probe: .*|pass: [RBA_T_VAR]|" > pe.yaml
run 0 env RBA_T_VAR=one $RBA -S st -q register pe.yaml --policy "$POL"
run 0 env RBA_T_VAR=one $RBA -S st -q sample add xgb-env cases.csv
run 0 env RBA_T_VAR=two $RBA -S st -q audit xgb-env
run 0 $RBA -S st export xgb-env -k key.key -o ev-env.json
ok "the evidence names the changed exec environment field" sh -c \
	"jq -e '.predicate.environment.state == \"changed\" and .predicate.environment.diff == [{\"key\": \"var.rba_t_var\", \"pinned\": \"one\", \"current\": \"two\"}]' ev-env.json"
run 0 $RBA report ev-env.json -p key.pub -o ev-env.html
H=ev-env.html
ok "report: the trainer kind" grep -qF '<tr><th>kind</th><td>exec</td></tr>' $H
ok "report: the repository" grep -qF "<tr><th>repository</th><td class=\"mono\">$PWD/repo</td></tr>" $H
ok "report: the commit" grep -qF "<tr><th>commit</th><td class=\"mono\">$C1</td></tr>" $H
ok "report: the tree" grep -qF "<tr><th>tree</th><td class=\"mono\">$T1</td></tr>" $H
ok "report: the command as run, argument by argument" grep -qF '<code>/usr/bin/python3</code> <code>train.py</code> <code>/in/snapshot.csv</code> <code>/in/params.json</code> <code>/out/model.json</code> <code>7</code> <code>1</code> <code>/out/metrics.json</code>' $H
ok "report: the format" grep -qF "<tr><th>format</th><td>xgboost-json (the pins' trainer.format)</td></tr>" $H
ok "report: the sandbox" grep -q '<tr><th>sandbox</th><td>bubblewrap [0-9.]*</td></tr>' $H
ok "report: the sandbox profile" grep -qF '<tr><th>sandbox profile</th><td class="mono">bwrap --unshare-all' $H
ok "report: the pins' trainer section, line by line (the limits)" sh -c \
	"sed -n '/id=\"pins-trainer\"/,/<\/div>/p' $H | grep -qx '    seconds: 300'"
ok "report: the pins' trainer section, its params" sh -c \
	"sed -n '/id=\"pins-trainer\"/,/<\/div>/p' $H | grep -qx '    eta: 0.3'"
ok "report: the changed field, pinned and current" grep -qF '<tr><td class="mono">var.rba_t_var</td><td class="mono">one</td><td class="mono">two</td></tr>' $H
ok "report: the environment link is CHANGED" grep -q '<tr><th>environment</th><td><span class="changed">CHANGED</span>' $H
ok "report: the record's fields (a declared package)" grep -q '<tr><td class="mono">pkg.python3_xgboost</td><td class="mono">[^<]' $H
ok "report: every field of the current record, no other" sh -c \
	"test \"\$(jq -r .predicate.environment.current.record ev-env.json | grep -c .)\" = \"\$(sed -n '/id=\"env-record\"/,/<\/table>/p' $H | grep -c '^<tr><td')\""
# dispute pages: an XGBoost version's reasons as a waterfall that adds
# up; an opaque version's plainly none
run 0 $RBA -S st dispute xgb-credit 5 --export -k key.key -o dx.json
run 0 $RBA report dx.json -p key.pub -o dx.html
ok "dispute report (XGBoost): the waterfall" grep -q '<svg id="waterfall"' dx.html
ok "dispute report (XGBoost): TreeSHAP reasons" grep -qF 'treeshap reasons (exact)' dx.html
ok "dispute report (XGBoost): the add-up check agrees" grep -q '<p class="caption" id="addup">.*agrees within the tolerance' dx.html
ok "dispute report (XGBoost): the first principal reason" sh -c \
	"grep -qF \"\$(jq -r '.predicate.dispute.explanation.principal_reasons[0].column' dx.json) = \" dx.html"
run 1 $RBA -S st dispute xgb-opaque 5 --export -k key.key -o do.json
run 0 $RBA report do.json -p key.pub -o do.html
ok "dispute report (opaque): no reasons, plainly" grep -qF '<p id="no-reasons">No reasons are available for this decision, and none are drawn: no reasons are available for format opaque' do.html
ok "dispute report (opaque): no waterfall" sh -c '! grep -q "<svg id=\"waterfall\"" do.html'

# ---- a second commit changes eta: not reproducible, links named ----------
sed -i 's/^    rounds = int(params.pop("rounds", 50))$/&\n    params["eta"] = 0.1/' repo/train.py
ok "the second commit changes eta" grep -q 'params\["eta"\] = 0.1' repo/train.py
git_commit -am "eta 0.1"
C2=$(git -C repo rev-parse HEAD)
pins xgb-claim "$C2" 1 > p3.yaml
run 0 $RBA -S st -q register p3.yaml --artifact model.json --policy "$POL"
run 0 $RBA -S st sample add xgb-claim cases.csv
run 1 $RBA -S st --json audit xgb-claim
jq '.audits[0]' out > rec.json && mv rec.json out
ok "eta changed: not-reproducible" test "$(jq -r .verdict out)" = not-reproducible
# registered from a file: xgb-credit's training of those bytes is
# xgb-credit's provenance, not this version's, so the links say what the
# pins declare and that no record of the file's training is this one's
ok "the code revision link is the pins' commit, from a file" sh -c \
	"jq -e '.links.code_revision.pinned == \"$C2\" and .links.code_revision.current == \"$C2\" and (.links.code_revision.note | test(\"came from a file\"))' out"
ok "the config link is unknown: no record of the pins that trained it" sh -c \
	"jq -e '.links.config.state == \"unknown\" and .pins.config_hash_trained == null' out"
ok "decisions flipped" sh -c "jq -e '.sample.flips > 0' out"
cp out claim-rec.json
# the audit kept the rebuilt XGBoost file: diff --store shows where it
# differs from the pinned one
run 1 $RBA -S st diff --store xgb-claim
out_has "audit "
out_has "of version xgb-claim: the pinned artifact against the rebuilt artifact"
out_has "artifacts differ: xgboost 'pinned artifact' against 'rebuilt artifact'"
out_has "trees       40 and 40, 0 identical; first that differs: tree 1, node"
run 1 $RBA -S st --json diff --store xgb-claim
ok "diff --store: the pinned and rebuilt digests are the audit record's" sh -c \
	"test \"\$(jq -r .a.digest out) \$(jq -r .b.digest out)\" = \"\$(jq -r '.digests.artifact_pinned + \" \" + .digests.artifact_rebuilt' claim-rec.json)\""

# a version that trained those bytes itself, replaced with pins at the
# second commit and its own file: its provenance says commit 1 trained
# them, so the links name the change
pins xgb-credit-t2 "$C2" 2 > p4.yaml
run 0 $RBA -S st -q register --replace p4.yaml --artifact model.json --policy "$POL"
run 1 $RBA -S st --json audit xgb-credit-t2
ok "its own training: the code revision link is changed, commit 1 to commit 2" sh -c \
	"jq -e '.audits[0].links.code_revision.state == \"changed\" and .audits[0].links.code_revision.pinned == \"$C1\" and .audits[0].links.code_revision.current == \"$C2\"' out"
ok "its own training: the config link is changed" sh -c "jq -e '.audits[0].links.config.state == \"changed\"' out"

# ---- scikit-learn: another library, another format, bit-identical --------
SK=$TOP/contrib/examples/sklearn
mkdir sk
cp "$SK/train.py" "$SK/score.py" sk/
git -C sk init -q
git -C sk add .
git -C sk -c user.name=test -c user.email=test@example.org commit -qm "logistic regression"
CS=$(git -C sk rev-parse HEAD)
sed -e "s|@SNAPSHOT@|$SNAP|; s|@REPO@|$PWD/sk|; s|@COMMIT@|$CS|" "$SK/pins.yaml.in" > sk.yaml
run 0 $RBA -S st -q register sk.yaml --policy "$SK/policy.yaml"
run 0 $RBA -S st sample add sklearn-credit cases.csv
run 0 $RBA -S st audit sklearn-credit
out_has 'bit-identical'
out_has 'decisions made by'
# a scikit-learn file this tool does not read: a pinned one with its
# intercept moved does not rebuild, and diff --store says it cannot
# compare the kept rebuild, in one line
run 0 $RBA -S st version export-artifact sklearn-credit sk-model.json
/usr/bin/python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m["intercept"] += 0.5; json.dump(m, open(sys.argv[2], "w"))' sk-model.json sk-moved.json
sed 's|^version: .*|version: sklearn-moved|' sk.yaml > skm.yaml
run 0 $RBA -S st -q register skm.yaml --artifact sk-moved.json --policy "$SK/policy.yaml"
run 0 $RBA -S st -q sample add sklearn-moved cases.csv
run 1 $RBA -S st -q audit sklearn-moved
dump before.txt
run 2 $RBA -S st diff --store sklearn-moved
err_has "is of a format this tool does not read, neither its own nor XGBoost JSON"
ok "diff --store of an opaque format: one line" test "$(wc -l < err)" -eq 1
out_empty
dump after.txt
ok "diff --store of an opaque format: the store is unchanged" cmp -s before.txt after.txt

# ---- train runs the pinned command: the registered bytes ------------------
# (forensics of exec versions: t-exec-forensics)
run 0 $RBA -S st train p1.yaml -o trained.json
ok "train -o writes the artifact register trained" \
	test "sha256:$(sha256sum trained.json | cut -d' ' -f1)" = "$A1"

# ---- bad inputs: exit 2, one line, the store unchanged --------------------
# bad NAME SED WANT: registering pins edited by SED fails with WANT
bad() {
	pins "xgb-$1" "$C1" 1 "$2" > bad.yaml
	dump before.txt
	run 2 $RBA -S st register bad.yaml --policy "$POL"
	err_has "$3"
	ok "$1: one line" test "$(wc -l < err)" -eq 1
	dump after.txt
	ok "$1: the store is unchanged" cmp -s before.txt after.txt
}
CMD='s|command: .*|command: [/usr/bin/python3, bad.py, MODE, "{snapshot}", "{params}", "{artifact}", "{seed}", "{threads}"]|'
bad absent "s|revision: .*|revision: 0123456789abcdef0123456789abcdef01234567|" \
	'commit 0123456789abcdef0123456789abcdef01234567 is not in repository'
ok "absent: at the revision's FILE:LINE:COL" grep -q "'bad.yaml:[0-9]*:[0-9]*'" err
bad short "s|revision: .*|revision: $(echo $C1 | cut -c1-12)|" 'must be a full commit id'
ok "short: at the revision's FILE:LINE:COL" grep -q "'bad.yaml:[0-9]*:[0-9]*'" err
bad branch "s|revision: .*|revision: master|" 'must be a full commit id'
bad exit3 "$(echo "$CMD" | sed s/MODE/exit3/)" 'exited with status 3: bad.py: giving up on purpose'
bad noart "$(echo "$CMD" | sed s/MODE/noart/)" 'wrote no artifact /out/model.json'
bad sleep "$(echo "$CMD" | sed s/MODE/sleep/); s|seconds: 300|seconds: 2|" 'killed at the time limit of 2 s'
no_leftovers sleep
bad net "$(echo "$CMD" | sed s/MODE/net/)" 'Network is unreachable'
bad escape "$(echo "$CMD" | sed s/MODE/escape/)" 'Read-only file system'
ok "escape: nothing was written into the repository" test ! -e repo/escaped.txt
bad notfound 's|/usr/bin/python3, train.py|/usr/bin/no-such-python, train.py|' \
	'command not found in the sandbox: /usr/bin/no-such-python'
bad memory "s|memory: 4294967296|memory: 16777216|" 'exited with status 1: MemoryError'
no_leftovers "bad inputs"

# a binary XGBoost model scores its class 1: pins that call the other
# label positive are refused at data.positive, never scored inverted
pins xgb-pos1 "$C1" 1 's|positive: "2"|positive: "1"|' > pos1.yaml
run 0 $RBA -S st -q register pos1.yaml --policy "$POL"
dump before.txt
run 2 $RBA -S st sample add xgb-pos1 cases.csv
err_has "a binary XGBoost model scores its class 1, which is the pins' second label in bytewise order ('2'); data.positive names '1'"
ok "positive: one line" test "$(wc -l < err)" -eq 1
dump after.txt
ok "positive: the store is unchanged" cmp -s before.txt after.txt

# a sample that lacks a feature the model takes
cut -d, -f1-5,7- cases.csv > lacks.csv
dump before.txt
run 2 $RBA -S st sample add xgb-credit lacks.csv
err_has "lack input column 'a5'"
ok "lacks: one line" test "$(wc -l < err)" -eq 1
dump after.txt
ok "lacks: the store is unchanged" cmp -s before.txt after.txt

# a score command that breaks the protocol (rebuild-audit-pins(5), Score
# protocol): one score too few, or no number
for m in short nan; do
	pins "xgb-score-$m" "$C1" 1 \
		"s|command: \[/usr/bin/python3, score.py,.*|command: [/usr/bin/python3, bad.py, $m, \"{artifact}\", \"{cases}\", \"{scores}\"]|; s|format: xgboost-json|format: opaque|" > sc.yaml
	run 0 $RBA -S st -q register sc.yaml --policy "$POL"
	dump before.txt
	run 2 $RBA -S st sample add "xgb-score-$m" cases.csv
	case $m in
	short) err_has "the scorer of version 'xgb-score-short' wrote 199 scores for 200 cases" ;;
	nan) err_has "the scorer's line 1 is not a probability in [0, 1]" ;;
	esac
	ok "score $m: one line" test "$(wc -l < err)" -eq 1
	dump after.txt
	ok "score $m: the store is unchanged" cmp -s before.txt after.txt
done

# ---- kill -9 of an audit while the trainer runs ----------------------------
pins xgb-slow "$C1" 1 \
	"s|command: \[/usr/bin/python3, train.py,|command: [/usr/bin/python3, bad.py, slow,|; s|probe: .*|pass: [RBA_TEST_SLEEP]|" > slow.yaml
run 0 $RBA -S st -q register slow.yaml --policy "$POL"
run 0 $RBA -S st sample add xgb-slow cases.csv
RBA_TEST_SLEEP=60 $RBA -S st audit xgb-slow > /dev/null 2>&1 &
apid=$!
i=0
while [ $i -lt 100 ] && ! ps -eo args | grep -v grep | grep -q 'bad.py slow'; do
	sleep 0.1
	i=$((i + 1))
done
ok "the slow trainer is running in the sandbox" sh -c "ps -eo args | grep -v grep | grep -q 'bad.py slow'"
kill -9 $apid
wait $apid 2> /dev/null
no_leftovers "kill -9"
run 0 $RBA -S st store check
run 0 $RBA -S st history --verify
# the environment passed through is a changed link, not an error
RBA_TEST_SLEEP=0
export RBA_TEST_SLEEP
run 0 $RBA -S st --json audit xgb-slow
jq '.audits[0]' out > rec.json && mv rec.json out
unset RBA_TEST_SLEEP
ok "a passed variable that changed is a changed environment field" sh -c \
	"jq -e '.links.environment.state == \"changed\" and any(.links.environment.fields[]; .key == \"var.rba_test_sleep\")' out"
