#!/bin/sh
# bench-train.sh BINARY [RUNS] - time strict and fast training of the synthetic
# task (fixtures/pins/synth-chapter.yaml: 3,000 training examples x 20
# epochs, MLP 32-32, with validation on 1,000 examples after each epoch).
# Prints the median, minimum and maximum of the in-process training time
# (the timer around the training loop, as the run record's train_seconds)
# and of the whole process (end to end: start, reading and hashing the
# snapshot, encoding, training, writing nothing), over RUNS runs each.
# Strict runs once with trainer ABI 1 (the default) and once with ABI 2
# (pins trainer_abi: 2, fused multiply-adds); then, when PYTHON (default
# python3) can import torch, the same workload in PyTorch on one thread
# (bench/torch-train.py, the same span timed) and the ratio of PyTorch's
# median to each strict ABI's.  On a CPU with AVX-512, ABI 2 runs a
# third time on its AVX2 path (RBA_STRICT_ISA=avx2, the path of a CPU
# without AVX-512; the same artifact).  The runs go round robin (ABI 1,
# ABI 2, fast, PyTorch, ABI 1, ...) so that a loaded machine slows all
# alike.
set -u
bin=${1:?usage: train.sh BINARY [RUNS]}
runs=${2:-21}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
command -v jq >/dev/null 2>&1 || { echo "bench/bench-train.sh: needs jq" >&2; exit 2; }

"$bin" snapshot synth -o "$tmp/synth.csv" > /dev/null || exit 2
cp "$top/fixtures/pins/synth-chapter.yaml" "$tmp/strict.yaml"
sed 's/mode: strict/mode: fast/' "$tmp/strict.yaml" > "$tmp/fast.yaml"
{ cat "$tmp/strict.yaml"; echo 'trainer_abi: 2'; } > "$tmp/abi2.yaml"
python=${PYTHON:-python3}
# A python3 first on PATH (a virtual environment, pyenv) may lack
# Debian's python3-torch, which the system's interpreter has.
if [ -z "${PYTHON:-}" ] && ! "$python" -c 'import torch' 2>/dev/null &&
	/usr/bin/python3 -c 'import torch' 2>/dev/null; then
	python=/usr/bin/python3
fi
torch=
if "$python" -c 'import torch' 2>/dev/null; then
	torch=torch
else
	echo "bench-train: no PyTorch ($python cannot import torch): its row is left out" >&2
fi

now_ns() { date +%s%N; }

# stats FILE: median min max of one number per line, in milliseconds
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median %7.2f ms   min %7.2f   max %7.2f   (%d runs)\n", m, v[1], v[NR], NR }'
}

# ABI 2's AVX2 path beside its widest, where the widest is AVX-512
avx2=
if grep -qw avx512f /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo; then
	avx2=abi2avx2
fi
modes="strict abi2 $avx2 fast $torch"

for mode in $modes; do
	: > "$tmp/$mode.in"
	: > "$tmp/$mode.e2e"
done
i=0
while [ $i -lt "$runs" ]; do
	for mode in $modes; do
		t0=$(now_ns)
		if [ "$mode" = torch ]; then
			"$python" "$top/bench/torch-train.py" "$tmp/synth.csv" 1 > "$tmp/out.$mode" || exit 2
		elif [ "$mode" = abi2avx2 ]; then
			RBA_STRICT_ISA=avx2 "$bin" --json train "$tmp/abi2.yaml" --snapshot "$tmp/synth.csv" --no-keep > "$tmp/out.$mode" || exit 2
		else
			"$bin" --json train "$tmp/$mode.yaml" --snapshot "$tmp/synth.csv" --no-keep > "$tmp/out.$mode" || exit 2
		fi
		t1=$(now_ns)
		jq -r '.train_seconds * 1000' "$tmp/out.$mode" >> "$tmp/$mode.in"
		echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }' >> "$tmp/$mode.e2e"
	done
	i=$((i + 1))
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for mode in $modes; do
	case $mode in
	strict) label='strict ABI 1' ;;
	abi2) label='strict ABI 2' ;;
	abi2avx2) label='ABI 2 (AVX2)' ;;
	fast) label='fast        ' ;;
	torch) label='PyTorch     ' ;;
	esac
	printf 'train %s in-process  %s' "$label" "$(stats "$tmp/$mode.in")"
	echo
	printf 'train %s end-to-end  %s' "$label" "$(stats "$tmp/$mode.e2e")"
	echo
	if [ "$mode" = torch ]; then
		echo "train PyTorch      val_loss $(jq -r .val_loss "$tmp/out.$mode")"
	else
		echo "train $label artifact $(jq -r .artifact "$tmp/out.$mode")  val_loss $(jq -r .val_loss "$tmp/out.$mode")"
	fi
done
if [ -n "$torch" ]; then
	for mode in strict abi2 $avx2; do
		echo "$(median "$tmp/torch.in") $(median "$tmp/$mode.in") $mode" |
			awk '{ printf "train PyTorch / strict %s (in-process medians): %.1fx\n", $3 == "strict" ? "ABI 1" : $3 == "abi2" ? "ABI 2" : "ABI 2, AVX2 path", $1 / $2 }'
	done
fi
