#!/bin/sh
# bench-fleet-balance.sh BINARY - how even the shards of an array are, on
# the 12-version fleet of very unequal costs: MLPs of
# BENCH_BALANCE_MLP_EPOCHS (300) epochs beside logistic models of 3
# (tests/fleet-store.sh).  Each version's cost is the median of its
# measured audit seconds over BENCH_BALANCE_RUNS (3) serial `audit --all`
# runs; for N shards (BENCH_BALANCE_SHARDS, "2 4 8") it prints the largest
# shard's cost over the mean shard cost for the balanced split (from the
# history, as workers compute it), the balanced split from the pins
# estimate alone (a store never audited) and the name-hash split, all
# measured with the same costs in this run.  1.00x is a perfect split;
# the array takes as long as its largest shard, and the best split of
# the measured costs (an exhaustive search, printed first) is the floor.
set -eu
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
runs=${BENCH_BALANCE_RUNS:-3}
mlp=${BENCH_BALANCE_MLP_EPOCHS:-300}
shards=${BENCH_BALANCE_SHARDS:-2 4 8}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench-balance.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
sh "$here/../tests/fleet-store.sh" "$bin" "$tmp/store" 12 3 0 "$mlp" > /dev/null
# The split a never-audited store gets: estimates from the pins only.
for n in $shards; do
	"$bin" -S "$tmp/store" --json audit --all --shards "$n" --list > "$tmp/pins-$n.json"
done
r=0
while [ $r -lt "$runs" ]; do
	"$bin" -S "$tmp/store" -q audit --all > /dev/null
	r=$((r + 1))
done
# version -> median measured seconds
"$bin" -S "$tmp/store" --json history | jq -r '.[].record | "\(.version) \(.timings.total_s)"' |
	sort -k1,1 -k2,2g | awk '{ v[$1] = v[$1] " " $2; c[$1]++ }
	END { for (k in v) { n = split(substr(v[k], 2), a, " "); m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2; print k, m } }' |
	sort > "$tmp/cost.txt"
# ratio FILE.json: largest shard over mean under the measured costs
ratio() {
	jq -r '.versions[] | "\(.version) \(.shard)"' "$1" | sort | join - "$tmp/cost.txt" |
		awk -v n="$2" '{ l[$2] += $3; s += $3; c[$2]++ }
		END { m = 0; for (k = 0; k < n; k++) if (l[k] > m) m = l[k];
		      cnt = ""; for (k = 0; k < n; k++) cnt = cnt (k ? "/" : "") (c[k] + 0);
		      printf "%.2fx (largest %.2f s, mean %.2f s; versions %s)", m / (s / n), m, s / n, cnt }'
}
echo "versions  12 German credit (6 MLPs of $mlp epochs, 6 logistic of 3); costs: median of $runs serial runs"
awk '{ printf "  %-32s %.3f s\n", $1, $2 }' "$tmp/cost.txt"
for n in $shards; do
	"$bin" -S "$tmp/store" --json audit --all --shards "$n" --list > "$tmp/bal-$n.json"
	"$bin" -S "$tmp/store" --json audit --all --shards "$n" --split hash --list > "$tmp/hash-$n.json"
	# The best any split can do with these costs: an exhaustive search.
	best=$(awk '{ print $2 }' "$tmp/cost.txt" | /usr/bin/python3 -c '
import sys
c = sorted((float(x) for x in sys.stdin.read().split()), reverse=True)
n = int(sys.argv[1]); mean = sum(c) / n; best = [sum(c)]
load = [0.0] * n
def place(i):
    if i == len(c):
        best[0] = min(best[0], max(load)); return
    seen = set()
    for k in range(n):
        if load[k] in seen or load[k] + c[i] >= best[0]:
            continue
        seen.add(load[k]); load[k] += c[i]; place(i + 1); load[k] -= c[i]
place(0)
print("%.2fx" % (best[0] / mean))' "$n")
	echo "$n shards: largest shard over mean shard cost (the best split of these costs: $best)"
	echo "  balanced (history)      $(ratio "$tmp/bal-$n.json" "$n")"
	echo "  balanced (pins only)    $(ratio "$tmp/pins-$n.json" "$n")"
	echo "  name hash               $(ratio "$tmp/hash-$n.json" "$n")"
done
