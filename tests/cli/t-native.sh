# t-native.sh - native categorical splits (data.native) end to end on
# German credit: register, sample add with a level unseen in training,
# audit bit-identical, dispute the case (the reasons name levels; the
# unseen level's line says where it went, t-unseen.sh checks how), score;
# threads do not move a bit; bad inputs are one line, exit 2, nothing
# stored.
V=german-native-gbdt
GC=$FIX/german-credit.csv
POL=$FIX/policy/credit.yaml
PINS=$FIX/pins/$V.yaml
golden=$(sed -n "s/^$V //p" "$FIX/golden/strict-abi1.txt")

run 0 $RBA train "$PINS" --snapshot "$GC" -o n.bin
out_has "$golden"
ok "the artifact is format 4 (native columns)" sh -c '[ "$(od -A n -t u4 -j 8 -N 4 n.bin | tr -d " ")" = 4 ]'
sed 's/threads: 1/threads: 2/' "$PINS" > t2.yaml
run 0 $RBA train t2.yaml --snapshot "$GC"
out_has "$golden"
# one-hot is the default: the same pins without data.native keep format 2
grep -v '^  native:\|^           employment_since' "$PINS" > onehot.yaml
run 0 $RBA train onehot.yaml --snapshot "$GC" -o o.bin
ok "without data.native: format 2" sh -c '[ "$(od -A n -t u4 -j 8 -N 4 o.bin | tr -d " ")" = 2 ]'
run 0 $RBA check "$PINS"
out_has "  native:
    - checking_status"
run 0 $RBA check onehot.yaml
ok "no native key in a one-hot record's text" sh -c '! grep -q "^  native:" out'

run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$GC"
run 0 $RBA -S st -q register "$PINS" --policy "$POL"
run 0 $RBA -S st version show $V
out_has "$golden"
# case 2 asks for purpose A499, a level the training data never had
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "purpose") pc = i }
	NR == 3 { $pc = "A499" } NR <= 61 { print }' OFS=, "$GC" > cases.csv
run 0 $RBA -S st -q sample add $V cases.csv
run 0 $RBA -S st audit $V
out_has "bit-identical"
run 0 $RBA -S st dispute $V 2
out_has "unseen      purpose = A499: a level not seen in training; it went right at each of the 47 splits on purpose on its path (in 45 of the 100 trees)"
out_has "reasons     log-odds of class 2 by exact path-dependent TreeSHAP"
out_has "checking_status = A12"
out_has "(agrees, tolerance 1e-06)"
run 0 $RBA -S st --json dispute $V 2 --rebuild
ok "TreeSHAP adds up on the unseen level's case" jq -e '.explanation.sum_ok and
	.explanation.score_check.ok and
	((.explanation.baseline + ([.explanation.contributions[].contribution] | add)
	  - .explanation.margin) | fabs) <= 1e-6' out
# score: the unseen level scores without an error, as the sample stored it
run 0 $RBA score n.bin cases.csv
ok "one line per case" [ "$(wc -l < out)" = 61 ]
s2=$(awk -F, '$1 == 2 { print $2 }' out)
run 0 $RBA -S st --json sample show $V 2
got=$(printf "%.9g" "$(jq -r ".scores[1]" out)")
ok "sample and score agree on the unseen level ($got, $s2)" [ "$got" = "$s2" ]

# bad inputs: one line, exit 2, nothing stored
sed 's/^  native: \[checking_status,/  native: [nope,/' "$PINS" > bad1.yaml
run 2 $RBA check bad1.yaml
err_is "rebuild-audit: invalid pins 'bad1.yaml:16:12': 'data.native[0]' names a column not in 'data.categorical'"
sed 's/{kind: gbdt, trees: 100, max_depth: 4, learning_rate: 0.1,/{kind: mlp, hidden: [4]}/; /min_child_weight: 1, lambda/d; /subsample: 0.8, colsample/d' "$PINS" > bad2.yaml
run 2 $RBA check bad2.yaml
err_is "rebuild-audit: invalid pins 'bad2.yaml:16:3': 'data.native' applies only to model kind gbdt (a network takes a categorical column one-hot)"
# a native column over its cap of 1048576 levels
awk 'BEGIN { print "id,emp,x,y"; for (i = 1; i <= 1048577; i++) printf "%d,E%d,%d,%d\n", i, i, i % 7, i % 2 }' > cap.csv
d=$(sha256sum cap.csv | cut -d' ' -f1)
printf 'schema: rebuild-audit/pins/v1\nversion: cap\nsnapshot: sha256:%s\ndata: {label: y, id: id, categorical: [emp], native: [emp]}\nmodel: {kind: gbdt, trees: 2}\n' "$d" > cap.yaml
run 0 $RBA -S st snapshot add cap.csv
before=$(txnid st)
run 2 $RBA -S st register cap.yaml --policy "$POL"
err_is "rebuild-audit: cannot register 'cap': column 'emp' has 1048577 distinct values, over the limit of 1048576"
ok "nothing stored" [ "$(txnid st)" = "$before" ]
# a damaged level set is refused by the loader
off=$(od -A d -t u1 -v n.bin | awk '{ for (i = 2; i <= NF; i++) print $i }' | awk 'BEGIN { n = 0 } { b[n++] = $1 } END { for (i = 0; i + 13 < n; i++) if (b[i] == 3 && b[i+5] >= 1 && b[i+6] == 0 && b[i+7] == 0 && b[i+8] == 0 && b[i+1] < 40 && b[i+2] == 0 && b[i+3] == 0 && b[i+4] == 0 && b[i+9] < 20 && b[i+10] == 0) { print i + 9; exit } }')
ok "a categorical split found in the bytes" test -n "$off"
cp n.bin bad.bin
printf '\377\377\377\000' | dd of=bad.bin bs=1 seek="$off" conv=notrunc 2> /dev/null
run 2 $RBA score bad.bin cases.csv
err_has "level index is out of range"
