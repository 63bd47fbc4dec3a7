#!/bin/sh
# bench-fleet.sh BINARY - the same versions audited serially (`audit
# --all`) and as a 2-worker array (two processes, --shard 0/2 and 1/2 over
# a snapshot, signed records), then imported: wall times, the speed-up,
# and the import time per record.  BENCH_FLEET_VERSIONS (16) versions of
# BENCH_FLEET_EPOCHS (200) epochs; median of BENCH_FLEET_RUNS (3) runs.
# The speed-up is bounded by the free cores: the load average is printed
# with it, since on a shared machine other work takes the second core.
set -eu
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
n=${BENCH_FLEET_VERSIONS:-16}
epochs=${BENCH_FLEET_EPOCHS:-200}
runs=${BENCH_FLEET_RUNS:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench-fleet.XXXXXX")
trap 'chmod -R u+w "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT INT TERM
now() { date +%s.%N; }
sh "$here/../tests/fleet-store.sh" "$bin" "$tmp/store" "$n" "$epochs" > /dev/null
"$bin" keygen -o "$tmp/w" > /dev/null
: > "$tmp/serial" ; : > "$tmp/array" ; : > "$tmp/import"
r=0
while [ $r -lt "$runs" ]; do
	rm -rf "$tmp/s" "$tmp/c" "$tmp/rec"
	chmod -R u+w "$tmp/snap" 2> /dev/null || true
	rm -rf "$tmp/snap"
	cp -r "$tmp/store" "$tmp/s"
	cp -r "$tmp/store" "$tmp/c"
	t0=$(now)
	"$bin" -S "$tmp/s" -q audit --all > /dev/null || true
	t1=$(now)
	echo "$t1 - $t0" | bc >> "$tmp/serial"
	t0=$(now)
	"$bin" -S "$tmp/c" -q store snapshot "$tmp/snap" > /dev/null
	"$bin" -S "$tmp/snap" -q audit --all --shard 0/2 --records-out "$tmp/rec" -k "$tmp/w.key" > /dev/null &
	p0=$!
	"$bin" -S "$tmp/snap" -q audit --all --shard 1/2 --records-out "$tmp/rec" -k "$tmp/w.key" > /dev/null &
	p1=$!
	wait $p0 || true
	wait $p1 || true
	t1=$(now)
	"$bin" -S "$tmp/c" -q history import "$tmp/rec" -p "$tmp/w.pub" > /dev/null || true
	t2=$(now)
	echo "$t1 - $t0" | bc >> "$tmp/array"
	echo "$t2 - $t1" | bc >> "$tmp/import"
	r=$((r + 1))
done
recs=$(ls "$tmp/rec/imported"/*.json | wc -l)
s=$(median < "$tmp/serial")
a=$(median < "$tmp/array")
i=$(median < "$tmp/import")
echo "versions            $n (German credit, $epochs epochs; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf 'serial audit --all  %.2f s\n' "$s"
printf '2-worker array      %.2f s (snapshot and two --shard processes: %d + %d versions)\n' "$a" \
	"$("$bin" -S "$tmp/store" audit --all --shard 0/2 --list | wc -l)" \
	"$("$bin" -S "$tmp/store" audit --all --shard 1/2 --list | wc -l)"
printf 'speed-up            %.2fx\n' "$(echo "$s / $a" | bc -l)"
printf 'import              %.3f s for %d records, %.1f ms per record\n' "$i" "$recs" "$(echo "$i * 1000 / $recs" | bc -l)"
