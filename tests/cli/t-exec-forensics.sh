# t-exec-forensics.sh - forensics of exec versions (doc/design.md
# section 8, rebuild-audit-pins(5) METRICS): a real XGBoost script at a
# git commit this test makes, trained in the sandbox at each seed.  A
# sweep of its seeds gives a noise floor from the tool's own evaluation
# of the XGBoost JSON on the pins' validation split; eta 0.3 against
# eta 1.0 is judged by the noise-floor rule; a gate passes the pinned
# params and fails deliberately bad ones, and bisect names the edit; an
# opaque artifact is measured by the metrics file its command writes;
# train -o writes the artifact, evaluate scores it natively.  A metrics
# file that is not JSON, a value that is not a number, or an opaque run
# without val_loss is exit 2 with one line, the store unchanged.  Needs
# bubblewrap, git and python3-xgboost (make deps).
EX=$TOP/contrib/examples/xgboost
CSV=$FIX/german-credit-numeric.csv
mkdir -p tmp
TMPDIR=$PWD/tmp
export TMPDIR
export REBUILD_AUDIT_STORE=$PWD/st

mkdir repo
cp "$TOP/tests/cli/exec/fx_train.py" "$EX/score.py" repo/
git -C repo init -q
git -C repo add .
git -C repo -c user.name=test -c user.email=test@example.org commit -qm "credit model"
C1=$(git -C repo rev-parse HEAD)

run 0 $RBA init
run 0 $RBA snapshot add "$CSV"
SNAP=$(grep -o 'sha256:[0-9a-f]*' out | head -n 1)

# pins VERSION ETA [FORMAT [EXTRA-PARAMS]]: an exec pins file
pins() {
	cat <<EOP
schema: rebuild-audit/pins/v1
version: $1
snapshot: $SNAP
data:
  label: class
  positive: "2"
  id: id
  split: {validation: 0.25, order: tail}
train:
  seed: 7
determinism:
  threads: 1
trainer:
  kind: exec
  repository: $PWD/repo
  revision: $C1
  command: [/usr/bin/python3, fx_train.py, "{snapshot}", "{params}", "{artifact}", "{seed}", "{threads}", "{metrics}"]
  artifact: model.json
  format: ${3:-xgboost-json}
  params: {eta: $2, max_depth: 3, rounds: 15, subsample: 0.6${4:-}}
  environment:
    packages: [python3-xgboost]
  limits: {seconds: 120, memory: 4294967296, output: 16777216}
  score:
    command: [/usr/bin/python3, score.py, "{artifact}", "{cases}", "{scores}", "{threads}"]
EOP
}
dump() { mdb_dump -a st > "$1" 2>&1; }
pins xgb-base 0.3 > base.yaml
pins xgb-eta 1.0 > eta.yaml
pins xgb-opaque 0.3 opaque > opaque.yaml
run 0 $RBA check base.yaml

# ---- a sweep: the noise floor of the seeds ------------------------------
run 0 $RBA sweep base.yaml --seeds 1-6 --json
SB=$(sed -n 's/^{"sweep": "\([^"]*\)".*/\1/p' out)
ok "the sweep has an id" test -n "$SB"
run 0 $RBA runs show "$SB"
out_has "xgb-base at 6 seeds"
LOSSES=$(sed -n 's/.* val_loss \([0-9.e-]*\) .*/\1/p' out | sort -u | wc -l)
ok "six seeds, six different losses: a noise floor above zero" test "$LOSSES" -eq 6
# the tool's own evaluation is XGBoost's: the script's own validation
# loss (its metrics file, what an opaque version is measured by) agrees
# at seed 2 within float32 rounding
run 0 $RBA --json sweep base.yaml --seeds 2
NATIVE=$(jq -r .runs[0].val_loss out)
S2=$(jq -r .sweep out)
ok "the native version has the tool's own val_auc" jq -e '.metrics.val_auc.median > 0.5' out
run 0 $RBA --json sweep opaque.yaml --seeds 2
SO=$(jq -r .sweep out)
OWN=$(jq -r .runs[0].val_loss out)
ok "native evaluation $NATIVE = the script's own $OWN (1e-6)" \
	awk -v a="$NATIVE" -v b="$OWN" 'BEGIN { d = a - b; exit !(a > 0 && d < 1e-6 && d > -1e-6) }'
ok "an opaque version has no val_auc it did not write" jq -e '.metrics.val_auc.median == null' out

# ---- compare: the noise-floor rule -----------------------------------------
run 0 $RBA --json sweep eta.yaml --seeds 1-6
SE=$(jq -r .sweep out)
run 1 $RBA compare "$SB" "$SE" --success 'val_loss.median < 0'
out_has 'pins trainer.params.eta 0.3 -> 1.0'
out_has 'worse at 6/6 seeds'
out_has 'finding    worse'
out_has 'result            NOT MET'
# the same shifts, but a sign test at 6 seeds cannot reach alpha 0.01
run 1 $RBA compare "$SB" "$SE" --alpha 0.01 --success 'val_loss.median < 0'
out_has 'finding    NOT RESOLVED'
out_lacks 'finding    worse'
# the command's own metrics are another measure than the tool's: refused
run 2 $RBA compare "$S2" "$SO"
err_has 'evaluation contract'

# ---- gate: calibrated on the sweep, passes the pins, fails bad params ------
run 0 $RBA gate calibrate "$SB" --k 1 -o loss.yaml
out_has 'val_loss <= '
run 0 $RBA gate check loss.yaml "$SB"
out_has '(lower-is-better): PASS'
run 0 $RBA gate check loss.yaml base.yaml --seeds 1
out_has "base.yaml: val_loss 0.503022 <= threshold"
out_has '(lower-is-better): PASS'
run 1 $RBA gate check loss.yaml "$SE"
out_has '(lower-is-better): FAIL'
pins xgb-bad 1.0 xgboost-json ", max_bin: 4" > bad.yaml
run 1 $RBA gate check loss.yaml bad.yaml --seeds 1
out_has '(lower-is-better): FAIL'
run 0 $RBA gate validate loss.yaml base.yaml --seeds 7
out_has 'false alarms 0/1 on healthy seeds'

# ---- bisect over params edits: the culprit is eta ---------------------------
sed "s/max_depth: 3,/max_depth: 4,/" eta.yaml > two.yaml
run 0 $RBA bisect base.yaml two.yaml --gate loss.yaml --seeds 1
out_has '1. trainer.params.eta: 0.3 -> 1.0'
out_has '2. trainer.params.max_depth: 3 -> 4'
out_has 'culprit: trainer.params.eta (0.3 -> 1.0)'

# ---- bisect over a revision edit: a commit that coarsens the bins ----------
sed -i 's/    params.update({"objective"/    params.setdefault("max_bin", 2)\n    params.update({"objective"/' repo/fx_train.py
git -C repo -c user.name=test -c user.email=test@example.org commit -qam "coarser bins"
C2=$(git -C repo rev-parse HEAD)
sed -e "s/$C1/$C2/; s/max_depth: 3,/max_depth: 4,/; s/^version: .*/version: xgb-c2/" base.yaml > rev.yaml
run 0 $RBA bisect base.yaml rev.yaml --gate loss.yaml --seeds 1
out_has "1. trainer.revision: $C1 -> $C2"
out_has "culprit: trainer.revision ($C1 -> $C2)"

# ---- train -o and evaluate: the artifact, measured natively ----------------
run 0 $RBA train base.yaml -o m.json
ok "train -o writes XGBoost's JSON" sh -c "head -c 1 m.json | grep -q '{'"
run 2 $RBA train base.yaml -o m.json
out_empty
run 0 $RBA evaluate m.json --pins base.yaml
EVAL=$(sed -n 's/^val_loss  *//p' out)
ok "evaluate m.json: a loss" test -n "$EVAL"
# the pins alone: trained at their seed and evaluated, the same loss
run 0 $RBA evaluate base.yaml
out_has "val_loss          $EVAL"
out_has 'rows              250'
run 2 $RBA evaluate m.json --pins opaque.yaml
err_has 'format opaque cannot be evaluated by this tool'

# ---- bad metrics files: exit 2, one line, the store unchanged --------------
dump before
for mode in garbage string; do
	pins xgb-$mode 0.3 xgboost-json ", metrics_mode: $mode" > $mode.yaml
	run 2 $RBA sweep $mode.yaml --seeds 1
	out_empty
	ok "$mode: one line" test "$(wc -l < err)" -eq 1
done
err_is "rebuild-audit: cannot train 'xgb-string seed 1': version 'xgb-string' seed 1: /out/metrics.json: key 'val_loss' is not a finite number"
pins xgb-noloss 0.3 opaque ", metrics_mode: noloss" > noloss.yaml
run 2 $RBA sweep noloss.yaml --seeds 1
err_is "rebuild-audit: cannot train 'xgb-noloss seed 1': version 'xgb-noloss' seed 1: /out/metrics.json: key 'val_loss' missing (not in the file; format opaque is measured by its {metrics} file)"
run 2 $RBA gate check loss.yaml noloss.yaml --seeds 1
err_has "key 'val_loss' missing"
dump after
ok "the store is unchanged by every refusal" cmp before after
# (a comparison is declared before it trains: kept, as refused)
pins xgb-none 0.3 opaque ", metrics_mode: none" > none.yaml
run 2 $RBA compare none.yaml opaque.yaml --seeds 1
err_has "key 'val_loss' missing (no metrics file"

# ---- the records name the pinned commit, and compare sees it change --------
run 1 $RBA compare base.yaml rev.yaml --seeds 1
out_has 'code revision     CHANGED'
out_has "pins trainer.revision $C1 -> $C2"
run 0 $RBA --json runs show "$SB"
ok "a sweep's runs name the pinned commit as their code revision" sh -c \
	"$RBA --json runs show \$(jq -r '.runs[0]' out) | jq -e '.code_revision == \"$C1\" and .trainer_abi == 0'"
# pins that write code_revision out: it follows the revision edit
sed "s/^snapshot:/code_revision: \"$C1\"\nsnapshot:/" base.yaml > cb.yaml
sed "s/^snapshot:/code_revision: \"$C2\"\nsnapshot:/" rev.yaml > cr.yaml
run 0 $RBA bisect cb.yaml cr.yaml --gate loss.yaml --seeds 1
out_lacks 'not make a valid pins file'
out_has "culprit: trainer.revision ($C1 -> $C2)"
