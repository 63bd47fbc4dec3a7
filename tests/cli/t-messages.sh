# messages: what a file names (column names, case ids, levels, a
# snapshot's name) reaches the terminal only through the one escaping
# rule (ESC as \x1b, U+202E as \xe2\x80\xae, CR and LF as \r and \n):
# snapshot show and list, sample add and show, the dispute's warning,
# diff, and every diagnostic of the CSV reader, one line each; a file
# with CR-only line ends is refused by its line ends, not by a column
# it does not have; and a pins 'pass' entry is refused for what is
# wrong with it.
ESC=$(printf '\033')
RLO=$(printf '\342\200\256')
CR=$(printf '\r')
# raw_free WHAT FILE: no raw ESC, U+202E or CR in FILE
raw_free() {
	ok "$1: no raw ESC" sh -c "! grep -q '$ESC' $2"
	ok "$1: no raw U+202E" sh -c "! grep -qF '$RLO' $2"
	ok "$1: no raw CR" sh -c "! grep -q '$CR' $2"
}
dump() { mdb_dump -a st > "$1" 2>&1; }

run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$FIX/german-credit-numeric.csv"

# ---- column names of a snapshot -------------------------------------------
# the numeric German table with every input column renamed: odd ones
# start with a colour escape, even ones with a right-to-left override
awk -v esc="$ESC" -v rlo="$RLO" 'BEGIN { FS = OFS = "," }
	NR == 1 { for (i = 2; i < NF; i++) $i = ((i % 2) ? rlo : esc "[31m") $i }
	NR == 4 { $1 = esc "]0;pwned" sprintf("%c", 7) "3" }
	{ print }' "$FIX/german-credit-numeric.csv" > hostile.csv
ok "the hostile header has 24 hostile names" test "$(head -n 1 hostile.csv | tr ',' '\n' | grep -c "$ESC\|$RLO")" = 24
run 0 $RBA -S st snapshot add --name "$(printf 'red\033[31m')" hostile.csv
HS=$(cat out)
run 0 $RBA -S st snapshot show "$HS"
raw_free "snapshot show" out
out_has '\x1b[31ma1'
out_has '\xe2\x80\xaea2'
out_has 'name     red\x1b[31m'
ok "snapshot show: the header lines keep their columns" grep -q '^    2  \\x1b\[31ma1 .* numeric$' out
run 0 $RBA -S st snapshot list
raw_free "snapshot list" out
out_has 'red\x1b[31m'

# ---- CSV diagnostics: names quoted through the same rule --------------------
dump before.dump
printf 'id,"\033[31mx",b,"\033[31mx"\n1,2,3,4\n' > dup-esc.csv
run 2 $RBA -S st snapshot add dup-esc.csv
err_is "rebuild-audit: invalid snapshot 'dup-esc.csv:1:15': duplicate column name '\\x1b[31mx'"
printf 'id,"\342\200\256x",b,"\342\200\256x"\n1,2,3,4\n' > dup-rlo.csv
run 2 $RBA -S st snapshot add dup-rlo.csv
err_is "rebuild-audit: invalid snapshot 'dup-rlo.csv:1:13': duplicate column name '\\xe2\\x80\\xaex'"
# a quoted LF in a name: the diagnostic stays one line
printf 'id,"a\nb",c,"a\nb"\n1,2,3,4\n' > dup-lf.csv
run 2 $RBA -S st snapshot add dup-lf.csv
err_is "rebuild-audit: invalid snapshot 'dup-lf.csv:2:6': duplicate column name 'a\\nb'"
# a quoted CR in a name, quoted by another diagnostic
printf 'id,"r\rc"\n1,inf\n' > cr-name.csv
run 2 $RBA -S st snapshot add cr-name.csv
err_is "rebuild-audit: invalid snapshot 'cr-name.csv:2:3': non-finite number 'inf' in column 'r\\rc'"
printf 'id,"\033[2Kx"\n1,1e39\n' > big-esc.csv
run 2 $RBA -S st snapshot add big-esc.csv
err_is "rebuild-audit: invalid snapshot 'big-esc.csv:2:3': number '1e39' in column '\\x1b[2Kx' overflows float32"
# a file name that is itself hostile
cp dup-esc.csv "$(printf 'f\033[31m.csv')"
run 2 $RBA -S st snapshot add "$(printf 'f\033[31m.csv')"
err_is "rebuild-audit: invalid snapshot 'f\\x1b[31m.csv:1:15': duplicate column name '\\x1b[31mx'"

# ---- CR-only line ends: said so, once, for every reader -----------------------
printf 'id,a,b\r1,2,3\r4,2,6\r' > cr-only.csv
run 2 $RBA -S st snapshot add cr-only.csv
err_is "rebuild-audit: invalid snapshot 'cr-only.csv:1:7': a carriage return not followed by a line feed: CR-only line ends are not read (convert them to LF or CRLF)"
raw_free "cr-only diagnostic" err
# a bare CR inside a header name of an LF file: the same rule
printf 'id,a\rb,c\n1,2,3\n' > cr-mid.csv
run 2 $RBA -S st snapshot add cr-mid.csv
err_is "rebuild-audit: invalid snapshot 'cr-mid.csv:1:5': a carriage return not followed by a line feed: CR-only line ends are not read (convert them to LF or CRLF)"
# CRLF is read as before
printf 'id,a,b\r\n1,2,3\r\n4,2,6\r\n' > crlf.csv
run 0 $RBA -S st snapshot add crlf.csv
run 0 $RBA -S st snapshot show "$(cat out)"
out_has "columns  3"
dump before.dump

# ---- a model on the hostile table: sample show, dispute, diff ---------------
sed -e "s|^snapshot: .*|snapshot: $HS|; s|^version: .*|version: hostile|" \
	"$FIX/pins/german-numeric-logistic.yaml" > hostile.yaml
run 0 $RBA -S st -q register hostile.yaml --policy "$FIX/policy/credit.yaml"
run 0 $RBA -S st sample add hostile hostile.csv
raw_free "sample add" out
dump before.dump
# a case file with CR-only line ends: its line ends, not "column '2'
# appears twice" (the rows' first and last fields run together)
awk 'NR <= 3 { printf "%s\r", $0 }' hostile.csv > cases-cr.csv
crcol=$(head -n 1 hostile.csv | wc -c)
run 2 $RBA -S st sample add hostile cases-cr.csv
err_is "rebuild-audit: cannot add sample 'cases-cr.csv:1:$crcol': a carriage return not followed by a line feed: CR-only line ends are not read (convert them to LF or CRLF)"
run 0 $RBA -S st version export-artifact hostile h.bin
run 2 $RBA score h.bin cases-cr.csv
err_is "rebuild-audit: cannot read cases 'cases-cr.csv:1:$crcol': a carriage return not followed by a line feed: CR-only line ends are not read (convert them to LF or CRLF)"
dump after.dump
ok "refused inputs change nothing stored" cmp -s before.dump after.dump
run 0 $RBA -S st sample show hostile
raw_free "sample show" out
out_has '\x1b[31ma1, \xe2\x80\xaea2'
run 0 $RBA -S st sample show hostile 1
raw_free "sample show CASE" out
out_has '  \x1b[31ma1   '
out_has '  \xe2\x80\xaea2  '
# a hostile case id, shown and named
id3=$(printf '\033]0;pwned\0073')
run 0 $RBA -S st sample show hostile "$id3"
raw_free "sample show of a hostile id" out
ok "sample show of a hostile id: no raw BEL" sh -c "! grep -q \"$(printf '\007')\" out"
out_has 'case        \x1b]0;pwned\x073 (version hostile)'
run 2 $RBA -S st sample show hostile "$(printf 'x\033[2J')"
err_is "rebuild-audit: cannot show sample 'x\\x1b[2J': no case 'x\\x1b[2J' in the sample of version 'hostile'"
# the dispute's warning names the principal reasons' columns
cat "$FIX/policy/credit.yaml" > statements.yaml
printf 'statements:\n  id: "Identifier"\n' >> statements.yaml
run 0 $RBA -S st -q policy set hostile statements.yaml
run 0 $RBA -S st -q audit hostile
declined=
i=1
while [ $i -le 60 ] && [ -z "$declined" ]; do
	[ "$($RBA -S st --json sample show hostile $i 2> /dev/null | jq -r .decision)" = decline ] && declined=$i
	i=$((i + 1))
done
ok "the sample has a declined case" test -n "$declined"
run 0 $RBA -S st dispute hostile "$declined"
raw_free "dispute" out
raw_free "dispute warning" err
err_has "rebuild-audit: warning: 4 principal reasons without a statement in the policy, printed by column name: "
ok "dispute warning: the names escaped" grep -q 'printed by column name: \\\(x1b\[31m\|xe2\\x80\\xae\)a' err
# an audit that does not reproduce quotes case ids (the flipped cases,
# the largest delta's): every id of this sample starts with an escape
sed -e 's/^version: .*/version: hostile-nr/' -e 's/{seed: 0, epochs/{seed: 1, epochs/' hostile.yaml > seed1.yaml
run 0 $RBA -S st -q train seed1.yaml -o seed1.bin --no-keep
sed 's/^version: .*/version: hostile-nr/' hostile.yaml > nr.yaml
run 0 $RBA -S st -q register nr.yaml --artifact seed1.bin --policy "$FIX/policy/credit.yaml"
awk -v esc="$ESC" 'BEGIN { FS = OFS = "," } NR > 1 { $1 = esc "[2K" $1 } { print }' hostile.csv > ids.csv
run 0 $RBA -S st -q sample add hostile-nr ids.csv
run 1 $RBA -S st audit hostile-nr
raw_free "audit report" out
out_has "audit hostile-nr: NOT REPRODUCIBLE (exit 1)"
out_has "(case \\x1b[2K"
ok "audit report: the flipped cases' ids escaped" grep -q '^  \\x1b\[2K[0-9]* *[0-9.]* [a-z]' out
# diff of artifacts trained on other column names
run 0 $RBA -S st -q register "$FIX/pins/german-numeric-logistic.yaml"
run 0 $RBA -S st version export-artifact german-numeric-logistic g.bin
run 1 $RBA diff h.bin g.bin
raw_free "diff" out
out_has "inputs      input column 1: '\\x1b[31ma1' against 'a1'"

# ---- pins: trainer.environment.pass says what is wrong -----------------------
sed -e "s|@SNAPSHOT@|$HS|; s|@REPO@|$PWD/repo|; s|@COMMIT@|0123456789abcdef0123456789abcdef01234567|" \
    -e "s|@ETA@|0.3|; s|@THREADS@|1|g" "$TOP/contrib/examples/xgboost/pins.yaml.in" > exec.yaml
run 0 $RBA check exec.yaml
pass_pins() { sed "s|probe: .*|pass: $1|" exec.yaml > pass.yaml; }
pass_pins '[A-B]'
run 2 $RBA check pass.yaml
err_is "rebuild-audit: invalid pins 'pass.yaml:27:12': 'trainer.environment.pass[0]' is 'A-B', which is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"
pass_pins '[RBA_OK, HOME]'
run 2 $RBA check pass.yaml
err_is "rebuild-audit: invalid pins 'pass.yaml:27:20': 'trainer.environment.pass[1]' is 'HOME', which the sandbox sets itself"
pass_pins '[OMP_NUM_THREADS]'
run 2 $RBA check pass.yaml
err_is "rebuild-audit: invalid pins 'pass.yaml:27:12': 'trainer.environment.pass[0]' is 'OMP_NUM_THREADS', which 'variables' sets: a variable is set or passed, not both"
pass_pins '["A\\eB"]'
run 2 $RBA check pass.yaml
err_is "rebuild-audit: invalid pins 'pass.yaml:27:12': 'trainer.environment.pass[0]' is 'A\\x1bB', which is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"
pass_pins '[RBA_OK]'
run 0 $RBA check pass.yaml
