#!/bin/sh
# run.sh TARGET... - runs each libFuzzer harness for $FUZZ_SECONDS seconds
# from its seed corpus (fixtures/fuzz/TARGET/, read only) and its work
# corpus ($FUZZ_BUILD/corpus/TARGET/, where new inputs go), with its
# dictionary when there is one.  Crash inputs go to
# $FUZZ_BUILD/crashes/TARGET-*; keep each, once fixed, in
# fixtures/fuzz/TARGET/ as crash-<name> so that make check replays it.
# Prints per target: executions, coverage (edges) and features, crashes.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${FUZZ_BUILD:=build/fuzz}" "${FUZZ_SECONDS:=60}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
b=$top/$FUZZ_BUILD
mkdir -p "$b/crashes" "$b/logs"
printf '%-10s %12s %8s %8s %8s\n' target executions edges features crashes
status=0
for t in "$@"; do
	mkdir -p "$b/corpus/$t"
	dict=
	[ -f "$top/fixtures/fuzz/$t.dict" ] && dict=-dict=$top/fixtures/fuzz/$t.dict
	before=$(ls "$b/crashes" | grep -c "^$t-")
	timeout=25
	[ "$t" = store ] && timeout=120
	# -fork keeps fuzzing past a crash; with one job the figures are
	# those of one process.
	"$b/fuzz_$t" "$b/corpus/$t" "$top/fixtures/fuzz/$t" $dict \
		-max_total_time="$FUZZ_SECONDS" -timeout=$timeout -rss_limit_mb=4096 \
		-artifact_prefix="$b/crashes/$t-" -print_final_stats=1 \
		> "$b/logs/$t.log" 2>&1
	rc=$?
	after=$(ls "$b/crashes" | grep -c "^$t-")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$b/logs/$t.log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$b/logs/$t.log" | tail -n 1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$b/logs/$t.log" | tail -n 1 | cut -d' ' -f2)
	printf '%-10s %12s %8s %8s %8s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" $((after - before))
	if [ $rc -ne 0 ] || [ "$after" != "$before" ]; then
		status=1
		grep -m 3 -E 'ERROR|fuzz:|SUMMARY' "$b/logs/$t.log" | sed 's/^/    /'
	fi
done
exit $status
