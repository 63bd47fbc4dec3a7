# t-artifact-corpus.sh - truncated and bit-flipped artifacts: score must
# either work (exit 0) or refuse with one diagnostic (exit 2), never crash.
# The corpus is made here from a freshly trained artifact (fixtures are
# never written); RBA_SLOW=1 (the sanitizer run) thins it out.
GN=$FIX/german-credit-numeric.csv
run 0 $RBA train "$FIX/pins/german-numeric-mlp.yaml" --snapshot "$GN" -o a.bin
head -n 6 "$GN" > cases.csv
size=$(wc -c < a.bin)
step=1
[ "${RBA_SLOW:-0}" = 1 ] && step=7

check_one() { # file: exit 0 or 2; on 2 exactly one diagnostic line
	"$RBA" score "$1" cases.csv > c.out 2> c.err < /dev/null
	rc=$?
	case $rc in
	0) echo ok >> results ;;
	2)
		# Refused as corrupt, or loaded but naming columns the cases
		# lack (a flipped bit in a column name): both are refusals.
		if [ "$(wc -l < c.err)" = 1 ] && grep -Eq "^rebuild-audit: (cannot load artifact '$1'|cannot score 'cases.csv:1'): " c.err; then
			echo refused >> results
		else
			echo "bad diagnostic for $1: $(cat c.err)" >> problems
		fi ;;
	*) echo "exit $rc for $1: $(head -c 300 c.err)" >> problems ;;
	esac
}

: > results
: > problems
# Truncations: densely through the header, then a stride.
n=0
while [ $n -lt "$size" ]; do
	head -c $n a.bin > t.bin
	check_one t.bin
	if [ $n -lt 200 ]; then n=$((n + 2 * step)); else n=$((n + 211 * step)); fi
done
ok "no truncation loads" sh -c '! grep -q "^ok$" results'
# Single-bit flips through the header (every bit) and the weights (a stride).
perl -e '
	my ($file, $step) = @ARGV;
	open(my $f, "<:raw", $file) or die; local $/; my $d = <$f>; close $f;
	my $n = length($d) * 8; my $i = 0; my $k = 0;
	while ($i < $n) {
		my $c = $d; vec($c, $i, 1) ^= 1;
		open(my $o, ">:raw", sprintf("flip-%05d.bin", $k++)) or die; print $o $c; close $o;
		$i += $i < 2400 ? 5 * $step : 401 * $step;
	}' a.bin $step
for f in flip-*.bin; do
	check_one "$f"
done
rm -f flip-*.bin
ok "no crash, one diagnostic on every refusal" [ ! -s problems ]
[ -s problems ] && head -5 problems >&2
ok "some flipped files are refused" grep -q '^refused$' results
ok "some flipped files still load (a changed weight is a valid model)" grep -q '^ok$' results
ok "a few hundred files tried (fewer when slow)" [ "$(wc -l < results)" -gt $((200 / step)) ]
