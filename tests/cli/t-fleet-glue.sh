# contrib/slurm/ without a cluster: sbatch, squeue, scancel, scontrol
# and sacct are stand-ins (bin/), the jobs are run here by hand from the
# run's manifest.  The submit's usage (--help, every option's value after
# '=' or as the next word, one line and exit 2 for bad input), its
# preflight (a wrong key pair), the probe job the array depends on (a
# busy cluster delays the night, a failing probe is reported by the
# import), the memory each job asks for, the lock (an overlapping submit
# refused with its holder and why its jobs wait, a stale one taken
# over), the manifest in a path with a space and commas, the options of
# each job, a failed import submission (the array cancelled), an import
# cancelled while pending (noticed under --wait, the lock released, the
# command that finishes the night), a rerun's report (earlier attempts'
# worker lines marked old; a finished run's outcome never rewritten),
# and a whole run: probe, shards, import, report, status.
sh "$TOP/tests/fleet-store.sh" "$RBA" st 4 1 1 > /dev/null 2>&1
$RBA keygen -o w > /dev/null 2>&1
$RBA keygen -o other > /dev/null 2>&1
mkdir bin "sh dir,a,b"
shared="$PWD/sh dir,a,b"
cat > bin/sbatch <<'STUB'
#!/bin/sh
echo "sbatch $*" >> "$STUB_LOG"
for a; do case $a in --partition=nosuch) echo "sbatch: error: invalid partition specified: nosuch" >&2; exit 1 ;; esac; done
for a; do prev=${last:-}; last=$a; done
[ -f "$prev" ] && [ -f "$last/manifest" ] || { echo "sbatch: no script and run directory" >&2; exit 1; }
n=$(cat "$STUB_LOG.id" 2> /dev/null || echo 100)
echo $((n + 1)) > "$STUB_LOG.id"
echo $((n + 1))
STUB
# squeue: the jobs of $STUB_QUEUE ("ID STATE REASON" lines, ID * for
# any job), in the -o format asked (%i, %T, %r).
cat > bin/squeue <<'STUB'
#!/bin/sh
jobs= fmt=%i
while [ $# -gt 0 ]; do case $1 in -j) jobs=$2; shift ;; -o) fmt=$2; shift ;; esac; shift; done
[ -n "${STUB_QUEUE:-}" ] && [ -f "$STUB_QUEUE" ] || exit 0
echo "$jobs" | tr ',' '\n' | while read -r j; do
	[ -n "$j" ] || continue
	awk -v j="$j" -v f="$fmt" '$1 == j || $1 == "*" {
		o = f; gsub(/%i/, j, o); gsub(/%T/, $2, o); gsub(/%r/, $3, o); print o; exit }' "$STUB_QUEUE"
done
STUB
# scontrol -o show job ID: what $STUB_ENDED ("ID STATE" lines) says
cat > bin/scontrol <<'STUB'
#!/bin/sh
id=$4
st=$( [ -n "${STUB_ENDED:-}" ] && [ -f "$STUB_ENDED" ] && awk -v j="$id" '$1 == j { print $2 }' "$STUB_ENDED")
[ -n "$st" ] || { echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; }
echo "JobId=$id JobName=x JobState=$st Reason=None Dependency=(null)"
STUB
cat > bin/sacct <<'STUB'
#!/bin/sh
echo "sacct: error: Slurm accounting storage is disabled" >&2
exit 1
STUB
cat > bin/scancel <<'STUB'
#!/bin/sh
echo "scancel $*" >> "$STUB_LOG"
STUB
chmod +x bin/*
ln -s "$TOP/contrib/slurm/rebuild-audit-fleet-submit" bin/nightly
export STUB_LOG="$PWD/stub.log"
export STUB_QUEUE="$PWD/queue" STUB_ENDED="$PWD/ended"
# the jobs run by hand see the stand-ins too (scontrol, sacct)
export PATH="$PWD/bin:$PATH"
sub() { env -i PATH="$PWD/bin:/usr/bin:/bin" STUB_LOG="$STUB_LOG" RBA="$RBA" STUB_QUEUE="$STUB_QUEUE" STUB_ENDED="$STUB_ENDED" RBA_WAIT_POLL=1 \
	${RBA_PASSPHRASE_FILE:+RBA_PASSPHRASE_FILE="$RBA_PASSPHRASE_FILE"} ${RBA_MEM:+RBA_MEM="$RBA_MEM"} \
	${RBA_SHARD_MEM:+RBA_SHARD_MEM="$RBA_SHARD_MEM"} ${RBA_IMPORT_MEM:+RBA_IMPORT_MEM="$RBA_IMPORT_MEM"} nightly "$@"; }
# the jobs by hand: the probe (SLURM_JOB_ID), every task, the import
probe() { SLURM_JOB_ID=$(sed -n 's/^\(rerun_\)\{0,1\}probe_job=//p' "$1/manifest" | tail -n 1) sh "$TOP/contrib/slurm/rebuild-audit-probe.sbatch" "$1"; }
tasks() { for k in 0 1 2 3; do SLURM_ARRAY_TASK_ID=$k sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$1" > "$1/logs/shard-$k${2:-}.out" 2> "$1/logs/shard-$k${2:-}.err"; done; }
import() { sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$1"; }
lastrun() { ls -dt "$shared"/run-* | head -n 1; }
clean_runs() { chmod -R u+w "$shared" && rm -rf "$shared"/run-* "$shared/rebuild-audit.lock"; }

# --help, usage and every option's value (point: the submit's usage)
run 0 sub --help
out_has "usage: rebuild-audit-fleet-submit [OPTION...] STORE SHARED N WORKER.key WORKER.pub"
out_has "  --split RULE "
err_empty
run 0 sub -h
out_has "--rerun RUN_DIR"
run 2 sub
err_is "rebuild-audit-fleet-submit: 0 of the 5 arguments STORE SHARED N WORKER.key WORKER.pub given; usage: rebuild-audit-fleet-submit [OPTION...] STORE SHARED N WORKER.key WORKER.pub [SBATCH-OPTION...] | rebuild-audit-fleet-submit [OPTION...] --rerun RUN_DIR [--tasks K,...]"
run 2 sub --bogus st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: unknown option '--bogus' (rebuild-audit-fleet-submit --help lists them)"
run 2 sub --split
err_is "rebuild-audit-fleet-submit: option '--split' needs a value"
run 2 sub --split= st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: option '--split' needs a value, not an empty one"
run 2 sub --split random st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: --split takes balanced or hash, not 'random'"
run 2 sub --wait=yes st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: option '--wait' takes no value, not 'yes'"
run 2 sub --tasks 1 st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: --tasks goes with --rerun"
run 2 env RBA_MEM=lots sh -c 'PATH="$1:$PATH" exec nightly st "$2" 4 w.key w.pub' sh "$PWD/bin" "$shared"
err_is "rebuild-audit-fleet-submit: RBA_MEM takes a size as sbatch --mem does (such as 512M or 2G), not 'lots'"
run 2 env RBA_PROBE_WAIT=1h sh -c 'PATH="$1:$PATH" exec nightly st "$2" 4 w.key w.pub' sh "$PWD/bin" "$shared"
err_is "rebuild-audit-fleet-submit: RBA_PROBE_WAIT takes a number of seconds, not '1h'"
ok "bad usage: nothing submitted, nothing made" sh -c "test ! -e '$STUB_LOG' && test -z \"\$(ls '$shared')\""

run 2 sub st "$shared" 0 w.key w.pub
err_is "rebuild-audit-fleet-submit: N must be a number of shards from 1 to 65536, not '0'"
run 2 sub st "$shared" 4 w.key other.pub
ok "wrong key pair: one line" test "$(wc -l < err)" = 1
err_has "rebuild-audit-fleet-submit: the worker key pair is not usable: rebuild-audit: keys do not match"
ok "wrong key pair: nothing submitted, nothing made" sh -c "test ! -e '$STUB_LOG' && test -z \"\$(ls '$shared')\""
run 2 sub st nowhere 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: the shared directory '$PWD/nowhere' is not a writable directory"
run 2 env -i PATH="$PWD/bin:/usr/bin:/bin" STUB_LOG="$STUB_LOG" RBA=./missing nightly st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: the tool '$PWD/missing' is not executable here"
run 2 env -i PATH="$PWD/bin:/usr/bin:/bin" STUB_LOG="$STUB_LOG" RBA="$RBA" RBA_CONTRIB=/nonexistent nightly st "$shared" 4 w.key w.pub
err_has "no rebuild-audit-probe.sbatch in '/nonexistent'"
# the probe job cannot be submitted (a partition sbatch refuses): said,
# nothing submitted or left
run 2 sub --array-opt --partition=nosuch st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: cannot submit the probe job: sbatch: error: invalid partition specified: nosuch; nothing was submitted"
ok "no probe: no job, no run directory, no lock" sh -c "test \$(grep -c '^sbatch' '$STUB_LOG') = 1 && test -z \"\$(ls '$shared')\""
rm -f "$STUB_LOG" "$STUB_LOG.id"

# values as the next word: --split hash, --array-opt --partition=p1 ...
run 0 sub --split hash --mail-type END --array-opt --partition=p1 --import-opt --nodelist=storehost st "$shared" 4 w.key w.pub
r=$(lastrun)
ok "--split hash (a space, not '='): the manifest's rule" grep -qx 'split=hash' "$r/manifest"
ok "--mail-type END, --import-opt as the next word: the import's options" sh -c "grep '^sbatch .*--dependency=afterany' '$STUB_LOG' | grep -q -- '--mail-type=END --nodelist=storehost '"
ok "--array-opt as the next word: the array's option" sh -c "grep '^sbatch .*--array=' '$STUB_LOG' | grep -q -- '--partition=p1 '"
clean_runs
rm -f "$STUB_LOG" "$STUB_LOG.id"
# a node with another version of the tool (a wrapper that says so on
# a node): the submit queues the night; the probe finds it, Slurm cancels
# the array (afterok), the import reports it, releases the lock and
# prints the command that runs the night again
printf '#!/bin/sh\nif [ -n "${STUB_ON_NODE:-}" ] && [ "$1" = --version ]; then echo "rebuild-audit 0.0.1 (revision old)"; exit 0; fi\nexec "%s" "$@"\n' "$RBA" > oldnode
chmod +x oldnode
run 0 env -i PATH="$PWD/bin:/usr/bin:/bin" STUB_LOG="$STUB_LOG" RBA="$PWD/oldnode" nightly st "$shared" 4 w.key w.pub
r=$(lastrun)
pj=$(sed -n 's/^probe_job=//p' "$r/manifest")
run 3 env STUB_ON_NODE=1 SLURM_JOB_ID=$pj sh "$TOP/contrib/slurm/rebuild-audit-probe.sbatch" "$r"
out_has "on node $(hostname): $PWD/oldnode is rebuild-audit 0.0.1 (revision old), not $($RBA --version | head -n 1) as on the submitting host"
echo "$pj CANCELLED" > ended
run 2 import "$r"
out_has "the node probe (job $pj) found: on node $(hostname): $PWD/oldnode is rebuild-audit 0.0.1 (revision old)"
out_has "the array job $(sed -n 's/^array_job=//p' "$r/manifest") did not run (Slurm cancels it when its probe fails); nothing was audited or imported"
out_has "  '$TOP/contrib/slurm/rebuild-audit-fleet-submit' --rerun '$r' --wait"
ok "a failed probe: status 2, the lock released, nothing imported" sh -c "test \$(cat '$r/status') = 2 && test ! -e '$shared/rebuild-audit.lock' && test \$($RBA -S st --json history head | jq .id) = 0"
# a probe that left no result: its JobState named
clean_runs
run 0 sub st "$shared" 4 w.key w.pub
r=$(lastrun)
pj=$(sed -n 's/^probe_job=//p' "$r/manifest")
echo "$pj NODE_FAIL" > ended
run 2 import "$r"
out_has "the node probe (job $pj) ended without a result (JobState=NODE_FAIL; its log: $r/logs/probe-$pj.out)"
: > ended
clean_runs

# a run: the probe queued first, the array after it (afterok), the import
# after the array; the manifest, the jobs' options, memory, the lock
rm -f "$STUB_LOG" "$STUB_LOG.id"
run 0 sub --mail-type=END --array-opt=--partition=p1 --array-opt=--time=10 --import-opt=--nodelist=storehost st "$shared" 4 w.key w.pub
out_has "submitted run '$shared/run-"
out_has "probe job 101, array job 102 (tasks 0-3 of 4 shards, after the probe), import job 103"
out_lacks "pending"
r=$(lastrun)
mf() { sed -n "s/^$1=//p" "$r/manifest"; }
ok "manifest: the paths as given, commas and space kept" test "$(mf snapshot)" = "$r/snapshot" -a "$(mf records)" = "$r/records" -a "$(mf store)" = "$PWD/st"
ok "manifest: shards, tool, job ids" test "$(mf shards)" = 4 -a "$(mf tool)" = "$RBA" -a "$(mf probe_job)" = 101 -a "$(mf array_job)" = 102 -a "$(mf import_job)" = 103
ok "manifest: the head the snapshot holds" test "$(mf head)" = "$($RBA -S "$r/snapshot" -q history head)"
ok "no srun: the probe is a job" sh -c "! grep -q '^srun' stub.log"
ok "the probe job: queued (no --immediate), 5 minutes, the array's partition only" sh -c "sed -n 1p stub.log | grep -q -- '--job-name=rebuild-audit-probe .*--time=5 --mem=128M .*--output=$r/logs/probe-%j.out --partition=p1 .*rebuild-audit-probe.sbatch $r\$' && ! sed -n 1p stub.log | grep -q -e '--immediate' -e '--time=10' -e nodelist"
ok "the array: after the probe (afterok, killed if it fails), its tasks, memory, logs, its options" sh -c "grep '^sbatch .*--array=0-3 ' stub.log | grep -q -- '--mem=128M .*--output=$r/logs/shard-%a.out .*--dependency=afterok:101 --kill-on-invalid-dep=yes --partition=p1 --time=10 .*rebuild-audit-shard.sbatch $r\$'"
ok "the array does not get the import's option" sh -c "! grep '^sbatch .*--array' stub.log | grep -q nodelist"
ok "the import: after the array, its memory, mail, its option only" sh -c "grep '^sbatch .*--dependency=afterany:102 ' stub.log | grep -q -- '--mem=129M .*--output=$r/logs/import.out --mail-type=END --nodelist=storehost .*rebuild-audit-import.sbatch $r\$'"
ok "the import does not get the array's option" sh -c "! grep '^sbatch .*--dependency=afterany' stub.log | grep -q partition"
ok "the lock names the run and its jobs" sh -c "grep -qx 'run=$r' '$shared/rebuild-audit.lock/owner' && grep -qx 'array_job=102' '$shared/rebuild-audit.lock/owner' && grep -qx 'probe_job=101' '$shared/rebuild-audit.lock/owner'"

# an overlapping submit while the jobs wait: refused, nothing spent, and
# it says why they wait
rm -f "$STUB_LOG"
printf '101 PENDING Resources\n102 PENDING Dependency\n103 PENDING Dependency\n' > queue
run 2 sub st "$shared" 4 w.key w.pub
err_has "rebuild-audit-fleet-submit: another run holds the lock '$shared/rebuild-audit.lock': run '$r', array job 102, import job 103, host $(hostname), pid "
err_has "; squeue: job 101 PENDING (Resources), job 102 PENDING (Dependency), job 103 PENDING (Dependency); nothing was submitted"
ok "overlap: no job, no directory" sh -c "test ! -e '$STUB_LOG' && test \$(ls -d '$shared'/run-* | wc -l) = 1"
: > queue

# the jobs, by hand: the probe, every task, then the import
run 0 probe "$r"
out_is_line() { printf '%s\n' "$1" > .want_out; if cmp -s out .want_out; then pass; else fail "stdout is not '$1'"; fi; }
out_is_line "ok on node $(hostname)"
ok "the probe's result" grep -q "^ok on node $(hostname) started=[0-9]*\$" "$r/logs/probe-101.result"
tasks "$r"
ok "the workers wrote one record per version" test "$(ls "$r"/records/*.json | wc -l)" = 4
run 1 import "$r"
out_has "import: 4 imported, 0 refused, 0 versions without a record; worst verdict: not-reproducible (exit 1)"
out_has "reports of the versions that did not reproduce or could not be audited:"
out_has "audit german-numeric-logistic-s3: NOT REPRODUCIBLE (exit 1)"
out_lacks "waited"
ok "status 1 and the report in the run directory" sh -c "test \$(cat '$r/status') = 1 && cmp -s out '$r/report.txt'"
ok "the import released the lock" test ! -e "$shared/rebuild-audit.lock"
cp "$r/report.txt" report1.txt
# the finished run imported again: its outcome stands (status, report)
run 1 import "$r"
out_has "nothing to import '$r/records'"
out_has "worst verdict: not-reproducible (exit 1)"
out_has "the run's outcome stands: status 1, its report '$r/report.txt'"
ok "imported again: status still 1, report unchanged" sh -c "test \$(cat '$r/status') = 1 && cmp -s report1.txt '$r/report.txt'"
run 1 $RBA -S st history import "$r/records" -p w.pub
out_has "nothing to import '$r/records': its 4 records were imported before and every version is covered; worst verdict: not-reproducible (exit 1)"
# --rerun --wait of the finished run (the value after '='): the jobs run
# by hand while the submit waits (squeue says they are queued); it exits
# with the run's outcome, and RUN/status and RUN/report.txt are as they
# were, also when the rerun's probe fails
rm -f "$STUB_LOG"
echo '* PENDING Dependency' > queue
( sub --rerun="$r" --wait > rerun.out 2> rerun.err; echo $? > rerun.rc ) &
i=0
until grep -q '^rerun_import_job=' "$r/manifest" 2> /dev/null; do
	i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
ij=$(sed -n 's/^rerun_import_job=//p' "$r/manifest" | tail -n 1)
ok "the rerun was submitted" test -n "$ij"
ok "submitting the rerun left the status alone" test "$(cat "$r/status")" = 1
ok "the rerun's probe job is in the manifest" test -n "$(sed -n 's/^rerun_probe_job=//p' "$r/manifest")"
probe "$r" > /dev/null
tasks "$r" .rerun-x
SLURM_JOB_ID=$ij sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$r" > "$r/logs/import.rerun-$ij.out" 2>&1
wait
: > queue
ok "--rerun --wait of a finished run exits with its outcome" test "$(cat rerun.rc)" = 1
ok "its status stays 1" test "$(cat "$r/status")" = 1
ok "its report is unchanged" cmp -s report1.txt "$r/report.txt"
ok "--wait prints that the outcome stands" grep -q "the run's outcome stands: status 1" rerun.out
ok "--wait prints the run's report" grep -q "audit german-numeric-logistic-s3: NOT REPRODUCIBLE (exit 1)" rerun.out
ok "the rerun's import released the lock" test ! -e "$shared/rebuild-audit.lock"
ok "--wait recorded the jobs' pending reasons" grep -q " probe job [0-9]* PENDING Dependency\$" "$r/logs/queue.log"
# a rerun of the finished run whose probe fails: the outcome stands
run 0 sub --rerun "$r" --tasks 1
rpj=$(sed -n 's/^rerun_probe_job=//p' "$r/manifest" | tail -n 1)
echo "$rpj TIMEOUT" > ended
run 2 import "$r"
out_has "the node probe (job $rpj) ended without a result (JobState=TIMEOUT"
out_has "the run's outcome stands: status 1"
ok "a rerun whose probe failed: status and report unchanged" sh -c "test \$(cat '$r/status') = 1 && cmp -s report1.txt '$r/report.txt'"
: > ended

# a busy cluster: the probe pends; the night is delayed, not skipped,
# and the report says how long it waited and why
clean_runs
rm -f "$STUB_LOG" "$STUB_LOG.id"
echo '101 PENDING Resources' > queue
run 0 sub st "$shared" 4 w.key w.pub
out_has "the probe job 101 is pending (Reason=Resources): the array and the import wait for it"
r=$(lastrun)
ok "busy: the array and the import are queued after the probe" sh -c "grep -q -- '--dependency=afterok:101 ' '$STUB_LOG' && grep -q -- '--dependency=afterany:102 ' '$STUB_LOG'"
ok "busy: the reason is recorded" grep -q " probe job 101 PENDING Resources\$" "$r/logs/queue.log"
: > queue
# it started an hour and a minute after it was submitted
echo "probe_submitted=$(( $(date +%s) - 3660 ))" >> "$r/manifest"
probe "$r" > /dev/null
tasks "$r"
run 1 import "$r"
out_has "the night waited 1h 1m for a node: the probe job 101 was submitted at "
out_has "; Slurm's pending reason: Resources"
out_has "import: 4 imported"

# worker diagnostics of an earlier attempt of a shard rerun since are
# marked old; those of a shard not rerun are not
echo "rebuild-audit: cannot audit 'german-numeric-mlp-s1': first attempt failed" >> "$r/logs/shard-1.err"
echo "rebuild-audit: cannot audit 'german-categorical-mlp-s2': still the word of shard 2" >> "$r/logs/shard-2.err"
run 0 sub --no-probe --rerun "$r" --tasks 1
ra=$(sed -n 's/^rerun_array_job=//p' "$r/manifest" | tail -n 1)
SLURM_ARRAY_TASK_ID=1 sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r" > "$r/logs/shard-1.rerun-$ra.out" 2> "$r/logs/shard-1.rerun-$ra.err"
rm -rf "$r/status"
run 1 import "$r"
ok "the current line under 'the workers said:'" sh -c "grep -A1 -x 'the workers said:' out | grep -qx \"rebuild-audit: cannot audit 'german-categorical-mlp-s2': still the word of shard 2\""
out_has "the workers said in earlier attempts of shards rerun since (old):"
out_has "old (shard 1, array job 102, rerun since): rebuild-audit: cannot audit 'german-numeric-mlp-s1': first attempt failed"
ok "an old line is not among the current ones" sh -c "! grep -q '^rebuild-audit: cannot audit .german-numeric-mlp-s1' out"
ok "no --no-probe rerun reads an older probe" sh -c "grep -qx 'rerun_probe_job=' '$r/manifest'"
clean_runs

# an import cancelled while pending, under --wait: noticed at once (not
# after a minute), named with its JobState, the lock released, and the
# command that finishes the night printed; that command works
rm -f "$STUB_LOG" "$STUB_LOG.id"
echo '* PENDING Dependency' > queue
t0=$(date +%s)
( sub --no-probe --wait st "$shared" 4 w.key w.pub > cw.out 2> cw.err; echo $? > cw.rc ) &
i=0
until grep -q '^import_job=' "$(lastrun 2> /dev/null)/manifest" 2> /dev/null; do
	i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
r=$(lastrun)
aj=$(sed -n 's/^array_job=//p' "$r/manifest") ij=$(sed -n 's/^import_job=//p' "$r/manifest")
sleep 2
echo "$aj RUNNING None" > queue
echo "$ij CANCELLED" > ended
sleep 2
ok "the import gone while the array runs: the lock is kept" test -e "$shared/rebuild-audit.lock"
tasks "$r"
: > queue
wait
ok "a cancelled import: --wait exits 2" test "$(cat cw.rc)" = 2
ok "a cancelled import: noticed within seconds, not a minute" test $(( $(date +%s) - t0 )) -lt 30
ok "a cancelled import: one line, its JobState, the lock, the command" sh -c "test \$(wc -l < cw.err) = 1 && grep -qx \"rebuild-audit-fleet-submit: the import job $ij ended without a status (JobState=CANCELLED): nothing was imported and the lock is released; to finish the night: '$TOP/contrib/slurm/rebuild-audit-fleet-submit' --rerun '$r' --wait\" cw.err"
ok "a cancelled import: the lock is released" test ! -e "$shared/rebuild-audit.lock"
: > ended
# the stale-lock note of a run without an outcome names the same command
mkdir "$shared/rebuild-audit.lock"
printf 'run=%s\narray_job=%s\nimport_job=%s\nhost=elsewhere\npid=1\n' "$r" "$aj" "$ij" > "$shared/rebuild-audit.lock/owner"
echo "$ij CANCELLED" > ended
run 0 sub --no-probe --rerun "$r" --tasks 0
err_has "rebuild-audit-fleet-submit: taking over the stale lock of run '$r' (its jobs or its submit process are gone); that run has no outcome (its import job $ij ended with JobState=CANCELLED without a status): to finish it, '$TOP/contrib/slurm/rebuild-audit-fleet-submit' --rerun '$r' --wait"
: > ended
# the printed command finishes the night
rm -rf "$shared/rebuild-audit.lock"
cmd=$(sed -n "s/.*to finish the night: //p" cw.err)
echo '* PENDING Dependency' > queue
( eval "sub${cmd#*rebuild-audit-fleet-submit\'}" > fin.out 2> fin.err; echo $? > fin.rc ) &
i=0
until [ "$(grep -c '^rerun_import_job=' "$r/manifest")" = 2 ]; do
	i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
fij=$(sed -n 's/^rerun_import_job=//p' "$r/manifest" | tail -n 1)
probe "$r" > /dev/null
SLURM_JOB_ID=$fij sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$r" > /dev/null 2>&1
wait
: > queue
ok "the printed command finishes the night: the run's status" sh -c "test \$(cat fin.rc) = 1 && test \$(cat '$r/status') = 1"
ok "it imported the run's four records" grep -q "import: 4 imported" fin.out
clean_runs

# memory: 128M for the probe and the tasks, the import 128M + 1M per 10
# versions; a passphrase key adds the key derivation's 1 GiB to the probe
# and the tasks only (the import never decrypts it); variables override
echo pass > pp
$RBA keygen -o pw --passphrase-file pp > /dev/null 2>&1
rm -f "$STUB_LOG" "$STUB_LOG.id"
RBA_PASSPHRASE_FILE=$PWD/pp
run 0 sub st "$shared" 4 pw.key pw.pub
ok "passphrase key: the probe and the array ask for 1152M" test "$(grep -c -- '--mem=1152M' "$STUB_LOG")" = 2
ok "passphrase key: the import asks for 129M, not 1.5G" sh -c "grep -- '--dependency=afterany' '$STUB_LOG' | grep -q -- '--mem=129M '"
RBA_PASSPHRASE_FILE=
clean_runs
rm -f "$STUB_LOG" "$STUB_LOG.id"
RBA_SHARD_MEM=300M RBA_IMPORT_MEM=2G
run 0 sub st "$shared" 4 w.key w.pub
ok "RBA_SHARD_MEM and RBA_IMPORT_MEM override" sh -c "test \$(grep -c -- '--mem=300M' '$STUB_LOG') = 2 && grep -- '--dependency=afterany' '$STUB_LOG' | grep -q -- '--mem=2G '"
RBA_SHARD_MEM= RBA_IMPORT_MEM=
clean_runs
rm -f "$STUB_LOG" "$STUB_LOG.id"
RBA_MEM=700M
run 0 sub st "$shared" 4 w.key w.pub
ok "RBA_MEM: every job" test "$(grep -c -- '--mem=700M' "$STUB_LOG")" = 3
RBA_MEM=
clean_runs

# a record the import refuses is set aside (RUN/records/refused/), its
# version named with its shard and the exact rerun command; that rerun
# audits it again and the run's outcome is then the whole run's
rm -f "$STUB_LOG"
run 0 sub --no-probe st "$shared" 4 w.key w.pub
r2=$(sed -n "s/^submitted run '\(.*\)': array job .*/\1/p" out)
tasks "$r2"
f=$(ls "$r2"/records/german-numeric-mlp-s1.*.json)
sed -E 's/"flips": 0,/"flips": 7,/; s/("artifact_rebuilt": "sha256:)[0-9a-f]{64}/\1eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/' "$f" > forged.json
minisign -S -s w.key -m forged.json -t "$(sed -n '3s/^trusted comment: //p' "$f.minisig")" > /dev/null 2>&1
mv forged.json "$f"
mv forged.json.minisig "$f.minisig"
run 2 import "$r2"
out_has "rebuild-audit: refused record '$f': inconsistent:"
k1=
for k in 0 1 2 3; do $RBA -S "$r2/snapshot" audit --all --shard $k/4 --list | grep -qx german-numeric-mlp-s1 && k1=$k; done
out_has "rebuild-audit: not audited 'german-numeric-mlp-s1': its record was refused; rerun shard $k1/4"
out_has "  '$TOP/contrib/slurm/rebuild-audit-fleet-submit' --rerun '$r2' --tasks $k1 --wait"
out_has "set aside $r2/records/refused/$(basename "$f")"
ok "the refused record is set aside with a note" test -f "$r2/records/refused/$(basename "$f").why"
ok "status 2" test "$(cat "$r2/status")" = 2
# what the first attempt printed of it (as if it had not reproduced)
printf 'audit german-numeric-mlp-s1: NOT REPRODUCIBLE (exit 1)\nthe first attempt said so\n' >> "$r2/logs/shard-$k1.out"
rm -f "$STUB_LOG"
run 0 sub --no-probe --rerun "$r2" --tasks $k1
ra2=$(sed -n 's/^rerun_array_job=//p' "$r2/manifest" | tail -n 1)
SLURM_ARRAY_TASK_ID=$k1 sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r2" > "$r2/logs/shard-$k1.rerun-$ra2.out" 2> "$r2/logs/shard-$k1.rerun-$ra2.err"
run 1 import "$r2"
out_has "import: 1 imported, 0 refused, 0 versions without a record; worst verdict: not-reproducible (exit 1), with the 3 records imported before"
# the report of the record set aside, from before the rerun: old
out_has "old (shard $k1, array job $(sed -n 's/^array_job=//p' "$r2/manifest"), audited again since): audit german-numeric-mlp-s1: NOT REPRODUCIBLE (exit 1)"
out_has "old: the first attempt said so"
ok "a current report is not marked" grep -qx "audit german-numeric-logistic-s3: NOT REPRODUCIBLE (exit 1)" out
out_has "records set aside by an import of this run"
out_has "refused by history import: inconsistent:"
ok "the whole run's status" test "$(cat "$r2/status")" = 1
run 2 env SLURM_ARRAY_TASK_ID=4 sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r2"
err_is "rebuild-audit-shard: task 4 is no shard of 4"
chmod -R u+w "$r2" && rm -rf "$r2"
run 2 sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$PWD/nothing"
err_has "no manifest '$PWD/nothing/manifest'"
run 2 sh "$TOP/contrib/slurm/rebuild-audit-probe.sbatch" "$PWD/nothing"
err_is "rebuild-audit-probe: on node $(hostname): no manifest '$PWD/nothing/manifest': is the shared directory mounted here?"

# a stale lock (its jobs gone) is taken over; a failed import
# submission cancels the array and the probe, and releases the lock
mkdir "$shared/rebuild-audit.lock"
printf 'run=/old/run\narray_job=7\nimport_job=8\nhost=elsewhere\npid=1\n' > "$shared/rebuild-audit.lock/owner"
rm -f "$STUB_LOG"
run 2 sub --import-opt=--partition=nosuch st "$shared" 4 w.key w.pub
err_has "rebuild-audit-fleet-submit: taking over the stale lock of run '/old/run' (its jobs or its submit process are gone)"
err_has "rebuild-audit-fleet-submit: cannot submit the import: sbatch: error: invalid partition specified: nosuch; cancelled the array job"
a=$(sed -n 's/.*cancelled the array job \([0-9]*\) and the probe job \([0-9]*\),.*/\1 \2/p' err)
ok "the array and the probe were cancelled" grep -qx "scancel $a" stub.log
ok "the lock is released" test ! -e "$shared/rebuild-audit.lock"
rr=$(lastrun)
ok "the manifest says so" grep -q '^state=cancelled' "$rr/manifest"
# the rerun of a run: only the tasks given, logs beside the first
echo 2 > "$rr/status"
rm -f "$STUB_LOG"
run 0 sub --no-probe --rerun "$rr" --tasks 1,3
out_has "(tasks 1,3 of 4 shards)"
ok "the rerun's array" sh -c "grep '^sbatch' stub.log | head -n 1 | grep -q -- '--array=1,3 .*--output=$rr/logs/shard-%a.rerun-%A.out'"
ok "the rerun's job ids in the manifest" grep -q '^rerun_array_job=' "$rr/manifest"
run 2 sub --rerun "$PWD/st"
err_has "no manifest in '$PWD/st': not a run directory"
run 2 sub --rerun "$rr" st
err_is "rebuild-audit-fleet-submit: --rerun takes no STORE SHARED N WORKER.key WORKER.pub (the run's manifest has them), not 'st'"
chmod -R u+w . 2> /dev/null
