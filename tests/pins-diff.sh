#!/bin/sh
# pins-diff.sh - the pins parser of the work tree against that of a
# commit, over every pins file in the tree and tens of thousands of
# mutations of them (tests/pins-mutate.py).  Not part of make check: run
# it by hand before committing a change to policy/pins.c or ydoc.c.
#
#   sh tests/pins-diff.sh [BASE [MUTATIONS [SEED]]]
#
# BASE (default HEAD) names the commit whose policy/ is the reference;
# MUTATIONS (default 40000) how many mutated files to make; SEED (1)
# the mutator's seed.  tests/pins_diff.c is built twice, once with
# BASE's policy/*.c and once with the work tree's, every input is fed to
# both, and the two outputs (status, FILE:LINE:COL, key, reason,
# canonical text, config hash, params JSON, source positions) must be
# identical.  Exit 0 when they are, 1 with the first differences shown.
# PINS_DIFF_CFLAGS adds compiler flags to both builds, e.g.
# '-fsanitize=address,undefined -fno-sanitize-recover=all'.
set -eu
cd "$(dirname "$0")/.."
BASE=${1:-HEAD}
N=${2:-40000}
SEED=${3:-1}
W=build/pins-diff
rm -rf "$W"
mkdir -p "$W/base/policy" "$W/new" "$W/in"
CC=${CC:-cc}
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O1 -g -I. $(pkg-config --cflags yaml-0.1 libsodium) ${PINS_DIFF_CFLAGS:-}"
LIBS="$(pkg-config --libs yaml-0.1 libsodium) -lm ${PINS_DIFF_CFLAGS:-}"
COMMON="common/rba.c common/buf.c common/digest.c common/sha256_ni.c common/json.c common/strv.c common/utf8.c common/fileio.c common/seam.c"

for f in policy/pins.c policy/ydoc.c policy/policy.c policy/policy.h policy/ydoc.h; do
	git show "$BASE:$f" > "$W/base/$f"
done
# The base's policy/ headers come first on its include path.
$CC $CFLAGS -I"$W/base" -o "$W/base/pins_diff" tests/pins_diff.c \
	"$W/base/policy/pins.c" "$W/base/policy/ydoc.c" \
	"$W/base/policy/policy.c" $COMMON $LIBS
$CC $CFLAGS -o "$W/new/pins_diff" tests/pins_diff.c policy/pins.c \
	policy/ydoc.c policy/policy.c $COMMON $LIBS

# The inputs: every pins file in the tree, then mutations of them.
{
	ls fixtures/pins/* fixtures/invalid/pins-*.yaml \
		contrib/examples/*/pins*.yaml fixtures/fuzz/pins/* 2>/dev/null
	find tests -name '*pins*.yaml' 2>/dev/null
} | sort -u > "$W/seeds"
python3 tests/pins-mutate.py "$W/in" "$N" "$SEED" < "$W/seeds"
{ cat "$W/seeds"; find "$W/in" -type f | sort; } > "$W/list"
total=$(wc -l < "$W/list")
"$W/base/pins_diff" < "$W/list" > "$W/base.out"
"$W/new/pins_diff" < "$W/list" > "$W/new.out"
if cmp -s "$W/base.out" "$W/new.out"; then
	echo "pins-diff: $total inputs, no difference from $BASE"
	exit 0
fi
echo "pins-diff: $total inputs, outputs differ from $BASE:" >&2
diff "$W/base.out" "$W/new.out" | head -40 >&2
exit 1
