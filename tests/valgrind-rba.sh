#!/bin/sh
# valgrind-rba.sh ARGS - the binary $RBA_REAL_BIN under valgrind memcheck,
# for make valgrind: any memory error or definite leak turns the exit
# status into 97, which no test expects.  The CLI scripts see it as
# $RBA.
exec valgrind -q --error-exitcode=97 --leak-check=full \
	--errors-for-leak-kinds=definite --show-leak-kinds=definite \
	"${RBA_REAL_BIN:?}" "$@"
