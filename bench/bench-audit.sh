#!/bin/sh
# bench-audit.sh BINARY - audit of a 1,000,000-case sample of a German
# credit model (the MLP and the logistic fixtures): scoring throughput
# excluding the rebuild, the whole pass over the sample, peak RSS at
# 100,000 and 1,000,000 cases, and `dispute` of one case.  Medians of 5
# runs.  Figures come from the audit record's timings (--json) and from
# /usr/bin/time -v.
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
runs=5

# German-credit-shaped cases with running ids.
for n in 100000 1000000; do
	german_cases $n "$dir/cases-$n.csv"
done

# field NAME FILE: median of the audit record's timing NAME over the runs
med() { median < "$1"; }

for model in mlp logistic; do
	V=german-categorical-$model
	for n in 100000 1000000; do
		st="$dir/st-$model-$n"
		"$bin" -S "$st" init > /dev/null
		"$bin" -S "$st" snapshot add "$top/fixtures/german-credit.csv" > /dev/null
		"$bin" -S "$st" -q register "$top/fixtures/pins/$V.yaml" \
			--policy "$top/fixtures/policy/credit.yaml" > /dev/null 2>&1 || exit 1
		timed "$dir/add" "$bin" -S "$st" -q sample add $V "$dir/cases-$n.csv" || exit 1
		echo "$model $n: sample add $(cut -d' ' -f1 "$dir/add") s, peak RSS $(awk '{ printf "%.1f", $2 / 1024 }' "$dir/add") MiB"
		: > "$dir/pass"
		: > "$dir/score"
		: > "$dir/rss"
		for i in $(seq $runs); do
			/usr/bin/time -v -o "$dir/tv" "$bin" -S "$st" --json audit $V > "$dir/a.json" 2> "$dir/a.err" ||
				{ cat "$dir/a.err" >&2; exit 1; }
			jq -r '.audits[0].timings.sample_pass_s' "$dir/a.json" >> "$dir/pass"
			jq -r '.audits[0].timings.scoring_s' "$dir/a.json" >> "$dir/score"
			awk -F': ' '/Maximum resident set size/ { print $2 }' "$dir/tv" >> "$dir/rss"
		done
		v=$(jq -r '.audits[0].verdict + " (" + .audits[0].rebuild.scoring + " scoring)"' "$dir/a.json")
		awk -v n=$n -v m=$model -v s="$(med "$dir/score")" -v p="$(med "$dir/pass")" \
			-v r="$(med "$dir/rss")" -v rm="$(sort -n "$dir/rss" | tail -n 1)" -v v="$v" 'BEGIN {
			printf "%s %d: audit %s\n", m, n, v
			printf "%s %d:   scoring (decode, score, compare), median %.3f s = %.2f M cases/s (target >= 2 M/s on one core)\n", m, n, s, n / s / 1e6
			printf "%s %d:   whole pass (read, verify, decompress, score), median %.3f s = %.2f M cases/s\n", m, n, p, n / p / 1e6
			printf "%s %d:   peak RSS median %.1f MiB, max %.1f MiB (target < 64 MiB, flat in the sample size)\n", m, n, r / 1024, rm / 1024 }'
	done
done

# dispute of one case, excluding the rebuild: from the dispute report's
# timings (total minus rebuild) and the case lookup alone.
st="$dir/st-mlp-1000000"
: > "$dir/d"
: > "$dir/l"
for i in $(seq $runs); do
	"$bin" -S "$st" --json dispute german-categorical-mlp 777777 > "$dir/d.json" 2> "$dir/d.err"
	[ $? -le 1 ] || { cat "$dir/d.err" >&2; exit 1; }
	jq -r '.timings.total_s - .timings.rebuild_s' "$dir/d.json" >> "$dir/d"
	jq -r '.timings.lookup_s' "$dir/d.json" >> "$dir/l"
done
awk -v t="$(med "$dir/d")" -v l="$(med "$dir/l")" -v a="$(jq -r .answer_line "$dir/d.json")" 'BEGIN {
	printf "dispute 1 case of 1000000: median %.2f ms excluding the rebuild (case lookup %.2f ms; target < 10 ms): %s\n", t * 1000, l * 1000, a }'
