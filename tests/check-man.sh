#!/bin/sh
# check-man.sh BINARY - man pages lint clean, render without a stray
# macro, and --help agrees with the SYNOPSIS of rebuild-audit(1): every
# command in --help has its usage lines, word for word, in the manual's
# SYNOPSIS, and the reverse; every option of rebuild-audit-fleet-submit
# --help is in the OPTIONS of rebuild-audit-fleet-submit(1), and the
# reverse.
#
# Lint: `mandoc -Tlint -Wall`, every message an error, but two kinds of
# style message: "referenced manual not found" (it depends on the
# machine's mandoc.db, not on the page) and "trailing delimiter" on the
# SYNOPSIS's .Nm lines (they are the usage text of --help, word for word,
# brackets included).  Rendering: no line of `mandoc -Tascii` may hold a
# full stop followed by a macro name (".It ", ".Ev ", ...), which is what
# a macro joined to the line before it looks like once rendered
# ("...strict-mode ones..It Ev TMPDIR"): mandoc takes it for text and
# says nothing.
set -u
bin=${1:?usage: check-man.sh BINARY}
top=$(cd "$(dirname "$0")/.." && pwd)
# Without one of these the comparison below would report a disagreement
# that is not there: say which tool is missing instead, in one line.
for t in mandoc:mandoc col:bsdextrautils; do
	command -v "${t%%:*}" > /dev/null 2>&1 && continue
	echo "check-man: '${t%%:*}' is missing (Debian package ${t#*:}): run 'make test-deps' as root" >&2
	exit 2
done
[ -x "$bin" ] || { echo "check-man: no binary $bin (make it first)" >&2; exit 2; }
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Every macro name the pages use, for the rendering check.
macros=$(sed -n 's/^\.\([A-Z][a-z][a-z]*\).*/\1/p' "$top"/man/*.[15] | sort -u | tr '\n' '|')
macros=${macros%|}
for m in "$top"/man/*.[15]; do
	# (mandoc writes its lint messages to stdout, buffered, and the
	# mandoc.db notes to stderr, unbuffered: 2>&1 can cut a message in
	# two, so the two streams are read one after the other)
	out=$( (mandoc -Tlint -Wall "$m" 2> "$tmp/lint-err"; cat "$tmp/lint-err") |
		grep -v -e 'STYLE: referenced manual not found' \
		-e 'outdated mandoc.db' -e 'STYLE: trailing delimiter: Nm ')
	if [ -n "$out" ]; then
		echo "check-man: $out"
		fail=1
	fi
	out=$(MANWIDTH=80 mandoc -Tascii "$m" | col -b | grep -n -E "(^|[^[:alnum:]_/])\.($macros)( |\$)")
	if [ -n "$out" ]; then
		echo "check-man: $(basename "$m") renders a macro as text (joined to the line before it?):"
		echo "$out" | sed 's/^/  line /'
		fail=1
	fi
done
# The SYNOPSIS as plain text, one command per line, spaces squeezed.
MANWIDTH=200 mandoc -Tascii -Owidth=200 "$top/man/rebuild-audit.1" | col -b |
	awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' |
	sed 's/^ *//; s/  */ /g' | grep '^rebuild-audit [a-z]' | sort -u > "$tmp/man"
# Commands from --help, then each command's usage lines from -h.
"$bin" --help | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' > "$tmp/cmds"
: > "$tmp/help"
while read -r c; do
	"$bin" "$c" -h | sed -n 's/^usage: //p; s/^       rebuild-audit /rebuild-audit /p' |
		sed 's/^ *//; s/  */ /g' >> "$tmp/help"
done < "$tmp/cmds"
sort -u "$tmp/help" -o "$tmp/help"
if ! cmp -s "$tmp/help" "$tmp/man"; then
	echo "check-man: --help and the SYNOPSIS of rebuild-audit(1) disagree (< help, > man):"
	diff "$tmp/help" "$tmp/man" | grep '^[<>]'
	fail=1
fi
# doc/design.md section 4 describes every command of the table: a row
# whose first cell starts with the command's name.
sed -n '/^## 4\. Command line/,/^## 5\./p' "$top/doc/design.md" |
	sed -n 's/^| `\([a-z]*\)[ `].*/\1/p' | sort -u > "$tmp/design"
while read -r c; do
	grep -qx "$c" "$tmp/design" || {
		echo "check-man: doc/design.md section 4 has no row for the command '$c'"
		fail=1
	}
done < "$tmp/cmds"
# rebuild-audit-fleet-submit: every option of its --help is in the
# OPTIONS of its manual, and the reverse (long names, -h included).
submit=$top/contrib/slurm/rebuild-audit-fleet-submit
if ! sh "$submit" --help > "$tmp/shelp" 2> "$tmp/shelp.err" || [ -s "$tmp/shelp.err" ]; then
	echo "check-man: rebuild-audit-fleet-submit --help fails: $(head -n 1 "$tmp/shelp.err")"
	fail=1
fi
awk '/^options/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  -/' "$tmp/shelp" |
	grep -o -E '^  (-[a-z], )?--[a-z-]+' | grep -o -E -- '-[a-z]|--[a-z-]+' | sort -u > "$tmp/sopt-help"
MANWIDTH=200 mandoc -Tascii "$top/man/rebuild-audit-fleet-submit.1" | col -b |
	awk '/^OPTIONS/ { on = 1; next } /^[A-Z]/ { on = 0 } on && /^     -/' |
	grep -o -E '^     (-[a-z], )?--[a-z-]+' | grep -o -E -- '-[a-z]|--[a-z-]+' | sort -u > "$tmp/sopt-man"
if ! [ -s "$tmp/sopt-help" ] || ! cmp -s "$tmp/sopt-help" "$tmp/sopt-man"; then
	echo "check-man: rebuild-audit-fleet-submit --help and the OPTIONS of rebuild-audit-fleet-submit(1) disagree (< help, > man):"
	diff "$tmp/sopt-help" "$tmp/sopt-man" | grep '^[<>]'
	fail=1
fi
[ $fail = 0 ] && echo "check-man: $(wc -l < "$tmp/help") usage lines agree; rebuild-audit-fleet-submit's $(wc -l < "$tmp/sopt-help") options agree; man pages lint clean (-Wall) and render no macro as text"
exit $fail
