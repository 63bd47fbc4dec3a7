# t-readme.sh - the README's Quick start, as a newcomer types it.
#
# Every line of that section that starts with "    $ " is a command; the
# indented lines under it, up to the next command or the first line that
# is not indented, are what it prints.  The commands are taken from the
# README itself, run in order with sh from a directory laid out as the
# top of the tree after `make` (./rebuild-audit, fixtures/), and each must
# exit 0 and print exactly the lines shown.  The README shows what a
# terminal shows: a line that starts with "rebuild-audit: " is standard
# error, any other standard output; each stream is compared line by
# line, in order (the interleaving of the two is not checked).
#
# What differs from one run or machine to the next is written as a mark
# in the README, and nothing else is loosened:
#   <time>      a UTC time, 2026-12-04T16:42:09Z
#   <digest>    sha256: and 64 lowercase hex digits
#   <hex>       one or more lowercase hex digits (as many as there are)
#   <n>         one or more decimal digits
#   <revision>  the tool's version and build: 0.1.0+ and 12 hex digits
#               (-dirty after them for a tree with changes), or unknown
README=$TOP/README

# The section: from "Quick start" over its dashes to the next heading.
awk '
	prev == "Quick start" && /^---+$/ { on = 1; prev = $0; next }
	on && /^---+$/ { exit }
	on { print prev }
	{ prev = $0 }
' "$README" > section
ok "the README has a Quick start section" test -s section

# cmd.N: the Nth command; want.N: the lines the README shows under it.
awk '
	/^    \$ / { n++; printf "%s\n", substr($0, 7) > ("cmd." n); printf "" > ("want." n); open = 1; next }
	open && /^    / { print substr($0, 5) > ("want." n); next }
	{ open = 0 }
	END { print n + 0 > "count" }
' section
count=$(cat count)
ok "the Quick start has its commands ($count)" test "$count" -ge 5
ok "every command is one line (no continuation)" sh -c '! grep -q "\\\\$" cmd.*'

# fits WANT GOT: 0 when the file GOT has the lines of WANT, marks
# matched as above; otherwise prints the first difference.
fits() {
	awk -v want="$1" '
	function run(s, cls,    i) {
		i = 0
		while (i < length(s) && index(cls, substr(s, i + 1, 1)) > 0)
			i++
		return i
	}
	# 1 when got is the line e with its marks filled in.
	function fit(e, g,    lit, mark, k) {
		while (match(e, /<(time|digest|hex|n|revision)>/)) {
			lit = substr(e, 1, RSTART - 1)
			if (substr(g, 1, length(lit)) != lit)
				return 0
			g = substr(g, length(lit) + 1)
			mark = substr(e, RSTART + 1, RLENGTH - 2)
			e = substr(e, RSTART + RLENGTH)
			if (mark == "time") {
				if (g !~ /^[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z/)
					return 0
				g = substr(g, 21)
			} else if (mark == "digest") {
				if (substr(g, 1, 7) != "sha256:" || run(substr(g, 8), HEX) != 64)
					return 0
				g = substr(g, 72)
			} else if (mark == "hex" || mark == "n") {
				k = run(g, mark == "hex" ? HEX : DIGITS)
				if (k == 0)
					return 0
				g = substr(g, k + 1)
			} else {
				if (substr(g, 1, 7) == "unknown") {
					g = substr(g, 8)
					continue
				}
				if (!match(g, /^[0-9]+\.[0-9]+\.[0-9]+\+/))
					return 0
				g = substr(g, RLENGTH + 1)
				if (run(g, HEX) != 12)
					return 0
				g = substr(g, 13)
				if (substr(g, 1, 6) == "-dirty")
					g = substr(g, 7)
			}
		}
		return e == g
	}
	BEGIN {
		HEX = "0123456789abcdef"
		DIGITS = "0123456789"
		n = 0
		while ((getline line < want) > 0)
			w[++n] = line
	}
	{
		if (NR > n) {
			printf "line %d: the README shows no more, the command printed: %s\n", NR, $0
			bad = 1
			exit 1
		}
		if (!fit(w[NR], $0)) {
			printf "line %d: the README shows: %s\n", NR, w[NR]
			printf "line %d: the command printed: %s\n", NR, $0
			bad = 1
			exit 1
		}
	}
	END {
		if (!bad && NR < n) {
			printf "line %d: the README shows: %s\n", NR + 1, w[NR + 1]
			printf "line %d: the command printed no more\n", NR + 1
			exit 1
		}
	}' "$2"
}

# The top of the tree after make: the binary and the fixtures, nothing else.
mkdir top
case $RBA in
/*) ln -s "$RBA" top/rebuild-audit ;;
*) cp "$RBA" top/rebuild-audit ;;
esac
ln -s "$FIX" top/fixtures
i=1
while [ "$i" -le "$count" ]; do
	cmd=$(cat cmd.$i)
	LAST_DESC="the README's Quick start, command $i: $cmd"
	(cd top && sh -c "$cmd") > out 2> err < /dev/null
	rc=$?
	if [ $rc = 0 ]; then pass; else fail "exit $rc, want 0: $LAST_DESC"; fi
	grep -v '^rebuild-audit: ' want.$i > want-out
	grep '^rebuild-audit: ' want.$i > want-err
	if why=$(fits want-out out); then pass; else fail "stdout: $why: $LAST_DESC"; fi
	if why=$(fits want-err err); then pass; else fail "stderr: $why: $LAST_DESC"; fi
	i=$((i + 1))
done
