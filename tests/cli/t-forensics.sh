# t-forensics.sh - the regression instruments on the synthetic task
# sweep, compare, evaluate, gate, bisect, runs.
. "$TOP/tests/cli/lib.sh"
export REBUILD_AUDIT_STORE=$PWD/st
P=$FIX/pins/synth-chapter.yaml
run 0 $RBA init
run 0 $RBA snapshot synth -o s.csv
run 0 $RBA snapshot add s.csv
run 0 $RBA snapshot synth --val-noise 0.29 -o v29.csv
run 0 $RBA snapshot add v29.csv
run 0 $RBA snapshot synth --misalign-train -o mis.csv
run 0 $RBA snapshot add mis.csv
V29=$(sha256sum v29.csv | cut -c1-64)
MIS=$(sha256sum mis.csv | cut -c1-64)
sed "s/^snapshot: .*/snapshot: sha256:$V29/; s/^version: .*/version: synth-v29/" $P > v29.yaml
sed "s/^snapshot: .*/snapshot: sha256:$MIS/; s/^version: .*/version: synth-mis/" $P > mis.yaml
sed 's/lr: 0.02,/lr: 0.2,/; s/^version: .*/version: synth-lr10/' $P > lr10.yaml

# E1: a 12-seed sweep reports the spread of validation loss (threads).
run 0 $RBA sweep $P --seeds 0-11 -j 2 --json
out_has '"val_loss": {"median": '
out_has '"spread": '
SWEEP=$(sed -n 's/^{"sweep": "\([^"]*\)".*/\1/p' out)
ok "E1: sweep id" test -n "$SWEEP"
norm() { sed 's/"sweep": "[^"]*"//; s/"wall_seconds": [^,]*//; s/"id": "[^"]*"//g; s/"examples_per_second": {[^}]*}//' out; }
norm > j2.txt
run 0 $RBA sweep $P --seeds 0-11 -j 1 --json
SWEEP1=$(sed -n 's/^{"sweep": "\([^"]*\)".*/\1/p' out)
norm > j1.txt
ok "E1/E2: -j 1 and -j 2 give the same metrics" cmp j1.txt j2.txt
run 0 $RBA runs show "$SWEEP"
out_has 'seed 11'
# E2: the same seed twice gives identical curves; threads 1 vs 2 identical.
sed 's/threads: 1}/threads: 2}/' $P > t2.yaml
run 0 $RBA sweep $P --seeds 3
run 0 $RBA sweep $P --seeds 3
run 0 $RBA sweep t2.yaml --seeds 3
run 0 $RBA runs list --version synth-chapter
ids=$(grep '/s3@' out | cut -d' ' -f1)
for id in $ids; do $RBA runs show "$id" --json | sed -n '/"curves"/,/^  \]/p' > "c.$(echo $id | tr '/@.' '___')"; done
ok "E2: three runs of seed 3 kept" test "$(echo "$ids" | wc -l)" -ge 3
ok "E2: identical curves" test "$(md5sum c.* | cut -d' ' -f1 | sort -u | wc -l)" -eq 1
run 0 $RBA runs show "$(echo "$ids" | head -1)" --curve
out_has 'loss by epoch'

# E6: each broken contract moves the metric and the fingerprint; the
# canonical contract reproduces the run record's metric exactly.
run 0 $RBA evaluate $P
out_has '(canonical)'
CANON=$(sed -n 's/^eval fingerprint *//p' out)
LOSS=$(sed -n 's/^val_loss *//p' out)
REC=$($RBA runs show "$(echo "$ids" | head -1 | sed 's/s3@/s3@/')" --json | sed -n 's/.*"eval_fingerprint": "\([^"]*\)".*/\1/p')
$RBA -q train $P --record r0.json > /dev/null
ok "E6: canonical evaluate = the run record's val_loss" \
	awk -v l="$LOSS" '/"final"/ { sub(/.*"val_loss": /, ""); sub(/,.*/, ""); if ($0 + 0 != l + 0) exit 1 }' r0.json
for opt in "--dropout on" "--subset 500" "--input-scale 1.15" "--reduction sum"; do
	run 0 $RBA evaluate $P $opt
	F=$(sed -n 's/^eval fingerprint *//p' out)
	L=$(sed -n 's/^val_loss *//p' out)
	ok "E6: $opt moves the fingerprint" test "$F" != "$CANON"
	ok "E6: $opt moves the metric" test "$L" != "$LOSS"
done
ok "E6: run records carry the fingerprint" test "$REC" = "$CANON"

# E5: validation label noise 0.30 -> 0.29 at 12 paired seeds.
run 1 $RBA compare $P v29.yaml --seeds 0-11 -j 2 --hypothesis "cleaner validation labels lower val loss"
out_has 'snapshot          CHANGED'
out_has 'eval fingerprint  SAME'
BETTER=$(awk '/^  val_loss$/ {f=1} f && /paired/ {sub(/.*better at /, ""); sub(/\/.*/, ""); print; exit}' out)
ok "E5: most seeds improve ($BETTER/12)" test "$BETTER" -ge 7
PS=$(awk '/^  val_loss$/ {f=1} f && /paired/ {for (i=1;i<=NF;i++) if ($i=="stdev") {print $(i+1); exit}}' out)
US=$(awk '/^  val_loss$/ {f=1} f && /unpaired/ {print $NF; exit}' out)
ok "E5: paired stdev $PS < unpaired $US" awk -v a="$PS" -v b="$US" 'BEGIN { exit !(a + 0 < b + 0) }'

# NOT RESOLVED: a shift inside the noise floor is never better or worse.
out_has 'DECLARED BEFORE THE RUN'
grep -A7 '^  val_loss$' out > vl
ok "E5: inside the noise floor: NOT RESOLVED" grep -q 'finding    NOT RESOLVED' vl
out_has 'result            NOT RESOLVED'

# E7: lr x10: at least 10 spreads, 10/10 worse, val loss near ln 4.
run 0 $RBA compare $P lr10.yaml --seeds 0-9 -j 2 --success 'val_loss.median > 0 and worse >= 10' --plot cmp.svg
out_has 'worse at 10/10 seeds'
out_has 'pins train.lr'
SH=$(awk '/^  val_loss$/ {f=1} f && /shift/ {print $2; exit}' out)
ok "E7: shift $SH >= 10 spreads" awk -v s="$SH" 'BEGIN { exit !(s + 0 >= 10) }'
MED=$(awk '/^  val_loss$/ {f=1} f && /candidate/ {print $3; exit}' out)
ok "E7: lr x10 val loss $MED near ln 4" awk -v m="$MED" 'BEGIN { exit !(m > 1.30 && m < 1.45) }'
out_has 'result            MET'
if command -v rsvg-convert > /dev/null; then
	ok "E7: the SVG renders" rsvg-convert -o cmp.png cmp.svg
fi
run 0 $RBA evaluate mis.yaml
ACC=$(sed -n 's/^val_acc *//p' out)
ok "E7: misaligned labels: accuracy $ACC near 0.25" awk -v a="$ACC" 'BEGIN { exit !(a > 0.18 && a < 0.32) }'

# E10: a gate calibrated on seeds 0-11.
run 0 $RBA gate calibrate "$SWEEP" --k 1 -o gate.yaml
out_has 'val_loss <= '
run 0 $RBA gate validate gate.yaml $P --seeds 100-119 -j 2
FA=$(sed -n 's/^false alarms \([0-9]*\)\/20.*/\1/p' out)
ok "E10: at most 1 false alarm in 20 ($FA)" test "$FA" -le 1
run 1 $RBA gate check gate.yaml lr10.yaml
out_has 'FAIL'
run 0 $RBA gate check gate.yaml $P
run 2 $RBA gate check gate.yaml $P --seeds x

# E9: six edits, one regresses alone: bisect names it in at most 4.
sed 's/lr: 0.02,/lr: 0.2,/; s/weight_decay: 0.003,/weight_decay: 0.0031,/;
     s/eps: 1.0e-8}/eps: 1.1e-8}/; s/betas: \[0.9, 0.999\]/betas: [0.9, 0.9991]/;
     s/batch_size: 128,/batch_size: 127,/; s/input_scale: 1.0}/input_scale: 1.0}/;
     s/^version: .*/version: synth-six/' $P > six.yaml
sed -i 's/dropout: 0.3}/dropout: 0.29}/' six.yaml
run 0 $RBA gate calibrate "$SWEEP" --k 3 -o gate3.yaml
run 0 $RBA bisect $P six.yaml --gate gate3.yaml
out_has '6 edits'
out_has 'culprit: train.lr'
N=$(sed -n 's/.*after \([0-9]*\) prefix evaluations/\1/p' out)
ok "E9: at most 4 prefix evaluations ($N)" test "$N" -le 4
out_has 'train.lr alone on the baseline'

# compare of stored sweeps without training; usage and refusals.
run 0 $RBA runs list
run 1 $RBA compare "$SWEEP" "$SWEEP1" --success 'val_loss.median < 0'
out_has 'finding    NOT RESOLVED'
out_lacks 'finding    better'
out_lacks 'finding    worse'
out_has 'result            NOT RESOLVED'
run 2 $RBA compare $P v29.yaml
run 2 $RBA compare $P v29.yaml --seeds 0-1 --success 'val_loss.median <'
err_has 'invalid success expression'
sed 's/input_scale: 1.0}/input_scale: 1.15}/; s/^version: .*/version: synth-scale/' $P > scale.yaml
run 2 $RBA compare $P scale.yaml --seeds 0-1
err_has 'allow-contract-change'
# the refused comparison's declaration is not left looking pending
run 0 $RBA runs list
ok "a refused comparison is kept as refused" sh -c "grep -F 'compare/synth-chapter..synth-scale@' out | grep -q ' refused$'"

# compare --json: the report as one document, the one kept as the
# record; the declaration keeps the time it was made, before the runs.
run 1 $RBA --json compare "$SWEEP" "$SWEEP" --success 'val_loss.median == 0'
ok "compare --json: one valid document" jq -e '.schema == "rebuild-audit/compare/v2" and .status == "decided"' out
ok "compare --json: every metric NOT RESOLVED when compared with itself" \
	jq -e '[.correctness[] | .finding] | length == 3 and all(. == "NOT RESOLVED")' out
ok "compare --json: verdict beside exit status" jq -e '.verdict == "NOT RESOLVED"' out
run 1 $RBA --json compare $P lr10.yaml --seeds 0-5 -j 2 --hypothesis "lr x10 is fine" --success 'val_loss.median < 0'
cp out cj.json
ok "compare --json (pins): val_loss worse at 6/6" jq -e '.correctness[] | select(.metric == "val_loss") | .finding == "worse" and .worse == 6 and .seeds == 6 and .p == 0.03125' cj.json
ok "compare --json: the edit" jq -e '.identity.edits == [{"path": "train.lr", "base": "0.02", "cand": "0.2"}]' cj.json
ok "compare --json: NOT MET" jq -e '.verdict == "NOT MET" and .hypothesis == "lr x10 is fine"' cj.json
CID=$(jq -r .id cj.json)
# SUBJECT@TIME, or SUBJECT@TIME.K when a record of that subject was
# declared in the same second already
CT=${CID##*@}
ok "the id carries the declaration time" test "${CT%%.*}" = "$(jq -r .declared_at cj.json)"
ok "declared before decided" jq -e '.declared_at <= .decided_at' cj.json
run 0 $RBA --json runs show "$CID"
ok "the kept record is the printed document" cmp -s out cj.json
run 0 $RBA runs show "$CID"
out_has 'status            decided'
out_has 'hypothesis        lr x10 is fine'
out_has 'val_loss          worse'
out_has 'result            NOT MET'
run 2 $RBA runs show nosuch
