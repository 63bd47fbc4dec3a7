#!/bin/sh
# bench-missing.sh BINARY [RUNS] - trees on tables with missing values
# against XGBoost.
#
# The German credit numeric table with 10 % of its numeric fields blanked
# (fixtures/german-credit-numeric-missing.csv, bench/blank.awk seed 1)
# and a 30,000-row credit-shaped table (bench/credit-synth.awk) with 10 %
# of its input fields blanked (seed 3): ours (pins data.missing, the
# default empty field) and XGBoost 1.7 (tree_method=hist, one thread,
# missing values left as NaN) with the same parameters (100 trees, depth
# 4, learning rate 0.1, lambda 1, min_child_weight 1, 256 bins, tail
# split of 25 %): the median training time of each over RUNS runs, their
# validation AUCs and the difference; the same on German credit whose
# duration is missing far more often for bad loans than for good ones.  Then our artifact's digest at
# threads 1, 2 and 4 (one digest: threads move no bit), and the sparse
# scoring path's cases per second on a depth-6 forest of the credit table
# (bench_score, RBA_BENCH_SCORE).  Then a million rows with blanks
# against XGBoost: time and peak RSS (below).
set -u
bin=${1:?usage: bench-missing.sh BINARY [RUNS]}
runs=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
py=/usr/bin/python3
command -v jq >/dev/null 2>&1 || { echo "bench-missing: needs jq" >&2; exit 2; }
xgb=1
$py -c 'import xgboost' 2>/dev/null || { xgb=0; echo "bench-missing: python3-xgboost is not installed: our side only"; }
. "$top/bench/lib.sh"

awk -v rows=30000 -f "$top/bench/credit-synth.awk" |
	awk -v seed=3 -v pct=10 -v keep=id,default -f "$top/bench/blank.awk" > "$tmp/credit.csv"
cdig=sha256:$(sha256sum "$tmp/credit.csv" | cut -d' ' -f1)
blank=$(awk -F, 'NR > 1 { for (i = 2; i < NF; i++) { n++; if ($i == "") b++ } } END { printf "%.1f", 100 * b / n }' "$tmp/credit.csv")
echo "credit-shaped table: 30000 rows, 23 inputs, $blank % of the input fields missing, $cdig"
cat > "$tmp/credit.yaml" <<EOP
schema: rebuild-audit/pins/v1
version: credit-missing-gbdt
snapshot: $cdig
data: {label: default, positive: "1", id: id, standardize: false,
       missing: [""], split: {validation: 0.25, order: tail, seed: 0}}
model: {kind: gbdt, trees: 100, max_depth: 4, learning_rate: 0.1,
        min_child_weight: 1, lambda: 1, gamma: 0, max_bins: 256}
train: {seed: 0}
determinism: {mode: strict, threads: 1}
EOP

# one NAME PINS CSV LABEL POSITIVE
one() {
	name=$1 pins=$2 csv=$3 label=$4 positive=$5
	: > "$tmp/ours" ; : > "$tmp/theirs"
	i=0
	while [ $i -lt "$runs" ]; do
		"$bin" train "$pins" --snapshot "$csv" --no-keep --record "$tmp/run.json" --force > /dev/null || return 1
		jq -r .train_seconds "$tmp/run.json" >> "$tmp/ours"
		if [ $xgb = 1 ]; then
			$py "$top/bench/xgb-train.py" "$csv" "$label" "$positive" id - 100 4 0.1 \
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
			d = a - xa
			printf "%-30s ours %7.3f s  AUC %.4f | XGBoost %7.3f s  AUC %.4f | AUC diff %+.4f (%s 0.005)\n",
				n, t, a, xt, xa, d, (d <= 0.005 && d >= -0.005) ? "within" : "OUTSIDE" }'
	else
		awk -v n="$name" -v a="$ours_auc" -v t="$ours_t" 'BEGIN {
			printf "%-30s ours %7.3f s  AUC %.4f\n", n, t, a }'
	fi
	for t in 1 2 4; do
		sed "s/threads: 1/threads: $t/" "$pins" > "$tmp/t$t.yaml"
		"$bin" train "$tmp/t$t.yaml" --snapshot "$csv" --no-keep 2> /dev/null | tail -n 1
	done > "$tmp/digests"
	awk -v n="$name" '{ d[NR] = $1 } END {
		printf "%-30s threads 1, 2, 4: %s (%s)\n", n, d[1],
			(d[1] == d[2] && d[2] == d[3]) ? "one digest" : "DIGESTS DIFFER: " d[2] " " d[3] }' "$tmp/digests"
}

echo "training with missing values, median of $runs runs, one thread"
one german-numeric-10%-missing "$top/fixtures/pins/german-numeric-missing-gbdt.yaml" \
	"$top/fixtures/german-credit-numeric-missing.csv" class 2 || exit 2
one credit-30000x23-10%-missing "$tmp/credit.yaml" "$tmp/credit.csv" default 1 || exit 2
# missing values that say something: a2 blanked in 60 % of the bad
# loans and 10 % of the good ones (the same generator, seed 7)
awk -F, -v OFS=, 'BEGIN { x = 7; m = 2147483647 }
	NR == 1 { print; next }
	{ x = (x * 16807) % m; if ($26 == 2 && x < 0.6 * m) $3 = ""
	  x = (x * 16807) % m; if ($26 == 1 && x < 0.1 * m) $3 = ""; print }' \
	"$top/fixtures/german-credit-numeric.csv" > "$tmp/inf.csv"
sed "s/^snapshot: .*/snapshot: sha256:$(sha256sum "$tmp/inf.csv" | cut -d' ' -f1)/" \
	"$top/fixtures/pins/german-numeric-missing-gbdt.yaml" > "$tmp/inf.yaml"
one german-numeric-informative "$tmp/inf.yaml" "$tmp/inf.csv" class 2 || exit 2

# a million rows with blanks (BENCH_MISSING_ROWS, default 1000000): the
# credit-shaped table with 10 % of its input fields blanked (seed 3),
# 100 trees of depth 6, one thread, ours (`train`) against XGBoost 1.7
# (bench/xgb-big.py: pandas, NaN as missing), turn by turn: the median
# training time (ours: train_seconds, bin edges included; XGBoost:
# xgb.train), the median whole process and the median peak RSS
# (/usr/bin/time -v; Python and pandas included on XGBoost's side),
# their ratios (targets: training 0.8, peak RSS 1.0), both AUCs and our
# digest (the digest of this table is fixed: a change that moves it
# moved the trainer's bits).
big_rows=${BENCH_MISSING_ROWS:-1000000}
awk -v rows="$big_rows" -f "$top/bench/credit-synth.awk" |
	awk -v seed=3 -v pct=10 -v keep=id,default -f "$top/bench/blank.awk" > "$tmp/big.csv"
sed -e "s/^snapshot: .*/snapshot: sha256:$(sha256sum "$tmp/big.csv" | cut -d' ' -f1)/" \
    -e 's/max_depth: 4/max_depth: 6/' -e 's/^version: .*/version: credit-big-missing/' \
    "$tmp/credit.yaml" > "$tmp/big.yaml"
: > "$tmp/b_t"; : > "$tmp/b_w"; : > "$tmp/b_m"; : > "$tmp/bx_t"; : > "$tmp/bx_w"; : > "$tmp/bx_m"
i=0
while [ $i -lt "$runs" ]; do
	timed "$tmp/bo" "$bin" train "$tmp/big.yaml" --snapshot "$tmp/big.csv" --no-keep \
		--record "$tmp/big.json" --force || exit 2
	jq -r .train_seconds "$tmp/big.json" >> "$tmp/b_t"
	cut -d' ' -f1 "$tmp/bo" >> "$tmp/b_w"
	cut -d' ' -f2 "$tmp/bo" >> "$tmp/b_m"
	if [ $xgb = 1 ]; then
		/usr/bin/time -v -o "$tmp/bx.tv" $py "$top/bench/xgb-big.py" "$tmp/big.csv" default 1 id \
			100 6 0.1 1 > "$tmp/bx.out" 2> "$tmp/bx.err" || { cat "$tmp/bx.err" >&2; exit 2; }
		sed 's/.*seconds=\([^ ]*\).*/\1/' "$tmp/bx.out" >> "$tmp/bx_t"
		sed 's/.*total=\([^ ]*\).*/\1/' "$tmp/bx.out" >> "$tmp/bx_w"
		sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/bx.tv" >> "$tmp/bx_m"
	fi
	i=$((i + 1))
done
"$bin" train "$tmp/big.yaml" --snapshot "$tmp/big.csv" --no-keep 2> /dev/null | tail -n 1 > "$tmp/big.dig"
echo "training $big_rows rows x 23 inputs, 10 % blank, 100 trees of depth 6, one thread, median of $runs runs"
ot=$(median < "$tmp/b_t"); ow=$(median < "$tmp/b_w"); om=$(median < "$tmp/b_m")
oa=$(jq -r .final.val_auc "$tmp/big.json")
awk -v ot="$ot" -v ow="$ow" -v om="$om" -v oa="$oa" 'BEGIN {
	printf "  ours     training %6.2f s  whole %6.2f s  peak RSS %6.0f MiB  AUC %.4f\n", ot, ow, om / 1024, oa }'
if [ $xgb = 1 ]; then
	xt=$(median < "$tmp/bx_t"); xw=$(median < "$tmp/bx_w"); xm=$(median < "$tmp/bx_m")
	xa=$(sed 's/auc=\([^ ]*\).*/\1/' "$tmp/bx.out")
	awk -v ot="$ot" -v ow="$ow" -v om="$om" -v xt="$xt" -v xw="$xw" -v xm="$xm" -v xa="$xa" 'BEGIN {
		printf "  XGBoost  training %6.2f s  whole %6.2f s  peak RSS %6.0f MiB  AUC %.4f\n", xt, xw, xm / 1024, xa
		printf "  ratio (ours / XGBoost): training %.2f (target 0.8), whole %.2f, peak RSS %.2f (target 1.0)\n",
			ot / xt, ow / xw, om / xm }'
fi
echo "  digest $(cat "$tmp/big.dig")"
rm -f "$tmp/big.csv"

# scoring with missing values: the sparse path on a forest whose splits
# send missing values both ways (100 trees of depth 6)
if [ -n "${RBA_BENCH_SCORE:-}" ] && [ -x "$RBA_BENCH_SCORE" ]; then
	sed 's/max_depth: 4/max_depth: 6/' "$tmp/credit.yaml" > "$tmp/credit6.yaml"
	"$bin" train "$tmp/credit6.yaml" --snapshot "$tmp/credit.csv" --no-keep -o "$tmp/m6.bin" > /dev/null || exit 2
	: > "$tmp/rate"
	for i in 1 2 3; do
		"$RBA_BENCH_SCORE" "$tmp/m6.bin" "$tmp/credit.csv" 1000000 5 > "$tmp/bs" || exit 2
		sed 's/.*cases_per_second=\([0-9]*\).*/\1/' "$tmp/bs" >> "$tmp/rate"
	done
	echo "  sparse scoring path, 10 % missing: $(median < "$tmp/rate") cases/s (3 processes x 5 runs, median)"
fi
