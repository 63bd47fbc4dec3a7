#!/bin/sh
# cross-audit.sh NATIVE OTHER... - a store made on this machine, audited
# on another CPU: NATIVE (a path) registers each model kind and keeps its
# sample (scores from the sparse path, here); OTHER (a command, such as
# a qemu runner) then checks the store, audits every version (training
# again and rescoring every case there) and answers a dispute.  Every
# audit must be bit-identical: the same artifact digest, 0 flips and a
# largest score delta of 0, so a store can move between machines.
# Exit 0 when all agree, 1 when one does not, 2 when a command fails.
set -u
native=${1:?usage: cross-audit.sh NATIVE OTHER...}
shift
[ $# -ge 1 ] || { echo "usage: cross-audit.sh NATIVE OTHER..." >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-cross.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
st=$tmp/st
pol=$top/fixtures/policy/credit.yaml
fail=0

"$native" -S "$st" init > /dev/null || exit 2
for csv in german-credit.csv german-credit-numeric.csv; do
	"$native" -S "$st" snapshot add "$top/fixtures/$csv" > /dev/null || exit 2
done
for v in german-numeric-logistic german-categorical-mlp german-categorical-gbdt \
	german-numeric-gbdt; do
	case $v in german-numeric-*) csv=german-credit-numeric.csv ;; *) csv=german-credit.csv ;; esac
	"$native" -S "$st" -q register "$top/fixtures/pins/$v.yaml" --policy "$pol" > /dev/null || exit 2
	"$native" -S "$st" -q sample add "$v" "$top/fixtures/$csv" || exit 2
done
"$@" -S "$st" store check > "$tmp/out" 2>&1 || {
	echo "cross-audit: FAIL store check there:"; cat "$tmp/out"; exit 1; }
for v in german-numeric-logistic german-categorical-mlp german-categorical-gbdt \
	german-numeric-gbdt; do
	if ! "$@" -S "$st" --json audit "$v" > "$tmp/out" 2> "$tmp/err"; then
		echo "cross-audit: FAIL audit $v there: $(cat "$tmp/err")"
		fail=1
		continue
	fi
	if jq -e '.audits[0] | .verdict == "bit-identical" and
		  .sample.flips == 0 and .sample.max_score_delta == 0 and
		  .digests.artifact_rebuilt == .digests.artifact_pinned' "$tmp/out" > /dev/null; then
		echo "cross-audit: ok   $v: bit-identical there, $(jq -r '.audits[0].sample.cases' "$tmp/out") cases, 0 flips, max score delta 0"
	else
		echo "cross-audit: FAIL $v: $(jq -c '.audits[0] | {verdict, flips: .sample.flips, delta: .sample.max_score_delta}' "$tmp/out")"
		fail=1
	fi
done
"$@" -S "$st" history --verify > "$tmp/out" 2>&1 || {
	echo "cross-audit: FAIL history --verify there:"; cat "$tmp/out"; fail=1; }
"$native" -S "$st" history --verify > "$tmp/out" 2>&1 || {
	echo "cross-audit: FAIL history --verify back here:"; cat "$tmp/out"; fail=1; }
[ $fail = 0 ] && echo "cross-audit: a store made here audits bit-identical there, and back"
exit $fail
