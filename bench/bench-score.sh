#!/bin/sh
# bench-score.sh BINARY - `score ARTIFACT CASES.csv --policy P` of
# 100,000 and 1,000,000 German-credit-shaped cases (the fixture's rows
# repeated with running ids) with the MLP and the logistic fixtures, and
# of as many credit-card-shaped cases (bench/credit-synth.awk: 23
# numeric inputs, the shape of the Taiwan default table) with an MLP of
# hidden layers [32, 16] trained on 30,000 such rows (credit-mlp): wall
# time, CPU time (user + system) and peak RSS, medians of 5 runs
# (bench/lib.sh's measure: bench_run's microseconds under make bench,
# else /usr/bin/time -v's hundredths), each beside its anchor: the
# throughput target (3 M cases a second, tracker issue 30) and the
# figure of doc/benchmarks.md.  score streams its cases, so the RSS should not
# grow with the file (target < 64 MiB at 1,000,000 rows).  The binary
# runs as users run it (two threads: a helper scores while the next
# block is read) and with --threads 1 ("one"): the CPU seconds of the
# latter are the work a case takes, the wall seconds of the former what
# a user waits.
#
# BENCH_SCORE_BASE=REV (a git revision of this tree) also builds REV in
# a temporary directory and measures its binary in the same runs
# (the two binaries take turns), for the ratios, which a shared machine
# disturbs less than the times; the two reports must be byte-identical.
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
runs=${BENCH_SCORE_RUNS:-5}

for n in 100000 1000000; do
	german_cases $n "$dir/cases-$n.csv"
	awk -v rows=$n -f "$top/bench/credit-synth.awk" > "$dir/credit-cases-$n.csv"
done
for model in mlp logistic; do
	"$bin" train "$top/fixtures/pins/german-categorical-$model.yaml" \
		--snapshot "$top/fixtures/german-credit.csv" -o "$dir/$model.bin" > /dev/null 2>&1 || exit 1
done
awk -v rows=30000 -f "$top/bench/credit-synth.awk" > "$dir/credit-train.csv"
cat > "$dir/credit-mlp.yaml" <<EOP
schema: rebuild-audit/pins/v1
version: credit-mlp
snapshot: sha256:$(sha256sum "$dir/credit-train.csv" | cut -d' ' -f1)
data: {label: default, positive: "1", id: id, standardize: true,
       split: {validation: 0.25, order: tail, seed: 0}}
model: {kind: mlp, hidden: [32, 16], activation: relu, dropout: 0}
train:
  {seed: 0, epochs: 2, batch_size: 128, optimizer: adamw, lr: 0.01,
   weight_decay: 0.003, betas: [0.9, 0.999], eps: 1.0e-8}
determinism: {mode: strict, threads: 1}
EOP
"$bin" train "$dir/credit-mlp.yaml" --snapshot "$dir/credit-train.csv" --no-keep \
	-o "$dir/credit-mlp.bin" > /dev/null 2>&1 || exit 1

bins="new=$bin one=$bin"
if [ -n "${BENCH_SCORE_BASE:-}" ]; then
	mkdir "$dir/base"
	if (cd "$top" && git archive "$BENCH_SCORE_BASE") | tar -x -C "$dir/base" &&
		make -C "$dir/base" > "$dir/base.log" 2>&1; then
		bins="$bins base=$dir/base/build/rebuild-audit"
	else
		echo "base $BENCH_SCORE_BASE: build failed, not measured" >&2
	fi
fi

# the figures of doc/benchmarks.md (1,000,000 cases, medians of CPU
# time on the loaded 2-core machine of the change)
anchor() {
	case $1 in
	mlp) echo "doc: 2.00 M/s CPU, base 0.83 M/s, 2.40x";;
	logistic) echo "doc: 2.33 M/s CPU, base 0.88 M/s, 2.65x";;
	credit-mlp) echo "doc: see doc/benchmarks.md, issue 30";;
	esac
}

for model in mlp logistic credit-mlp; do
	cases=cases
	[ $model = credit-mlp ] && cases=credit-cases
	for n in 100000 1000000; do
		for b in $bins; do
			: > "$dir/wall-${b%%=*}"
			: > "$dir/cpu-${b%%=*}"
			: > "$dir/rss-${b%%=*}"
		done
		for i in $(seq $runs); do
			for b in $bins; do
				name=${b%%=*}
				exe=${b#*=}
				one=
				[ "$name" = one ] && one="--threads 1"
				measure "$dir/m" "$exe" score "$dir/$model.bin" "$dir/$cases-$n.csv" \
					--policy "$top/fixtures/policy/credit.yaml" $one > "$dir/out-$name" 2> "$dir/err" ||
					{ cat "$dir/err" >&2; exit 1; }
				read -r w c r < "$dir/m"
				echo "$w" >> "$dir/wall-$name"
				echo "$c" >> "$dir/cpu-$name"
				echo "$r" >> "$dir/rss-$name"
			done
		done
		for b in $bins; do
			name=${b%%=*}
			same=
			if [ "$name" != new ]; then
				cmp -s "$dir/out-new" "$dir/out-$name" && same=", report identical" ||
					same=", REPORT DIFFERS"
			fi
			awk -v n=$n -v m=$model -v b=$name -v w="$(median < "$dir/wall-$name")" \
				-v c="$(median < "$dir/cpu-$name")" \
				-v r="$(median < "$dir/rss-$name")" -v rm="$(sort -n "$dir/rss-$name" | tail -n 1)" -v s="$same" 'BEGIN {
				printf "%s %d (%s): wall median %.3f s = %.2f M cases/s, CPU median %.3f s = %.2f M cases/s, peak RSS median %.1f MiB, max %.1f MiB%s\n",
					m, n, b, w, n / w / 1e6, c, n / c / 1e6, r / 1024, rm / 1024, s }'
		done
		if [ -n "${BENCH_SCORE_BASE:-}" ] && [ -s "$dir/cpu-base" ]; then
			awk -v n=$n -v m=$model -v nw="$(median < "$dir/wall-new")" -v bw="$(median < "$dir/wall-base")" \
				-v nc="$(median < "$dir/cpu-one")" -v bc="$(median < "$dir/cpu-base")" -v a="$(anchor $model)" 'BEGIN {
				printf "%s %d: new/base speed %.2fx CPU (one thread), %.2fx wall (two) (target 3 M cases/s: %.2f M/s CPU, %.2f M/s wall; %s)\n",
					m, n, bc / nc, bw / nw, n / nc / 1e6, n / nw / 1e6, a }'
		else
			awk -v n=$n -v m=$model -v nc="$(median < "$dir/cpu-one")" -v nw="$(median < "$dir/wall-new")" -v a="$(anchor $model)" 'BEGIN {
				printf "%s %d: %.2f M cases/s CPU on one thread, %.2f M cases/s wall on two (target 3 M cases/s; %s)\n", m, n, n / nc / 1e6, n / nw / 1e6, a }'
		fi
	done
done
echo "(target: peak RSS < 64 MiB at 1000000 cases, flat in the file size)"
