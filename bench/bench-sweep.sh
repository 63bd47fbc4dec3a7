#!/bin/sh
# bench-sweep.sh BINARY [RUNS] - wall time of a 12-seed sweep of the
# chapter workload (fixtures/pins/synth-chapter.yaml) with -j 2 (two
# cores), run records kept in a scratch store, beside one seed's training
# (train, end to end, and its in-process training time from --json);
# the ratio is the parallel efficiency: 12 x one seed / (2 x the sweep).
# The target is 0.15 s for the sweep.  The floor printed beside it is the
# arithmetic alone: 12 x one seed's in-process training / 2 cores (the
# frozen ABI-1 kernels, which no sweep can go below on this machine).
set -u
bin=${1:?usage: bench-sweep.sh BINARY [RUNS]}
runs=${2:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export REBUILD_AUDIT_STORE="$tmp/st"
P="$top/fixtures/pins/synth-chapter.yaml"
"$bin" init > /dev/null || exit 2
"$bin" snapshot synth -o "$tmp/s.csv" > /dev/null || exit 2
"$bin" snapshot add "$tmp/s.csv" > /dev/null || exit 2
now_ns() { date +%s%N; }
. "$top/bench/lib.sh"
med() { median < "$1"; }
: > "$tmp/one"; : > "$tmp/sweep"; : > "$tmp/inproc"
i=0
while [ $i -lt "$runs" ]; do
	t0=$(now_ns); "$bin" --json train "$P" --snapshot "$tmp/s.csv" --no-keep > "$tmp/j" || exit 2
	t1=$(now_ns); "$bin" sweep "$P" --seeds 0-11 -j 2 > /dev/null || exit 2
	sed 's/.*"train_seconds": *\([0-9.e+-]*\).*/\1/' "$tmp/j" | awk '{ printf "%d\n", $1 * 1e6 }' >> "$tmp/inproc"
	t2=$(now_ns)
	echo $(( (t1 - t0) / 1000 )) >> "$tmp/one"
	echo $(( (t2 - t1) / 1000 )) >> "$tmp/sweep"
	i=$((i + 1))
done
one=$(med "$tmp/one"); sw=$(med "$tmp/sweep"); ip=$(med "$tmp/inproc")
kept=$("$bin" runs list | grep -c ' run ')
awk -v o="$one" -v s="$sw" -v r="$runs" -v k="$kept" -v ip="$ip" 'BEGIN {
	printf "one seed (train, end to end)   %8.3f s (median of %d)\n", o / 1e6, r
	printf "one seed, in-process training  %8.3f s\n", ip / 1e6
	printf "floor: 12 x that / 2 cores     %8.3f s (the arithmetic alone)\n", 6 * ip / 1e6
	printf "12-seed sweep, -j 2            %8.3f s (target 0.150 s)\n", s / 1e6
	printf "sweep / one seed               %8.2f x (12 seeds on 2 cores: 6.00 x is perfect)\n", s / o
	printf "parallel efficiency            %8.0f %%\n", 100 * 12 * o / (2 * s) / 1
	printf "sweep / floor                  %8.2f x\n", s / (6 * ip)
	printf "run records kept               %8d\n", k }'
