#!/bin/sh
# The include ladder of DESIGN.md section 3: a folder includes headers only
# from folders to its right, and each third-party header lives in one place.
set -u
fail=0
ladder='cli audit rebuild policy store common'
allowed() { # folder -> folders it may include
	case $1 in
	cli) echo 'cli audit rebuild policy store common' ;;
	audit) echo 'audit rebuild policy store common' ;;
	rebuild) echo 'rebuild policy store common' ;;
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
	hits=$(grep -ln "^#include <$1>" common/*.[ch] store/*.[ch] policy/*.[ch] rebuild/*.[ch] audit/*.[ch] cli/*.[ch] 2>/dev/null | grep -Ev "$2" || true)
	if [ -n "$hits" ]; then
		echo "check-deps: <$1> included outside its module: $hits"
		fail=1
	fi
}
third lmdb.h '^store/'
third zstd.h '^store/'
third yaml.h '^policy/'
third cblas.h '^rebuild/kernel_fast\.c$'
third sodium.h '^(common/digest\.c|audit/sign\.c)$'
if [ -e "${TMPDIR:-/tmp}/rba-deps-fail.$$" ]; then rm -f "${TMPDIR:-/tmp}/rba-deps-fail.$$"; fail=1; fi
[ $fail = 0 ] && echo "check-deps: include ladder ok"
exit $fail
