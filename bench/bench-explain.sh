#!/bin/sh
# bench-explain.sh BINARY - exact Shapley values of an MLP (hidden 32-32,
# as the fixtures' pins) over 22, 24 and 26 columns: `dispute` of one case
# of a synthetic table (`snapshot synth`, standard-normal columns, so
# every column is a player), the stored artifact after an audit, so no
# rebuild.  Median of 3 runs of the dispute report's explain_s (the
# baseline fit and the Shapley values, wall clock) and of the whole
# dispute's user CPU time (/usr/bin/time), on one core.
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
runs=3

for n in 22 24 26; do
	st="$dir/st-$n"
	V=explain-$n
	"$bin" snapshot synth --rows 2000 --features $n --classes 2 --seed 1 \
		-o "$dir/s-$n.csv" > /dev/null || exit 1
	"$bin" -S "$st" init > /dev/null
	"$bin" -S "$st" snapshot add "$dir/s-$n.csv" > /dev/null || exit 1
	cat > "$dir/p-$n.yaml" <<EOF
schema: rebuild-audit/pins/v1
version: $V
snapshot: sha256:$(sha256sum "$dir/s-$n.csv" | cut -d' ' -f1)
data:
  {label: class, positive: "1", id: null, exclude: [], categorical: [],
   standardize: true, split: {validation: 0.25, order: random, seed: 0}}
model: {kind: mlp, hidden: [32, 32], activation: relu, dropout: 0.3}
train:
  {seed: 0, epochs: 5, batch_size: 128, optimizer: adamw, lr: 0.02,
   weight_decay: 0.003, betas: [0.9, 0.999], eps: 1.0e-8}
eval: {subset: all, reduction: mean, dropout: off, input_scale: 1.0}
determinism: {mode: strict, threads: 1}
EOF
	"$bin" -S "$st" -q register "$dir/p-$n.yaml" \
		--policy "$top/fixtures/policy/credit.yaml" > /dev/null 2>&1 || exit 1
	"$bin" -S "$st" -q sample add $V "$dir/s-$n.csv" > /dev/null || exit 1
	"$bin" -S "$st" -q audit $V > /dev/null || exit 1
	: > "$dir/e"
	: > "$dir/u"
	for i in $(seq $runs); do
		/usr/bin/time -f %U -o "$dir/tu" "$bin" -S "$st" --json dispute $V 1 \
			> "$dir/d.json" 2> "$dir/d.err"
		[ $? -le 1 ] || { cat "$dir/d.err" >&2; exit 1; }
		cat "$dir/tu" >> "$dir/u"
		jq -e '.explanation.ok and .explanation.method == "shapley"' "$dir/d.json" \
			> /dev/null || { echo "bench-explain: $n columns: not explained" >&2; exit 1; }
		jq -r '.timings.explain_s' "$dir/d.json" >> "$dir/e"
	done
	awk -v n=$n -v e="$(median < "$dir/e")" -v u="$(median < "$dir/u")" \
		-v g="$(jq -r '(.explanation.sum - .explanation.margin) | fabs' "$dir/d.json")" 'BEGIN {
		printf "shapley %d columns (2^%d coalitions), MLP 32-32: median %.2f s (user CPU of the dispute %.2f s), |sum - margin| %.2g\n", n, n, e, u, g }'
done
