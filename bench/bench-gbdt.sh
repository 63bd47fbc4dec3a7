#!/bin/sh
# bench-gbdt.sh BINARY [RUNS] - gradient-boosted trees against XGBoost.
#
# Trains ours and XGBoost 1.7 (tree_method=hist, one thread) with the
# same parameters (100 trees, depth 4, learning rate 0.1, lambda 1,
# min_child_weight 1, 256 bins, out-of-time tail split of 25%) on the
# German credit fixtures and on a 30,000-row credit-shaped table with 23
# inputs (bench/credit-synth.awk), and prints the median training time
# of each over RUNS runs (ours: the run record's train_seconds: the bin
# edges and the boosting loop; XGBoost: xgb.train, its sketch and its
# boosting loop), their ratio and both validation
# AUCs.  Then scores 1,000,000 cases of that table with 100 trees of
# depth 6 through the sparse scoring path (bench_score, one thread,
# excluding the rebuild; on a CPU with AVX2 also that path with each of
# its ways of walking, RBA_TREE_WALK, and with the one timed at start),
# and through `score` end to end.
# XGBoost is python3-xgboost (Debian); without it only our side runs.
set -u
bin=${1:?usage: bench-gbdt.sh BINARY [RUNS]}
runs=${2:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
py=/usr/bin/python3
command -v jq >/dev/null 2>&1 || { echo "bench-gbdt: needs jq" >&2; exit 2; }
xgb=1
$py -c 'import xgboost' 2>/dev/null || { xgb=0; echo "bench-gbdt: python3-xgboost is not installed: our side only"; }
. "$top/bench/lib.sh"

awk -v rows=30000 -f "$top/bench/credit-synth.awk" > "$tmp/credit.csv"
cdig=sha256:$(sha256sum "$tmp/credit.csv" | cut -d' ' -f1)
echo "credit-shaped table: 30000 rows, 23 inputs, $cdig"
cat > "$tmp/credit.yaml" <<EOP
schema: rebuild-audit/pins/v1
version: credit-gbdt
snapshot: $cdig
data: {label: default, positive: "1", id: id, standardize: false,
       split: {validation: 0.25, order: tail, seed: 0}}
model: {kind: gbdt, trees: 100, max_depth: 4, learning_rate: 0.1,
        min_child_weight: 1, lambda: 1, gamma: 0, max_bins: 256}
train: {seed: 0}
determinism: {mode: strict, threads: 1}
EOP
gcats=checking_status,credit_history,purpose,savings,employment_since,personal_status_sex,other_debtors,property,other_installment_plans,housing,job,telephone,foreign_worker
# the categorical pins without their row and column sampling: XGBoost's draws differ
sed 's/subsample: 0.8, colsample: 0.8/subsample: 1, colsample: 1/' \
	"$top/fixtures/pins/german-categorical-gbdt.yaml" > "$tmp/gcat.yaml"

# one NAME PINS CSV LABEL POSITIVE CATS
one() {
	name=$1 pins=$2 csv=$3 label=$4 positive=$5 cats=$6
	: > "$tmp/ours" ; : > "$tmp/theirs"
	i=0
	while [ $i -lt "$runs" ]; do
		"$bin" train "$pins" --snapshot "$csv" --no-keep --record "$tmp/run.json" --force > /dev/null || return 1
		jq -r .train_seconds "$tmp/run.json" >> "$tmp/ours"
		if [ $xgb = 1 ]; then
			$py "$top/bench/xgb-train.py" "$csv" "$label" "$positive" id "$cats" 100 4 0.1 \
				> "$tmp/x.out" || return 1
			sed 's/.*seconds=//' "$tmp/x.out" >> "$tmp/theirs"
		fi
		i=$((i + 1))
	done
	ours_auc=$(jq -r .final.val_auc "$tmp/run.json")
	ours_t=$(median < "$tmp/ours")
	if [ $xgb = 1 ]; then
		x_auc=$(sed 's/auc=\([^ ]*\).*/\1/' "$tmp/x.out")
		x_t=$(median < "$tmp/theirs")
		awk -v n="$name" -v a="$ours_auc" -v t="$ours_t" -v xa="$x_auc" -v xt="$x_t" 'BEGIN {
			printf "%-28s ours %7.3f s  AUC %.4f | XGBoost %7.3f s  AUC %.4f | time ratio %.2f  AUC diff %+.4f\n",
				n, t, a, xt, xa, t / xt, a - xa }'
	else
		awk -v n="$name" -v a="$ours_auc" -v t="$ours_t" 'BEGIN {
			printf "%-28s ours %7.3f s  AUC %.4f\n", n, t, a }'
	fi
}

echo "training, median of $runs runs, one thread (time ratio: ours / XGBoost)"
one german-numeric "$top/fixtures/pins/german-numeric-gbdt.yaml" \
	"$top/fixtures/german-credit-numeric.csv" class 2 - || exit 2
one german-categorical "$tmp/gcat.yaml" "$top/fixtures/german-credit.csv" class 2 "$gcats" || exit 2
one credit-30000x23 "$tmp/credit.yaml" "$tmp/credit.csv" default 1 - || exit 2

echo "scoring 1000000 cases, 100 trees of depth 6, one thread"
sed 's/max_depth: 4/max_depth: 6/' "$tmp/credit.yaml" > "$tmp/credit6.yaml"
"$bin" train "$tmp/credit6.yaml" --snapshot "$tmp/credit.csv" --no-keep -o "$tmp/m6.bin" > /dev/null || exit 2
if [ -n "${RBA_BENCH_SCORE:-}" ] && [ -x "$RBA_BENCH_SCORE" ]; then
	: > "$tmp/rate"
	for i in 1 2 3; do
		"$RBA_BENCH_SCORE" "$tmp/m6.bin" "$tmp/credit.csv" 1000000 5 > "$tmp/bs" || exit 2
		sed 's/.*cases_per_second=\([0-9]*\).*/\1/' "$tmp/bs" >> "$tmp/rate"
	done
	echo "  sparse scoring path:  $(median < "$tmp/rate") cases/s (3 processes x 5 runs, median; target 2000000)"
	# The AVX2 path's ways of walking the trees (RBA_TREE_WALK), each
	# alone, and the one each scorer picks by timing them ("timed"):
	# which is fastest depends on the CPU.  The processes take turns.
	if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
		ways="gather leaves rows select pairs timed"
		for w in $ways; do : > "$tmp/way-$w"; done
		for i in 1 2 3; do
			for w in $ways; do
				case $w in timed) ev= ;; *) ev=RBA_TREE_WALK=$w ;; esac
				env RBA_STRICT_ISA=avx2 $ev "$RBA_BENCH_SCORE" "$tmp/m6.bin" \
					"$tmp/credit.csv" 1000000 5 > "$tmp/bs" || exit 2
				sed 's/.*cases_per_second=\([0-9]*\).*/\1/' "$tmp/bs" >> "$tmp/way-$w"
			done
		done
		for w in $ways; do
			echo "  sparse scoring path, AVX2 path, walk $w: $(median < "$tmp/way-$w") cases/s"
		done
	fi
fi
{ head -n 1 "$tmp/credit.csv"; i=0; while [ $i -lt 34 ]; do tail -n +2 "$tmp/credit.csv"; i=$((i + 1)); done; } |
	head -n 1000001 > "$tmp/million.csv"
t0=$(date +%s%N)
"$bin" score "$tmp/m6.bin" "$tmp/million.csv" > "$tmp/scores.csv" || exit 2
t1=$(date +%s%N)
awk -v ns=$((t1 - t0)) 'BEGIN { printf "  score command (CSV in, CSV out): %.0f cases/s end to end\n", 1e6 / (ns / 1e9) }'
