#!/bin/sh
# The include ladder of doc/design.md (The ladder) and HACKING: a folder
# includes headers only from the folders listed for it below, files of one
# folder include each other without a circle, and each third-party header
# lives in one place.  With a binary as argument, also what the release
# binary must not hold.
set -u
fail=0
ladder='cli report fleet evidence audit forensics sample rebuild exec model data train policy store common'
allowed() { # folder -> folders it may include
	case $1 in
	cli) echo 'cli report fleet evidence audit forensics sample rebuild exec model data train policy store common' ;;
	report) echo 'report evidence audit sample rebuild exec model data train policy store common' ;;
	fleet) echo 'fleet evidence audit sample rebuild exec model data train policy store common' ;;
	evidence) echo 'evidence audit sample rebuild exec model data train policy store common' ;;
	audit) echo 'audit sample rebuild exec model data train policy store common' ;;
	forensics) echo 'forensics rebuild exec model data train policy store common' ;;
	sample) echo 'sample rebuild exec model data train policy store common' ;;
	rebuild) echo 'rebuild exec model data train policy store common' ;;
	exec) echo 'exec model data train policy store common' ;;
	model) echo 'model data train policy store common' ;;
	data) echo 'data train policy store common' ;;
	train) echo 'train policy store common' ;;
	policy) echo 'policy common' ;;
	store) echo 'store common' ;;
	common) echo 'common' ;;
	esac
}
for dir in $ladder; do
	for f in $dir/*.[ch]; do
		[ -e "$f" ] || continue
		grep -n '^#include "' "$f" | while IFS= read -r line; do
			inc=$(printf '%s' "$line" | sed 's/.*#include "\([^"]*\)".*/\1/')
			case $inc in
			*/*) target=${inc%%/*} ;;
			*) target=$dir ;;
			esac
			ok=0
			for a in $(allowed $dir); do [ "$a" = "$target" ] && ok=1; done
			if [ $ok = 0 ]; then
				echo "check-deps: $f: includes $inc, across the ladder"
				echo x >> "${TMPDIR:-/tmp}/rba-deps-fail.$$"
			fi
		done
	done
done
third() { # header, allowed file pattern
	hits=$(grep -ln "^#include <$1>" $(for d in $ladder; do echo $d/*.[ch]; done) 2>/dev/null | grep -Ev "$2" || true)
	if [ -n "$hits" ]; then
		echo "check-deps: <$1> included outside its module: $hits"
		fail=1
	fi
}
third lmdb.h '^store/'
third zstd.h '^store/'
third yaml.h '^policy/'
third cblas.h '^train/kernel_fast\.c$'
third sodium.h '^common/(digest|sign)\.c$'
# No include circle between the files of one folder: foo.c and foo.h are
# one node, an edge runs from a file to each header of its own folder it
# includes, and a depth-first walk reports every circle it meets.  A header
# without a .c of its own (store_priv.h, train/abi.h) is a private
# extension of the headers it includes, shared by the .c files that
# implement them: a .c including it makes no edge.
for dir in $ladder; do
	for f in $dir/*.[ch]; do
		[ -e "$f" ] || continue
		sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while IFS= read -r inc; do
			case $inc in
			"$dir"/*) ;;
			*/*) continue ;;
			*) inc=$dir/$inc ;;
			esac
			case $f in
			*.c) [ -e "${inc%.h}.c" ] || continue ;;
			esac
			printf '%s %s\n' "${f%.?}" "${inc%.?}"
		done
	done
done | awk '
	$1 != $2 && !(($1, $2) in seen) {
		seen[$1, $2] = 1
		adj[$1] = adj[$1] " " $2
		nodes[$1] = 1
		nodes[$2] = 1
	}
	function visit(n,    m, k, i, kids, path) {
		state[n] = 1
		stack[++depth] = n
		k = split(adj[n], kids, " ")
		for (i = 1; i <= k; i++) {
			m = kids[i]
			if (state[m] == 1) {
				path = m
				for (j = depth; j >= 1 && stack[j] != m; j--)
					path = stack[j] " -> " path
				print "check-deps: include circle: " m " -> " path
				bad = 1
			} else if (state[m] == 0) {
				visit(m)
			}
		}
		depth--
		state[n] = 2
	}
	END {
		for (n in nodes)
			if (state[n] == 0)
				visit(n)
		exit bad
	}' || echo x >> "${TMPDIR:-/tmp}/rba-deps-fail.$$"
if [ -e "${TMPDIR:-/tmp}/rba-deps-fail.$$" ]; then rm -f "${TMPDIR:-/tmp}/rba-deps-fail.$$"; fail=1; fi
# The library reads from the environment only the settings of
# rebuild-audit(1) ENVIRONMENT, the ones git itself reads to find a
# repository's owner (HOME, SUDO_UID), and the variables an exec
# trainer's pins declare (t->pass[i]; vary's cv->name, the host's value
# of one).  Tests step in through common/seam.h, filled by
# tests/helper/seams.c in the test binary only: no getenv of a test
# variable, nor of any other name, outside tests/.
env_ok='"REBUILD_AUDIT_STORE" STORE_MAPSIZE_ENV "RBA_STRICT_ISA" "RBA_TREE_WALK" "REBUILD_AUDIT_SANDBOX_USER" "TMPDIR" "HOME" "SUDO_UID" t->pass[i] cv->name'
for dir in $ladder; do
	for f in $dir/*.c; do
		[ -e "$f" ] || continue
		grep -n 'getenv(' "$f" | grep -v '^[0-9]*: *\*' | while IFS= read -r line; do
			arg=$(printf '%s' "$line" | sed -n 's/.*getenv(\([^)]*\)).*/\1/p')
			ok=0
			for e in $env_ok; do [ "$e" = "$arg" ] && ok=1; done
			if [ $ok = 0 ]; then
				echo "check-deps: ${f}:${line%%:*}: getenv($arg): not a documented setting (tests use common/seam.h)"
				echo x >> "${TMPDIR:-/tmp}/rba-deps-fail.$$"
			fi
		done
	done
done
if [ -e "${TMPDIR:-/tmp}/rba-deps-fail.$$" ]; then rm -f "${TMPDIR:-/tmp}/rba-deps-fail.$$"; fail=1; fi
# The release binary (when given): nothing debug-only linked in, no test
# variable named.
if [ $# -ge 1 ]; then
	if nm "$1" | grep -q 'store_debug_'; then
		echo "check-deps: $1: store_debug symbols in the release binary: $(nm "$1" | grep -c 'store_debug_')"
		fail=1
	fi
	if grep -q 'REBUILD_AUDIT_TEST_' "$1"; then
		echo "check-deps: $1: names a test variable (REBUILD_AUDIT_TEST_*)"
		fail=1
	fi
fi
[ $fail = 0 ] && echo "check-deps: include ladder ok"
exit $fail
