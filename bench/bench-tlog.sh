#!/bin/sh
# bench-tlog.sh BINARY - the transparency log of a history of 1,000,000
# records: the size of an inclusion and a consistency proof (target
# under 1 KB) and the time of `history prove` (target under 10 ms), the
# median of 21 runs of the whole command (beside the time of starting
# /bin/true, which a loaded machine makes dominate) and of the open and
# proof in one process; then `history watch`, which reads every record.
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
tl=${RBA_BENCH_TLOG:-$top/build/bench_tlog}
key=$top/fixtures/keys/rba-test-only.key
n=${RBA_BENCH_TLOG_RECORDS:-1000000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
"$bin" -S "$dir/st" init > /dev/null || exit 1
"$tl" fill "$dir/st" $((n / 2)) | sed 's/^/history: /' || exit 1
"$bin" -S "$dir/st" -q history checkpoint -k "$key" -o "$dir/half.ck" || exit 1
"$tl" fill "$dir/st" $((n - n / 2)) | sed 's/^/history: /' || exit 1
"$bin" -S "$dir/st" -q history checkpoint -k "$key" -o "$dir/all.ck" || exit 1
echo "history: $n records, $(du -sk "$dir/st" | cut -f1) KiB store"
for id in 1 $((n / 2)) $n; do
	"$bin" -S "$dir/st" --json history prove $id --checkpoint "$dir/all.ck" > "$dir/p.json" || exit 1
	# the whole command, wall clock in nanoseconds (time(1) has 10 ms)
	for i in $(seq 21); do
		t0=$(date +%s%N)
		"$bin" -S "$dir/st" --json history prove $id --checkpoint "$dir/all.ck" > /dev/null || exit 1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000)) >> "$dir/us$id"
	done
	secs=$(median < "$dir/us$id" | awk '{ printf "%.4f", $1 / 1e6 }')
	true=$(for i in $(seq 21); do t0=$(date +%s%N); /bin/true; t1=$(date +%s%N); echo $(((t1 - t0) / 1000)); done |
		median | awk '{ printf "%.4f", $1 / 1e6 }')
	echo "prove $id: $(jq '.proof | length' "$dir/p.json") hashes, $(($(jq '.proof | length' "$dir/p.json") * 32)) bytes binary, $(jq -c .proof "$dir/p.json" | wc -c) bytes of JSON proof; history prove median $secs s (the whole command; /bin/true takes $true s here)"
	"$tl" prove "$dir/st" $id 21 | sed "s/^/prove $id in process: /"
done
"$bin" -S "$dir/st" --json history consistency "$dir/half.ck" "$dir/all.ck" > "$dir/c.json" || exit 1
timed "$dir/c" "$bin" -S "$dir/st" --json history consistency "$dir/half.ck" "$dir/all.ck" || exit 1
echo "consistency $((n / 2)) -> $n: $(jq '.proof | length' "$dir/c.json") hashes, $(($(jq '.proof | length' "$dir/c.json") * 32)) bytes binary, $(jq -c .proof "$dir/c.json" | wc -c) bytes of JSON; $(cut -d' ' -f1 "$dir/c") s"
timed "$dir/w" "$bin" -S "$dir/st" history watch "$dir/half.ck" || exit 1
echo "watch: every record read and its log recomputed: $(cut -d' ' -f1 "$dir/w") s, peak RSS $(cut -d' ' -f2 "$dir/w") KiB"
echo "targets: a proof under 1 KB, history prove under 10 ms"
