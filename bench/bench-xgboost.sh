#!/bin/sh
# bench-xgboost.sh BINARY [RUNS] - native XGBoost scoring against XGBoost.
#
# A 100-tree, depth-6 binary:logistic model (python3-xgboost 1.7, hist,
# one thread) on the 30,000-row credit-shaped table (bench/credit-
# synth.awk); 1,000,000 cases (its rows repeated, about 5% of the inputs
# missing).  Prints the median over RUNS runs (default 5) of
# Booster.predict(output_margin=True) at nthread 1 on a DMatrix built
# beforehand, and of our scoring of the same float32 rows on one thread
# (bench_xgb: xgbtree_margins, the path of artifact_score and the
# sample's scorer), their ratio, and whether the 1,000,000 margins are
# the same bits (cmp).  Then `score --margin` on the same cases as CSV,
# end to end (parsing included), once.  Figures, not a test.
set -u
bin=${1:?usage: bench-xgboost.sh BINARY [RUNS]}
runs=${2:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
py=/usr/bin/python3
$py -c 'import xgboost' 2>/dev/null || { echo "bench-xgboost: python3-xgboost is not installed (make deps)" >&2; exit 2; }
xb=${RBA_BENCH_XGB:-}
[ -n "$xb" ] && [ -x "$xb" ] || { echo "bench-xgboost: needs RBA_BENCH_XGB (make bench builds build/bench_xgb)" >&2; exit 2; }
. "$top/bench/lib.sh"

awk -v rows=30000 -f "$top/bench/credit-synth.awk" > "$tmp/credit.csv"
echo "1000000 cases, 23 inputs (about 5% missing), 100 trees of depth 6, one thread, median of $runs runs"
$py "$top/bench/xgb-score.py" "$tmp/credit.csv" 1000000 "$runs" "$tmp" > "$tmp/x.out" || exit 2
"$xb" "$tmp/model.json" "$tmp/x.f32" "$runs" "$tmp/ours.f32" > "$tmp/o.out" || exit 2
xt=$(sed 's/.*median_seconds=\([^ ]*\).*/\1/' "$tmp/x.out")
ot=$(sed 's/.*median_seconds=\([^ ]*\).*/\1/' "$tmp/o.out")
if cmp -s "$tmp/xgb.f32" "$tmp/ours.f32"; then same=yes; else same=NO; fi
awk -v x="$xt" -v o="$ot" -v s="$same" 'BEGIN {
	printf "  XGBoost Booster.predict(output_margin=True): %.3f s  (%.0f cases/s)\n", x, 1e6 / x
	printf "  ours (xgbtree_margins):                      %.3f s  (%.0f cases/s)\n", o, 1e6 / o
	printf "  time ratio ours / XGBoost: %.2f (target: at most 1)   margins bit-identical: %s\n", o / x, s }'
t0=$(date +%s%N)
"$bin" score "$tmp/model.json" "$tmp/cases.csv" --margin > "$tmp/scores.csv" || exit 2
t1=$(date +%s%N)
awk -v ns=$((t1 - t0)) 'BEGIN { printf "  score --margin (CSV in, CSV out): %.0f cases/s end to end\n", 1e6 / (ns / 1e9) }'
[ "$same" = yes ]
