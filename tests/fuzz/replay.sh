#!/bin/sh
# replay.sh TARGET... - runs every file kept in fixtures/fuzz/TARGET/ (the
# seed corpus and every crash input ever found, named crash-*) once
# through $FUZZ_BUILD/fuzz_TARGET, under ASan+UBSan.  Prints one line per
# target; fails when any input fails.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${FUZZ_BUILD:=build/fuzz}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
log=$(mktemp "${TMPDIR:-/tmp}/rba-replay.XXXXXX")
trap 'rm -f "$log"' EXIT; trap 'exit 2' INT TERM
fail=0
total=0
for t in "$@"; do
	d=$top/fixtures/fuzz/$t
	n=$(ls "$d" 2>/dev/null | grep -cv '\.dict$')
	if [ "$n" -eq 0 ]; then
		echo "FAIL fuzz-replay $t: no inputs in fixtures/fuzz/$t"
		fail=1
		continue
	fi
	crashes=$(ls "$d" | grep -c '^crash-')
	if "$top/$FUZZ_BUILD/fuzz_$t" -runs=1 "$d"/* > "$log" 2>&1; then
		echo "ok   fuzz-replay $t: $n inputs ($crashes former crashes)"
	else
		echo "FAIL fuzz-replay $t"
		tail -n 40 "$log" >&2
		fail=1
	fi
	total=$((total + n))
done
echo "fuzz-replay: $total inputs"
exit $fail
