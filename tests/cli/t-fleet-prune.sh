# store snapshot --prune KEEP DIR: old runs (snapshots with their records)
# removed from a shared directory, the newest KEEP kept, and never the run
# the lock names, a run with records not imported, or anything a symbolic
# link points to; read-only snapshots removed by their non-root owner.
sh "$TOP/tests/fleet-store.sh" "$RBA" st 1 1 > /dev/null 2>&1
mkdir sh outside
echo keep > outside/precious
as=
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	# as root, the owner is nobody: root would remove read-only files anyway
	chown -R 65534:65534 st sh
	chmod 755 .
	as="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
i=1
for r in run-20261101T021500Z run-20261102T021500Z run-20261103T021500Z run-20261104T021500Z; do
	$as mkdir -p "sh/$r/records/imported" "sh/$r/logs"
	$as $RBA -S st -q store snapshot "sh/$r/snapshot" > /dev/null
	$as touch -d "2026-11-0$i 02:15" "sh/$r/snapshot/rebuild-audit-snapshot"
	i=$((i + 1))
done
$as touch sh/run-20261101T021500Z/records/imported/a.0000000000000000.json
# a bare snapshot of the old layout with its records sibling
$as $RBA -S st -q store snapshot sh/snapshot-20261001T000000Z > /dev/null
$as touch -d "2026-10-01" sh/snapshot-20261001T000000Z/rebuild-audit-snapshot
$as mkdir sh/records-20261001T000000Z
# a symbolic link inside an old run: removed, its target kept
$as ln -s "$PWD/outside" sh/run-20261101T021500Z/logs/link
# not runs: left alone
$as mkdir sh/unrelated
ok "snapshots are read-only" test "$(stat -c %a sh/run-20261101T021500Z/snapshot)" = 555

run 2 $RBA store snapshot --prune 0 sh
err_has "--prune takes KEEP, the number of newest runs kept (1 or more)"
run 2 $RBA store snapshot --prune x sh
err_has "--prune takes KEEP"
run 2 $RBA store snapshot --prune 2
err_has "needs the shared DIR"
run 2 $RBA store snapshot --prune 2 nowhere
err_has "rebuild-audit: cannot prune 'nowhere'"

run 0 $as $RBA store snapshot --prune 2 sh --dry-run
out_has "would remove 'sh/snapshot-20261001T000000Z' with its records 'sh/records-20261001T000000Z'"
out_has "would remove 'sh/run-20261101T021500Z' with its records 'sh/run-20261101T021500Z/records'"
out_has "would remove 'sh/run-20261102T021500Z'"
out_has "prune 'sh': 5 runs, 0 removed (--dry-run), keeping the 2 newest"
ok "a dry run removes nothing" test -d sh/run-20261101T021500Z/snapshot

# the lock names the second oldest; the third has a record not imported
$as mkdir sh/rebuild-audit.lock
printf 'run=%s\nhost=h\npid=1\n' "$PWD/sh/run-20261102T021500Z" > lockowner
$as cp lockowner sh/rebuild-audit.lock/owner
$as mv sh/run-20261104T021500Z sh/run-20261104T021500Z.x
$as mv sh/run-20261104T021500Z.x sh/run-20261104T021500Z
run 0 $as $RBA store snapshot --prune 1 sh
out_has "removed 'sh/snapshot-20261001T000000Z' with its records 'sh/records-20261001T000000Z'"
out_has "removed 'sh/run-20261101T021500Z'"
out_has "removed 'sh/run-20261103T021500Z'"
out_has "prune 'sh': 5 runs, 3 removed, keeping the 1 newest"
ok "the old runs are gone" test ! -e sh/run-20261101T021500Z -a ! -e sh/snapshot-20261001T000000Z -a ! -e sh/records-20261001T000000Z
ok "the locked run stays" test -d sh/run-20261102T021500Z/snapshot
ok "the newest run stays" test -d sh/run-20261104T021500Z/snapshot
ok "what a link pointed to stays" test -f outside/precious
ok "a directory that is no run stays" test -d sh/unrelated
ok "the lock stays" test -f sh/rebuild-audit.lock/owner
$as rm -r sh/rebuild-audit.lock
$as touch sh/run-20261102T021500Z/records/b.0000000000000000.json
run 0 $as $RBA store snapshot --prune 1 sh
err_has "rebuild-audit: kept 'sh/run-20261102T021500Z': its records directory 'sh/run-20261102T021500Z/records' holds 1 record not imported"
out_has "prune 'sh': 2 runs, 0 removed, keeping the 1 newest"
$as rm sh/run-20261102T021500Z/records/b.0000000000000000.json
run 0 $as $RBA -q store snapshot --prune 1 sh
out_empty
ok "only the newest run is left" test "$(ls sh)" = "run-20261104T021500Z
unrelated"
run 0 $RBA -S sh/run-20261104T021500Z/snapshot version list
