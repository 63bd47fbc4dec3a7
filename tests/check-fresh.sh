#!/bin/sh
# check-fresh.sh - `make check-fresh`: the README's set-up on a really
# fresh Debian 12.  As root: mmdebstrap --variant=apt makes a new root
# (nothing added; the mirror is the one apt here uses), a clone of HEAD
# goes into it, and in new mount and pid namespaces (unshare) the root is
# pivoted in (pivot_root, /proc of the new pid namespace, /sys and /dev
# mounted, the old root detached), so that bubblewrap, which the exec
# trainers' sandbox runs, can make its namespaces there as on a machine
# of its own (in a chroot the kernel refuses it a user namespace).  There
# it runs what the README says to do:
#
#   apt-get update && apt-get install make     (the one step by hand)
#   make demo
#   make check
#
# timing each, then `make install`, `man rebuild-audit`, the installed
# Slurm submit script through a symlink with a stand-in sbatch, and
# `make uninstall`, which must leave /usr/local as it was.  Exit 0 when
# every step passed, 1 when one failed, 2 when the root could not be
# made.  Everything lives in one temporary directory (under TMPDIR,
# default /var/tmp), removed on exit; RBA_FRESH_KEEP=1 leaves it for a
# look (a later run never reuses it).  RBA_FRESH_SUITE: another suite.
# RBA_FRESH_CHECK (make check-fresh FRESH_CHECK=...): other make command
# lines instead of "demo; check", separated by ';', each a timed step:
#
#   sh tests/check-fresh.sh            (or make check-fresh)
#   make check-fresh FRESH_CHECK='unit CK_RUN_SUITE=exec; cli-tests CLI_TESTS=t-exec'
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
suite=${RBA_FRESH_SUITE:-bookworm}
src=/root/rebuild-audit
fresh_check=${RBA_FRESH_CHECK:-demo; check}

say() { echo "check-fresh: $*"; }
die() {
	echo "check-fresh: $*" >&2
	exit 2
}

# ---- steps: in the new root, the first process of its pid namespace ----
# The root is pivoted in (below), so this is a root login on a fresh
# machine: its own /, a /proc of its own pid namespace, and nothing of
# this one.  bubblewrap can make its namespaces here; in a chroot it
# cannot (the kernel refuses a chrooted process a new user namespace).
if [ "${1:-}" = --steps ]; then
	fresh_check=$2
	in_root() {
		env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/sh TERM=dumb \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			sh -c "$1"
	}
	results=
	fails=0
	step() {
		name=$1
		say "---- $name"
		t0=$(date +%s)
		if in_root "$2"; then rc=0; else rc=$?; fi
		t=$(($(date +%s) - t0))
		if [ $rc = 0 ]; then verdict=ok; else verdict="FAIL (exit $rc)"; fails=$((fails + 1)); fi
		results="$results$(printf '  %-36s %-14s %5d s (%dm%02ds)' "$name" "$verdict" $t $((t / 60)) $((t % 60)))
"
		say "---- $name: $verdict in $t s"
		return $rc
	}
	step 'apt-get install make' 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make' ||
		die "cannot install make in the new root"
	# The README's two commands, or what FRESH_CHECK names instead: make
	# command lines separated by ';', each a step of its own.
	rest=$fresh_check
	while [ -n "$rest" ]; do
		case $rest in
		*\;*) one=${rest%%;*} rest=${rest#*;} ;;
		*) one=$rest rest= ;;
		esac
		one=$(echo $one)
		[ -z "$one" ] || step "make $one" "cd $src && make $one"
	done
	# After make install: the manual through man (man-db), the schemas,
	# and the installed Slurm submit script called through a symlink from
	# a PATH without /usr/local/bin (as cron has it): it must find the
	# installed binary and .sbatch files.  The stand-in sbatch checks
	# that the script it is given exists and prints a job id.  Then make
	# uninstall leaves /usr/local as make install found it.
	cat > /tmp/check-fresh-man.sh <<'EOF'
set -e
find /usr/local | sort > /tmp/usr-local.before
make install > /dev/null
man rebuild-audit > /tmp/man.txt
head -n 8 /tmp/man.txt
grep -q '^SYNOPSIS' /tmp/man.txt
man 5 rebuild-audit-pins | grep -q '^NAME'
man rebuild-audit-fleet-submit | grep -q '^OPTIONS'
man 5 rebuild-audit-evidence | grep -q '^DSSE ENVELOPE'
ls /usr/local/share/rebuild-audit/schemas/*.schema.json
EOF
	cat > /tmp/check-fresh-uninstall.sh <<'EOF'
set -e
make uninstall > /dev/null
find /usr/local | sort > /tmp/usr-local.after
diff -u /tmp/usr-local.before /tmp/usr-local.after
! command -v rebuild-audit
EOF
	cat > /tmp/check-fresh-fleet.sh <<'EOF'
set -e
d=$(mktemp -d)
mkdir "$d/bin"
# A stand-in Slurm: sbatch logs the script it is given (the argument
# before the run directory), squeue and scancel say nothing.
cat > "$d/bin/sbatch" <<'SBATCH'
#!/bin/sh
for a; do prev=${last:-}; last=$a; done
[ -f "$prev" ] || { echo "sbatch: no script $prev" >&2; exit 1; }
[ -f "$last/manifest" ] || { echo "sbatch: no manifest in $last" >&2; exit 1; }
echo "$prev" >> "$SBATCH_LOG"
echo 42
SBATCH
printf '#!/bin/sh\nexit 0\n' > "$d/bin/squeue"
cp "$d/bin/squeue" "$d/bin/scancel"
chmod +x "$d/bin/sbatch" "$d/bin/squeue" "$d/bin/scancel"
ln -s /usr/local/bin/rebuild-audit-fleet-submit "$d/bin/nightly"
/usr/local/bin/rebuild-audit -S "$d/store" init > /dev/null
/usr/local/bin/rebuild-audit keygen -o "$d/worker" < /dev/null > /dev/null
mkdir "$d/shared"
env -i PATH="$d/bin:/usr/bin:/bin" SBATCH_LOG="$d/log" \
	nightly --no-probe "$d/store" "$d/shared" 4 "$d/worker.key" "$d/worker.pub"
grep -qx "tool=/usr/local/bin/rebuild-audit" "$d"/shared/run-*/manifest
cat "$d/log"
grep -qx /usr/local/share/rebuild-audit/slurm/rebuild-audit-shard.sbatch "$d/log"
grep -qx /usr/local/share/rebuild-audit/slurm/rebuild-audit-import.sbatch "$d/log"
test -f /usr/local/share/rebuild-audit/slurm/rebuild-audit-probe.sbatch
rm -rf "$d"
EOF
	# The build knew its revision (git came with the build packages,
	# before it was worked out), and the steps left the clone clean.
	step 'revision recorded' "cd $src && make > /dev/null && ./rebuild-audit --version | head -n 1 |
		grep -F '(revision $(cat /.rba-fresh-rev))'"
	step 'make install, man' "cd $src && sh /tmp/check-fresh-man.sh"
	step 'fleet submit (installed)' 'sh /tmp/check-fresh-fleet.sh'
	step 'make uninstall' "cd $src && sh /tmp/check-fresh-uninstall.sh"
	say "summary ($suite, a clone of $(cat /.rba-fresh-rev)):"
	printf '%s' "$results"
	[ $fails = 0 ]
	exit $?
fi

# ---- inside: new mount and pid namespaces (unshare), the root as $2 ------
# The new root becomes / (pivot_root) and the old one is detached, as a
# container runtime does it.
if [ "${1:-}" = --inside ]; then
	R=$2
	# A mount point of its own (pivot_root wants one), a /proc of this
	# pid namespace, /sys, and this machine's /dev.
	mount --bind "$R" "$R" || die "cannot bind-mount the new root"
	mount -t proc proc "$R/proc" || die "cannot mount /proc"
	mount -t sysfs sysfs "$R/sys" || die "cannot mount /sys"
	mount --rbind /dev "$R/dev" || die "cannot mount /dev"
	cp "$0" "$R/tmp/rba-check-fresh.sh" || die "cannot copy $0 into the new root"
	mkdir "$R/.old-root" || die "cannot make $R/.old-root"
	# umount is not in the new root (package mount, not essential): the
	# old root's, run once from under /.old-root.
	umount=/.old-root$(command -v umount) || die "'umount' is missing"
	cd "$R" || die "cannot enter $R"
	pivot_root . .old-root || die "pivot_root failed"
	# Detach the old root: nothing of this machine stays visible (the
	# kernel lets a new user namespace mount /proc only where no /proc
	# is partly hidden under other mounts).  Then the old root's
	# programs are gone; this sh runs from memory until the exec.
	"$umount" -l /.old-root || die "cannot detach the old root"
	rmdir /.old-root
	# The namespaces, and every mount in them, end with this process.
	exec /usr/sbin/chroot / /bin/sh /tmp/rba-check-fresh.sh --steps "$3"
fi

# ---- outside: make the root, copy the tree in, run the inside ------------
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, unshare, pivot_root, mount); as root (su -), run: make -C $top check-fresh"
git -C "$top" rev-parse -q --verify HEAD > /dev/null 2>&1 || die "$top is not a git work tree (check-fresh tests a clone of HEAD)"
for t in unshare pivot_root chroot mount git; do
	command -v "$t" > /dev/null 2>&1 || die "'$t' is missing"
done
if ! command -v mmdebstrap > /dev/null 2>&1; then
	say "installing mmdebstrap"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap; } >&2 ||
		die "apt-get install mmdebstrap failed"
fi

T=$(mktemp -d "${TMPDIR:-/var/tmp}/rba-fresh.XXXXXX") || die "cannot make a temporary directory"
cleanup() {
	# Never remove through a mount: the inside mounts in its own
	# namespace, but check all the same.
	if grep -q " $T/" /proc/self/mounts; then
		echo "check-fresh: $T still has mounts; left in place" >&2
	elif [ "${RBA_FRESH_KEEP:-0}" = 1 ]; then
		echo "check-fresh: kept $T (RBA_FRESH_KEEP=1); rm -rf it when done" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# The mirror: the $suite entries (and $suite-updates, $suite-security)
# of apt's sources here, one-line or deb822.
{
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed 's/#.*//' "$f" | awk -v s="$suite" '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
			if (!($(i + 1) == s || index($(i + 1), s "-") == 1)) next
			line = "deb " $i " " $(i + 1)
			for (j = i + 2; j <= NF; j++) line = line " " $j
			print line
		}'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$suite" '
		function flush(   n, m, a, b, U, S) {
			if (v["types"] ~ /(^| )deb( |$)/ && tolower(v["enabled"]) != "no") {
				n = split(v["uris"], U, " "); m = split(v["suites"], S, " ")
				for (a = 1; a <= n; a++) for (b = 1; b <= m; b++)
					if (S[b] == s || index(S[b], s "-") == 1)
						print "deb " U[a] " " S[b] " " v["components"]
			}
			split("", v); key = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ { if (key != "") v[key] = v[key] " " $0; next }
		{ key = tolower(substr($0, 1, index($0, ":") - 1)); v[key] = substr($0, index($0, ":") + 1) }
		END { flush() }' "$f"
	done
} | sed 's/[ \t][ \t]*/ /g; s/ $//' | awk '!seen[$0]++' > "$T/sources.list"
if [ -s "$T/sources.list" ]; then
	say "mirror (from apt's sources here):"
	sed 's/^/  /' "$T/sources.list"
	set -- "$T/sources.list"
else
	say "no $suite entry in apt's sources here: mmdebstrap's default mirror"
	set --
fi

R=$T/root
say "mmdebstrap --variant=apt $suite $R"
t0=$(date +%s)
mmdebstrap --variant=apt "$suite" "$R" "$@" > "$T/mmdebstrap.log" 2>&1 || {
	tail -n 30 "$T/mmdebstrap.log" >&2
	die "mmdebstrap failed"
}
say "the new root in $(($(date +%s) - t0)) s: $(chroot "$R" dpkg-query -W -f='.\n' | wc -l) packages, no make: $(chroot "$R" sh -c 'command -v make || echo none')"

# A clean clone of HEAD (what is committed, nothing of the work tree).
git clone -q --no-hardlinks "$top" "$R$src" || die "git clone failed"
git -C "$R$src" log -1 --format='%h %s' | sed 's/^/check-fresh: HEAD /'
git -C "$R$src" rev-parse --short=12 HEAD > "$R/.rba-fresh-rev"

unshare --mount --pid --fork --propagation private sh "$top/tests/check-fresh.sh" --inside "$R" "$fresh_check"
rc=$?
[ $rc = 0 ] && say "ok: the README's set-up works on a fresh $suite root" ||
	say "FAILED (exit $rc)"
exit $rc
