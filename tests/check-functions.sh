#!/bin/sh
# Function length (HACKING, Functions): no function over 200 lines and
# at most MAX_OVER_100 over 100, in the library and the command line
# (tests, benchmarks and fuzz harnesses aside).  A function is counted
# from the line that names it at column 0 (the style puts the type on the
# line above) to its closing brace at column 0.  -v lists every function
# over 100 lines, longest first.
set -u
cd "$(dirname "$0")/.."
MAX_OVER_100=${MAX_OVER_100:-20}
verbose=0
[ "${1:-}" = -v ] && verbose=1
dirs=$(sed -n 's/^MODULES *= *//p' Makefile)
files=$(for d in $dirs cli; do ls $d/*.c; done)
list=$(awk '
	FNR == 1 { name = "" }
	/^[A-Za-z_][A-Za-z0-9_]*\(/ && !/;[ \t]*$/ {
		name = $0; sub(/\(.*/, "", name); start = FNR; next
	}
	/^}/ && name != "" {
		n = FNR - start + 1
		if (n > 100) printf "%d %s:%d %s\n", n, FILENAME, start, name
		name = ""
	}' $files | sort -rn)
over200=$(printf '%s\n' "$list" | awk '$1 > 200' | grep -c . || true)
over100=$(printf '%s\n' "$list" | grep -c . || true)
[ $verbose = 1 ] && printf '%s\n' "$list"
fail=0
if [ "$over200" -gt 0 ]; then
	printf '%s\n' "$list" | awk '$1 > 200 { print "check-functions: " $2 ": " $3 " is " $1 " lines (at most 200)" }'
	fail=1
fi
if [ "$over100" -gt "$MAX_OVER_100" ]; then
	echo "check-functions: $over100 functions over 100 lines (at most $MAX_OVER_100); -v lists them"
	fail=1
fi
[ $fail = 0 ] && echo "check-functions: ok ($over100 over 100 lines, none over 200)"
exit $fail
