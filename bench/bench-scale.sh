#!/bin/sh
# bench-scale.sh BINARY [RUNS] - a million rows against XGBoost.
#
# A 1,000,000-row credit-shaped table with 23 numeric inputs
# (bench/credit-synth.awk): ours (`train`, one thread) and XGBoost 1.7
# (bench/xgb-big.py: pandas, tree_method=hist, nthread 1) with the same
# parameters (100 trees, depth 6, learning rate 0.1, lambda 1,
# min_child_weight 1, 256 bins, tail split of 25 %), RUNS runs each
# (default 3), side by side: the median training time (ours: the run
# record's train_seconds, bin edges and boosting; XGBoost: xgb.train),
# the median wall time of the whole process (ours: CSV, encoding and
# training; XGBoost: Python, pandas, DMatrix and training) and the median
# peak RSS of each (/usr/bin/time -v), their ratios and both AUCs.  Then
# the CSV reader's MB/s on a 2,000,000-row table of about 210 MB
# (bench_csv, RBA_BENCH_CSV; wall and CPU time), and `sample add` of the
# million cases to a version of that model: its wall time and peak RSS.
set -u
bin=${1:?usage: bench-scale.sh BINARY [RUNS]}
runs=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
py=/usr/bin/python3
command -v jq >/dev/null 2>&1 || { echo "bench-scale: needs jq" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-scale: needs /usr/bin/time" >&2; exit 2; }
xgb=1
$py -c 'import xgboost, pandas, sklearn' 2>/dev/null ||
	{ xgb=0; echo "bench-scale: python3-xgboost, pandas or sklearn missing: our side only"; }
. "$top/bench/lib.sh"

awk -v rows=1000000 -f "$top/bench/credit-synth.awk" > "$tmp/m.csv"
dig=sha256:$(sha256sum "$tmp/m.csv" | cut -d' ' -f1)
echo "credit-shaped table: 1000000 rows, 23 inputs, $(wc -c < "$tmp/m.csv") bytes"
cat > "$tmp/m.yaml" <<EOP
schema: rebuild-audit/pins/v1
version: credit-million
snapshot: $dig
data: {label: default, positive: "1", id: id, standardize: false,
       split: {validation: 0.25, order: tail, seed: 0}}
model: {kind: gbdt, trees: 100, max_depth: 6, learning_rate: 0.1,
        min_child_weight: 1, lambda: 1, gamma: 0, max_bins: 256}
train: {seed: 0}
determinism: {mode: strict, threads: 1}
EOP
: > "$tmp/o_t"; : > "$tmp/o_w"; : > "$tmp/o_m"; : > "$tmp/x_t"; : > "$tmp/x_w"; : > "$tmp/x_m"
i=0
while [ $i -lt "$runs" ]; do
	timed "$tmp/o" "$bin" train "$tmp/m.yaml" --snapshot "$tmp/m.csv" --no-keep \
		--record "$tmp/run.json" --force || exit 2
	jq -r .train_seconds "$tmp/run.json" >> "$tmp/o_t"
	cut -d' ' -f1 "$tmp/o" >> "$tmp/o_w"
	cut -d' ' -f2 "$tmp/o" >> "$tmp/o_m"
	if [ $xgb = 1 ]; then
		/usr/bin/time -v -o "$tmp/x.tv" $py "$top/bench/xgb-big.py" "$tmp/m.csv" default 1 id \
			100 6 0.1 1 > "$tmp/x.out" 2> "$tmp/x.err" || { cat "$tmp/x.err" >&2; exit 2; }
		sed 's/.*seconds=\([^ ]*\).*/\1/' "$tmp/x.out" >> "$tmp/x_t"
		sed 's/.*total=\([^ ]*\).*/\1/' "$tmp/x.out" >> "$tmp/x_w"
		sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/x.tv" >> "$tmp/x_m"
	fi
	i=$((i + 1))
done
oa=$(jq -r .final.val_auc "$tmp/run.json")
ot=$(median < "$tmp/o_t"); ow=$(median < "$tmp/o_w"); om=$(median < "$tmp/o_m")
echo "training 1000000 rows x 23 inputs, 100 trees of depth 6, one thread, median of $runs runs"
if [ $xgb = 1 ]; then
	xa=$(sed 's/auc=\([^ ]*\).*/\1/' "$tmp/x.out")
	xt=$(median < "$tmp/x_t"); xw=$(median < "$tmp/x_w"); xm=$(median < "$tmp/x_m")
	awk -v ot="$ot" -v ow="$ow" -v om="$om" -v oa="$oa" -v xt="$xt" -v xw="$xw" -v xm="$xm" -v xa="$xa" 'BEGIN {
		printf "  ours     training %6.2f s  whole %6.2f s  peak RSS %6.0f MiB  AUC %.4f\n", ot, ow, om / 1024, oa
		printf "  XGBoost  training %6.2f s  whole %6.2f s  peak RSS %6.0f MiB  AUC %.4f\n", xt, xw, xm / 1024, xa
		printf "  ratio (ours / XGBoost): training %.2f, whole %.2f, peak RSS %.2f\n", ot / xt, ow / xw, om / xm }'
else
	awk -v ot="$ot" -v ow="$ow" -v om="$om" -v oa="$oa" 'BEGIN {
		printf "  ours     training %6.2f s  whole %6.2f s  peak RSS %6.0f MiB  AUC %.4f\n", ot, ow, om / 1024, oa }'
fi

if [ -n "${RBA_BENCH_CSV:-}" ] && [ -x "$RBA_BENCH_CSV" ]; then
	awk -v rows=2000000 -f "$top/bench/credit-synth.awk" > "$tmp/big.csv"
	# BENCH_SCORE_BASE=REV: REV's bench_csv too, the two taking turns
	csvbins="new=$RBA_BENCH_CSV"
	if [ -n "${BENCH_SCORE_BASE:-}" ]; then
		mkdir "$tmp/base"
		if (cd "$top" && git archive "$BENCH_SCORE_BASE") | tar -x -C "$tmp/base" &&
			make -C "$tmp/base" build/bench_csv > "$tmp/base.log" 2>&1; then
			csvbins="$csvbins base=$tmp/base/build/bench_csv"
		else
			echo "  base $BENCH_SCORE_BASE: bench_csv build failed, not measured" >&2
		fi
	fi
	for i in 1 2 3; do
		for b in $csvbins; do
			"${b#*=}" "$tmp/big.csv" 3 >> "$tmp/csv-${b%%=*}.out" || exit 2
		done
	done
	for b in $csvbins; do
		sed 's/.*mb_per_second=\([^ ]*\) cpu_mb_per_second=\([^ ]*\).*/\1 \2/' "$tmp/csv-${b%%=*}.out" > "$tmp/csv-${b%%=*}.mb"
		awk -v b="${b%%=*}" -v w="$(cut -d' ' -f1 "$tmp/csv-${b%%=*}.mb" | median)" \
			-v c="$(cut -d' ' -f2 "$tmp/csv-${b%%=*}.mb" | median)" -v n="$(wc -c < "$tmp/big.csv")" 'BEGIN {
			printf "  CSV reader (%s): %.1f MB/s wall, %.1f MB/s CPU on %d bytes (median of 3 medians of 3; target 400, doc: 546 CPU, base 360)\n", b, w, c, n }'
	done
	if [ -s "$tmp/csv-base.mb" ]; then
		awk -v nc="$(cut -d' ' -f2 "$tmp/csv-new.mb" | median)" -v bc="$(cut -d' ' -f2 "$tmp/csv-base.mb" | median)" \
			'BEGIN { printf "  CSV reader new/base: %.2fx CPU\n", nc / bc }'
	fi
	rm -f "$tmp/big.csv"
fi

"$bin" -S "$tmp/st" init > /dev/null || exit 2
"$bin" -S "$tmp/st" snapshot add "$tmp/m.csv" > /dev/null || exit 2
"$bin" -S "$tmp/st" -q register "$tmp/m.yaml" --policy "$top/fixtures/policy/credit.yaml" > /dev/null || exit 2
timed "$tmp/sa" "$bin" -S "$tmp/st" -q sample add credit-million "$tmp/m.csv" || exit 2
awk '{ printf "  sample add of 1000000 cases: %.2f s, peak RSS %.0f MiB (target 64)\n", $1, $2 / 1024 }' "$tmp/sa"
