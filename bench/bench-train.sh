#!/bin/sh
# bench-train.sh BINARY [RUNS] - time strict and fast training of the synthetic
# task (fixtures/pins/synth-chapter.yaml: 3,000 training examples x 20
# epochs, MLP 32-32, with validation on 1,000 examples after each epoch).
# Prints the median, minimum and maximum of the in-process training time
# (the timer around the training loop, as the run record's train_seconds)
# and of the whole process (end to end: start, reading and hashing the
# snapshot, encoding, training, writing nothing), over RUNS runs each.
set -u
bin=${1:?usage: train.sh BINARY [RUNS]}
runs=${2:-21}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
command -v jq >/dev/null 2>&1 || { echo "bench/bench-train.sh: needs jq" >&2; exit 2; }

"$bin" snapshot synth -o "$tmp/synth.csv" > /dev/null || exit 2
cp "$top/fixtures/pins/synth-chapter.yaml" "$tmp/strict.yaml"
sed 's/mode: strict/mode: fast/' "$tmp/strict.yaml" > "$tmp/fast.yaml"

now_ns() { date +%s%N; }

# stats FILE: median min max of one number per line, in milliseconds
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median %7.2f ms   min %7.2f   max %7.2f   (%d runs)\n", m, v[1], v[NR], NR }'
}

for mode in strict fast; do
	: > "$tmp/$mode.in"
	: > "$tmp/$mode.e2e"
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(now_ns)
		"$bin" --json train "$tmp/$mode.yaml" --snapshot "$tmp/synth.csv" --no-keep > "$tmp/out" || exit 2
		t1=$(now_ns)
		jq -r '.train_seconds * 1000' "$tmp/out" >> "$tmp/$mode.in"
		echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }' >> "$tmp/$mode.e2e"
		i=$((i + 1))
	done
	digest=$(jq -r .artifact "$tmp/out")
	printf 'train %-6s in-process  %s' "$mode" "$(stats "$tmp/$mode.in")"
	echo
	printf 'train %-6s end-to-end  %s' "$mode" "$(stats "$tmp/$mode.e2e")"
	echo
	echo "train $mode artifact $digest  val_loss $(jq -r .val_loss "$tmp/out")"
done
