#!/bin/sh
# run.sh BINARY - runs every bench/bench-*.sh and prints its figures.
# Benchmarks measure; they never pass or fail a build.
set -u
bin=${1:?usage: bench/run.sh BINARY}
here=$(cd "$(dirname "$0")" && pwd)
for b in "$here"/bench-*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	sh "$b" "$bin" || echo "bench: $(basename "$b") failed (status $?)"
	echo
done
