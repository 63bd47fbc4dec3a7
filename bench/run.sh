#!/bin/sh
# run.sh BINARY - runs every bench/bench-*.sh and prints its figures,
# then the lines of the speed targets (tracker issue 30) gathered in one
# place: each workload's figure beside its target or its peer (the
# older build, PyTorch, XGBoost), all measured in this one run.
# Benchmarks measure; they never pass or fail a build.
set -u
bin=${1:?usage: bench/run.sh BINARY}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp "${TMPDIR:-/tmp}/rba-bench-run.XXXXXX")
trap 'rm -f "$out" "$out.one" "$out.rc"' EXIT INT TERM
for b in "$here"/bench-*.sh; do
	[ -e "$b" ] || continue
	name=$(basename "$b" .sh)
	echo "== $name"
	{ sh "$b" "$bin" 2>&1; echo $? > "$out.rc"; } | tee "$out.one"
	sed "s/^/$name: /" "$out.one" >> "$out"
	[ "$(cat "$out.rc")" = 0 ] || echo "bench: $name failed (status $(cat "$out.rc"))"
	echo
done
echo "== the speed targets, this run (figure, then target or peer)"
grep -E 'bench-audit: .*1000000 threads [12]: +(scoring|whole pass)|bench-gbdt: +sparse scoring path, AVX2 path, walk timed|bench-score: .*target 3 M|bench-train: train PyTorch / strict|bench-missing: +ratio \(ours / XGBoost\)|bench-scale: +CSV reader|bench-audit: dispute' "$out" ||
	echo "(no target lines: a bench above failed or lacks its peer)"
