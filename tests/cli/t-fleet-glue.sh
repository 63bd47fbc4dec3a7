# contrib/slurm/ without a cluster: sbatch, squeue, scancel and srun are
# stand-ins (bin/), the jobs are run here by hand from the run's
# manifest.  The submit's preflight (usage, a wrong key pair, a node
# without the tool), the lock (an overlapping submit refused with its
# holder, a stale one taken over), the manifest in a path with a space
# and commas, the options of each job, a failed import submission (the
# array cancelled), and a whole run: shards, import, report, status.
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
cat > bin/squeue <<'STUB'
#!/bin/sh
[ -n "${STUB_ALIVE:-}" ] && echo "$STUB_ALIVE"
exit 0
STUB
cat > bin/scancel <<'STUB'
#!/bin/sh
echo "scancel $*" >> "$STUB_LOG"
STUB
cat > bin/srun <<'STUB'
#!/bin/sh
echo "srun $*" >> "$STUB_LOG"
[ -z "${STUB_SRUN_FAIL:-}" ] || { echo "srun: error: Unable to allocate resources: $STUB_SRUN_FAIL" >&2; exit 1; }
export STUB_ON_NODE=1
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
[ -n "${STUB_NODE_PATH:-}" ] && PATH=$STUB_NODE_PATH
exec "$@"
STUB
chmod +x bin/*
ln -s "$TOP/contrib/slurm/rebuild-audit-fleet-submit" bin/nightly
export STUB_LOG="$PWD/stub.log"
sub() { env -i PATH="$PWD/bin:/usr/bin:/bin" STUB_LOG="$STUB_LOG" RBA="$RBA" ${STUB_ALIVE:+STUB_ALIVE=$STUB_ALIVE} RBA_WAIT_POLL=1 \
	${STUB_SRUN_FAIL:+STUB_SRUN_FAIL="$STUB_SRUN_FAIL"} nightly "$@"; }

run 2 sub
err_has "usage: rebuild-audit-fleet-submit"
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
err_has "no rebuild-audit-shard.sbatch in '/nonexistent'"
# the probe cannot get a node: said, nothing submitted or left
STUB_SRUN_FAIL="Requested node configuration is not available"
run 2 sub st "$shared" 4 w.key w.pub
err_is "rebuild-audit-fleet-submit: the node probe did not run (srun: error: Unable to allocate resources: Requested node configuration is not available): is the partition up? RBA_PROBE_WAIT=SECONDS waits longer for a node, --no-probe skips the probe; nothing was submitted"
ok "no probe: no job, no run directory, no lock" sh -c "! grep -q '^sbatch' '$STUB_LOG' && test -z \"\$(ls '$shared')\""
STUB_SRUN_FAIL=

# a node with another version of the tool (a wrapper that says so there)
printf '#!/bin/sh\nif [ -n "${STUB_ON_NODE:-}" ] && [ "$1" = --version ]; then echo "rebuild-audit 0.0.1 (revision old)"; exit 0; fi\nexec "%s" "$@"\n' "$RBA" > oldnode
chmod +x oldnode
run 2 env -i PATH="$PWD/bin:/usr/bin:/bin" STUB_LOG="$STUB_LOG" RBA="$PWD/oldnode" nightly st "$shared" 4 w.key w.pub
err_has "rebuild-audit-fleet-submit: the compute nodes cannot run this audit (on node $(hostname): $PWD/oldnode is rebuild-audit 0.0.1 (revision old), not $($RBA --version | head -n 1) as here"
ok "another version: no run directory left" test -z "$(ls "$shared")"

# a run: the manifest, the jobs' options, the lock
rm -f "$STUB_LOG" "$STUB_LOG.id"
run 0 sub --mail-type=END --array-opt=--partition=p1 --import-opt=--nodelist=storehost st "$shared" 4 w.key w.pub
out_has "submitted run '$shared/run-"
out_has "array job 101 (tasks 0-3 of 4 shards), import job 102"
r=$(ls -d "$shared"/run-*)
mf() { sed -n "s/^$1=//p" "$r/manifest"; }
ok "manifest: the paths as given, commas and space kept" test "$(mf snapshot)" = "$r/snapshot" -a "$(mf records)" = "$r/records" -a "$(mf store)" = "$PWD/st"
ok "manifest: shards, tool, job ids" test "$(mf shards)" = 4 -a "$(mf tool)" = "$RBA" -a "$(mf array_job)" = 101 -a "$(mf import_job)" = 102
ok "manifest: the head the snapshot holds" test "$(mf head)" = "$($RBA -S "$r/snapshot" -q history head)"
ok "the probe ran with the array's partition only" grep -q '^srun .*--partition=p1 .*sh -c' stub.log
ok "the array: its tasks, memory, logs in the run, its option only" sh -c "grep '^sbatch .*--array=0-3 ' stub.log | grep -q -- '--mem=512M .*--output=$r/logs/shard-%a.out .*--partition=p1 .*rebuild-audit-shard.sbatch $r\$'"
ok "the array does not get the import's option" sh -c "! grep '^sbatch .*--array' stub.log | grep -q nodelist"
ok "the import: after the array, mail, its option only" sh -c "grep '^sbatch .*--dependency=afterany:101 ' stub.log | grep -q -- '--output=$r/logs/import.out --mail-type=END --nodelist=storehost .*rebuild-audit-import.sbatch $r\$'"
ok "the import does not get the array's option" sh -c "! grep '^sbatch .*--dependency' stub.log | grep -q partition"
ok "the lock names the run and its jobs" sh -c "grep -qx 'run=$r' '$shared/rebuild-audit.lock/owner' && grep -qx 'array_job=101' '$shared/rebuild-audit.lock/owner'"

# an overlapping submit while the jobs run: refused, nothing spent
rm -f "$STUB_LOG"
STUB_ALIVE=101
run 2 sub st "$shared" 4 w.key w.pub
err_has "rebuild-audit-fleet-submit: another run holds the lock '$shared/rebuild-audit.lock': run '$r', array job 101, import job 102, host $(hostname), pid "
ok "overlap: no job, no directory" sh -c "test ! -e '$STUB_LOG' && test \$(ls -d '$shared'/run-* | wc -l) = 1"
STUB_ALIVE=

# the jobs, by hand: every task, then the import
for k in 0 1 2 3; do
	SLURM_ARRAY_TASK_ID=$k sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r" > "$r/logs/shard-$k.out" 2> "$r/logs/shard-$k.err"
done
ok "the workers wrote one record per version" test "$(ls "$r"/records/*.json | wc -l)" = 4
run 1 sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$r"
out_has "import: 4 imported, 0 refused, 0 versions without a record; worst verdict: not-reproducible (exit 1)"
out_has "reports of the versions that did not reproduce or could not be audited:"
out_has "audit german-numeric-logistic-s3: NOT REPRODUCIBLE (exit 1)"
ok "status 1 and the report in the run directory" sh -c "test \$(cat '$r/status') = 1 && cmp -s out '$r/report.txt'"
ok "the import released the lock" test ! -e "$shared/rebuild-audit.lock"
cp "$r/report.txt" report1.txt
# the finished run imported again: its outcome stands (status, report)
run 1 sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$r"
out_has "nothing to import '$r/records'"
out_has "worst verdict: not-reproducible (exit 1)"
out_has "the run's outcome stands: status 1, its report '$r/report.txt'"
ok "imported again: status still 1, report unchanged" sh -c "test \$(cat '$r/status') = 1 && cmp -s report1.txt '$r/report.txt'"
run 1 $RBA -S st history import "$r/records" -p w.pub
out_has "nothing to import '$r/records': its 4 records were imported before and every version is covered; worst verdict: not-reproducible (exit 1)"
# --rerun --wait of the finished run: the jobs run by hand while the
# submit waits (squeue says they are queued); it exits with the run's
# outcome, and RUN/status and RUN/report.txt are as they were
rm -f "$STUB_LOG"
( STUB_ALIVE=1; sub --no-probe --rerun "$r" --wait > rerun.out 2> rerun.err; echo $? > rerun.rc ) &
i=0
until grep -q '^rerun_import_job=' "$r/manifest" 2> /dev/null; do
	i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
ij=$(sed -n 's/^rerun_import_job=//p' "$r/manifest" | tail -n 1)
ok "the rerun was submitted" test -n "$ij"
ok "submitting the rerun left the status alone" test "$(cat "$r/status")" = 1
for k in 0 1 2 3; do
	SLURM_ARRAY_TASK_ID=$k sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r" > "$r/logs/shard-$k.rerun-x.out" 2> "$r/logs/shard-$k.rerun-x.err"
done
SLURM_JOB_ID=$ij sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$r" > "$r/logs/import.rerun-$ij.out" 2>&1
wait
ok "--rerun --wait of a finished run exits with its outcome" test "$(cat rerun.rc)" = 1
ok "its status stays 1" test "$(cat "$r/status")" = 1
ok "its report is unchanged" cmp -s report1.txt "$r/report.txt"
ok "--wait prints that the outcome stands" grep -q "the run's outcome stands: status 1" rerun.out
ok "--wait prints the run's report" grep -q "audit german-numeric-logistic-s3: NOT REPRODUCIBLE (exit 1)" rerun.out
ok "the rerun's import released the lock" test ! -e "$shared/rebuild-audit.lock"

# a record the import refuses is set aside (RUN/records/refused/), its
# version named with its shard and the exact rerun command; that rerun
# audits it again and the run's outcome is then the whole run's
rm -f "$STUB_LOG"
run 0 sub --no-probe st "$shared" 4 w.key w.pub
r2=$(sed -n "s/^submitted run '\(.*\)': array job .*/\1/p" out)
for k in 0 1 2 3; do
	SLURM_ARRAY_TASK_ID=$k sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r2" > "$r2/logs/shard-$k.out" 2> "$r2/logs/shard-$k.err"
done
f=$(ls "$r2"/records/german-numeric-mlp-s1.*.json)
sed -E 's/"flips": 0,/"flips": 7,/; s/("artifact_rebuilt": "sha256:)[0-9a-f]{64}/\1eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/' "$f" > forged.json
minisign -S -s w.key -m forged.json -t "$(sed -n '3s/^trusted comment: //p' "$f.minisig")" > /dev/null 2>&1
mv forged.json "$f"
mv forged.json.minisig "$f.minisig"
run 2 sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$r2"
out_has "rebuild-audit: refused record '$f': inconsistent:"
k1=
for k in 0 1 2 3; do $RBA -S "$r2/snapshot" audit --all --shard $k/4 --list | grep -qx german-numeric-mlp-s1 && k1=$k; done
out_has "rebuild-audit: not audited 'german-numeric-mlp-s1': its record was refused; rerun shard $k1/4"
out_has "  '$TOP/contrib/slurm/rebuild-audit-fleet-submit' --rerun '$r2' --tasks $k1 --wait"
out_has "set aside $r2/records/refused/$(basename "$f")"
ok "the refused record is set aside with a note" test -f "$r2/records/refused/$(basename "$f").why"
ok "status 2" test "$(cat "$r2/status")" = 2
rm -f "$STUB_LOG"
run 0 sub --no-probe --rerun "$r2" --tasks $k1
SLURM_ARRAY_TASK_ID=$k1 sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r2" > "$r2/logs/shard-$k1.rerun.out" 2> "$r2/logs/shard-$k1.rerun.err"
run 1 sh "$TOP/contrib/slurm/rebuild-audit-import.sbatch" "$r2"
out_has "import: 1 imported, 0 refused, 0 versions without a record; worst verdict: not-reproducible (exit 1), with the 3 records imported before"
out_has "records set aside by an import of this run"
out_has "refused by history import: inconsistent:"
ok "the whole run's status" test "$(cat "$r2/status")" = 1
chmod -R u+w "$r2" && rm -rf "$r2"
run 2 env SLURM_ARRAY_TASK_ID=4 sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$r"
err_is "rebuild-audit-shard: task 4 is no shard of 4"
run 2 sh "$TOP/contrib/slurm/rebuild-audit-shard.sbatch" "$PWD/nothing"
err_has "no manifest '$PWD/nothing/manifest'"

# a stale lock (its jobs gone) is taken over; a failed import
# submission cancels the array and releases the lock
mkdir "$shared/rebuild-audit.lock"
printf 'run=/old/run\narray_job=7\nimport_job=8\nhost=elsewhere\npid=1\n' > "$shared/rebuild-audit.lock/owner"
rm -f "$STUB_LOG"
run 2 sub --import-opt=--partition=nosuch st "$shared" 4 w.key w.pub
err_has "rebuild-audit-fleet-submit: taking over the stale lock of run '/old/run' (its jobs or its submit process are gone)"
err_has "rebuild-audit-fleet-submit: cannot submit the import: sbatch: error: invalid partition specified: nosuch; cancelled the array job"
a=$(sed -n 's/.*cancelled the array job \([0-9]*\),.*/\1/p' err)
ok "the array was cancelled" grep -qx "scancel $a" stub.log
ok "the lock is released" test ! -e "$shared/rebuild-audit.lock"
ok "the manifest says so" sh -c "grep -q '^state=cancelled' \"\$(ls -dt '$shared'/run-* | head -n 1)/manifest\""
# the rerun of a run: only the tasks given, logs beside the first
rm -f "$STUB_LOG"
run 0 sub --no-probe --rerun "$r" --tasks 1,3
out_has "(tasks 1,3 of 4 shards)"
ok "the rerun's array" sh -c "grep '^sbatch' stub.log | head -n 1 | grep -q -- '--array=1,3 .*--output=$r/logs/shard-%a.rerun-%A.out'"
ok "the rerun's job ids in the manifest" grep -q '^rerun_array_job=' "$r/manifest"
run 2 sub --rerun "$PWD/st"
err_has "no manifest in '$PWD/st': not a run directory"
chmod -R u+w . 2> /dev/null
