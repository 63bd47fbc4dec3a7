#!/bin/sh
# check-fleet.sh RBA - `make check-fleet`: a single-node Slurm cluster
# (munged, slurmctld and slurmd from Debian's slurm-wlm and munge, with a
# minimal slurm.conf in a temporary directory: no accounting, no cgroups,
# proctrack/linuxproc, task/none) runs contrib/slurm/: an 8-task array
# over a store of 12 versions and the dependent import.  Checks: every
# version audited exactly once, the chain verifies, store check is clean,
# and the merged history holds the verdicts of a serial `audit --all` on
# a copy of the same store.  Every daemon it started is stopped on exit.
set -u
rba=$1
top=$(cd "$(dirname "$0")/.." && pwd)
shards=8
versions=${FLEET_VERSIONS:-12}
for c in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo jq; do
	if ! command -v "$c" > /dev/null 2>&1 && ! [ -x "/usr/sbin/$c" ]; then
		echo "check-fleet: '$c' is missing: run 'make fleet-deps' as root (slurm-wlm, munge, jq)" >&2
		exit 2
	fi
done
PATH=$PATH:/usr/sbin
T=$(mktemp -d "${TMPDIR:-/tmp}/rba-fleet.XXXXXX")
pids=
cleanup() {
	for p in $pids; do kill "$p" 2> /dev/null; done
	for p in $pids; do
		i=0
		while kill -0 "$p" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
		kill -9 "$p" 2> /dev/null
	done
	chmod -R u+w "$T" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 2' INT TERM
fails=0
check() {
	desc=$1
	shift
	if "$@" > /dev/null 2>&1; then echo "  ok   $desc"; else echo "  FAIL $desc"; fails=$((fails + 1)); fi
}
die() {
	echo "check-fleet: $*" >&2
	for f in "$T"/slurmctld.log "$T"/slurmd.log "$T"/munge/munged.log; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
	done
	exit 2
}
# Two free TCP ports for slurmctld and slurmd.
ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
set -- $ports
ctld_port=$1 d_port=$2

echo "check-fleet: a store of $versions versions"
t0=$(date +%s)
sh "$top/tests/fleet-store.sh" "$rba" "$T/store" "$versions" 3 1 || die "cannot build the store"
cp -r "$T/store" "$T/serial"
"$rba" -S "$T/serial" --json audit --all > "$T/serial.json"
serial_rc=$?
jq -r '.audits[] | "\(.version) \(.verdict)"' "$T/serial.json" | sort > "$T/serial.txt"
"$rba" keygen -o "$T/worker" > /dev/null || die "keygen failed"

echo "check-fleet: munged, slurmctld, slurmd"
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/shared" "$T/out"
chmod 700 "$T/munge"
mungekey -c -k "$T/munge/munge.key" || die "mungekey failed"
chmod 755 "$T/munge"
munged -f --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
	--pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
	--seed-file="$T/munge/munged.seed" || die "munged did not start"
pids="$pids $(cat "$T/munge/munged.pid")"
cat > "$T/slurm.conf" <<CONF
ClusterName=rbafleet
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=fleet Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -D -f "$SLURM_CONF" > "$T/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -f "$SLURM_CONF" -N localhost > "$T/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until sinfo -h -o '%T' 2> /dev/null | grep -q '^idle'; do
	i=$((i + 1))
	[ $i -gt 60 ] && die "the node did not come up"
	sleep 0.5
done
sinfo

echo "check-fleet: submit: an array of $shards workers and the import after it"
cd "$T/out" || die "no output directory"
t1=$(date +%s)
jobs=$(RBA="$rba" sh "$top/contrib/slurm/rebuild-audit-fleet-submit" "$T/store" "$T/shared" "$shards" \
	"$T/worker.key" "$T/worker.pub" --chdir="$T/out") || die "submit failed"
set -- $jobs
array=$1 import=$2
echo "  array job $array, import job $import (--dependency=afterany:$array)"
scontrol show job "$import" | grep -o 'Dependency=[^ ]*'
i=0
while squeue -h -j "$array,$import" 2> /dev/null | grep -q .; do
	i=$((i + 1))
	[ $i -gt 600 ] && die "the jobs did not finish in 300 s"
	sleep 0.5
done
t2=$(date +%s)
echo "check-fleet: done in $((t2 - t1)) s"
ls "$T/out"
echo "--- import job output"
cat "$T/out/rebuild-audit-import-$import.out"
rec=$(ls -d "$T"/shared/records-*)
store=$T/store

echo "check-fleet: checks"
check "every array task ran ($shards)" test "$(ls "$T"/out/rebuild-audit-shard-"${array}"_*.out | wc -l)" = "$shards"
for k in $(seq 0 $((shards - 1))); do
	scontrol -o show job "${array}_$k" 2> /dev/null |
		sed -n "s/.*\(JobState=[A-Z]*\).*\(ExitCode=[0-9:]*\).*/  task $k: \1 \2/p"
done
check "the serial audit --all exits 1: one version does not reproduce" test "$serial_rc" = 1
check "the import job exited like a serial audit --all ($serial_rc)" \
	sh -c "scontrol show job $import | grep -q 'ExitCode=$serial_rc:0'"
check "import: $versions imported, none refused, none missing" \
	grep -q "import: $versions imported, 0 refused, 0 versions without a record" "$T/out/rebuild-audit-import-$import.out"
for f in "$rec"/imported/*.json; do
	v=$(jq -r .version "$f")
	want=$(python3 -c "import hashlib, sys; print(int(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16], 16) % $shards)" "$v")
	echo "$v $(jq -r .worker.shard "$f") $want/$shards"
done > "$T/shards.txt"
check "each record was made by the task of its shard (sha256 of the name mod $shards)" \
	awk '$2 != $3 { exit 1 }' "$T/shards.txt"
check "the array's tasks shared the versions out ($(awk '{print $2}' "$T/shards.txt" | sort -u | wc -l) of $shards shards hold one)" \
	test "$(wc -l < "$T/shards.txt")" = "$versions"
"$rba" -S "$store" --json history | jq -r '.[].record.version' | sort > "$T/audited.txt"
"$rba" -S "$store" version list | awk '{print $1}' | sort > "$T/all.txt"
check "every version audited exactly once" cmp -s "$T/audited.txt" "$T/all.txt"
check "the history chain verifies" "$rba" -S "$store" history --verify
check "store check is clean" "$rba" -S "$store" store check
"$rba" -S "$store" --json history | jq -r '.[].record | "\(.version) \(.verdict)"' | sort > "$T/merged.txt"
check "the merged verdicts equal the serial audit --all" cmp -s "$T/merged.txt" "$T/serial.txt"
echo "verdicts (version, serial, merged):"
join "$T/serial.txt" "$T/merged.txt" | sed 's/^/  /'
"$rba" -S "$store" history head
echo "check-fleet: $(( $(date +%s) - t0 )) s in all; $fails failed"
cd /
[ "$fails" -eq 0 ]
