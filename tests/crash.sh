#!/bin/sh
# crash.sh N - the kill -9 loop (make check-crash N=..., 100 kills in
# make check).
#
# On one store, register, sample add, audit, export and snapshot add
# (and keygen and version export-artifact, for their output files) run
# in turn and are killed with SIGKILL after a delay drawn uniformly over
# the command's measured duration, until N kills have landed (a command
# that finished first is an acknowledged commit, not a kill).  After
# every kill:
#   - the store opens and `store check` finds it clean;
#   - every commit acknowledged before (exit 0) is there: versions,
#     snapshots, the audit count, the sample of the last sample add
#     (or of the killed one, should it have committed just before the
#     kill), and `history --verify` passes;
#   - no output file is torn: the evidence verifies with its signature
#     (or, before the first signature, parses),
#     a key file is whole, an exported artifact is the version's.
# tests/killafter.c does each kill and tells whether it landed inside an
# LMDB write transaction; their count is printed, so that the loop is
# known to hit the dangerous window.  Exit 0 when every check passed.
set -u
N=${1:-100}
: "${RBA:?}" "${KILLAFTER:?}"
top=$(cd "$(dirname "$0")/.." && pwd)
FIX=$top/fixtures
V=german-numeric-logistic
seed=${CRASH_SEED:-$(date +%s)}
w=$(mktemp -d "${TMPDIR:-/tmp}/rba-crash.XXXXXX")
[ -n "${CRASH_KEEP:-}" ] || trap 'rm -rf "$w"' EXIT; trap 'exit 2' INT TERM
cd "$w" || exit 2
S="$RBA -S st"
bad=
failn=0
problem() {
	bad="$bad $1"
	failn=$((failn + 1))
	echo "crash: kill $kills ($cmd after ${delay}us, seed $seed): $1" >&2
}

# The store and what it is known to hold.
. "$top/tests/store-seed.sh"
store_seed "$S"
$S version export-artifact $V ref.bin || exit 2
keysize=$(wc -c < k.key)
pubsize=$(wc -c < k.pub)
awk 'BEGIN { print "id,x,label"; for (i = 0; i < 60000; i++) printf "%d,%d.5,c%d\n", i, i, i % 7 }' > big.csv
versions=$V
snaps=$($S snapshot add "$FIX/german-credit-numeric.csv" | sed "s/^sha256://")
audits=1
sample=cases-a.csv
n=0 # serial for fresh names

# One command of kind $1 (0..6) into $argv (split on spaces: the paths have none).
prepare() {
	n=$((n + 1))
	case $1 in
	0) cmd=register
	   sed "s/^version: .*/version: k$n/" "$FIX/pins/$V.yaml" > k$n.yaml
	   set -- $S register k$n.yaml ;;
	1) cmd="sample add"
	   if [ "$sample" = cases-a.csv ]; then next=cases-b.csv; else next=cases-a.csv; fi
	   set -- $S sample add $V $next ;;
	2) cmd=audit; set -- $S audit $V ;;
	3) cmd=export; set -- $S export $V -k k.key -o ev.json --force ;;
	4) cmd="snapshot add"
	   cp big.csv s$n.csv && echo "$n,0.5,c0" >> s$n.csv
	   set -- $S snapshot add s$n.csv ;;
	5) cmd=keygen; set -- $RBA keygen -o g$n ;;
	6) cmd="export-artifact"; set -- $S version export-artifact $V art.bin --force ;;
	esac
	argv="$*"
}

# What an acknowledged (exit 0) command of kind $1 committed.
acknowledge() {
	case $1 in
	0) versions="$versions k$n" ;;
	1) sample=$next ;;
	2) audits=$((audits + 1)) ;;
	4) snaps="$snaps $(sha256sum s$n.csv | cut -c 1-64)"; rm -f s$n.csv ;;
	esac
}

# The checks after a kill of a command of kind $1.
check_after() {
	$S store check > check.out 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then problem "store check exited $rc: $(tail -n 2 check.out | tr '\n' ' ')"; return; fi
	$S history --verify > /dev/null 2>&1 || problem "history --verify failed"
	$S version list > vl.out 2>&1 || problem "version list failed"
	for v in $versions; do grep -q "^$v " vl.out || problem "acknowledged version $v lost"; done
	# A version registered by the killed command may be there: it committed before the kill.
	[ "$1" = 0 ] && grep -q "^k$n " vl.out && versions="$versions k$n"
	$S --json snapshot list > sl.out 2>&1 || problem "snapshot list failed"
	for d in $snaps; do grep -q "sha256:$d" sl.out || problem "acknowledged snapshot $d lost"; done
	h=$($S --json history | jq length)
	if [ "$1" = 2 ] && [ "$h" = $((audits + 1)) ]; then audits=$h; fi
	[ "$h" = "$audits" ] || problem "history holds $h audits, $audits acknowledged"
	src=$($S --json sample show $V | jq -r .source)
	if [ "$1" = 1 ] && [ "$src" = "$next" ]; then sample=$next; fi
	[ "$src" = "$sample" ] || problem "sample is from $src, acknowledged $sample"
	# The evidence is renamed into place before its signature: a kill
	# between the two leaves it alone, whole, the first time.
	if [ -e ev.json.minisig ]; then
		$RBA -q verify ev.json -p k.pub > /dev/null 2>&1 || problem "torn or mismatched evidence"
	elif [ -e ev.json ]; then
		jq -e '.predicate.verdict' ev.json > /dev/null 2>&1 || problem "torn evidence"
	fi
	for f in g*.key; do
		[ -e "$f" ] || continue
		[ "$(wc -c < "$f")" = "$keysize" ] || problem "torn secret key $f"
		p=${f%.key}.pub
		[ ! -e "$p" ] || [ "$(wc -c < "$p")" = "$pubsize" ] || problem "torn public key $p"
		rm -f "$f" "$p"
	done
	[ ! -e art.bin ] || cmp -s art.bin ref.bin || problem "torn exported artifact"
}

# Each kind's duration (µs), measured once unkilled.
durs=
kind=0
while [ $kind -le 6 ]; do
	prepare $kind
	r=$("$KILLAFTER" -1 st/lock.mdb $argv)
	case $r in
	"exit 0 "*) acknowledge $kind ;;
	*) echo "crash: '$argv' did not finish: $r" >&2; exit 2 ;;
	esac
	durs="$durs ${r##* }"
	kind=$((kind + 1))
done
rm -f g*.key g*.pub

kills=0
intxn=0
finished=0
attempts=0
per=$(printf '%s\n' 0 0 0 0 0 0 0)
cmd=
delay=0
while [ $kills -lt "$N" ] && [ $attempts -lt $((N * 3)) ]; do
	kind=$((attempts % 7))
	dur=$(echo $durs | cut -d' ' -f$((kind + 1)))
	delay=$(awk -v s="$seed" -v a="$attempts" -v d="$dur" 'BEGIN { srand(s + a); print int(rand() * d) }')
	prepare $kind
	r=$("$KILLAFTER" "$delay" st/lock.mdb $argv)
	attempts=$((attempts + 1))
	case $r in
	"exit 0 "*) acknowledge $kind; finished=$((finished + 1)); continue ;;
	killed*) kills=$((kills + 1)) ;;
	*) problem "'$argv' ended: $r"; continue ;;
	esac
	case $r in *in-txn) intxn=$((intxn + 1)) ;; esac
	check_after $kind
done
echo "check-crash: $kills kills ($intxn inside a write transaction), $finished commands finished first, $failn failures (seed $seed; durations us:$durs)"
[ $failn -eq 0 ] && [ $kills -eq "$N" ] && [ $intxn -gt 0 ]
