#!/bin/sh
# check-fleet.sh RBA - `make check-fleet`: a single-node Slurm cluster
# (munged, slurmctld and slurmd from Debian's slurm-wlm and munge, with a
# minimal slurm.conf in a temporary directory: no accounting, no cgroups,
# proctrack/linuxproc, task/none) runs the fleet glue as `make install`
# puts it (DESTDIR in the temporary directory), from a cron-like
# environment (env -i PATH=/usr/bin:/bin) through a symlink, over a store
# of 12 versions and a shared directory whose name holds a space and
# commas.  slurmd runs in a mount namespace of its own in which one copy
# of the installed tree is hidden: a node without the tool.
#
# Cases: a wrong key pair (refused before anything is spent), a node
# without the tool (the probe job finds it, Slurm cancels the array, the
# import reports it: exit 2), a failed import submission (the array
# cancelled), a run held, an overlapping submit (refused, no job, no
# directory), a cancelled task (the import exits 2 and prints the rerun
# command, which is run as printed), an import cancelled while pending
# (--wait names its JobState, releases the lock, prints the command that
# finishes the night, which is run as printed), --wait's report and
# status, a busy node (the night waits, the submit and the report say
# why and how long), a finished directory imported again and rerun (its
# outcome stands: status and report unchanged), the memory each job asks
# for.  Then: every version
# audited exactly once, each record by the task of its shard under the
# balanced rule, the chain verifies, store check is clean, the merged
# verdicts are a serial `audit --all`'s, and the report holds the report
# of the version that does not reproduce as a serial run prints it.
# Every daemon it started is stopped on exit.
set -u
rba=$1
top=$(cd "$(dirname "$0")/.." && pwd)
shards=8
versions=${FLEET_VERSIONS:-12}
for c in munged mungekey slurmctld slurmd sbatch srun squeue scontrol scancel sinfo jq unshare; do
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
cp -r "$T/store" "$T/store2"
# The serial audits run in the jobs' environment (cron's, env -i): a
# variable of the caller's such as OPENBLAS_CORETYPE would otherwise
# give them another environment record than the workers'.
plain() { env -i PATH=/usr/bin:/bin HOME="$T" "$@"; }
plain "$rba" -S "$T/serial" --json audit --all > "$T/serial.json"
serial_rc=$?
jq -r '.audits[] | "\(.version) \(.verdict)"' "$T/serial.json" | sort > "$T/serial.txt"
"$rba" keygen -o "$T/worker" > /dev/null || die "keygen failed"
"$rba" keygen -o "$T/other" > /dev/null || die "keygen failed"
# What a serial run prints of the version that does not reproduce.
cp -r "$T/store" "$T/serial-text"
plain "$rba" -S "$T/serial-text" -q audit --all | grep -v '^recorded ' > "$T/serial-report.txt"

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
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 State=UNKNOWN
PartitionName=fleet Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -D -f "$SLURM_CONF" > "$T/slurmctld.out" 2>&1 &
pids="$pids $!"
# slurmd and its jobs see an empty directory over $T/hidden.
mkdir -p "$T/hidden"
unshare -m --propagation private sh -c 'mount -t tmpfs rba-hidden "$1" && shift && exec "$@"' \
	sh "$T/hidden" slurmd -D -f "$SLURM_CONF" -N localhost > "$T/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until sinfo -h -o '%T' 2> /dev/null | grep -q '^idle'; do
	i=$((i + 1))
	[ $i -gt 60 ] && die "the node did not come up"
	sleep 0.5
done
sinfo

# ---- the glue as make install puts it ---------------------------------------
echo "check-fleet: make install DESTDIR=$T/inst, a symlink to the submit, a copy the node cannot see"
make -s -C "$top" install DESTDIR="$T/inst" > "$T/install.log" 2>&1 || { cat "$T/install.log"; die "make install failed"; }
mkdir -p "$T/cronbin" "$T/home"
ln -s "$T/inst/usr/local/bin/rebuild-audit-fleet-submit" "$T/cronbin/nightly"
cp -a "$T/inst" "$T/hidden/inst"
share=$T/inst/usr/local/share/rebuild-audit
store=$T/store
shared="$T/shared dir,with,commas"
mkdir -p "$shared"
# cron's environment: no PATH beyond /usr/bin:/bin (the test cluster's
# slurm.conf is named, as /etc/slurm/slurm.conf would be found).
cron() { env -i PATH=/usr/bin:/bin HOME="$T/home" SHELL=/bin/sh LOGNAME=root \
	SLURM_CONF="$SLURM_CONF" RBA_WAIT_POLL=1 "$@"; }
njobs() { scontrol -o show jobs 2> /dev/null | grep -c 'JobName=rebuild-audit-\(shard\|import\)'; }
nruns() { ls -d "$shared"/run-* 2> /dev/null | wc -l; }
first_line() { head -n 1 "$1"; }

echo "check-fleet: a wrong key pair"
cron "$T/cronbin/nightly" --wait "$store" "$shared" $shards "$T/worker.key" "$T/other.pub" > "$T/wrongkey.out" 2> "$T/wrongkey.err"
rc=$?
first_line "$T/wrongkey.err"
check "wrong key pair: exit 2" test $rc = 2
check "wrong key pair: one line naming both key ids" sh -c "test \$(wc -l < '$T/wrongkey.err') = 1 && grep -q 'the worker key pair is not usable: rebuild-audit: keys do not match' '$T/wrongkey.err'"
check "wrong key pair: no job, no run directory, no lock" sh -c "test $(njobs) = 0 && test $(nruns) = 0 && test ! -e '$shared/rebuild-audit.lock'"

check "make install puts the submit's manual" test -f "$T/inst/usr/local/share/man/man1/rebuild-audit-fleet-submit.1"

echo "check-fleet: a node without the tool"
cron "$T/hidden/inst/usr/local/bin/rebuild-audit-fleet-submit" --wait "$store" "$shared" $shards \
	"$T/worker.key" "$T/worker.pub" > "$T/notool.out" 2> "$T/notool.err"
rc=$?
cat "$T/notool.out" "$T/notool.err"
check "no tool on the node: exit 2" test $rc = 2
check "no tool on the node: the probe job names the node and the path" \
	grep -q "^the node probe (job [0-9]*) found: on node .*: no executable $T/hidden/inst/usr/local/bin/rebuild-audit\$" "$T/notool.out"
check "no tool on the node: the array did not run, nothing audited" grep -q "^the array job [0-9]* did not run (Slurm cancels it when its probe fails); nothing was audited or imported" "$T/notool.out"
check "no tool on the node: the command that runs the night again" grep -q -- "--rerun '.*' --wait\$" "$T/notool.out"
ntrun=$(ls -d "$shared"/run-*)
check "no tool on the node: Slurm cancelled the array" sh -c "scontrol -o show job $(sed -n 's/^array_job=//p' "$ntrun/manifest") | grep -q 'JobState=CANCELLED'"
check "no tool on the node: no record, nothing imported, status 2, no lock" sh -c "test -z \"\$(ls '$ntrun/records' | grep json)\" && test \$('$rba' -S '$store' --json history head | jq .id) = 0 && test \$(cat '$ntrun/status') = 2 && test ! -e '$shared/rebuild-audit.lock'"
chmod -R u+w "$ntrun" && rm -rf "$ntrun"

echo "check-fleet: the import cannot be submitted"
cron "$T/cronbin/nightly" --import-opt=--partition=nosuch "$store" "$shared" $shards \
	"$T/worker.key" "$T/worker.pub" > "$T/noimport.out" 2> "$T/noimport.err"
rc=$?
first_line "$T/noimport.err"
check "import not submitted: exit 2" test $rc = 2
check "import not submitted: says the array was cancelled" grep -q "cannot submit the import: .*; cancelled the array job [0-9]* and the probe job [0-9]*, nothing will be imported" "$T/noimport.err"
badarray=$(sed -n 's/.*cancelled the array job \([0-9][0-9]*\) .*/\1/p' "$T/noimport.err")
i=0
while [ -n "$badarray" ] && squeue -h -j "$badarray" 2> /dev/null | grep -q .; do
	i=$((i + 1)); [ $i -gt 60 ] && break; sleep 0.5
done
check "import not submitted: the array job is cancelled" sh -c "scontrol -o show job $badarray | grep -q 'JobState=CANCELLED'"
check "import not submitted: the lock is released" test ! -e "$shared/rebuild-audit.lock"
check "import not submitted: nothing imported" test "$("$rba" -S "$store" --json history head | jq .id)" = 0
badrun=$(ls -d "$shared"/run-*)
check "import not submitted: its manifest says so" grep -q '^state=cancelled' "$badrun/manifest"
chmod -R u+w "$badrun" && rm -rf "$badrun"

echo "check-fleet: two submits at once"
cron "$T/cronbin/nightly" --array-opt=--hold "$store" "$shared" $shards "$T/worker.key" "$T/worker.pub" > "$T/c1.out" 2> "$T/c1.err" &
p1=$!
cron "$T/cronbin/nightly" --array-opt=--hold "$store" "$shared" $shards "$T/worker.key" "$T/worker.pub" > "$T/c2.out" 2> "$T/c2.err" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
cat "$T/c1.err" "$T/c2.err"
check "two submits at once: one submitted, one refused" test "$r1$r2" = 02 -o "$r1$r2" = 20
check "two submits at once: the refused one names the lock" sh -c "cat '$T/c1.err' '$T/c2.err' | grep -q \"another \(run holds\|submit is taking\) the lock '$shared/rebuild-audit.lock'\""
check "two submits at once: no rename failure, one run directory" sh -c "! grep -qi 'rename\|exists' '$T/c1.err' '$T/c2.err' && test $(nruns) = 1"
crun=$(ls -d "$shared"/run-*)
scancel "$(sed -n 's/^array_job=//p' "$crun/manifest")" "$(sed -n 's/^import_job=//p' "$crun/manifest")" "$(sed -n 's/^probe_job=//p' "$crun/manifest")"
i=0
while squeue -h -j "$(sed -n 's/^array_job=//p' "$crun/manifest"),$(sed -n 's/^import_job=//p' "$crun/manifest")" 2> /dev/null | grep -q .; do
	i=$((i + 1)); [ $i -gt 60 ] && break; sleep 0.5
done
check "its jobs cancelled, the lock is left behind (stale)" test -f "$shared/rebuild-audit.lock/owner"
chmod -R u+w "$crun" && rm -rf "$crun"

echo "check-fleet: a run (held) over the stale lock, an overlapping submit, a cancelled task"
t1=$(date +%s)
cron "$T/cronbin/nightly" --wait --mail-type=END,FAIL --array-opt=--hold "$store" "$shared" $shards \
	"$T/worker.key" "$T/worker.pub" > "$T/run1.out" 2> "$T/run1.err" &
run1=$!
i=0
until [ -s "$T/run1.out" ]; do
	i=$((i + 1)); [ $i -gt 120 ] && die "the submit did not print its jobs: $(cat "$T/run1.err")"
	sleep 0.5
done
cat "$T/run1.out"
run=$(ls -d "$shared"/run-*)
mf() { sed -n "s/^$1=//p" "$run/manifest" | tail -n 1; }
array=$(mf array_job) import=$(mf import_job)
check "manifest: snapshot, head, records, shards, job ids, tool" sh -c "grep -q '^snapshot=$run/snapshot\$' '$run/manifest' &&
	grep -q '^head=sha256:' '$run/manifest' && grep -q '^records=$run/records\$' '$run/manifest' &&
	grep -q '^shards=$shards\$' '$run/manifest' && test -n '$array' && test -n '$import' &&
	grep -q '^tool=$T/inst/usr/local/bin/rebuild-audit\$' '$run/manifest'"
check "the lock names the run and its jobs" sh -c "grep -q '^run=$run\$' '$shared/rebuild-audit.lock/owner' &&
	grep -q '^array_job=$array\$' '$shared/rebuild-audit.lock/owner' && grep -q '^import_job=$import\$' '$shared/rebuild-audit.lock/owner'"
check "the import job has --mail-type END,FAIL" sh -c "scontrol show job $import | grep -q 'MailType=END,FAIL'"
check "the stale lock was taken over, saying so" grep -q "taking over the stale lock of run '$crun' (its jobs or its submit process are gone)" "$T/run1.err"
check "the array asks for the memory it needs (--mem=128M)" sh -c "scontrol show job $array | grep -q 'MinMemoryNode=128M'"
check "the import asks for 128M and 1M per 10 versions" sh -c "scontrol show job $import | grep -q 'MinMemoryNode=$((128 + (versions + 9) / 10))M'"
check "the import depends on the array (afterany)" sh -c "scontrol show job $import | grep -q 'Dependency=afterany:${array}_\*'"
jobs_before=$(njobs)
cron "$T/cronbin/nightly" --wait "$store" "$shared" $shards "$T/worker.key" "$T/worker.pub" > "$T/overlap.out" 2> "$T/overlap.err"
rc=$?
first_line "$T/overlap.err"
check "overlapping submit: exit 2" test $rc = 2
check "overlapping submit: says who holds the lock" grep -q "another run holds the lock '$shared/rebuild-audit.lock': run '$run', array job $array, import job $import, host $(hostname), pid [0-9]*" "$T/overlap.err"
check "overlapping submit: no job, no directory" sh -c "test $(njobs) = $jobs_before && test $(nruns) = 1"
scancel "${array}_5" || die "scancel ${array}_5 failed"
scontrol release "$array" || die "scontrol release $array failed"
wait $run1
rc1=$?
t2=$(date +%s)
echo "check-fleet: the first run done in $((t2 - t1)) s (exit $rc1)"
echo "--- its report"
cat "$T/run1.out"
check "the probe job passed on the node" grep -q "^ok on node " "$run/logs/probe-$(mf probe_job).result"
check "a cancelled task: the run exits 2" test $rc1 = 2
check "a cancelled task: the versions of shard 5 are named" grep -q "^rebuild-audit: not audited '.*': no worker record for this snapshot; rerun shard 5/$shards\$" "$T/run1.out"
check "a cancelled task: the rerun command is printed" grep -q -- "--rerun '$run' --tasks 5 --wait\$" "$T/run1.out"
check "the lock is released when the import ends" test ! -e "$shared/rebuild-audit.lock"
tail -n +2 "$T/run1.out" > "$T/run1.tail"
check "status and report in the run directory" sh -c "test \"\$(cat '$run/status')\" = 2 && cmp -s '$run/report.txt' '$T/run1.tail'"
ls "$run/logs"
check "logs under the run, with readable names" sh -c "test -s '$run/logs/import.out' && test -e '$run/logs/shard-0.out' && test -e '$run/logs/shard-7.err'"

echo "check-fleet: the rerun, as printed, from cron"
rerun=$(sed -n 's/^  \(.*--rerun .*\)$/\1/p' "$T/run1.out" | tail -n 1)
echo "  $rerun"
eval "cron $rerun" > "$T/rerun.out" 2> "$T/rerun.err"
rc2=$?
cat "$T/rerun.err"
echo "--- the rerun's report"
cat "$T/rerun.out"
check "the rerun exits like a serial audit --all ($serial_rc)" test $rc2 = "$serial_rc"
check "the rerun: every version covered" grep -q "0 refused, 0 versions without a record" "$T/rerun.out"
check "the rerun logs beside the first" sh -c "ls '$run/logs' | grep -q '^shard-5.rerun-[0-9]*.out\$'"
# Reports hold no blank line; a serial run puts one between two.
awk '/^reports of the versions/ { on = 1; next } on && $0 != ""' "$T/rerun.out" > "$T/fleet-report.txt"
grep -v '^$' "$T/serial-report.txt" > "$T/serial-report.nb"
check "the report holds the not-reproducible version's report as a serial run prints it" cmp -s "$T/fleet-report.txt" "$T/serial-report.nb"
check "that report is not empty" grep -q "^audit .*: NOT REPRODUCIBLE (exit 1)\$" "$T/fleet-report.txt"
diff "$T/serial-report.nb" "$T/fleet-report.txt" | head -n 10

echo "check-fleet: a finished directory imported again"
cp "$run/report.txt" "$T/report.final"
cron sh "$share/slurm/rebuild-audit-import.sbatch" "$run" > "$T/again.out" 2>&1
rc3=$?
cat "$T/again.out"
check "import of a finished directory: the run's outcome again ($rc2)" test $rc3 = "$rc2"
check "import of a finished directory: nothing to import" grep -q "^nothing to import '$run/records'" "$T/again.out"
check "import of a finished directory: no 'no worker record' line" sh -c "! grep -q 'no worker record' '$T/again.out'"
check "import of a finished directory: its outcome stands" grep -q "^the run's outcome stands: status $rc2" "$T/again.out"
check "import of a finished directory: status and report unchanged" sh -c "test \"\$(cat '$run/status')\" = $rc2 && cmp -s '$run/report.txt' '$T/report.final'"

echo "check-fleet: --rerun of the finished run, from cron, with --wait"
cron "$T/cronbin/nightly" --no-probe --rerun "$run" --wait > "$T/rerun2.out" 2> "$T/rerun2.err"
rc4=$?
cat "$T/rerun2.err"
tail -n 5 "$T/rerun2.out"
check "--rerun of a finished run: exits with its outcome ($rc2)" test $rc4 = "$rc2"
check "--rerun of a finished run: says the outcome stands" grep -q "^the run's outcome stands: status $rc2" "$T/rerun2.out"
check "--rerun of a finished run: status and report unchanged" sh -c "test \"\$(cat '$run/status')\" = $rc2 && cmp -s '$run/report.txt' '$T/report.final'"
check "--rerun of a finished run: the lock is released" test ! -e "$shared/rebuild-audit.lock"

echo "check-fleet: an import cancelled while pending (another store, another shared directory)"
shared2="$T/shared2"
mkdir -p "$shared2"
t3=$(date +%s)
# a busy cluster first: a job holds both CPUs of the node
blocker=$(sbatch --parsable --job-name=busy --cpus-per-task=2 --mem=64M --output=/dev/null --wrap='sleep 600') ||
	die "cannot submit the job that keeps the node busy"
i=0
until squeue -h -j "$blocker" -o %T | grep -q RUNNING; do
	i=$((i + 1)); [ $i -gt 60 ] && die "the job that keeps the node busy did not start"
	sleep 0.5
done
cron "$T/cronbin/nightly" --wait --array-opt=--hold "$T/store2" "$shared2" 2 \
	"$T/worker.key" "$T/worker.pub" > "$T/ci.out" 2> "$T/ci.err" &
ci=$!
i=0
until [ -s "$T/ci.out" ]; do
	i=$((i + 1)); [ $i -gt 120 ] && die "the submit did not print its jobs: $(cat "$T/ci.err")"
	sleep 0.5
done
cirun=$(ls -d "$shared2"/run-*)
i=0
until [ "$(wc -l < "$T/ci.out")" -ge 2 ] || [ $i -gt 20 ]; do i=$((i + 1)); sleep 0.5; done
cat "$T/ci.out" "$cirun/logs/queue.log"
check "a busy cluster: the night is submitted, not skipped" grep -q "^submitted run '$cirun': probe job " "$T/ci.out"
check "a busy cluster: the submit says why the probe waits" grep -q "^the probe job [0-9]* is pending (Reason=\\(Resources\\|Priority\\)): the array and the import wait for it\$" "$T/ci.out"
check "a busy cluster: the probe's pending reason is recorded" grep -q " probe job [0-9]* PENDING \(Resources\|Priority\)\$" "$cirun/logs/queue.log"
scancel "$blocker"
ciarray=$(sed -n 's/^array_job=//p' "$cirun/manifest") ciimport=$(sed -n 's/^import_job=//p' "$cirun/manifest")
scancel "$ciimport" || die "scancel $ciimport failed"
sleep 3
check "import cancelled: the lock is kept while the array waits" test -e "$shared2/rebuild-audit.lock"
scontrol release "$ciarray" || die "scontrol release $ciarray failed"
wait $ci
rc5=$?
cat "$T/ci.err"
check "import cancelled: --wait exits 2" test $rc5 = 2
check "import cancelled: one line" test "$(wc -l < "$T/ci.err")" = 1
check "import cancelled: its JobState, the lock, the command" grep -q "the import job $ciimport ended without a status (JobState=CANCELLED): nothing was imported and the lock is released; to finish the night: '.*' --rerun '$cirun' --wait\$" "$T/ci.err"
check "import cancelled: the lock is released" test ! -e "$shared2/rebuild-audit.lock"
echo "check-fleet: the command that finishes the night, as printed, from cron"
fin=$(sed -n 's/.*to finish the night: //p' "$T/ci.err")
# the node busy again for 70 s: the report says how long and why it waited
blocker=$(sbatch --parsable --job-name=busy --cpus-per-task=2 --mem=64M --output=/dev/null --wrap='sleep 70') ||
	die "cannot submit the job that keeps the node busy"
i=0
until squeue -h -j "$blocker" -o %T | grep -q RUNNING; do
	i=$((i + 1)); [ $i -gt 60 ] && die "the job that keeps the node busy did not start"
	sleep 0.5
done
eval "cron $fin" > "$T/fin.out" 2> "$T/fin.err"
rc6=$?
cat "$T/fin.err"; head -n 3 "$T/fin.out"; tail -n 3 "$T/fin.out"
check "a wait over a minute: the report says how long and why" grep -q "^the night waited 0h 1m for a node: the probe job [0-9]* was submitted at .* and started at .*; Slurm's pending reason: \(Resources\|Priority\)" "$T/fin.out"
check "the night finished: the run's outcome ($serial_rc)" sh -c "test $rc6 = $serial_rc && test \$(cat '$cirun/status') = $serial_rc"
check "the night finished: every version imported" grep -q "^import: $versions imported, 0 refused, 0 versions without a record" "$T/fin.out"
echo "check-fleet: the cancelled import's night took $(( $(date +%s) - t3 )) s"

echo "check-fleet: checks"
rec=$run/records
"$rba" -S "$run/snapshot" --json audit --all --shards $shards --list > "$T/plan.json"
jq -r '.max_over_mean' "$T/plan.json" | sed 's/^/  balanced split of the snapshot, largest shard over mean: /'
for f in "$rec"/imported/*.json; do
	v=$(jq -r .version "$f")
	want=$(jq -r --arg v "$v" '.versions[] | select(.version == $v) | .shard' "$T/plan.json")
	echo "$v $(jq -r .worker.shard "$f") $want/$shards"
done > "$T/shards.txt"
check "each record was made by the task of its shard (the balanced split)" awk '$2 != $3 { exit 1 }' "$T/shards.txt"
check "every shard had a version" test "$(awk '{print $2}' "$T/shards.txt" | sort -u | wc -l)" = "$shards"
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
check "prune keeps the newest run" sh -c "'$rba' store snapshot --prune 1 '$shared' --dry-run | grep -q \"prune '$shared': 1 run, 0 removed\""
echo "check-fleet: $(( $(date +%s) - t0 )) s in all; $fails failed"
cd /
[ "$fails" -eq 0 ]
