#!/bin/sh
# run.sh - runs every tests/cli/t-*.sh in its own scratch directory and
# prints "N passed, N failed".  RBA_BIN names the binary under test;
# RBA_TEST_BIN the test binary beside it (rebuild-audit-test: the same
# with the test seams of common/seam.h filled from the environment);
# RBA_TESTS another folder of t-*.sh (make check-external's).  Names as
# arguments (t-exec t-keys) run those only.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${RBA_BIN:=$top/build/rebuild-audit}"
if [ -z "${RBA_TEST_BIN:-}" ]; then
	RBA_TEST_BIN=$(dirname "$RBA_BIN")/rebuild-audit-test
	[ -x "$RBA_TEST_BIN" ] || RBA_TEST_BIN=$top/build/rebuild-audit-test
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rba-cli.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
PASS_FILE=$scratch/pass
FAIL_FILE=$scratch/fail
: > "$PASS_FILE"
: > "$FAIL_FILE"
export PASS_FILE FAIL_FILE
only=" $* "
for t in "${RBA_TESTS:-$top/tests/cli}"/t-*.sh; do
	name=$(basename "$t" .sh)
	case $only in "  " | *" $name "*) ;; *) continue ;; esac
	dir=$scratch/$name
	mkdir -p "$dir"
	before=$(wc -l < "$FAIL_FILE")
	(cd "$dir" && RBA=$RBA_BIN RBA_TEST=$RBA_TEST_BIN FIX=$top/fixtures TOP=$top T_NAME=$name \
	  REBUILD_AUDIT_STORE= HOME=$dir LC_ALL=C sh -c ". '$top/tests/cli/lib.sh'; . '$t'")
	rc=$?
	after=$(wc -l < "$FAIL_FILE")
	if [ $rc -ne 0 ]; then
		echo x >> "$FAIL_FILE"
		echo "FAIL $name: script exited $rc" >&2
	fi
	if [ "$before" = "$after" ] && [ $rc -eq 0 ]; then echo "ok   $name"; else echo "FAIL $name"; fi
done
p=$(wc -l < "$PASS_FILE")
f=$(wc -l < "$FAIL_FILE")
echo "cli: $p passed, $f failed"
[ "$f" -eq 0 ]
