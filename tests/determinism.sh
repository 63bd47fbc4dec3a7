#!/bin/sh
# determinism.sh - strict training must give one artifact per pins file
# and trainer ABI, equal to the golden digest in
# fixtures/golden/strict-abiN.txt (N the ABI: 1, and 2 with its pins given
# `trainer_abi: 2`), whatever the compiler, optimization level, thread
# count, strict vector path (for ABI 2, base is the path without FMA
# instructions on x86-64: the soft fma) or OpenBLAS core.  Builds four binaries (each in its own build directory),
# then for every binary trains every pins file under every variant,
# and audits a store made by the first with every other.
# The arm64 builds (make check-arm64) are cross-built with Debian's
# aarch64-linux-gnu-gcc against the arm64 libraries (multiarch) and run
# under qemu-aarch64 -L /usr/aarch64-linux-gnu.
#
#   sh tests/determinism.sh            (from the top of the tree)
#   RBA_DET_BUILDS='gcc-O2' sh tests/determinism.sh   (a subset of builds)
#   RBA_DET_BUILDS='arm64-O0 arm64-O2 arm64-O3' sh tests/determinism.sh
#   RBA_DET_GOLDEN='FILE ...'  (other golden lists, for testing this
#                         script; the ABI is the N of a name strict-abiN.txt,
#                         else 1)
#
# Exit 0 when every digest agrees with the golden one, 1 when one does
# not, 2 when a build or a command fails.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
goldens=${RBA_DET_GOLDEN:-fixtures/golden/strict-abi1.txt fixtures/golden/strict-abi2.txt}
golden=${goldens%% *}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rba-det.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
jobs=${RBA_DET_JOBS:-2}

want=${RBA_DET_BUILDS:-gcc-O0 gcc-O2 gcc-O3-native clang-O2}

fail=0
bins=
old_ifs=$IFS
ARM64_PKG_CONFIG='env PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config'
for spec in 'gcc-O0:gcc:-O0' 'gcc-O2:gcc:-O2' 'gcc-O3-native:gcc:-O3 -march=native' 'clang-O2:clang:-O2' \
	'arm64-O0:aarch64-linux-gnu-gcc:-O0' 'arm64-O2:aarch64-linux-gnu-gcc:-O2' 'arm64-O3:aarch64-linux-gnu-gcc:-O3'; do
	name=${spec%%:*}
	rest=${spec#*:}
	cc=${rest%%:*}
	opt=${rest#*:}
	case " $want " in *" $name "*) ;; *) continue ;; esac
	if ! command -v "$cc" >/dev/null 2>&1; then
		echo "determinism: SKIP $name: no $cc on this machine"
		continue
	fi
	# gcc -O2 is the release build (gcc -O2 -g, hardened; make check
	# and check-determinism build it first): taken as it is, not built
	# a second time, when its settings say so.  RBA_DET_REBUILD=1 builds
	# it apart all the same.
	if [ "$name" = gcc-O2 ] && [ -z "${RBA_DET_REBUILD:-}" ] && [ -x build/rebuild-audit ] &&
	    grep -q 'gcc' build/.settings 2>/dev/null &&
	    grep -q '\] -O2 -g -ffp-contract=off' build/.settings 2>/dev/null; then
		echo "determinism: gcc-O2 is the release build (build/rebuild-audit)"
		mkdir -p "build/det-$name" && ln -sf ../rebuild-audit "build/det-$name/rebuild-audit" || exit 2
		bins="$bins $name"
		continue
	fi
	echo "determinism: building $name ($cc $opt)"
	case $name in
	arm64-*)
		# The native deps step does not apply to a cross build:
		# make check-arm64 has checked the arm64 packages.
		mkdir -p "build/det-$name" && touch "build/det-$name/.deps-ok"
		# The loader under -L is libc6-arm64-cross's; LD_LIBRARY_PATH
		# (/lib under the prefix) gives it the C library of the same
		# package, not the multiarch libc6:arm64 of another Debian
		# revision, with which a second thread never starts.
		printf '#!/bin/sh\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/lib "$(dirname "$0")/rebuild-audit" "$@"\n' \
			> "build/det-$name/run" && chmod +x "build/det-$name/run" || exit 2
		set -- PKG_CONFIG="$ARM64_PKG_CONFIG" ;;
	*)
		set -- ;;
	esac
	if ! make -s -j"$jobs" BUILD="build/det-$name" CC="$cc" OPT="$opt" "$@" \
		"build/det-$name/rebuild-audit" > "$scratch/build-$name.log" 2>&1; then
		echo "determinism: build $name failed:" >&2
		tail -20 "$scratch/build-$name.log" >&2
		exit 2
	fi
	bins="$bins $name"
done
IFS=$old_ifs
[ -n "$bins" ] || { echo "determinism: no compiler available" >&2; exit 2; }

# The command that runs a build: under qemu for another CPU.
bin_of() {
	case $1 in
	arm64-*) echo "build/det-$1/run" ;;
	*) echo "build/det-$1/rebuild-audit" ;;
	esac
}

# The synthetic snapshot: every build must write the same bytes.
synth_digest=$(sed -n 's/^synth-snapshot //p' "$golden")
for name in $bins; do
	got=$("$(bin_of "$name")" snapshot synth -o "$scratch/synth-$name.csv") || exit 2
	if [ "$got" != "$synth_digest" ]; then
		echo "determinism: FAIL snapshot synth under $name: $got, golden $synth_digest"
		fail=1
	fi
done
first=$(echo $bins | cut -d' ' -f1)
cp "$scratch/synth-$first.csv" "$scratch/synth.csv"

snapshot_for() {
	case $1 in
	german-numeric-missing-*) echo "$top/fixtures/german-credit-numeric-missing.csv" ;;
	german-categorical-missing-*) echo "$top/fixtures/german-credit-missing.csv" ;;
	german-numeric-*) echo "$top/fixtures/german-credit-numeric.csv" ;;
	german-categorical-*) echo "$top/fixtures/german-credit.csv" ;;
	german-native-*) echo "$top/fixtures/german-credit.csv" ;;
	synth-*) echo "$scratch/synth.csv" ;;
	esac
}

# The ABI of a golden list: the N of strict-abiN.txt, else 1.
abi_of() {
	case ${1##*/} in
	strict-abi[0-9]*.txt) n=${1##*/strict-abi}; echo "${n%.txt}" ;;
	*) echo 1 ;;
	esac
}

# The pins of pins file $1 for ABI $2 into $3: ABI 1's as they are, a
# later ABI's with trainer_abi given.
pins_for_abi() {
	if [ "$2" = 1 ]; then
		cp "$1" "$3"
	else
		{ grep -v '^trainer_abi:' "$1"; echo "trainer_abi: $2"; } > "$3"
	fi
}

for golden in $goldens; do
abi=$(abi_of "$golden")
grep -v '^synth-snapshot ' "$golden" | grep -v '^#' | while read -r pins digest; do
	[ -n "$pins" ] || continue
	pins_for_abi "fixtures/pins/$pins.yaml" "$abi" "$scratch/abi-src.yaml" || exit 2
	src=$scratch/abi-src.yaml
	snap=$(snapshot_for "$pins")
	runs=0
	bad=0
	for t in 1 2 4; do
		sed "s/threads: [0-9]*/threads: $t/" "$src" > "$scratch/$pins-t$t.yaml"
	done
	# Trees train in a blink: they also run on four threads.
	more=
	case $pins in *-gbdt) more='t4 t4:RBA_STRICT_ISA=base' ;; esac
	for name in $bins; do
		bin=$(bin_of "$name")
		variants="t1 t2 t1:OPENBLAS_CORETYPE=Haswell t1:OPENBLAS_CORETYPE=Prescott t2:RBA_STRICT_ISA=base $more"
		# One vector path there, and no OpenBLAS core to choose:
		# threads are what can vary.
		case $name in arm64-*) variants="t1 t2 ${more%% *}" ;; esac
		for variant in $variants; do
			t=${variant%%:*}
			envset=
			case $variant in *:*) envset=${variant#*:} ;; esac
			got=$(env $envset "$bin" train "$scratch/$pins-$t.yaml" --snapshot "$snap" --no-keep 2>"$scratch/err") || {
				echo "determinism: FAIL $pins under $name $variant: $(cat "$scratch/err")"
				bad=1
				continue
			}
			runs=$((runs + 1))
			if [ "$got" != "$digest" ]; then
				echo "determinism: FAIL $pins under $name $variant: $got, golden $digest"
				bad=1
			fi
		done
	done
	if [ $bad = 0 ]; then
		echo "determinism: ok   ABI $abi $pins $digest ($runs runs)"
	else
		echo x >> "$scratch/failed"
	fi
done
done
[ -e "$scratch/failed" ] && fail=1

# The audit's scoring (sample/scorer.c: the sparse terms in blocks, ABI
# 1's block scorer, the forests' side-by-side walk): a store made by the
# first build, its sample scored at sample add, audited by every build,
# on one and two threads and on each narrower strict vector path (a
# forest also by each way the AVX2 path has of walking it), must
# find every score bit-identical (delta 0).  Logistic, MLP, trees,
# native categorical columns and missing values.
# ABI 2's MLP (its own scorer: the dense pass made from the terms) is
# audited the same way: the store_for argument NAME@2 registers the pins
# with trainer_abi: 2.
store_for() {
	st="$scratch/audit-$1"
	pins_for_abi "fixtures/pins/${1%@*}.yaml" "$(case $1 in *@*) echo "${1#*@}" ;; *) echo 1 ;; esac)" \
		"$scratch/${1%@*}.yaml" || return 2
	"$(bin_of "$first")" -S "$st" init > /dev/null &&
		"$(bin_of "$first")" -S "$st" snapshot add "$2" > /dev/null &&
		"$(bin_of "$first")" -S "$st" -q register "$scratch/${1%@*}.yaml" \
			--policy fixtures/policy/credit.yaml > /dev/null &&
		"$(bin_of "$first")" -S "$st" -q sample add "${1%@*}" "$2" > /dev/null
}
for pins in german-categorical-logistic german-categorical-mlp german-categorical-gbdt \
	german-native-gbdt german-categorical-missing-gbdt german-categorical-mlp@2; do
	snap=$(snapshot_for "${pins%@*}")
	store_for "$pins" "$snap" 2> "$scratch/err" || {
		echo "determinism: FAIL audit store of $pins under $first: $(cat "$scratch/err")"
		fail=1
		continue
	}
	runs=0
	bad=0
	for name in $bins; do
		bin=$(bin_of "$name")
		variants="t1 t2 t1:RBA_STRICT_ISA=base t1:RBA_STRICT_ISA=avx2"
		# Forests: each of the AVX2 path's ways of walking too
		# (settings after the colon, commas between them).
		case $pins in *-gbdt)
			for way in gather leaves rows select pairs; do
				variants="$variants t1:RBA_STRICT_ISA=avx2,RBA_TREE_WALK=$way"
			done
			variants="$variants t2:RBA_STRICT_ISA=avx2,RBA_TREE_WALK=select" ;;
		esac
		case $name in arm64-*) variants="t1 t2" ;; esac
		for variant in $variants; do
			t=${variant%%:*}
			envset=
			case $variant in *:*) envset=$(printf '%s' "${variant#*:}" | tr ',' ' ') ;; esac
			env $envset "$bin" -S "$scratch/audit-$pins" --json audit "${pins%@*}" \
				--threads "${t#t}" > "$scratch/audit.json" 2> "$scratch/err"
			runs=$((runs + 1))
			if ! grep -q '"verdict": "bit-identical"' "$scratch/audit.json" ||
				! grep -q '"max_score_delta": 0,' "$scratch/audit.json"; then
				echo "determinism: FAIL audit of $pins under $name $variant: $(grep -o '"verdict": "[a-z-]*"' "$scratch/audit.json") $(cat "$scratch/err")"
				bad=1
			fi
		done
	done
	if [ $bad = 0 ]; then
		echo "determinism: ok   audit $pins bit-identical, delta 0 ($runs runs)"
	else
		fail=1
	fi
done
if [ $fail = 0 ]; then
	echo "determinism: one digest per pins file, equal to the golden one"
fi
exit $fail
