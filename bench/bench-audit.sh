#!/bin/sh
# bench-audit.sh BINARY - audit of a 1,000,000-case sample of a German
# credit model (the logistic, MLP and trees fixtures): scoring throughput
# excluding the rebuild (the record's timings.scoring_s: decode, score,
# compare), the whole pass over the sample (read, verify, decompress,
# score) on one thread and on two (--threads 2: one reads, one scores),
# peak RSS at 100,000 and 1,000,000 cases, and `dispute` of one case.
# Then the issue's own rows: a 1,000,000-case sample of the credit-card
# shape (23 numeric inputs) audited with a logistic model, an MLP
# [32, 16] and 100 trees of depth 6 (lines "credit-card ...", and
# "avx2 credit-card ..." for the AVX2 path of a CPU with AVX-512).
# Medians of 5 runs.  Figures come from the audit record's timings
# (--json) and from /usr/bin/time -v.
#
# RBA_BENCH_BASE=OLD_BINARY audits the same stores with OLD_BINARY too,
# run for run in turn with BINARY (the machine's noise hits both alike),
# and prints the ratios; the verdicts must be the same.
set -u
bin=$1
base=${RBA_BENCH_BASE:-}
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

# audit_once BIN TAG STORE VERSION THREADS: one audit of VERSION,
# its pass and scoring seconds and peak RSS appended to $dir/*-TAG
audit_once() {
	/usr/bin/time -v -o "$dir/tv-$2" "$1" -S "$3" --json audit "$4" --threads "$5" \
		> "$dir/a-$2.json" 2> "$dir/a.err" || { cat "$dir/a.err" >&2; return 1; }
	jq -r '.audits[0].timings.sample_pass_s' "$dir/a-$2.json" >> "$dir/pass-$2"
	jq -r '.audits[0].timings.scoring_s' "$dir/a-$2.json" >> "$dir/score-$2"
	awk -F': ' '/Maximum resident set size/ { print $2 }' "$dir/tv-$2" >> "$dir/rss-$2"
}

# audit_once_env ENV BIN TAG STORE VERSION THREADS: audit_once with the
# settings ENV (NAME=VALUE, or empty) in its environment
audit_once_env() {
	if [ -n "$1" ]; then
		(export "$1"; audit_once "$2" "$3" "$4" "$5" "$6")
	else
		audit_once "$2" "$3" "$4" "$5" "$6"
	fi
}

# report MODEL N TAG LABEL
report() {
	v=$(jq -r '.audits[0].verdict + " (" + .audits[0].rebuild.scoring + " scoring, delta " + (.audits[0].sample.max_score_delta | tostring) + ")"' "$dir/a-$3.json")
	awk -v n="$2" -v m="$1" -v l="$4" -v s="$(med "$dir/score-$3")" -v p="$(med "$dir/pass-$3")" \
		-v r="$(med "$dir/rss-$3")" -v rm="$(sort -n "$dir/rss-$3" | tail -n 1)" -v v="$v" 'BEGIN {
		printf "%s %d %s: audit %s\n", m, n, l, v
		printf "%s %d %s:   scoring (decode, score, compare), median %.3f s = %.2f M cases/s (target >= 10 M/s)\n", m, n, l, s, n / s / 1e6
		printf "%s %d %s:   whole pass (read, verify, decompress, score), median %.3f s = %.2f M cases/s (target >= 5 M/s)\n", m, n, l, p, n / p / 1e6
		printf "%s %d %s:   peak RSS median %.1f MiB, max %.1f MiB (target < 64 MiB, flat in the sample size)\n", m, n, l, r / 1024, rm / 1024 }'
}

# ratio MODEL N THREADS: old over new, medians of the same run
ratio() {
	awk -v m=$1 -v n=$2 -v t=$3 -v so="$(med "$dir/score-old$3")" -v sn="$(med "$dir/score-new$3")" \
		-v po="$(med "$dir/pass-old$3")" -v pn="$(med "$dir/pass-new$3")" 'BEGIN {
		printf "%s %d threads %d: this build against RBA_BENCH_BASE, same run: scoring %.3f s -> %.3f s (%.2fx), whole pass %.3f s -> %.3f s (%.2fx)\n",
			m, n, t, so, sn, so / sn, po, pn, po / pn }'
	[ "$(jq -r .audits[0].verdict "$dir/a-old$3.json")" = "$(jq -r .audits[0].verdict "$dir/a-new$3.json")" ] ||
		echo "$m $n: the verdicts differ" >&2
}

for model in logistic mlp gbdt; do
	V=german-categorical-$model
	for n in 100000 1000000; do
		st="$dir/st-$model-$n"
		"$bin" -S "$st" init > /dev/null
		"$bin" -S "$st" snapshot add "$top/fixtures/german-credit.csv" > /dev/null
		"$bin" -S "$st" -q register "$top/fixtures/pins/$V.yaml" \
			--policy "$top/fixtures/policy/credit.yaml" > /dev/null 2>&1 || exit 1
		timed "$dir/add" "$bin" -S "$st" -q sample add $V "$dir/cases-$n.csv" || exit 1
		echo "$model $n: sample add $(cut -d' ' -f1 "$dir/add") s, peak RSS $(awk '{ printf "%.1f", $2 / 1024 }' "$dir/add") MiB"
		for t in 1 2; do
			rm -f "$dir"/pass-* "$dir"/score-* "$dir"/rss-*
			for i in $(seq $runs); do
				audit_once "$bin" new$t "$st" $V $t || exit 1
				[ -z "$base" ] || audit_once "$base" old$t "$st" $V $t || exit 1
			done
			report $model $n new$t "threads $t"
			[ -z "$base" ] || ratio $model $n $t
		done
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

# The issue's own rows: the credit-card shape (bench/credit-synth.awk: 23
# numeric inputs, the shape of the Taiwan default table), a model of
# each kind trained on 30,000 rows (logistic, MLP [32, 16], 100 trees of
# depth 6), a sample of 1,000,000 cases, audited on one thread and on
# two.  On a CPU with AVX-512 the same audits run again on its AVX2 path
# (RBA_STRICT_ISA=avx2, lines "avx2 ..."): the path of a CPU without it.
awk -v rows=30000 -f "$top/bench/credit-synth.awk" > "$dir/credit-train.csv"
awk -v rows=1000000 -f "$top/bench/credit-synth.awk" > "$dir/credit-cases.csv"
cdig=sha256:$(sha256sum "$dir/credit-train.csv" | cut -d' ' -f1)
credit_pins() { # NAME MODEL TRAIN STANDARDIZE
	cat <<EOP
schema: rebuild-audit/pins/v1
version: credit-$1
snapshot: $cdig
data: {label: default, positive: "1", id: id, standardize: $4,
       split: {validation: 0.25, order: tail, seed: 0}}
model: $2
train: $3
determinism: {mode: strict, threads: 1}
EOP
}
adamw='{seed: 0, epochs: 2, batch_size: 128, optimizer: adamw, lr: 0.01, weight_decay: 0.003, betas: [0.9, 0.999], eps: 1.0e-8}'
credit_pins logistic '{kind: mlp, hidden: [], activation: relu, dropout: 0}' "$adamw" true > "$dir/credit-logistic.yaml"
credit_pins mlp '{kind: mlp, hidden: [32, 16], activation: relu, dropout: 0}' "$adamw" true > "$dir/credit-mlp.yaml"
credit_pins gbdt '{kind: gbdt, trees: 100, max_depth: 6, learning_rate: 0.1, min_child_weight: 1, lambda: 1, gamma: 0, max_bins: 256}' \
	'{seed: 0}' false > "$dir/credit-gbdt.yaml"
st="$dir/st-credit"
"$bin" -S "$st" init > /dev/null
"$bin" -S "$st" snapshot add "$dir/credit-train.csv" > /dev/null
paths=native
grep -qw avx512f /proc/cpuinfo 2>/dev/null && paths="native avx2"
for model in logistic mlp gbdt; do
	V=credit-$model
	"$bin" -S "$st" -q register "$dir/$V.yaml" --policy "$top/fixtures/policy/credit.yaml" \
		> /dev/null 2>&1 || exit 1
	timed "$dir/add" "$bin" -S "$st" -q sample add $V "$dir/credit-cases.csv" || exit 1
	echo "credit-card $model 1000000: sample add $(cut -d' ' -f1 "$dir/add") s, peak RSS $(awk '{ printf "%.1f", $2 / 1024 }' "$dir/add") MiB"
	for path in $paths; do
		case $path in native) ev= label="credit-card $model" ;; *) ev=RBA_STRICT_ISA=$path label="$path credit-card $model" ;; esac
		for t in 1 2; do
			rm -f "$dir"/pass-* "$dir"/score-* "$dir"/rss-*
			for i in $(seq $runs); do
				audit_once_env "$ev" "$bin" new$t "$st" $V $t || exit 1
			done
			report "$label" 1000000 new$t "threads $t"
		done
	done
done
