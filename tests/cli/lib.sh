# lib.sh - helpers for CLI tests.  Each tests/cli/t-*.sh is run by run.sh
# in a fresh scratch directory with $RBA (the binary), $FIX (fixtures) and
# $TOP (the source tree) set.  A test calls `run STATUS cmd...` and then
# checks stdout/stderr; every check counts once.
#
#   run 2 $RBA check "$FIX/invalid/x.yaml"
#   out_has 'sha256:'          stdout contains the text
#   out_is "$FIX/expected.txt" stdout equals the file
#   err_is 'rebuild-audit: ...'  stderr is exactly this one line
#   err_has 'tampered'
#   ok "description" test-expression...   any other check
set -u
: "${PASS_FILE:?}" "${FAIL_FILE:?}"
T_NAME=${T_NAME:-test}
LAST_DESC=

pass() { echo . >> "$PASS_FILE"; }
fail() {
	echo x >> "$FAIL_FILE"
	printf 'FAIL %s: %s\n' "$T_NAME" "$*" >&2
	if [ -s out ]; then printf '  stdout: %s\n' "$(head -c 2000 out)" >&2; fi
	if [ -s err ]; then printf '  stderr: %s\n' "$(head -c 2000 err)" >&2; fi
}

# run STATUS cmd...: runs cmd with stdin from /dev/null, keeps out and err.
run() {
	want=$1
	shift
	LAST_DESC="$*"
	"$@" > out 2> err < /dev/null
	got=$?
	if [ "$got" = "$want" ]; then pass; else fail "exit $got, want $want: $LAST_DESC"; fi
}
# run_in FILE STATUS cmd...: the same, with stdin from FILE.
run_in() {
	input=$1
	want=$2
	shift 2
	LAST_DESC="$* < $input"
	"$@" > out 2> err < "$input"
	got=$?
	if [ "$got" = "$want" ]; then pass; else fail "exit $got, want $want: $LAST_DESC"; fi
}
out_has() { if grep -qF -- "$1" out; then pass; else fail "stdout lacks '$1': $LAST_DESC"; fi; }
out_lacks() { if grep -qF -- "$1" out; then fail "stdout has '$1': $LAST_DESC"; else pass; fi; }
err_has() { if grep -qF -- "$1" err; then pass; else fail "stderr lacks '$1': $LAST_DESC"; fi; }
out_is() { if cmp -s out "$1"; then pass; else fail "stdout differs from $1: $LAST_DESC"; fi; }
out_empty() { if [ -s out ]; then fail "stdout not empty: $LAST_DESC"; else pass; fi; }
err_empty() { if [ -s err ]; then fail "stderr not empty: $LAST_DESC"; else pass; fi; }
err_is() {
	printf '%s\n' "$1" > .want_err
	if cmp -s err .want_err; then pass; else fail "stderr is not exactly '$1': $LAST_DESC"; fi
}
ok() {
	desc=$1
	shift
	if "$@" > /dev/null; then pass; else fail "$desc"; fi
}
# Last LMDB transaction id of a store (for "nothing was written").
txnid() { mdb_stat -e "$1" 2>/dev/null | sed -n 's/.*Last transaction ID: *//p'; }
