# t-exec-attacks.sh - `make check-exec-attacks`: a catalogue of hostile
# trainers and repositories, each with the one line the tool prints and
# the store unchanged (mdb_dump -a equal), or, where the attack is
# contained rather than refused, what the trainer saw.  Sandbox outputs
# (links, FIFOs, directories, a late swap), the environment of every
# process inside, every writable place filled, a fork bomb, the network,
# host files, daemons, sleeps; git: filters and attributes in
# .git/config, .git/info/attributes and .gitattributes, hooks and
# fsmonitor, replace refs, export-subst and export-ignore, a tag moved,
# a FIFO in the object store, entries git would not check out, a
# repository of another owner.  Needs bubblewrap and git (make deps).
CSV=$FIX/german-credit-numeric.csv
mkdir -p tmp
TMPDIR=$PWD/tmp
export TMPDIR

gc() { r=$1; shift; git -C "$r" -c user.name=test -c user.email=test@example.org "$@"; }
dump() { mdb_dump -a st > "$1" 2>&1; }
same_store() { dump after.dump; ok "$1: the store is unchanged" cmp -s before.dump after.dump; }
one_line() { ok "$1: one line on stderr" test "$(wc -l < err)" -eq 1; }
no_leftovers() {
	i=0
	while [ $i -lt 50 ] && ps -eo args | grep -v grep | grep -q 'attack.sh'; do
		sleep 0.1
		i=$((i + 1))
	done
	ok "$1: no process of the sandbox is left" sh -c "! ps -eo args | grep -v grep | grep -q 'attack.sh'"
	ok "$1: no work directory is left" sh -c "[ -z \"\$(ls tmp)\" ]"
}

mkdir repo
cp "$TOP/tests/attacks/attack.sh" repo/
git -C repo init -q
gc repo add .
gc repo commit -q -m "hostile trainer"
C1=$(git -C repo rev-parse HEAD)

run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$CSV"
SNAP=$(grep -o 'sha256:[0-9a-f]*' out | head -n 1)
head -n 21 "$CSV" > cases.csv

# pins VERSION MODE [COMMIT [REPO]]: an opaque exec trainer running
# attack.sh MODE, scored by attack.sh $SCORE, under the limits $LIM
LIM='{seconds: 20, memory: 268435456, output: 4194304}'
SCORE=score
POL=$TOP/contrib/examples/xgboost/policy.yaml
pins() {
	cat <<EOF
schema: rebuild-audit/pins/v1
version: $1
snapshot: $SNAP
data: {label: class, positive: "2", id: id, split: {validation: 0.25, order: tail}}
train: {seed: 7}
trainer:
  kind: exec
  repository: ${4:-$PWD/repo}
  revision: ${3:-$C1}
  command: [/usr/bin/sh, attack.sh, $2, "{artifact}"]
  artifact: model.bin
  format: opaque
  environment: {variables: {RBA_DEPLOYED: $PWD/deployed.bin}}
  limits: $LIM
  score: {command: [/usr/bin/sh, attack.sh, $SCORE, "{artifact}", "{cases}", "{scores}"]}
EOF
}
echo "the deployed model" > deployed.bin

# refused MODE PHRASE: register refuses with one line, the store unchanged
refused() {
	pins "att-$1" "$1" > "p-$1.yaml"
	dump before.dump
	t0=$(date +%s)
	run 2 $RBA -S st register "p-$1.yaml"
	err_has "$2"
	one_line "$1"
	same_store "$1"
	ok "$1: answered within the time limit" test $(($(date +%s) - t0)) -lt 25
	no_leftovers "$1"
}
# contained MODE: registers, and the artifact says what the trainer saw
contained() {
	pins "att-$1" "$1" > "p-$1.yaml"
	run 0 $RBA -S st register "p-$1.yaml" --policy "$POL"
	run 0 $RBA -S st version export-artifact "att-$1" "seen-$1"
	no_leftovers "$1"
}

# ---- what comes back out of the sandbox --------------------------------
refused link-shadow "left /out/model.bin as a symbolic link, not a regular file"
refused link-host "left /out/model.bin as a symbolic link, not a regular file"
refused link-in "left /out/model.bin as a symbolic link, not a regular file"
refused link-metrics "left /out/metrics.json as a symbolic link, not a regular file"
refused fifo "left /out/model.bin as a FIFO, not a regular file"
refused fifo-metrics "left /out/metrics.json as a FIFO, not a regular file"
refused dir "left /out/model.bin as a directory, not a regular file"
LIM='{seconds: 3, memory: 268435456, output: 4194304}'
refused sleep "killed at the time limit of 3 s (limits.seconds)"
LIM='{seconds: 20, memory: 268435456, output: 4194304}'

# the scorer's /out/scores.txt: a link or a FIFO is refused as well
contained honest
run 0 $RBA -S st --json version show att-honest
jq '{artifact: .artifact}' out > reg-honest.json
run 0 $RBA -S st sample add att-honest cases.csv
out_has '20 cases'
for m in link fifo; do
	SCORE=score-$m
	pins "att-score-$m" honest > "p-score-$m.yaml"
	run 0 $RBA -S st register "p-score-$m.yaml" --policy "$POL"
	dump before.dump
	run 2 $RBA -S st sample add "att-score-$m" cases.csv
	err_has "left /out/scores.txt as a"
	one_line "score-$m"
	same_store "score-$m"
	no_leftovers "score-$m"
done
SCORE=score

# a link made after the trainer exited, by a child it left: the child is
# killed before anything is read, so the file read is the one it wrote
contained late
ok "late: the artifact is what the trainer wrote, not a link's target" \
	sh -c "[ \"\$(cat seen-late)\" = 'a model' ]"
contained hardlink
ok "hardlink: no hard link reaches an input from /out" grep -qx 'no hard link across' seen-hardlink

# the tool's environment reaches no process of the sandbox
RBA_SECRET_TOKEN=s3cr3t-value
export RBA_SECRET_TOKEN
contained environ
ok "environ: no variable of the tool in any process of the sandbox" \
	sh -c "! grep -q 'RBA_SECRET_TOKEN\|s3cr3t' seen-environ"
ok "environ: the declared variable is there" grep -q "^RBA_DEPLOYED=$PWD/deployed.bin\$" seen-environ
ok "environ: and the sandbox's own" grep -qx 'TZ=UTC' seen-environ
unset RBA_SECRET_TOKEN

# every writable place holds the output limit (4 MiB) at most, / none
contained fill
ok "fill: /tmp holds at most the output limit" awk '$1 == "/tmp" && $2 <= 4194304 { f = 1 } END { exit !f }' seen-fill
ok "fill: /dev/shm holds at most the output limit" awk '$1 == "/dev/shm" && $2 <= 4194304 { f = 1 } END { exit !f }' seen-fill
ok "fill: /out holds at most the output limit" awk '$1 == "/out" && $2 <= 4194304 { f = 1 } END { exit !f }' seen-fill
ok "fill: / is read-only" awk '$1 == "/" && $2 == 0 { f = 1 } END { exit !f }' seen-fill
contained files
ok "files: /out holds the output limit in all, not per file" \
	awk '$1 == "files" && $2 <= 4 { f = 1 } END { exit !f }' seen-files
df_before=$(df -k tmp | awk 'NR == 2 { print $3 }')

# a fork bomb meets limits.processes
LIM='{seconds: 20, memory: 268435456, output: 4194304, processes: 24}'
contained forks
LIM='{seconds: 20, memory: 268435456, output: 4194304}'
ok "forks: at most limits.processes processes at once" \
	awk '$1 == "forks" && $2 >= 8 && $2 <= 24 { f = 1 } END { exit !f }' seen-forks
run 0 $RBA -S st version show att-forks
out_has 'processes: 24'

contained net
ok "net: no network" grep -qx 'net closed' seen-net
contained hostread
ok "hostread: no host file but the system's" sh -c "[ \"\$(cat seen-hostread)\" = end ]"
contained daemon
ok "daemon: a daemon it left is gone" sh -c "! ps -eo args | grep -v grep | grep -q 'sleep 1000'"

# a trainer whose output changes every run, registered: not reproducible
contained random
run 0 $RBA -S st sample add att-random cases.csv
run 1 $RBA -S st audit att-random
out_has 'NOT REPRODUCIBLE'
out_has 'next step     rebuild-audit vary att-random (which factor of the rebuild changes the artifact)'
no_leftovers random

# ---- git: exactly the pinned commit ------------------------------------
# gitpins VERSION REPO COMMIT: the honest trainer of that commit
gitpins() { pins "$1" honest "$3" "$2"; }
MARK=$PWD/marker

# filters and hooks the repository's own configuration names
mkdir grepo
cp "$TOP/tests/attacks/attack.sh" grepo/
echo "plain text" > grepo/data.txt
git -C grepo init -q
printf '*.sh filter=evil\n*.txt filter=evil\n' > grepo/.gitattributes
gc grepo add .
gc grepo commit -q -m "attributes in the tree"
G1=$(git -C grepo rev-parse HEAD)
git -C grepo config filter.evil.smudge "sh -c 'touch $MARK.smudge; echo HIJACKED'"
git -C grepo config filter.evil.clean "sh -c 'touch $MARK.clean; cat'"
git -C grepo config filter.evil.process "sh -c 'touch $MARK.process'"
git -C grepo config core.fsmonitor "sh -c 'touch $MARK.fsmonitor'"
git -C grepo config core.hooksPath "$PWD/hooks"
mkdir -p hooks grepo/.git/info
for h in post-checkout pre-commit reference-transaction post-index-change; do
	printf '#!/bin/sh\ntouch %s.hook\n' "$MARK" > "hooks/$h"
	chmod +x "hooks/$h"
	cp "hooks/$h" "grepo/.git/hooks/$h"
done
printf '* filter=evil\n' > grepo/.git/info/attributes
gitpins git-filters "$PWD/grepo" "$G1" > pg.yaml
run 0 $RBA -S st --json register pg.yaml --policy "$POL"
ok "filters: no filter, hook or fsmonitor of the repository ran" sh -c "! ls $MARK.* 2>/dev/null | grep -q ."
run 0 $RBA -S st version export-artifact git-filters g1.bin
ok "filters: the code ran as committed" grep -qx 'a model' g1.bin
run 0 $RBA -S st sample add git-filters cases.csv
run 0 $RBA -S st audit git-filters
out_has 'bit-identical'
ok "filters: still none ran at audit" sh -c "! ls $MARK.* 2>/dev/null | grep -q ."

# export-subst and export-ignore: the files are the commit's blobs
mkdir srepo
cat > srepo/attack.sh <<'EOF'
#!/bin/sh
# the refs of the commit, as export-subst would fill them in
case $1 in
score) tail -n +2 "$3" | while IFS= read -r l; do echo 0.5; done > "$4" ;;
*) printf '%s\n' '$Format:%D$' > "$2"; cat ignored.txt >> "$2" ;;
esac
EOF
echo "kept" > srepo/ignored.txt
printf 'attack.sh export-subst\nignored.txt export-ignore\n' > srepo/.gitattributes
git -C srepo init -q
gc srepo add .
gc srepo commit -q -m "export attributes"
S1=$(git -C srepo rev-parse HEAD)
gitpins git-subst "$PWD/srepo" "$S1" > ps.yaml
run 0 $RBA -S st register ps.yaml --policy "$POL"
run 0 $RBA -S st version export-artifact git-subst s1.bin
ok "export-subst: the placeholder is as committed" grep -qxF '$Format:%D$' s1.bin
ok "export-ignore: the ignored file is there" grep -qx 'kept' s1.bin
gc srepo tag -a -m moved v1 "$S1"
gc srepo tag -f -a -m moved-again v1 "$S1"
run 0 $RBA -S st sample add git-subst cases.csv
run 0 $RBA -S st audit git-subst
out_has 'bit-identical'

# git replace: the pinned commit builds its own tree, not another's
mkdir rrepo
cp "$TOP/tests/attacks/attack.sh" rrepo/
git -C rrepo init -q
gc rrepo add .
gc rrepo commit -q -m "A"
RA=$(git -C rrepo rev-parse HEAD)
sed -i 's/echo "a model" > "$art"/echo "another model" > "$art"/' rrepo/attack.sh
gc rrepo commit -q -am "B"
RB=$(git -C rrepo rev-parse HEAD)
# version at A whose stored artifact is B's: not reproducible
gitpins git-replace-b "$PWD/rrepo" "$RB" > prb.yaml
run 0 $RBA -S st register prb.yaml
run 0 $RBA -S st version export-artifact git-replace-b b.bin
gitpins git-replace "$PWD/rrepo" "$RA" > pra.yaml
run 0 $RBA -S st register pra.yaml --artifact b.bin --policy "$POL"
run 0 $RBA -S st sample add git-replace cases.csv
run 1 $RBA -S st audit git-replace
out_has 'NOT REPRODUCIBLE'
gc rrepo replace "$RA" "$RB"
ok "replace: git itself now shows B's tree for A" \
	test "$(git -C rrepo rev-parse "$RA^{tree}")" = "$(git -C rrepo rev-parse "$RB^{tree}")"
run 1 $RBA -S st audit git-replace
out_has 'NOT REPRODUCIBLE'
run 1 $RBA -S st --json audit git-replace
ok "replace: the record names A's own tree" sh -c \
	"jq -e '.audits[0].trainer.tree == \"$(GIT_NO_REPLACE_OBJECTS=1 git -C rrepo rev-parse "$RA^{tree}")\"' out"

# an object rewritten in place: A's blob of attack.sh now holds B's bytes
# under A's name.  git cat-file hands the bytes over unchecked; the
# export hashes every object it reads, so the audit cannot say
# bit-identical for code that is not A's.
gc rrepo replace -d "$RA" > /dev/null
BA=$(git -C rrepo rev-parse "$RA:attack.sh")
git -C rrepo cat-file blob "$RB:attack.sh" | python3 -c '
import sys, zlib
d = sys.stdin.buffer.read()
sys.stdout.buffer.write(zlib.compress(b"blob %d\0" % len(d) + d))' > blob.z
obj=rrepo/.git/objects/$(printf %s "$BA" | cut -c1-2)/$(printf %s "$BA" | cut -c3-)
chmod u+w "$obj"
cp blob.z "$obj"
ok "rewritten object: git itself hands B's bytes over for A's blob" sh -c \
	"git -C rrepo cat-file blob $BA | grep -q 'another model'"
dump before.dump
run 2 $RBA -S st audit git-replace
err_has "blob $BA of commit $RA in repository $PWD/rrepo does not hash to its name"
out_lacks 'bit-identical'
dump before.dump
run 2 $RBA -S st register pra.yaml --replace
err_has "does not hash to its name"
one_line "rewritten object"
same_store "rewritten object"

# a FIFO in the object store: git would wait forever; the wait is bounded
mkdir frepo
cp "$TOP/tests/attacks/attack.sh" frepo/
git -C frepo init -q
gc frepo add .
gc frepo commit -q -m "F"
F1=$(git -C frepo rev-parse HEAD)
mkfifo frepo/.git/objects/info/alternates
LIM='{seconds: 3, memory: 268435456, output: 4194304}'
pins git-fifo honest "$F1" "$PWD/frepo" > pf.yaml
LIM='{seconds: 20, memory: 268435456, output: 4194304}'
dump before.dump
t0=$(date +%s)
run 2 $RBA -S st register pf.yaml
err_has 'than the time limit (limits.seconds)'
one_line git-fifo
same_store git-fifo
ok "git-fifo: answered within the time limit" test $(($(date +%s) - t0)) -lt 10
rm frepo/.git/objects/info/alternates

# entries git would not check out, made with git's plumbing
mkdir trepo
git -C trepo init -q
BLOB=$(echo "x" | git -C trepo hash-object -w --stdin)
for name in .. .git .GIT; do
	T=$(printf '100644 blob %s\t%s\n' "$BLOB" "$name" | git -C trepo mktree --missing 2>/dev/null) ||
		T=$(printf '100644 %s\0' "$name" | cat - /dev/null | git -C trepo hash-object -t tree -w --literally --stdin 2>/dev/null)
	[ -n "$T" ] || continue
	C=$(echo "bad tree" | git -C trepo -c user.name=t -c user.email=t@x commit-tree "$T" 2>/dev/null) || continue
	pins "git-bad-tree" honest "$C" "$PWD/trepo" > pt.yaml
	dump before.dump
	run 2 $RBA -S st register pt.yaml
	err_has "an entry git would not check out"
	one_line "tree entry $name"
	same_store "tree entry $name"
done

# a repository owned by another user: git's own refusal, by name
if [ "$(id -u)" = 0 ]; then
	cp -a repo orepo
	chown -R 12345:12345 orepo
	pins git-owner honest "$C1" "$PWD/orepo" > po.yaml
	dump before.dump
	run 2 $RBA -S st register po.yaml
	err_has "dubious ownership"
	one_line git-owner
	same_store git-owner
	# the operator's safe.directory, as git reads it ($HOME is the test's)
	git config --global --add safe.directory "$PWD/orepo"
	run 0 $RBA -S st register po.yaml
	git config --global --unset-all safe.directory
fi

# a linked work tree (.git a file naming the git directory), and a bare
# repository: the same objects, the same artifact
gc repo worktree add -q "$PWD/wt" "$C1" 2> /dev/null
pins git-worktree honest "$C1" "$PWD/wt" > pw.yaml
run 0 $RBA -S st --json register pw.yaml
ok "worktree: the artifact of the commit" test "$(jq -r .artifact out)" = "$(jq -r .artifact reg-honest.json)"
git clone -q --bare repo bare.git
pins git-bare honest "$C1" "$PWD/bare.git" > pb.yaml
run 0 $RBA -S st --json register pb.yaml
ok "bare: the artifact of the commit" test "$(jq -r .artifact out)" = "$(jq -r .artifact reg-honest.json)"
mkdir notrepo
pins git-none honest "$C1" "$PWD/notrepo" > pn.yaml
dump before.dump
run 2 $RBA -S st register pn.yaml
err_has "is not a git repository"
same_store git-none

# a commit the repository lacks, at the pins' line and column
pins git-absent honest 0123456789abcdef0123456789abcdef01234567 > pa.yaml
dump before.dump
run 2 $RBA -S st register pa.yaml
err_has "cannot register 'pa.yaml:9:13': commit 0123456789abcdef0123456789abcdef01234567 is not in repository"
same_store git-absent
no_leftovers git
