#!/bin/sh
# valgrind-rba.sh ARGS - the binary $RBA_REAL_BIN under valgrind memcheck,
# for make valgrind: any memory error or definite leak turns the exit
# status into 97, which no test expects.  The CLI scripts see it as
# $RBA.
#
# valgrind keeps files of its own in $TMPDIR, for the program it runs and
# for every child it follows: a test that points TMPDIR at a directory
# that cannot take them (to see the tool refuse it) runs the tool bare.
if [ -n "${TMPDIR:-}" ] && ! { [ -d "$TMPDIR" ] && [ -w "$TMPDIR" ]; }; then
	exec "${RBA_REAL_BIN:?}" "$@"
fi
exec valgrind -q --error-exitcode=97 --leak-check=full \
	--errors-for-leak-kinds=definite --show-leak-kinds=definite \
	"${RBA_REAL_BIN:?}" "$@"
