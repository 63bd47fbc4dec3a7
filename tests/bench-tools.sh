#!/bin/sh
# bench-tools.sh BUILD - make check's run of the benchmark tools that
# `make bench` drives (bench_score, bench_csv, bench_tlog), each on a
# small input: they are built with -Werror and must run to the end with
# the figures' shape.  The cases file is over 128 KiB, so that memory a
# tool freed too early is returned to the system and reading it faults
# (bench_score once encoded cases whose text it had freed).  Exit 0, or
# 1 naming the tool that failed.
set -u
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "bench-tools: FAIL $1"; fail=1; }

awk -v rows=3000 -f "$top/bench/credit-synth.awk" > "$tmp/cases.csv"
# a forest and a network trained on those rows, as bench-gbdt does
snap=$(sha256sum "$tmp/cases.csv" | cut -d' ' -f1)
for kind in gbdt mlp; do
	case $kind in
	gbdt) model='{kind: gbdt, trees: 20, max_depth: 6, learning_rate: 0.3}'
	      train='{seed: 0}' ;;
	mlp) model='{kind: mlp, hidden: [16], activation: relu, dropout: 0}'
	     train='{seed: 0, epochs: 1, batch_size: 128, optimizer: adamw, lr: 0.01}' ;;
	esac
	cat > "$tmp/$kind.yaml" <<EOP
schema: rebuild-audit/pins/v1
version: bench-tools-$kind
snapshot: sha256:$snap
data: {label: default, positive: "1", id: id, standardize: true,
       split: {validation: 0.25, order: tail, seed: 0}}
model: $model
train: $train
determinism: {mode: strict, threads: 1}
EOP
	"$build/rebuild-audit" train "$tmp/$kind.yaml" --snapshot "$tmp/cases.csv" \
		--no-keep -o "$tmp/$kind.bin" > /dev/null 2> "$tmp/err" ||
		{ bad "train $kind: $(cat "$tmp/err")"; continue; }
	out=$("$build/bench_score" "$tmp/$kind.bin" "$tmp/cases.csv" 7000 3 2> "$tmp/err")
	case $out in
	"cases=7000 seconds="*" mean_score="*) ;;
	*) bad "bench_score ($kind): $out $(cat "$tmp/err")" ;;
	esac
done
out=$("$build/bench_csv" "$tmp/cases.csv" 2 2> "$tmp/err")
case $out in
"bytes=$(wc -c < "$tmp/cases.csv" | tr -d ' ') rows=3000 "*) ;;
*) bad "bench_csv: $out $(cat "$tmp/err")" ;;
esac
"$build/rebuild-audit" -S "$tmp/st" init > /dev/null 2>&1 || bad "init"
out=$("$build/bench_tlog" fill "$tmp/st" 300 2> "$tmp/err")
case $out in
"records=300 seconds="*) ;;
*) bad "bench_tlog fill: $out $(cat "$tmp/err")" ;;
esac
out=$("$build/bench_tlog" prove "$tmp/st" 150 3 2> "$tmp/err")
case $out in
"tree_size=300 id=150 hashes="*) ;;
*) bad "bench_tlog prove: $out $(cat "$tmp/err")" ;;
esac
[ $fail = 0 ] && echo "bench-tools: bench_score (forest, network), bench_csv, bench_tlog ran"
exit $fail
