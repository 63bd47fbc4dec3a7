#!/bin/sh
# faults.sh [SLICE] - the fault-injection sweep (make check-faults; make
# check runs a slice).
#
# register, sample add, audit, export and snapshot add each run once to
# count their allocations, writes and syncs (tests/faults.c, preloaded),
# then once per K with the K-th call of one kind failing -- once, and
# from then on -- on a fresh copy of the same store.  SLICE limits each
# (command, kind, mode) to that many K spread over the range; without
# it every K is swept.  After each run:
#   - it ended with exit 0 or 2 (no signal; under ASan no leak report),
#     and an exit 2 said one line;
#   - the store is unchanged (same LMDB transaction id and the same
#     `mdb_dump -a`) or the command's commit is whole: store check clean,
#     and what it adds is there; an exit 0 means it is there;
#   - a failed export left no file and no temporary behind, a
#     successful one a pair that verifies.
# Prints the count of injected faults.  $RBA is the binary, $FAULTS_SO
# the preload library; $FAULTS_ASAN=1 when RBA is built with ASan.
set -u
SLICE=${1:-0}
: "${RBA:?}" "${FAULTS_SO:?}"
top=$(cd "$(dirname "$0")/.." && pwd)
FIX=$top/fixtures
V=german-numeric-logistic
w=$(mktemp -d "${TMPDIR:-/tmp}/rba-faults.XXXXXX")
[ -n "${FAULTS_KEEP:-}" ] || trap 'rm -rf "$w"' EXIT; trap 'exit 2' INT TERM
cd "$w" || exit 2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:verify_asan_link_order=0}

S="$RBA -S base"
. "$top/tests/store-seed.sh"
store_seed "$S"
sed "s/^version: .*/version: newv/" "$FIX/pins/$V.yaml" > newv.yaml
awk 'BEGIN { print "id,x,label"; for (i = 0; i < 80000; i++) printf "%d,%d.5,c%d\n", i, i, i % 7 }' > big.csv
bigd=$(sha256sum big.csv | cut -c 1-64)
txnid() { mdb_stat -e "$1" 2>/dev/null | sed -n 's/.*Last transaction ID: *//p'; }
t0=$(txnid base)
mdb_dump -a base > base.dump
h0=$($S --json history | jq length)

runs=0
injected=0
failn=0
problem() {
	failn=$((failn + 1))
	echo "faults: $c $fault: $1" >&2
	[ -s err ] && sed 's/^/    /' err | head -n 5 >&2
}

# The command of kind $1 on store st, as words.
command_of() {
	case $1 in
	register) echo "$RBA -S st register newv.yaml" ;;
	sample) echo "$RBA -S st sample add $V cases-b.csv" ;;
	audit) echo "$RBA -S st audit $V" ;;
	export) echo "$RBA -S st export $V -k k.key -o ev.json" ;;
	snapshot) echo "$RBA -S st snapshot add big.csv" ;;
	esac
}

# 0 when the commit of command $1 is in st.
committed() {
	case $1 in
	register) $RBA -S st version list 2>/dev/null | grep -q '^newv ' ;;
	sample) [ "$($RBA -S st --json sample show $V 2>/dev/null | jq -r .source)" = cases-b.csv ] ;;
	audit) [ "$($RBA -S st --json history 2>/dev/null | jq length)" = $((h0 + 1)) ] ;;
	export) [ -e ev.json ] ;;
	snapshot) $RBA -S st snapshot list 2>/dev/null | grep -q "^sha256:$(echo $bigd | cut -c 1-16) " ;;
	esac
}

judge() { # kind rc
	if [ "$2" -gt 2 ]; then problem "exit $2"; return; fi
	if [ "$2" = 2 ] && [ "$(wc -l < err)" != 1 ]; then problem "exit 2 with $(wc -l < err) lines"; fi
	t=$(txnid st)
	if [ "$t" = "$t0" ]; then
		mdb_dump -a st > st.dump
		cmp -s st.dump base.dump || problem "store changed without a commit"
		if [ "$2" = 0 ] && [ "$1" != export ]; then problem "exit 0 without a commit"; fi
	else
		[ "$1" != export ] || problem "export wrote to the store"
		$RBA -S st store check > /dev/null 2>&1 || problem "store check not clean after a commit"
		committed "$1" || problem "a commit without its content"
	fi
	if [ "$1" = export ]; then
		if [ -e ev.json.minisig ]; then
			$RBA -q verify ev.json -p k.pub > /dev/null 2>&1 || problem "torn evidence"
		elif [ -e ev.json ]; then
			jq -e .predicate.verdict ev.json > /dev/null 2>&1 || problem "torn evidence"
		fi
		[ "$2" != 0 ] || [ -e ev.json.minisig ] || problem "exit 0 without a signature"
		if [ "$2" = 2 ] && { [ -e ev.json ] || [ -e ev.json.minisig ]; }; then
			problem "a failed export left a file behind"
		fi
		[ -z "$(ls | grep '\.tmp-')" ] || problem "a temporary left behind"
	fi
}

for c in register sample audit export snapshot; do
	rm -rf st ev.json ev.json.minisig fl && cp -r base st
	$(command_of $c) > /dev/null 2> err
	rm -f fl
	rm -rf st ev.json ev.json.minisig && cp -r base st
	RBA_FAULT_LOG=fl LD_PRELOAD=$FAULTS_SO $(command_of $c) > /dev/null 2> err || { echo "faults: $c fails unfaulted" >&2; cat err >&2; exit 2; }
	counts=$(cat fl | tr '\n' ' ')
	for kind in alloc write sync; do
		# Summed over the lines: under ASan the allocations are counted
		# by the binary's wrappers, the rest by the preloaded library.
		total=$(echo "$counts" | awk -v k=$kind '{ for (i = 1; i < NF; i++) if ($i == k) s += $(i + 1) } END { print s + 0 }')
		ks=$(awk -v n="$total" -v s="$SLICE" 'BEGIN {
			if (s == 0 || s >= n) { for (k = 1; k <= n; k++) print k }
			else for (i = 0; i < s; i++) print 1 + int(i * (n - 1) / (s - 1 > 0 ? s - 1 : 1)) }' | uniq)
		for k in $ks; do
			for mode in "" :persist; do
				fault=$kind:$k$mode
				rm -rf st ev.json ev.json.minisig fl && cp -r base st
				RBA_FAULT=$fault RBA_FAULT_LOG=fl LD_PRELOAD=$FAULTS_SO \
					$(command_of $c) > /dev/null 2> err
				rc=$?
				runs=$((runs + 1))
				grep -q '^injected' fl 2>/dev/null && injected=$((injected + 1))
				judge $c $rc
			done
		done
	done
	echo "faults: $c: $counts"
done
# A file system that fills up (RBA_FAULT=...:full: a short write, then
# ENOSPC; a failing sync says ENOSPC; statvfs finds no room), at the
# store's last writes (its pages, then its meta page) and its sync:
# every command says "no space left on device" and where, the store or
# the file, in its one line -- never "input/output error" for LMDB's
# short write -- and the judgments above hold.
writes_of() { # the writes of command $1, unfaulted
	rm -rf st ev.json ev.json.minisig fl && cp -r base st
	RBA_FAULT_LOG=fl LD_PRELOAD=$FAULTS_SO $(command_of $1) > /dev/null 2>&1
	awk '{ for (i = 1; i < NF; i++) if ($i == "write") s += $(i + 1) } END { print s + 0 }' fl
}
for c in register sample audit snapshot; do
	n=$(writes_of $c)
	for fault in write:$((n - 1)):persist:full write:$n:persist:full sync:1:persist:full; do
		rm -rf st ev.json ev.json.minisig fl && cp -r base st
		RBA_FAULT=$fault RBA_FAULT_LOG=fl LD_PRELOAD=$FAULTS_SO \
			$(command_of $c) > /dev/null 2> err
		rc=$?
		runs=$((runs + 1))
		grep -q '^injected' fl 2>/dev/null && injected=$((injected + 1))
		judge $c $rc
		[ "$rc" = 2 ] || problem "a full disk: exit $rc, not 2"
		grep -q "writing the store 'st': no space left on device" err ||
			problem "a full disk not said as one, with the store"
	done
done
c=train
for fault in write:1:persist:full sync:1:persist:full; do
	rm -f a.bin fl
	RBA_FAULT=$fault RBA_FAULT_LOG=fl LD_PRELOAD=$FAULTS_SO \
		$RBA -S base train "$FIX/pins/$V.yaml" --no-keep -o a.bin > /dev/null 2> err
	rc=$?
	runs=$((runs + 1))
	grep -q '^injected' fl 2>/dev/null && injected=$((injected + 1))
	[ "$rc" = 2 ] || problem "a full disk: exit $rc, not 2"
	[ "$(wc -l < err)" = 1 ] || problem "a full disk: $(wc -l < err) lines"
	grep -q "cannot write artifact 'a.bin': no space left on device" err ||
		problem "a full disk not said as one, with the file"
	[ ! -e a.bin ] || problem "a partial artifact"
	[ -z "$(ls | grep '\.tmp-')" ] || problem "a temporary left behind"
done
# Standard output on a full device (stdio's own writes are out of the
# preloaded library's reach): one line, in lower case.
c=history fault=/dev/full
$RBA -S base --json history > /dev/full 2> err
[ "$(cat err)" = "rebuild-audit: write failed 'stdout': no space left on device" ] ||
	problem "a full stdout not said as one"
$RBA -S base snapshot export "$(sha256sum "$FIX/german-credit-numeric.csv" | cut -c 1-64)" - > /dev/full 2> err
[ "$(wc -l < err)" = 1 ] && grep -q "cannot write '-': no space left on device" err ||
	problem "a full stdout under an export not said once"

echo "check-faults: $runs runs, $injected faults injected, $failn failures"
[ $failn -eq 0 ]
