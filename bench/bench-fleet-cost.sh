#!/bin/sh
# bench-fleet-cost.sh BINARY - the fleet's first-night cost estimate (a
# store never audited: fleet_cost_units_kind times each kind's default
# seconds per unit, rebuild-audit(1), FLEET) beside the measured audit
# of each version: gradient-boosted trees of 100 to 10,000 trees on the
# German table and 300 and 1,000 trees of depth 6 on a 30,000-row
# credit-shaped table, an MLP 32-32 on both.  Prints the estimate, the
# median wall and CPU seconds of BENCH_COST_RUNS (3) audits and the
# ratios estimate / CPU and estimate / wall, and whether the estimate
# is within 2x of the CPU seconds either way (the target; wall seconds
# grow with the machine's load, CPU seconds do not; an audit of under
# 0.05 CPU seconds is a few clock ticks and gets no verdict).
set -eu
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
runs=${BENCH_COST_RUNS:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fix=$bench_top/fixtures
pol=$fix/policy/credit.yaml
st=$tmp/st
"$bin" -S "$st" init > /dev/null
"$bin" -S "$st" snapshot add "$fix/german-credit-numeric.csv" > /dev/null
awk -v rows=30000 -f "$here/credit-synth.awk" > "$tmp/c30.csv"
big=$("$bin" -S "$st" snapshot add "$tmp/c30.csv" | grep -o 'sha256:[0-9a-f]*' | head -n 1)
head -n 1001 "$fix/german-credit-numeric.csv" > "$tmp/g.csv"
head -n 2001 "$tmp/c30.csv" > "$tmp/c.csv"
add() { # NAME PINS CASES
	"$bin" -S "$st" -q register "$2" --policy "$pol" > /dev/null
	"$bin" -S "$st" -q sample add "$1" "$3" > /dev/null
}
gbdt() { # NAME TREES DEPTH [big]
	sed -e "s/^version: .*/version: $1/" -e "s/trees: 100, max_depth: 4/trees: $2, max_depth: $3/" \
	    ${4:+-e "s|^snapshot: .*|snapshot: $big|" -e "s/label: class/label: default/" -e 's/positive: "2"/positive: "1"/'} \
	    "$fix/pins/german-numeric-gbdt.yaml" > "$tmp/$1.yaml"
	if [ -n "${4:-}" ]; then cases=$tmp/c.csv; else cases=$tmp/g.csv; fi
	add "$1" "$tmp/$1.yaml" "$cases"
}
gbdt german-t100-d4 100 4
gbdt german-t1000-d4 1000 4
gbdt german-t10000-d6 10000 6
gbdt credit30k-t300-d6 300 6 big
gbdt credit30k-t1000-d6 1000 6 big
add german-numeric-mlp "$fix/pins/german-numeric-mlp.yaml" "$tmp/g.csv"
sed -e "s/^version: .*/version: credit30k-mlp/" -e "s|^snapshot: .*|snapshot: $big|" \
    -e "s/label: class/label: default/" -e 's/positive: "2"/positive: "1"/' \
    "$fix/pins/german-numeric-mlp.yaml" > "$tmp/m.yaml"
add credit30k-mlp "$tmp/m.yaml" "$tmp/c.csv"
"$bin" -S "$st" --json audit --all --shards 2 --list |
	jq -r '.versions[] | "\(.version) \(.cost)"' > "$tmp/est"
printf '%-22s %10s %10s %10s %9s %9s\n' version estimate wall_s cpu_s est/cpu est/wall
while read -r v e; do
	: > "$tmp/w"
	: > "$tmp/u"
	r=0
	while [ $r -lt "$runs" ]; do
		/usr/bin/time -f '%U %S' -o "$tmp/t" "$bin" -S "$st" --json audit "$v" > "$tmp/a.json" 2> /dev/null || true
		jq '.audits[0].timings.total_s' "$tmp/a.json" >> "$tmp/w"
		awk '{ print $1 + $2 }' "$tmp/t" >> "$tmp/u"
		r=$((r + 1))
	done
	w=$(median < "$tmp/w")
	u=$(median < "$tmp/u")
	awk -v v="$v" -v e="$e" -v w="$w" -v u="$u" 'BEGIN {
		# CPU seconds below 0.05 are a few ticks of /usr/bin/time:
		# no verdict on them
		r = u > 0 ? e / u : 0
		verdict = u < 0.05 ? "(too short to judge)" : (r <= 2 && r >= 0.5) ? "within 2x" : "OUTSIDE 2x"
		printf "%-22s %10.3f %10.3f %10.3f %8.2fx %8.2fx  %s\n", v, e, w, u, r, (w > 0 ? e / w : 0), verdict }'
done < "$tmp/est"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (wall seconds grow with it; CPU seconds of one thread do not)"
