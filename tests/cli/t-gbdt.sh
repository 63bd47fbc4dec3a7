# t-gbdt.sh - a gradient-boosted trees version end to end: register from
# the German credit fixture, sample add, audit (bit-identical, exit 0),
# dispute a case (exit 0), score a CSV; threads do not move a bit.
V=german-categorical-gbdt
GC=$FIX/german-credit.csv
POL=$FIX/policy/credit.yaml
PINS=$FIX/pins/$V.yaml
golden=$(sed -n "s/^$V //p" "$FIX/golden/strict-abi1.txt")

run 0 $RBA train "$PINS" --snapshot "$GC" -o g.bin
out_has "$golden"
ok "the artifact is format 2 (trees)" sh -c '[ "$(od -A n -t u4 -j 8 -N 4 g.bin | tr -d " ")" = 2 ]'
sed 's/threads: 1/threads: 4/' "$PINS" > t4.yaml
run 0 $RBA train t4.yaml --snapshot "$GC"
out_has "$golden"
# On a terminal (script(1)) the boosting rounds show, as an MLP's epochs
# do, and the digest is the same; with stderr a file nothing shows.
run 0 $RBA train "$PINS" --snapshot "$GC"
err_is "rebuild-audit: no store at './audit-store': the run record is not kept"
script -qec "$RBA train '$PINS' --snapshot '$GC'" /dev/null > tty.txt 2>&1
ok "train on a terminal: round progress" grep -q "training: round 100/100" tty.txt
ok "train on a terminal: the line is erased" grep -q "$(printf '\033')\[K" tty.txt
ok "train on a terminal: the same artifact" grep -q "$golden" tty.txt

run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$GC"
run 0 $RBA -S st -q register "$PINS" --policy "$POL"
run 0 $RBA -S st version show $V
out_has "$golden"
run 0 $RBA -S st -q sample add $V "$GC"
run 0 $RBA -S st audit $V
out_has "bit-identical"
run 0 $RBA -S st --json audit $V
ok "audit --json: bit-identical" jq -e '.audits[0].verdict == "bit-identical"' out

declined=
i=1
while [ $i -le 80 ] && [ -z "$declined" ]; do
	d=$($RBA -S st --json sample show $V $i | jq -r .decision)
	[ "$d" = decline ] && declined=$i
	i=$((i + 1))
done
ok "the sample has a declined case" test -n "$declined"
run 0 $RBA -S st dispute $V $declined
out_has "decision decline"
ok "the last line is the answer" test "$(tail -n 1 out)" = "the disputed decline stands"
out_has "reasons     log-odds of class 2 by exact path-dependent TreeSHAP, from the stored artifact, which made the decision"
out_has "scored as stored: no retrain, audit record "
out_has "  1. "
run 0 $RBA -S st --json dispute $V $declined --rebuild
ok "TreeSHAP reasons add up to the log-odds" jq -e '.explanation.method == "treeshap" and
	.explanation.sum_ok and .explanation.score_check.ok and
	((.explanation.baseline + ([.explanation.contributions[].contribution] | add)
	  - .explanation.margin) | fabs) <= 1e-6 and
	([.explanation.principal_reasons[].contribution] | all(. > 0)) and
	.scoring.artifact == "rebuilt"' out

# score: the stored scores of the sample are the scores of the artifact
run 0 $RBA score g.bin "$GC" --policy "$POL"
ok "one line per case" [ "$(wc -l < out)" = 1001 ]
ok "scores are probabilities" awk -F, 'NR > 1 && !($2 > 0 && $2 < 1) { exit 1 }' out
wscore=$(awk -F, -v id="$declined" '$1 == id { print $2 }' out)
run 0 $RBA -S st --json sample show $V $declined
got=$(printf "%.9g" "$(jq -r ".scores[1]" out)")
ok "sample and score agree ($got, $wscore)" [ "$got" = "$wscore" ]
run 0 $RBA score g.bin "$GC"
cp out s1.csv
run 0 $RBA score g.bin "$GC"
ok "the same scores twice" cmp -s out s1.csv

# a damaged tree is refused with its reason
head -c $(( $(wc -c < g.bin) - 1 )) g.bin > bad.bin
run 2 $RBA score bad.bin "$GC"
err_has "cannot load artifact 'bad.bin': truncated"

# keys of the other model kind are refused
sed 's/train: {seed: 0}/train: {seed: 0, epochs: 3}/' "$PINS" > bad.yaml
run 2 $RBA check bad.yaml
err_has "'train.epochs' applies only to model kind mlp"

# register on a terminal shows the rounds too (a store of its own)
run 0 $RBA -S st2 init
run 0 $RBA -S st2 -q snapshot add "$GC"
script -qec "$RBA -S st2 register '$PINS' > /dev/null" /dev/null > tty.txt 2>&1
ok "register on a terminal: round progress" grep -q "training: round 100/100" tty.txt
run 0 $RBA -S st2 version show $V
out_has "$golden"
