# t-missing.sh - missing values (pins data.missing, data.impute): trees
# learn where a missing value goes (artifact format 3, one digest for
# threads 1, 2, 4); register, sample add, audit, dispute and score take
# a case with a missing input; a network refuses one without an
# imputation and takes it with one; bad inputs are one line, exit 2,
# nothing stored.
golden() { sed -n "s/^$1 //p" "$FIX/golden/strict-abi1.txt"; }
NM=$FIX/german-credit-numeric-missing.csv
CM=$FIX/german-credit-missing.csv
POL=$FIX/policy/credit.yaml
NP=$FIX/pins/german-numeric-missing-gbdt.yaml
CP=$FIX/pins/german-categorical-missing-gbdt.yaml
fmt() { od -A n -t u4 -j 8 -N 4 "$1" | tr -d ' '; }

# trees: the golden digests, format 3, threads change no bit
run 0 $RBA train "$NP" --snapshot "$NM" -o n.bin
out_has "$(golden german-numeric-missing-gbdt)"
ok "a forest with missing values is format 3" [ "$(fmt n.bin)" = 3 ]
for t in 2 4; do
	sed "s/threads: 1/threads: $t/" "$CP" > c$t.yaml
	run 0 $RBA train c$t.yaml --snapshot "$CM"
	out_has "$(golden german-categorical-missing-gbdt)"
done
run 0 $RBA train "$CP" --snapshot "$CM" -o c.bin
out_has "$(golden german-categorical-missing-gbdt)"
# the default tokens written out move nothing: the same canonical pins
sed 's/^  missing: \[""\]$//' "$NP" > nodefault.yaml
run 0 $RBA train nodefault.yaml --snapshot "$NM"
out_has "$(golden german-numeric-missing-gbdt)"
# without the NA token the age column is text: refused as before
sed 's/missing: \["", NA\]/missing: [""]/' "$CP" > nona.yaml
run 2 $RBA train nona.yaml --snapshot "$CM"
err_has "column 'age' is not numeric ('NA')"

# the store: register, sample add, audit, dispute, score
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$CM"
run 0 $RBA -S st -q register "$CP" --policy "$POL"
run 0 $RBA -S st -q sample add german-categorical-missing-gbdt "$CM"
run 0 $RBA -S st audit german-categorical-missing-gbdt
out_has "bit-identical"
out_has "1000 cases, 0 flips"
# the sample keeps every missing value's text: exported byte for byte
run 0 $RBA -S st sample export german-categorical-missing-gbdt ex.csv
ok "the exported sample is the submitted file" cmp -s ex.csv "$CM"
run 0 $RBA -S st store check
out_has "clean: no damage found"
# case 1 lacks duration_months; a case whose age is NA
na=$(awk -F, '$14 == "NA" { print $1; exit }' "$CM")
run 0 $RBA -S st dispute german-categorical-missing-gbdt 1 --show-inputs
out_has "  duration_months          missing"
out_has "agrees"
run 0 $RBA -S st dispute german-categorical-missing-gbdt "$na" --show-inputs
out_has "  age                      missing (NA)"
run 0 $RBA -S st --json dispute german-categorical-missing-gbdt "$na"
ok "TreeSHAP with a missing input adds up to the log-odds" jq -e '
	.explanation.sum_ok and .explanation.score_check.ok and
	((.explanation.baseline + ([.explanation.contributions[].contribution] | add)
	  - .explanation.margin) | fabs) <= 1e-9' out
run 0 $RBA score c.bin "$CM"
s1=$(awk -F, -v id="$na" '$1 == id { print $2 }' out)
run 0 $RBA -S st --json sample show german-categorical-missing-gbdt "$na"
s2=$(printf "%.9g" "$(jq -r '.scores[1]' out)")
ok "score and the sample agree on a case with NA ($s1, $s2)" [ "$s1" = "$s2" ]
# a numeric forest (every column a number, the default token): score
# reads its numbers on the quick path, and a blank is still missing, as
# the sample's scorer has it
run 0 $RBA -S st snapshot add "$NM"
run 0 $RBA -S st -q register "$NP" --policy "$POL"
run 0 $RBA -S st -q sample add german-numeric-missing-gbdt "$NM"
run 0 $RBA score n.bin "$NM"
cp out nscores.csv
for id in 1 2 3 500 1000; do
	s1=$(awk -F, -v id="$id" '$1 == id { print $2 }' nscores.csv)
	run 0 $RBA -S st --json sample show german-numeric-missing-gbdt "$id"
	s2=$(printf "%.9g" "$(jq -r '.scores[1]' out)")
	ok "score and the sample agree on case $id of the numeric forest ($s1, $s2)" [ "$s1" = "$s2" ]
done
# tokens that are numbers (-999, 4): a field that is one is missing,
# never read as the number, on one thread and on two
sed 's/^  missing: \[""\]$/  missing: ["", "-999", "4"]/' "$NP" > tok.yaml
run 0 $RBA train tok.yaml --snapshot "$NM" -o tok.bin
awk -F, -v OFS=, 'NR > 1 { for (i = 2; i <= 25; i++) if ($i == "") $i = "-999" } { print }' "$NM" > tok999.csv
awk -F, -v OFS=, 'NR > 1 { for (i = 2; i <= 25; i++) if ($i == "4") $i = "" } { print }' "$NM" > tok4.csv
ok "the files differ" sh -c '! cmp -s tok999.csv "$1" && ! cmp -s tok4.csv "$1"' sh "$NM"
run 0 $RBA score tok.bin "$NM"
cp out tok.out
for t in 1 2; do
	run 0 $RBA score tok.bin tok999.csv --threads $t
	ok "-999 is a missing value (threads $t)" cmp -s out tok.out
	run 0 $RBA score tok.bin tok4.csv --threads $t
	ok "4 is a missing value (threads $t)" cmp -s out tok.out
done
run 0 $RBA score n.bin tok999.csv
ok "without the token, -999 is a number" sh -c '! cmp -s out nscores.csv'
# a token the model does not know is not a number
awk -F, -v OFS=, 'NR == 2 { $3 = "?" } { print }' "$CM" > q.csv
before=$(txnid st)
run 2 $RBA -S st sample add german-categorical-missing-gbdt q.csv
err_has "q.csv:2:7"
err_has "column 'duration_months' needs a number, not '?'"
ok "nothing stored" [ "$(txnid st)" = "$before" ]
# a forest trained on a complete table sends a missing value right
run 0 $RBA train "$FIX/pins/german-categorical-gbdt.yaml" --snapshot "$FIX/german-credit.csv" -o full.bin
ok "a forest without missing values stays format 2" [ "$(fmt full.bin)" = 2 ]
awk -F, -v OFS=, 'NR == 2 { $3 = "" } { print }' "$FIX/german-credit.csv" > e.csv
run 0 $RBA score full.bin e.csv
ok "it scores every case" [ "$(wc -l < out)" = 1001 ]
# its tokens are the default: NA is not one
run 2 $RBA score full.bin "$CM"
err_has "column 'age' needs a number, not 'NA'"

# bad pins: a token twice, an imputation for trees, nothing to impute
sed 's/missing: \["", NA\]/missing: ["", NA, ""]/' "$CP" > dup.yaml
run 2 $RBA check dup.yaml
err_is "rebuild-audit: invalid pins 'dup.yaml:13:21': 'data.missing[2]' declares the missing token \"\" twice"
sed 's/^  missing: \[""\]$/  impute: mean/' "$NP" > timp.yaml
run 2 $RBA check timp.yaml
err_has "'data.impute' applies only to model kind mlp"

# networks: refused without an imputation, trained with one
dig=$(sha256sum "$NM" | cut -d' ' -f1)
sed "s/^snapshot: .*/snapshot: sha256:$dig/; s/^version: .*/version: nm-logistic/" \
	"$FIX/pins/german-numeric-logistic.yaml" > net.yaml
run 0 $RBA -S st snapshot add "$NM"
before=$(txnid st)
run 2 $RBA -S st register net.yaml --policy "$POL"
err_has ":2': column 'a1' has a missing value ('') and a network takes none unless data.impute is declared (mean or a number)"
ok "one line" [ "$(wc -l < err)" = 1 ]
ok "nothing stored" [ "$(txnid st)" = "$before" ]
sed 's/^  label: class$/  label: class\n  impute: mean/' net.yaml > netm.yaml
sed 's/^  label: class$/  label: class\n  impute: 0/' net.yaml > net0.yaml
run 0 $RBA train netm.yaml --snapshot "$NM" -o m.bin
ok "a network with an imputation is format 3" [ "$(fmt m.bin)" = 3 ]
run 0 $RBA train net0.yaml --snapshot "$NM" -o z.bin
ok "the imputation is part of the model" sh -c '! cmp -s m.bin z.bin'
run 0 $RBA --json check netm.yaml
h1=$(jq -r .config out)
run 0 $RBA --json check net0.yaml
ok "the imputation is part of the config hash" [ "$h1" != "$(jq -r .config out)" ]
run 0 $RBA score m.bin "$NM"
ok "the network scores every case" [ "$(wc -l < out)" = 1001 ]
# a network without an imputation refuses an empty field when scoring
run 0 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$FIX/german-credit-numeric.csv" -o l.bin
run 2 $RBA score l.bin "$NM"
err_has "empty field in numeric column 'a1'"

# a snapshot with an empty field in a numeric column is stored (the empty
# field is the default missing value); the column stays numeric
printf 'a,b\n1,2\n,3\n4,5\n' > e2.csv
run 0 $RBA -S st snapshot add e2.csv
run 0 $RBA -S st --json snapshot show "$(cat out)"
ok "the column with an empty field is numeric" jq -e '.header[0].type == "numeric"' out

# sample add to a network without an imputation: one line, nothing stored
run 0 $RBA -S st snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st -q register "$FIX/pins/german-numeric-logistic.yaml" --policy "$POL"
before=$(txnid st)
run 2 $RBA -S st sample add german-numeric-logistic "$NM"
err_is "rebuild-audit: cannot add sample '$NM:2:3': column 'a1' has a missing value ('') and the model takes none (a network needs data.impute)"
ok "nothing stored" [ "$(txnid st)" = "$before" ]

# a network with an imputation: registered, its sample added, audited
# bit-identical, a case with a missing input disputed and explained
sed 's/^version: nm-logistic$/version: nm-impute/' netm.yaml > netm2.yaml
run 0 $RBA -S st -q register netm2.yaml --policy "$POL"
run 0 $RBA -S st -q sample add nm-impute "$NM"
run 0 $RBA -S st audit nm-impute
out_has "bit-identical"
out_has "1000 cases, 0 flips"
run 0 $RBA -S st dispute nm-impute 1 --show-inputs
out_has "  a1     missing"
out_has "agrees"
