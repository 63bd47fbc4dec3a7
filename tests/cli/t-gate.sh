# t-gate.sh - a gate measures the metric its file names, compares it in
# that metric's direction, refuses a metric the run records cannot give,
# and gate check, gate validate and bisect decide it by one rule: the
# median of the metric over the target's seeds.
. "$TOP/tests/cli/lib.sh"
export REBUILD_AUDIT_STORE=$PWD/st
P=$FIX/pins/synth-chapter.yaml
run 0 $RBA init
run 0 $RBA snapshot synth -o s.csv
run 0 $RBA snapshot add s.csv
sed 's/lr: 0.02,/lr: 0.2,/; s/^version: .*/version: synth-lr10/' $P > lr10.yaml
run 0 $RBA sweep $P --seeds 0-5 --json
SWEEP=$(sed -n 's/^{"sweep": "\([^"]*\)".*/\1/p' out)
run 0 $RBA gate calibrate "$SWEEP" --k 1 -o loss.yaml
out_has 'val_loss <= '

# A val_acc gate measures accuracy, higher is better.
sed 's/^metric: .*/metric: val_acc/; s/^direction: .*/direction: higher-is-better/;
     s/^threshold: .*/threshold: 0.5/' loss.yaml > acc.yaml
run 0 $RBA gate check acc.yaml $P
out_has 'val_acc 0.'
out_has '>= threshold 0.5 (higher-is-better): PASS'
out_lacks 'val_loss'
run 0 $RBA gate check acc.yaml "$SWEEP"
out_has "$SWEEP: val_acc median 0."
out_has 'at 6 seeds >= threshold 0.5 (higher-is-better): PASS'
# ... and an accuracy that does not reach the threshold fails.
sed 's/^threshold: .*/threshold: 0.99/' acc.yaml > acc99.yaml
run 1 $RBA gate check acc99.yaml $P
out_has '< threshold 0.99 (higher-is-better): FAIL'
run 1 $RBA gate check acc99.yaml "$SWEEP"
out_has '< threshold 0.99 (higher-is-better): FAIL'
RUN=$($RBA runs list | grep '/s0@' | head -1 | cut -d' ' -f1)
run 1 $RBA gate check acc99.yaml "$RUN"
out_has "$RUN: val_acc 0."
run 1 $RBA gate validate acc99.yaml $P --seeds 10-11
out_has 'false alarms 2/2 on healthy seeds (allowed 0); gate val_acc >= 0.99'
# bisect decides the accuracy too: lr x10 is near chance.
run 0 $RBA bisect $P lr10.yaml --gate acc.yaml
out_has 'step 1: prefix 1/1 (all edits): val_acc 0.'
out_has 'culprit: train.lr'

# A metric the run records cannot give is refused, at the gate's key.
sed 's/^metric: .*/metric: val_auc/' acc.yaml > auc.yaml
run 2 $RBA gate check auc.yaml $P
err_is "rebuild-audit: cannot gate 'auc.yaml:3:9': key 'metric': val_auc needs two classes and '$P' has 4"
out_empty
run 2 $RBA gate check auc.yaml "$SWEEP"
err_has "cannot gate 'auc.yaml:3:9': key 'metric'"
run 2 $RBA bisect $P lr10.yaml --gate auc.yaml
err_has "cannot gate 'auc.yaml:3:9': key 'metric'"
# A metric the reader does not know is refused where it is.
sed 's/^metric: .*/metric: val_f1/' acc.yaml > f1.yaml
run 2 $RBA gate check f1.yaml $P
err_is "rebuild-audit: invalid gate 'f1.yaml:3:9': unknown metric 'val_f1'"
# A direction that is not the metric's.
sed 's/^direction: .*/direction: lower-is-better/' acc.yaml > dir.yaml
run 2 $RBA gate check dir.yaml $P
err_is "rebuild-audit: invalid gate 'dir.yaml': direction 'lower-is-better' is not the metric's"

# One rule: the median over the seeds.  A threshold between the median
# and the worst of three seeds passes check at those seeds, the stored
# sweep of them, and bisect's evaluation of them; one between the best
# and the median fails all three.
run 0 $RBA sweep $P --seeds 0-2
SW3=$(sed -n 's/^sweep \([^:]*\):.*/\1/p' out)
run 0 $RBA runs show "$SW3"
LOSSES=$(sed -n 's/.* val_loss \([0-9.e-]*\) .*/\1/p' out | sort -g)
LO=$(echo "$LOSSES" | sed -n 1p)
MED=$(echo "$LOSSES" | sed -n 2p)
HI=$(echo "$LOSSES" | sed -n 3p)
ok "three distinct losses ($LO $MED $HI)" awk -v a="$LO" -v b="$MED" -v c="$HI" 'BEGIN { exit !(a < b && b < c) }'
UP=$(awk -v b="$MED" -v c="$HI" 'BEGIN { printf "%.9g", (b + c) / 2 }')
DOWN=$(awk -v a="$LO" -v b="$MED" 'BEGIN { printf "%.9g", (a + b) / 2 }')
sed "s/^threshold: .*/threshold: $UP/" loss.yaml > up.yaml
sed "s/^threshold: .*/threshold: $DOWN/" loss.yaml > down.yaml
run 0 $RBA gate check up.yaml $P --seeds 0-2
out_has "$P: val_loss median $MED at 3 seeds <= threshold"
out_has '(lower-is-better): PASS'
run 0 $RBA gate check up.yaml "$SW3"
out_has "$SW3: val_loss median $MED at 3 seeds <= threshold"
run 1 $RBA gate check down.yaml $P --seeds 0-2
out_has "val_loss median $MED at 3 seeds > threshold"
out_has '(lower-is-better): FAIL'
run 1 $RBA gate check down.yaml "$SW3"
# bisect at the same seeds: an edit that trains the same runs (threads)
# passes the up gate (nothing to bisect) and fails the down gate, at
# the median gate check printed.
sed 's/threads: 1}/threads: 2}/; s/^version: .*/version: synth-t2/' $P > t2.yaml
run 1 $RBA bisect $P t2.yaml --gate up.yaml --seeds 0-2
out_has "step 1: prefix 1/1 (all edits): val_loss $MED: pass"
out_has 'the candidate passes the gate'
run 0 $RBA bisect $P t2.yaml --gate down.yaml --seeds 0-2
out_has "step 1: prefix 1/1 (all edits): val_loss $MED: FAIL"
out_has 'culprit: determinism.threads'
# validate decides each seed alone: the worst seed is its one alarm.
run 1 $RBA gate validate up.yaml $P --seeds 0-2
out_has 'false alarms 1/3 on healthy seeds (allowed 0); gate val_loss <= '
