#!/bin/sh
# concurrency.sh ROUNDS [PROCS] - PROCS processes (16) on one store, each
# running ROUNDS commands from a mix: audits, disputes, sample adds,
# registers, exports, snapshot adds, history --verify, and on a version
# x replaces, sample adds and audits racing each other (make
# check-concurrency: 16 x 50; make check: 16 x 3).  Then:
#   - every command ended 0, or 0/1 where 1 is an answer (dispute, an
#     audit of x), or, for an audit of x, 2 saying x changed while it
#     was audited (nothing recorded);
#   - the history holds every audit exactly once (one record per audit
#     that exited 0, or 1 for x; ids 1..n without gaps), the chain
#     verifies, and store check is clean;
#   - every audit record of x names the artifact x held when the record
#     was committed (the last replace before it) and a sample that a
#     sample add of x made, whose decisions an artifact of x made;
#   - readers killed with SIGKILL part-way leave stale slots in the lock
#     table (mdb_stat -r lists dead pids) that the next open clears.
set -u
ROUNDS=${1:-3}
PROCS=${2:-16}
: "${RBA:?}"
top=$(cd "$(dirname "$0")/.." && pwd)
FIX=$top/fixtures
V=german-numeric-logistic
w=$(mktemp -d "${TMPDIR:-/tmp}/rba-conc.XXXXXX")
trap 'rm -rf "$w"' EXIT; trap 'exit 2' INT TERM
cd "$w" || exit 2
S="$RBA -S st"
$S init > /dev/null || exit 2
$S snapshot add "$FIX/german-credit-numeric.csv" > /dev/null || exit 2
$S register "$FIX/pins/$V.yaml" --policy "$FIX/policy/credit.yaml" > /dev/null 2>&1 || exit 2
sed "s/^version: .*/version: w/" "$FIX/pins/$V.yaml" > w.yaml
$S register w.yaml --policy "$FIX/policy/credit.yaml" > /dev/null 2>&1 || exit 2
head -n 101 "$FIX/german-credit-numeric.csv" > cases-a.csv
head -n 151 "$FIX/german-credit-numeric.csv" > cases-b.csv
$S sample add $V cases-a.csv > /dev/null || exit 2
$S sample add w cases-a.csv > /dev/null || exit 2
# x: two trainings (another seed) that replace each other
sed "s/^version: .*/version: x/" "$FIX/pins/$V.yaml" > xa.yaml
sed "s/^version: .*/version: x/; s/seed: 0, epochs/seed: 1, epochs/" "$FIX/pins/$V.yaml" > xb.yaml
cmp -s xa.yaml xb.yaml && exit 2
$S register xa.yaml --policy "$FIX/policy/credit.yaml" > /dev/null 2>&1 || exit 2
$S --json sample add x cases-a.csv > xs.json || exit 2
jq -r '.digest + " " + .artifact' xs.json > samples.init
x0=$($S --json version show x | jq -r .artifact)
$RBA keygen -o k > /dev/null || exit 2
$S audit $V > /dev/null || exit 2
id=$(sed -n '2p' cases-a.csv | cut -d, -f1)
awk 'BEGIN { print "id,x,label"; for (i = 0; i < 300000; i++) printf "%d,%d.5,c%d\n", i, i, i % 7 }' > big.csv
bigd=$($S snapshot add big.csv) || exit 2
fail=0
bad() { echo "concurrency: $*" >&2; fail=1; }

# One worker: ROUNDS commands, each logged as "kind status".
worker() { # p
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		case $(( (r + $1) % 8 )) in
		0) $S audit $V > /dev/null 2>> err.$1; echo "audit $?" ;;
		1) $S dispute $V "$id" > /dev/null 2>> err.$1; rc=$?
		   [ $rc = 1 ] && rc=0; echo "dispute $rc" ;;
		2) if [ $(( ($1 + r) % 2 )) = 0 ]; then c=cases-a.csv; else c=cases-b.csv; fi
		   $S sample add w $c > /dev/null 2>> err.$1; echo "sample $?" ;;
		3) sed "s/^version: .*/version: c$1-$r/" "$FIX/pins/$V.yaml" > c$1-$r.yaml
		   $S register c$1-$r.yaml > /dev/null 2>> err.$1; echo "register $?" ;;
		5) $S -q export $V -k k.key -o ev$1.json --force > /dev/null 2>> err.$1; echo "export $?" ;;
		6) { head -n 40 "$FIX/german-credit-numeric.csv"; echo "9$1$r,1,6,4,12,5,5,3,4,1,67,3,2,1,2,1,0,0,1,0,0,1,0,0,1,1"; } > s$1-$r.csv
		   $S snapshot add s$1-$r.csv > /dev/null 2>> err.$1; echo "snapshot $?"
		   $S history --verify > /dev/null 2>> err.$1; echo "verify $?" ;;
		4|7) case $(( ($1 + r / 8) % 3 )) in
		   0) if [ $(( ($1 + r) % 2 )) = 0 ]; then xp=xa.yaml; else xp=xb.yaml; fi
		      $S register --replace $xp > /dev/null 2>> err.$1; echo "replace $?" ;;
		   1) $S --json sample add x cases-b.csv > xs$1-$r.json 2>> err.$1; echo "xsample $?"
		      jq -r '.digest + " " + .artifact' xs$1-$r.json >> samples.$1 2> /dev/null ;;
		   *) $S audit x > /dev/null 2> xerr.$1-$r; rc=$?
		      cat xerr.$1-$r >> err.$1
		      if [ $rc = 2 ] && grep -q "changed while it was audited" xerr.$1-$r; then
			      echo "xchanged 0"
		      else
			      [ $rc = 1 ] && rc=0 # not reproducible: an answer
			      echo "xaudit $rc"
		      fi ;;
		   esac ;;
		esac
		r=$((r + 1))
	done > log.$1
}

p=0
pids=
while [ $p -lt "$PROCS" ]; do
	worker $p &
	pids="$pids $!"
	p=$((p + 1))
done
for x in $pids; do wait $x; done

# Readers killed with SIGKILL while they hold a read transaction (a
# snapshot export, which reads a large snapshot in one) leave their
# slots.
# LMDB resets the whole table when a process opens the store alone, so
# a holder keeps the lock file's liveness lock shared meanwhile (as a
# long-running command would), and the slots stay until an open's
# reader check clears them.
python3 -c 'import fcntl, os, sys, time
fd = os.open("st/lock.mdb", os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_SH, 1, 0, 0)
print("held", flush=True)
time.sleep(60)' > held.out &
holder=$!
while [ ! -s held.out ]; do sleep 0.01; done
dead_slots() {
	mdb_stat -r st 2> /dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }' | while read -r rp; do
		kill -0 "$rp" 2> /dev/null || echo "$rp"
	done | wc -l
}
# At least 8 kills, more (up to 60) until one has left a slot: how far
# a reader gets in a few milliseconds depends on the machine's load.
k=0
stale=0
while [ $k -lt 8 ] || { [ "$stale" = 0 ] && [ $k -lt 60 ]; }; do
	$S snapshot export "$bigd" - > /dev/null 2>&1 &
	kp=$!
	sleep 0.0$((k % 8 + 1))
	kill -9 $kp 2> /dev/null
	wait $kp 2> /dev/null
	k=$((k + 1))
	[ $k -lt 8 ] || stale=$(dead_slots)
done
stale=$(dead_slots)
[ "$stale" -gt 0 ] || bad "no kill left a stale reader slot to clear"
$S history > /dev/null 2>&1 || bad "history failed after the killed readers"
left=$(dead_slots)
[ "$left" = 0 ] || bad "$left stale reader slots left after an open"
kill $holder
wait $holder 2> /dev/null

cat log.* > all.log
total=$(wc -l < all.log)
nonzero=$(grep -vc ' 0$' all.log)
[ "$nonzero" = 0 ] || bad "$nonzero commands failed: $(grep -v ' 0$' all.log | sort | uniq -c | tr '\n' ' ') $(cat err.* 2>/dev/null | sort | uniq -c | head -n 5)"
audits=$(grep -c '^audit 0$' all.log)
xaudits=$(grep -c '^xaudit 0$' all.log)
replaces=$(grep -c '^replace 0$' all.log)
$S --json history > hist.json || bad "history failed"
n=$(jq length hist.json)
[ "$n" = $((audits + 1 + xaudits + replaces)) ] ||
	bad "history holds $n records, $((audits + 1)) audits of $V, $xaudits of x and $replaces replaces ran"
# x: each audit record names the artifact x held then, and a sample
# that a sample add made (with the artifact that made its decisions).
cat samples.* > samples.all 2> /dev/null
jq -r --arg x0 "$x0" 'reduce (sort_by(.id)[] | select(.version == "x")) as $e ({art: $x0, bad: []};
	if $e.record.schema == "rebuild-audit/register/v1" then .art = $e.record.artifact_new
	elif $e.record.schema == "rebuild-audit/audit/v1" then
		(if $e.record.digests.artifact_pinned != .art then .bad += ["record \($e.id) names artifact \($e.record.digests.artifact_pinned), x held \(.art)"] else . end)
		| .seen += ["\($e.record.digests.sample) \($e.record.digests.artifact_decisions)"]
	else . end) | (.bad[]), ("sample " + (.seen // [])[])' hist.json > xcheck.out
grep -v '^sample ' xcheck.out | while read -r line; do echo "concurrency: $line" >&2; done
[ "$(grep -vc '^sample ' xcheck.out)" = 0 ] || bad "an audit record of x names another artifact than x held"
sed -n 's/^sample //p' xcheck.out | sort -u | while read -r sd sa; do
	grep -qx "$sd $sa" samples.all || echo "$sd"
done > xunknown.out
[ ! -s xunknown.out ] || bad "audit records of x name samples no sample add made: $(head -n 2 xunknown.out | tr '\n' ' ')"
ids=$(jq -r '[.[].id] | sort | map(tostring) | join(" ")' hist.json)
want=$(seq 1 "$n" | tr '\n' ' ' | sed 's/ $//')
[ "$ids" = "$want" ] || bad "history ids are not 1..$n once each"
$S history --verify > /dev/null 2>&1 || bad "the chain does not verify"
$S store check > check.out 2>&1 || bad "store check: $(tail -n 2 check.out)"
echo "check-concurrency: $PROCS processes x $ROUNDS rounds: $total commands, $((audits + xaudits)) audits recorded once each ($xaudits of x racing $replaces replaces, $(grep -c '^xchanged' all.log) refused as changed), $stale stale reader slots cleared, $fail failures"
[ $fail = 0 ]
