#!/bin/sh
# Commit subjects of at most 72 characters (HACKING, Habits), for every
# commit since the rule began (FIRST, the commit that wrote it; earlier
# history is left as it is, never rewritten).  Quiet and ok outside a
# git clone (a tarball) or a shallow one that lacks FIRST.
set -u
cd "$(dirname "$0")/.."
FIRST=4fbf1e9
[ -e .git ] || { echo "check-commits: not a git clone, nothing to check"; exit 0; }
git cat-file -e "$FIRST^{commit}" 2>/dev/null ||
	{ echo "check-commits: $FIRST not in this clone, nothing to check"; exit 0; }
bad=$(git log --no-merges --format='%h %s' "$FIRST^..HEAD" | awk 'length($0) - index($0, " ") > 72')
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | while IFS= read -r l; do
		echo "check-commits: ${l%% *}: subject over 72 characters: ${l#* }"
	done
	exit 1
fi
echo "check-commits: ok (every subject since $FIRST at most 72 characters)"
