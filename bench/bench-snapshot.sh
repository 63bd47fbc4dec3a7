#!/bin/sh
# bench-snapshot.sh BINARY - `snapshot add` of a 200 MB CSV: throughput and
# peak RSS, median of 5 runs, each into a fresh store.
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
# German-credit-shaped rows with a running id, up to 200,000,000 bytes.
awk -v target=200000000 -F, 'NR == 1 { print; size = length($0) + 1; next }
	{ row[NR - 1] = substr($0, index($0, ",") + 1); n = NR - 1 }
	END { i = 0; while (size < target) { line = (i + 1) "," row[i % n + 1]; print line; size += length(line) + 1; i++ } }' \
	"$top/fixtures/german-credit.csv" > "$dir/big.csv"
bytes=$(wc -c < "$dir/big.csv")
for i in 1 2 3 4 5; do
	rm -rf "$dir/st"
	"$bin" -S "$dir/st" init > /dev/null
	timed "$dir/r$i" "$bin" -S "$dir/st" snapshot add "$dir/big.csv" || exit 1
done
cat "$dir"/r? > "$dir/all"
secs=$(cut -d' ' -f1 "$dir/all" | median)
rss=$(cut -d' ' -f2 "$dir/all" | median)
rssmax=$(cut -d' ' -f2 "$dir/all" | sort -n | tail -n 1)
echo "snapshot add: $bytes bytes, runs (s): $(cut -d' ' -f1 "$dir/all" | tr '\n' ' ')"
awk -v b="$bytes" -v s="$secs" -v r="$rss" -v m="$rssmax" 'BEGIN {
	printf "snapshot add: median %.3f s = %.1f MB/s (target >= 100 MB/s)\n", s, b / s / 1e6
	printf "snapshot add: peak RSS median %.1f MiB, max %.1f MiB (target < 64 MiB)\n", r / 1024, m / 1024 }'
