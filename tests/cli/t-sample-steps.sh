# t-sample-steps: a sample over 65,536 cases is written in steps beside
# the one it replaces.  Readers see the old sample until the last step;
# a failure part-way leaves the store as it was; a kill -9 part-way
# leaves the old sample and records marked dead, which store check counts
# apart and the next sample add clears.
V=german-numeric-logistic
run 0 $RBA -S st init
run 0 $RBA -S st -q snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st -q register "$FIX/pins/$V.yaml" --policy "$FIX/policy/credit.yaml"

# cases FILE REPEATS TAG: the 1,000 German rows REPEATS times, ids TAG R-N
cases() {
	awk -F, -v reps="$2" -v tag="$3" 'NR == 1 { print; next }
		{ row[NR - 1] = substr($0, index($0, ",")) }
		END { for (r = 0; r < reps; r++) for (i = 1; i <= NR - 1; i++)
			printf "%s%d-%d%s\n", tag, r, i, row[i] }' \
		"$FIX/german-credit-numeric.csv" > "$1"
}
cases a.csv 200 a
cases b.csv 150 b
dump() { mdb_dump -a st > "$1" 2>&1; }
digest() { $RBA -S st --json sample show $V | jq -r .digest; }
# checked FIELD: store check's count of FIELD
checked() { $RBA -S st --json store check | jq -r ".checked.$1"; }

run 0 $RBA -S st sample add $V a.csv
out_has "sample of '$V': 200000 cases in"
da=$(digest)
run 0 $RBA -S st store check
out_has "200000 case ids looked up in 200000 index entries"
out_lacks "dead"
ok "no dead generation after a whole sample" [ "$(checked dead_marks)" = 0 ]

# A replacement: the old one goes (in steps of its own after the commit).
run 0 $RBA -S st sample add $V b.csv
out_has "sample of '$V': 150000 cases in"
db=$(digest)
ok "the replacement has its own digest" [ "$da" != "$db" ]
run 0 $RBA -S st store check
out_has "150000 case ids looked up in 150000 index entries"
out_lacks "dead"
run 2 $RBA -S st sample show $V a0-1
err_has "no case 'a0-1'"
run 0 $RBA -S st sample show $V b149-1000

# A failure after several steps: the store is as it was, byte for byte.
cp a.csv dup.csv
tail -n 1 a.csv >> dup.csv
dump before.dump
run 2 $RBA -S st sample add $V dup.csv
err_has "dup.csv:200002"
err_has "appears twice"
ok "one line" [ "$(wc -l < err)" = 1 ]
dump after.dump
ok "a sample that failed after its steps left the store unchanged" cmp before.dump after.dump
ok "the sample is still the one before" [ "$(digest)" = "$db" ]

# Readers while the steps are written see the old sample, then the new
# one, never anything else; store check stays clean throughout.
$RBA -S st -q sample add $V a.csv > bg.out 2> bg.err &
bg=$!
olds=0 news=0
while kill -0 $bg 2> /dev/null; do
	now=$(digest)
	if [ "$now" = "$db" ] && [ $news = 0 ]; then
		olds=$((olds + 1))
	elif [ "$now" = "$da" ]; then
		news=$((news + 1))
	elif kill -0 $bg 2> /dev/null; then
		fail "a reader during the write saw '$now' (old $db, new $da, after $news new)"
	fi
	$RBA -S st -q store check > /dev/null 2>&1 ||
		{ kill -0 $bg 2> /dev/null && fail "store check during a sample write failed"; }
done
wait $bg
ok "the sample add beside the readers succeeded" [ $? = 0 ]
echo "  readers saw the old sample $olds times during the write, the new one $news" >&2
ok "the new sample is there" [ "$(digest)" = "$da" ]
ok "and nothing is left marked" [ "$(checked dead_marks)" = 0 ]

# An audit racing the steps reads the old sample whole; its record is
# then refused as changed (or, begun after the last step, it audits the
# new sample): never a verdict on a sample that is no longer the one.
$RBA -S st -q sample add $V b.csv > /dev/null 2>&1 &
bg=$!
sleep 0.3
$RBA -S st --json audit $V > race.json 2> race.err
rc=$?
wait $bg
if [ $rc = 2 ]; then
	ok "the racing audit was refused as changed" grep -q "changed while it was audited" race.err
elif [ $rc = 0 ]; then
	ok "the racing audit judged the new sample" jq -e '.audits[0].sample.cases == 150000' race.json
else
	fail "the racing audit: exit $rc"
fi
ok "the sample after the race is the new one" [ "$(digest)" = "$db" ]

# kill -9 part-way, seeded delays over the write's span.
seed=${RBA_STEPS_SEED:-$(date +%s)}
kills=0 debris=0 i=0
while [ $i -lt 6 ]; do
	i=$((i + 1))
	old=$(digest)
	if [ "$old" = "$da" ]; then f=b.csv new=$db; else f=a.csv new=$da; fi
	delay=$(awk -v s="$seed" -v i=$i 'BEGIN { srand(s + i); printf "%.2f", 0.2 + 1.6 * rand() }')
	$RBA -S st -q sample add $V $f > /dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 $pid 2> /dev/null && kills=$((kills + 1))
	wait $pid 2> /dev/null
	run 0 $RBA -S st store check
	out_has "clean: no damage found"
	now=$(digest)
	if [ "$now" != "$old" ] && [ "$now" != "$new" ]; then
		fail "after a kill at ${delay}s (seed $seed) the sample is neither the old nor the new one"
	fi
	grep -q "^dead " out && debris=$((debris + 1))
	# The next sample add clears what the kill left.
	run 0 $RBA -S st -q sample add $V $f
	ok "the next sample add cleared the dead records (kill $i, seed $seed)" \
		[ "$(checked dead_marks)" = 0 ]
	ok "and stored its sample" [ "$(digest)" = "$new" ]
done
echo "  $kills kills landed, $debris left records marked dead (seed $seed)" >&2
