#!/bin/sh
# bench-native.sh BINARY [RUNS] - a 3,000-level categorical column split
# natively (pins data.native) against its one-hot encoding.
#
# The 30,000-row credit-shaped table (bench/credit-synth.awk) with an
# employer column of 3,000 levels and a real effect (bench/employer.awk):
# trees (100 trees, depth 4, learning rate 0.1, tail split of 25 %) with
# the employer one-hot and native.  For each: the validation AUC, and the
# median over RUNS runs of the wall time and peak RSS of register and of
# an audit of a 5,000-case sample, side by side, with their ratios; then
# the table without the employer column, the issue's yardstick (native
# within twice its time).
set -u
bin=${1:?usage: bench-native.sh BINARY [RUNS]}
runs=${2:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
command -v jq >/dev/null 2>&1 || { echo "bench-native: needs jq" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-native: needs /usr/bin/time" >&2; exit 2; }
. "$top/bench/lib.sh"

awk -v rows=30000 -f "$top/bench/credit-synth.awk" |
	awk -v levels=3000 -f "$top/bench/employer.awk" > "$tmp/emp.csv"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i != "employer") k[i] = 1 }
	{ s = ""; for (i = 1; i <= NF; i++) if (i in k) s = s (s == "" ? "" : ",") $i; print s }' \
	"$tmp/emp.csv" > "$tmp/plain.csv"
head -n 5001 "$tmp/emp.csv" > "$tmp/cases.csv"
head -n 5001 "$tmp/plain.csv" > "$tmp/pcases.csv"
nlev=$(awk -F, 'NR > 1 { l[$(NF - 1)] = 1 } END { print length(l) }' "$tmp/emp.csv")
echo "credit-shaped table: 30000 rows, 23 inputs and employer ($nlev levels seen), $(sha256sum "$tmp/emp.csv" | cut -c1-16)"

# pins NAME CSV DATA-EXTRA
pins() {
	d=sha256:$(sha256sum "$2" | cut -d' ' -f1)
	cat > "$tmp/$1.yaml" <<EOP
schema: rebuild-audit/pins/v1
version: $1
snapshot: $d
data: {label: default, positive: "1", id: id, standardize: false,
       split: {validation: 0.25, order: tail, seed: 0}$3}
model: {kind: gbdt, trees: 100, max_depth: 4, learning_rate: 0.1,
        min_child_weight: 1, lambda: 1, gamma: 0, max_bins: 256}
train: {seed: 0}
determinism: {mode: strict, threads: 1}
EOP
}
pins onehot "$tmp/emp.csv" ", categorical: [employer]"
pins native "$tmp/emp.csv" ", categorical: [employer], native: [employer]"
pins plain "$tmp/plain.csv" ""

# one NAME CSV CASES: "auc reg_s reg_kib audit_s audit_kib" (medians)
one() {
	name=$1 csv=$2 cases=$3
	: > "$tmp/$name.r"
	i=0
	while [ $i -lt "$runs" ]; do
		st=$tmp/st-$name-$i
		"$bin" -S "$st" init > /dev/null &&
		"$bin" -S "$st" -q snapshot add "$csv" > /dev/null || return 1
		timed "$tmp/reg" "$bin" -S "$st" -q register "$tmp/$name.yaml" \
			--policy "$top/fixtures/policy/credit.yaml" || return 1
		"$bin" -S "$st" -q sample add "$name" "$cases" > /dev/null || return 1
		timed "$tmp/aud" "$bin" -S "$st" --json audit "$name" || return 1
		"$bin" -S "$st" --json audit "$name" > "$tmp/a.json" 2> /dev/null
		v=$(jq -r '.audits[0].verdict' "$tmp/a.json")
		echo "$(cat "$tmp/reg") $(cat "$tmp/aud") $v" >> "$tmp/$name.r"
		rm -rf "$st"
		i=$((i + 1))
	done
	"$bin" train "$tmp/$name.yaml" --snapshot "$csv" --no-keep \
		--record "$tmp/$name.json" --force > /dev/null 2>&1 || return 1
	auc=$(jq -r .final.val_auc "$tmp/$name.json")
	rs=$(awk '{ print $1 }' "$tmp/$name.r" | median)
	rk=$(awk '{ print $2 }' "$tmp/$name.r" | median)
	as=$(awk '{ print $3 }' "$tmp/$name.r" | median)
	ak=$(awk '{ print $4 }' "$tmp/$name.r" | median)
	v=$(awk '{ print $5 }' "$tmp/$name.r" | sort -u | tr '\n' ' ')
	echo "$auc $rs $rk $as $ak $v" > "$tmp/$name.m"
	awk -v n="$name" -v a="$auc" -v rs="$rs" -v rk="$rk" -v as="$as" -v ak="$ak" -v v="$v" 'BEGIN {
		printf "%-7s AUC %.4f | register %7.2f s %6.0f MiB | audit %7.2f s %6.0f MiB | %s\n",
			n, a, rs, rk / 1024, as, ak / 1024, v }'
}
one onehot "$tmp/emp.csv" "$tmp/cases.csv" || { echo "bench-native: one-hot failed" >&2; exit 1; }
one native "$tmp/emp.csv" "$tmp/cases.csv" || { echo "bench-native: native failed" >&2; exit 1; }
one plain "$tmp/plain.csv" "$tmp/pcases.csv" || { echo "bench-native: plain failed" >&2; exit 1; }
awk -v o="$(cat "$tmp/onehot.m")" -v n="$(cat "$tmp/native.m")" -v p="$(cat "$tmp/plain.m")" 'BEGIN {
	split(o, O, " "); split(n, N, " "); split(p, P, " ")
	printf "native against one-hot: AUC %+.4f (%s), register %.2fx the time %.2fx the RSS, audit %.2fx the time %.2fx the RSS\n",
		N[1] - O[1], (N[1] >= O[1] ? "at least one-hot" : "BELOW one-hot"),
		N[2] / O[2], N[3] / O[3], N[4] / O[4], N[5] / O[5]
	printf "native against the table without employer: register %.2fx, audit %.2fx the time (%s twice)\n",
		N[2] / P[2], N[4] / P[4], (N[2] <= 2 * P[2] && N[4] <= 2 * P[4]) ? "within" : "NOT within" }'
