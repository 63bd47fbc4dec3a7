#!/bin/sh
# golden-outputs.sh - every byte the tool writes for one fixed story,
# so that a change meant to move none of them can be shown to move none.
#
#   sh tests/golden-outputs.sh BIN OUTDIR
#       runs the story with BIN under a frozen clock (libfaketime) and
#       keeps each step's stdout, stderr and exit status, and every file
#       it wrote (evidence, envelopes, reports, checkpoints, proofs),
#       in OUTDIR.
#   sh tests/golden-outputs.sh --against REV
#       builds commit REV (in a temporary worktree) and the work tree
#       (in build/golden), both with GIT_REV=golden, and compares them
#       as --compare does: the usual way to use this script.
#   sh tests/golden-outputs.sh --compare OLD_BIN NEW_BIN
#       runs it with both, from one store made once (GOLDEN_SEED: a
#       store to start from instead of init), and prints the
#       differences (exit 1 if any).
#
# The story: init, snapshot, register three builtin versions (logistic,
# MLP, trees), keep their samples, audit them, then every command that
# prints a record or a --json document of them: history (text, --json,
# --verify, head), export (plain and --dsse), verify, report (an
# evidence page and the store's history page), dispute (text, --json,
# --export), diff, version, sample, score, check, evaluate, store check,
# runs, checkpoints and proofs of the log.  No exec trainer: the
# sandbox is not part of what a writer change can move.
#
# Only what changes between two runs of one binary is masked: the
# store's random id, a peak RSS, and the signatures over texts that
# carry one of these.  The tool's revision is in the environment
# record, whose digest every pins text and record carries, so --compare
# wants two binaries built with one revision (GIT_REV).  Times and durations are frozen.  Used by hand
# before and after a change that should move no byte (see HACKING).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
FIX=$here/fixtures
ft=
for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 \
	 /usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1 \
	 /usr/lib/faketime/libfaketime.so.1; do
	[ -e "$f" ] && { ft=$f; break; }
done
[ -n "$ft" ] || { echo "golden-outputs: libfaketime not found (apt-get install faketime)" >&2; exit 2; }

if [ "${1:-}" = --against ]; then
	rev=${2:?usage: golden-outputs.sh --against REV}
	top=$here
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-golden-rev.XXXXXX")
	trap 'git -C "$top" worktree remove --force "$tmp/old" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
	git -C "$top" worktree add -q --detach "$tmp/old" "$rev" || exit 2
	jobs=$(nproc 2>/dev/null || echo 2)
	make -s -C "$tmp/old" -j"$jobs" GIT_REV=golden build/rebuild-audit > "$tmp/make-old.log" 2>&1 ||
		{ cat "$tmp/make-old.log" >&2; exit 2; }
	make -s -C "$top" -j"$jobs" BUILD=build/golden GIT_REV=golden build/golden/rebuild-audit \
		> "$tmp/make-new.log" 2>&1 || { cat "$tmp/make-new.log" >&2; exit 2; }
	sh "$0" --compare "$tmp/old/build/rebuild-audit" "$top/build/golden/rebuild-audit"
	exit $?
fi

if [ "${1:-}" = --compare ]; then
	old=${2:?usage: golden-outputs.sh --compare OLD_BIN NEW_BIN}
	new=${3:?usage: golden-outputs.sh --compare OLD_BIN NEW_BIN}
	case $old in /*) ;; *) old=$(pwd)/$old ;; esac
	case $new in /*) ;; *) new=$(pwd)/$new ;; esac
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-golden.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT INT TERM
	# The revision is part of the environment record, whose digest is
	# in every pins text, record and signature: both must carry one.
	ro=$("$old" --version | sed -n '1s/.*(revision \(.*\)).*/\1/p')
	rn=$("$new" --version | sed -n '1s/.*(revision \(.*\)).*/\1/p')
	if [ "$ro" != "$rn" ]; then
		echo "golden-outputs: the binaries carry revisions $ro and $rn; build both with one" >&2
		echo "  (make GIT_REV=golden BUILD=DIR), or use: sh tests/golden-outputs.sh --against REV" >&2
		exit 2
	fi
	# One store made once, so that both runs share its random id.
	mkdir "$tmp/seed" && (cd "$tmp/seed" && LC_ALL=C "$old" -S st init > /dev/null) || exit 2
	GOLDEN_SEED=$tmp/seed/st sh "$0" "$old" "$tmp/old" || exit 2
	GOLDEN_SEED=$tmp/seed/st sh "$0" "$new" "$tmp/new" || exit 2
	n=$(ls "$tmp/old" | wc -l)
	if diff -r "$tmp/old" "$tmp/new"; then
		echo "golden-outputs: $n outputs, byte-identical"
		exit 0
	fi
	echo "golden-outputs: the outputs differ" >&2
	exit 1
fi

bin=${1:?usage: golden-outputs.sh BIN OUTDIR}
out=${2:?usage: golden-outputs.sh BIN OUTDIR}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
[ -e "$out" ] && { echo "golden-outputs: $out exists" >&2; exit 2; }
mkdir -p "$out" || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/rba-golden-run.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work" || exit 2

export LC_ALL=C TZ=UTC HOME=$work REBUILD_AUDIT_STORE=st
export FAKETIME='2026-03-01 12:00:00' LD_PRELOAD=$ft
KEY=$FIX/keys/rba-test-only.key
PUB=$FIX/keys/rba-test-only.pub
CSV=$FIX/german-credit-numeric.csv
POL=$FIX/policy/credit.yaml

step=0
# s NAME ARGS...: one step; its outputs as OUTDIR/NN-NAME.{out,err,rc}
s() {
	name=$1
	shift
	step=$((step + 1))
	f=$(printf '%s/%02d-%s' "$out" "$step" "$name")
	"$bin" "$@" > "$f.out" 2> "$f.err"
	echo $? > "$f.rc"
}
# keep FILE NAME: a file the story wrote
keep() {
	[ -e "$1" ] && cp "$1" "$out/file-$2"
}

if [ -n "${GOLDEN_SEED:-}" ]; then
	cp -R "$GOLDEN_SEED" st || exit 2
else
	s init init
fi
s snapshot --json snapshot add "$CSV"
for v in logistic mlp gbdt; do
	sed "s/^version: .*/version: $v/" "$FIX/pins/german-numeric-$v.yaml" > $v.yaml
	s register-$v --json register $v.yaml --policy "$POL"
	s sample-$v --json sample add $v "$CSV"
done
s audit --json audit --all
s audit-text -v audit logistic
s audit-mlp audit mlp
s history --json history
s history-text history
s history-v history mlp
s history-verify --json history --verify
s history-head --json history head
s version-list --json version list
s version-show --json version show gbdt
s version-show-text version show logistic
s export-artifact version export-artifact mlp mlp.art
s sample-show --json sample show logistic
s sample-case --json sample show logistic 17
s sample-export sample export gbdt cases.csv
keep cases.csv sample.csv
s score --json score mlp.art "$CSV" --pins mlp.yaml --policy "$POL"
s score-text score mlp.art "$CSV" --pins mlp.yaml
s check-pins --json check logistic.yaml
s check-policy check "$POL"
s evaluate --json evaluate mlp.yaml
s diff --json diff --store gbdt
s diff-text diff --store logistic
s dispute --json dispute logistic 17
s dispute-text dispute gbdt 17 --reasons 3
s dispute-export --json dispute mlp 17 --export -k "$KEY" -o dispute.json
keep dispute.json dispute.json
s export --json export logistic -k "$KEY" -o ev.json
keep ev.json ev.json
s export-dsse export gbdt -k "$KEY" -o ev.dsse --dsse
keep ev.dsse ev.dsse
s verify --json verify ev.json -p "$PUB"
s verify-text verify ev.json -p "$PUB"
s verify-dsse --json verify ev.dsse -p "$PUB"
s verify-dispute --json verify dispute.json -p "$PUB"
s report --json report ev.json -p "$PUB" -o ev.html
keep ev.html ev.html
s report-history report --store --history -o h.html
keep h.html h.html
s vkey --json history vkey -p "$PUB"
s vkey-text history vkey -p "$PUB"
history_vkey=$("$bin" history vkey -p "$PUB" 2>/dev/null | tail -n 1)
printf '%s\n' "$history_vkey" > vk
s checkpoint --json history checkpoint -k "$KEY" -o ck
keep ck checkpoint
s prove --json history prove 2 --checkpoint ck --vkey vk
s prove-text history prove 3 --checkpoint ck --vkey vk
# logged scores almost right: metric-equivalent, then not reproducible
"$bin" score mlp.art "$CSV" --pins mlp.yaml 2>/dev/null |
awk -F, 'NR == FNR { if (FNR > 1) sc[$1] = $2; next }
	FNR == 1 { print $0 ",logged"; next }
	{ d = (FNR % 7 == 0) ? 0.0001 : 0; if (FNR == 9) d = d + ENVIRON["BIG"];
	  printf "%s,%.9f\n", $0, sc[$1] + d }' - "$CSV" > logged.csv
s sample-logged --json sample add mlp logged.csv --score-column logged
s audit-logged --json audit mlp
s audit-logged-text -v audit mlp
BIG=0.3 "$bin" score mlp.art "$CSV" --pins mlp.yaml 2>/dev/null |
BIG=0.3 awk -F, 'NR == FNR { if (FNR > 1) sc[$1] = $2; next }
	FNR == 1 { print $0 ",logged"; next }
	{ d = (FNR == 9) ? ENVIRON["BIG"] : 0; printf "%s,%.9f\n", $0, sc[$1] + d }' - "$CSV" > far.csv
sed 's/^version: .*/version: far/' mlp.yaml > far.yaml
s register-far --json register far.yaml --policy "$POL"
s sample-far --json sample add far far.csv --score-column logged
s audit-far --json audit far
s audit-far-text -v audit far
s dispute-far --json dispute far 8
s export-far --json export far -k "$KEY" -o far.json
keep far.json far.json
s report-far report far.json -p "$PUB" -o far.html
keep far.html far.html
s store-check --json store check
s runs --json runs list
s policy-check policy check logistic

# What differs between two runs of one binary, and only that.
for f in "$out"/*; do
	sed -E -i \
	    -e 's/[0-9]+\.[0-9]+\.[0-9]+\+[0-9a-f]{7,40}(-dirty)?/<rev>/g' \
	    -e 's/[0-9]+\.[0-9]+\.[0-9]+-dirty/<rev>/g' \
	    -e 's/\b[0-9a-f]{32}\b/<store-id>/g' \
	    -e 's/("(peak_)?rss[a-z_]*": )[0-9]+/\1<n>/g' \
	    -e 's/("(sig|signature|payload_sig)": ")[A-Za-z0-9+\/=]+"/\1<sig>"/g' \
	    -e 's/("payload": ")[A-Za-z0-9+\/=]+"/\1<payload>"/g' \
	    "$f"
done
exit 0
