#!/bin/sh
# run.sh - make check-interop: rebuild-audit's transparency log against
# Go's golang.org/x/mod/sumdb/note and sumdb/tlog (main.go), built
# offline from Debian's golang-golang-x-mod-dev.
#
#   sh tests/interop/run.sh RBA_BIN
#
# A history grows record by record to 70, with a checkpoint at every
# size.  Go opens every checkpoint (note.Open), builds its own tree of
# the records and checks the tool's inclusion proofs (tlog.CheckRecord)
# and consistency proofs (tlog.CheckTree) for every size 1..70 (every
# pair up to 12 records, then the first, middle and last records and
# sizes of each tree); the tool checks the proofs Go's tlog.ProveRecord
# and tlog.ProveTree make of the same pairs, without its store; a
# checkpoint Go's note.Sign makes with the tool's key verifies in the
# tool, and one made with another key is refused; Go checks an evidence
# file's checkpoint and inclusion proof.  Prints "N passed, N failed".
set -u
RBA=${1:?usage: run.sh RBA_BIN}
top=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$top/fixtures
KEY=$FIX/keys/rba-test-only.key
PUB=$FIX/keys/rba-test-only.pub
OTHER=$FIX/keys/minisign-test-only.key
work=$(mktemp -d "${TMPDIR:-/tmp}/rba-interop.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
pass=0
failed=0
ok() { desc=$1; shift; if "$@" > /dev/null 2>"$work/.err"; then pass=$((pass + 1)); else
	failed=$((failed + 1)); echo "FAIL interop: $desc" >&2; head -c 2000 "$work/.err" >&2; fi; }

# Go, offline: the module's x/mod is the Debian package's source tree.
export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local \
	GOPATH="$work/gopath" GOCACHE="$work/gocache" CGO_ENABLED=0
(cd "$top/tests/interop" && go build -o "$work/interop" .) || { echo "interop: go build failed" >&2; exit 2; }
GO=$work/interop

cd "$work"
S="$RBA -S st -q"
$S init > /dev/null && $S snapshot add "$FIX/german-credit.csv" > /dev/null &&
	$S register "$FIX/pins/german-categorical-logistic.yaml" --policy "$FIX/policy/credit.yaml" > /dev/null &&
	$S sample add german-categorical-logistic "$FIX/german-credit.csv" > /dev/null ||
	{ echo "interop: cannot make the store" >&2; exit 2; }
V=german-categorical-logistic
$RBA -S st history vkey -p "$PUB" > vkey || exit 2
mkdir -p d/ck d/leaf d/inc d/con
# Record 1 an audit, then policy-set records; a checkpoint at every size.
for n in $(seq 1 70); do
	if [ "$n" = 1 ]; then $S audit $V > /dev/null; else $S policy set $V "$FIX/policy/credit.yaml"; fi
	$S history checkpoint -k "$KEY" -o d/ck/$n || exit 2
done
ok "the history holds 70 records" test "$($RBA -S st history head --json | jq .id)" = 70

# Which records and old sizes each tree of n records is proved for.
ids() { if [ "$1" -le 12 ]; then seq 1 "$1"; else printf '%s\n' 1 $(($1 / 2)) $(($1 - 1)) "$1" | sort -un; fi; }
for n in $(seq 1 70); do
	for i in $(ids "$n"); do
		$RBA -S st --json history prove "$i" --checkpoint d/ck/$n > d/inc/$n.$i.json
		$RBA -S st --json history consistency d/ck/$i d/ck/$n > d/con/$i.$n.json
	done
done
for i in $(seq 1 70); do
	[ -s d/inc/70.$i.json ] || $RBA -S st --json history prove "$i" --checkpoint d/ck/70 > d/inc/70.$i.json
	jq -r .leaf d/inc/70.$i.json | base64 -d > d/leaf/$i
done
ok "Go opens every checkpoint and checks every proof of the tool" $GO check d vkey

# The tool checks Go's proofs of the same pairs, without its store.
ok "Go proves the same pairs" $GO prove d
bad=0
for f in d/goinc/*.json; do
	b=$(basename "$f" .json); n=${b%.*}; i=${b#*.}
	$RBA -S nowhere -q history prove "$i" --checkpoint d/ck/$n --proof "$f" || bad=$((bad + 1))
done
ok "the tool checks every inclusion proof Go made ($bad refused)" test "$bad" = 0
for f in d/gocon/*.json; do
	b=$(basename "$f" .json); m=${b%.*}; n=${b#*.}
	$RBA -S nowhere -q history consistency d/ck/$m d/ck/$n --proof "$f" || bad=$((bad + 1))
done
ok "the tool checks every consistency proof Go made ($bad refused)" test "$bad" = 0
ok "Go's proofs are the tool's, byte for byte" sh -c '
	for f in d/goinc/*.json d/gocon/*.json; do
		t=d/$(basename "$(dirname "$f")" | sed s/^go//)/$(basename "$f")
		[ "$(jq -c . "$f")" = "$(jq -c . "$t")" ] || exit 1
	done'
# A proof Go made, one hash changed, is refused with one line.
jq '.proof[0] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="' d/goinc/70.35.json > bad.json
$RBA -S nowhere history prove 35 --checkpoint d/ck/70 --proof bad.json > out 2> err
ok "a changed proof is refused (exit 1)" test $? = 1
ok "... with one line" test "$(wc -l < err)" = 1

# note.Sign with the tool's key: the tool verifies it; another key: refused.
ok "Go signs checkpoint 70 with the tool's key" $GO sign d/ck/70 "$KEY" go.ck
ok "the tool verifies Go's note.Sign (watch: quiet, exit 0)" sh -c \
	"$RBA -S st history watch go.ck --vkey vkey > out 2>&1 && ! test -s out"
ok "and its consistency with checkpoint 40" $RBA -S st -q history consistency d/ck/40 go.ck --vkey vkey
ok "Go signs with another key" $GO sign d/ck/70 "$OTHER" other.ck
$RBA -S st history watch other.ck --vkey vkey > out 2> err
ok "a checkpoint signed by another key is refused (exit 1)" test $? = 1
ok "... with one line" sh -c "test \$(wc -l < err) = 1 && grep -q 'is not signed by' err"

# The evidence of the audit carries the checkpoint and its proof.
$S export $V -k "$KEY" -o ev.json || exit 2
ok "Go checks the evidence's checkpoint and inclusion proof" $GO evidence ev.json vkey

echo "interop: $pass passed, $failed failed"
[ "$failed" = 0 ]
