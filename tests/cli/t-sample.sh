# sample add/show/export: scoring with the stored artifact, lossless
# export, errors that write nothing, and a kill part-way through.
V=german-categorical-mlp
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$FIX/german-credit.csv"
run 0 $RBA -S st -q register "$FIX/pins/german-categorical-mlp.yaml" --policy "$FIX/policy/credit.yaml"

run 0 $RBA -S st sample add $V "$FIX/german-credit.csv"
out_has "sample of '$V': 1000 cases in 1 chunk"
out_has "scored by  the stored artifact sha256:"
out_has "(the version's)"
out_has "decisions  approve"
run 0 $RBA -S st --json sample show $V
ok "show --json: 1000 cases, 22 columns, decisions add up" \
	jq -e '.cases == 1000 and (.columns | length) == 22 and .id_column == "id" and
	       ([.decisions[]] | add) == 1000 and .scored_by == "model"' out
digest=$(jq -r .digest out)
run 0 $RBA -S st sample show $V
out_has "cases       1000 in 1 chunk"
out_has "case ids    column 'id'"
out_has "score: probability of 2"

# one case, by its id
run 0 $RBA -S st sample show $V 17
out_has "case        17 (version $V)"
out_has "  checking_status          A14"
run 0 $RBA -S st --json sample show $V 17
ok "case --json has its inputs and two probabilities" \
	jq -e '.case == "17" and .inputs.credit_amount == "2424" and (.scores | length) == 2' out
run 2 $RBA -S st sample show $V 4242
err_is "rebuild-audit: cannot show sample '4242': no case '4242' in the sample of version '$V'"

# export: the same header and field texts (here: the same bytes)
run 0 $RBA -S st sample export $V copy.csv
ok "export is the file that was added" cmp copy.csv "$FIX/german-credit.csv"
err_has "exported 1000 cases"
run 0 $RBA -S st sample export $V -
out_is "$FIX/german-credit.csv"
run 0 $RBA -S st --json sample export $V copy2.csv
ok "export --json" jq -e '.cases == 1000 and .out == "copy2.csv"' out
ok "export --json wrote the file" cmp copy2.csv "$FIX/german-credit.csv"

# odd texts survive: leading zeros, signs, exponents, quotes, line breaks
{
	head -n 1 "$FIX/german-credit.csv"
	printf '%s\n' 'x1,A11,06,A34,A43,1169.0,A65,A75,4,A93,A101,4,A121,67,A143,A152,2,A173,1,A192,A201,007'
	printf '%s\n' 'x2,A12,+48,A32,A43,5951,A61,A73,2,A92,A101,2,A121,22,A143,A152,1,A173,1,A191,A201,"a,""b"""'
	printf '%s\n' 'x3,A14,12,A34,A46,2096,A61,A74,2,A93,A101,3,A121,49,A143,A152,1,A172,2,A191,A201,"two'
	printf '%s\n' 'lines"'
	printf '%s\n' 'x4,A11,42,A32,A42,7882,A61,A74,2,A93,A103,4,A122,45,A143,A153,1,A173,2,A191,A201,'
	printf '%s\n' 'x5,A11,24,A33,A40,4870,A61,A73,3,A93,A101,4,A124,53,A143,A153,2,A173,2,A191,A201,-0'
} > odd.csv
run 0 $RBA -S st -q register "$FIX/pins/german-categorical-logistic.yaml" --policy "$FIX/policy/credit.yaml"
run 0 $RBA -S st -q sample add german-categorical-logistic odd.csv
out_empty
run 0 $RBA -S st sample export german-categorical-logistic odd2.csv
ok "odd texts are kept exactly" cmp odd.csv odd2.csv
# a sample is replaced as a whole
run 0 $RBA -S st -q sample add german-categorical-logistic "$FIX/german-credit.csv"
run 0 $RBA -S st --json sample show german-categorical-logistic
ok "replaced sample has 1000 cases" jq -e '.cases == 1000' out

# errors write nothing
t0=$(txnid st)
run 2 $RBA -S st sample add nope "$FIX/german-credit.csv"
err_is "rebuild-audit: cannot add sample 'nope': no version 'nope'"
run 2 $RBA -S st sample add $V missing.csv
err_has "rebuild-audit: cannot add sample 'missing.csv': "
sed '3s/A12/A19/' "$FIX/german-credit.csv" > level.csv
run 2 $RBA -S st sample add $V level.csv
err_is "rebuild-audit: cannot add sample 'level.csv:3': case '2': unknown level 'A19' of categorical column 'checking_status'"
sed '5s/,42,/,forty-two,/' "$FIX/german-credit.csv" > text.csv
run 2 $RBA -S st sample add $V text.csv
err_is "rebuild-audit: cannot add sample 'text.csv:5:7': column 'duration_months' needs a number, not 'forty-two'"
sed '4s/^3,/2,/' "$FIX/german-credit.csv" > dup.csv
run 2 $RBA -S st sample add $V dup.csv
err_is "rebuild-audit: cannot add sample 'dup.csv:4': case id '2' appears twice in the sample of version '$V'"
cut -d, -f1-5 "$FIX/german-credit.csv" > narrow.csv
run 2 $RBA -S st sample add $V narrow.csv
err_is "rebuild-audit: cannot add sample 'narrow.csv:1': the cases lack input column 'credit_amount'"
head -n 1 "$FIX/german-credit.csv" > empty.csv
run 2 $RBA -S st sample add $V empty.csv
err_has "no cases after the header"
run 2 $RBA -S st sample add $V "$FIX/german-credit.csv" --decision-column class
err_has "bad usage 'sample': --decision-column needs --score-column"
run 2 $RBA -S st sample add $V "$FIX/german-credit.csv" --id-column nope
err_has "no id column 'nope' in the header"
run 2 $RBA -S st sample add $V
err_has "bad usage 'sample'"
run 2 $RBA -S st sample frobnicate $V
err_has "unknown subcommand 'frobnicate'"
ok "failed adds wrote nothing" test "$(txnid st)" = "$t0"
run 0 $RBA -S st --json sample show $V
ok "the sample is unchanged" jq -e --arg d "$digest" '.digest == $d' out

# scores from a production log: --score-column and --decision-column
awk -F, 'NR == 1 { print $0 ",score,decision"; next } { print $0 ",0.1,approve" }' \
	"$FIX/german-credit.csv" > logged.csv
run 0 $RBA -S st --json sample add $V logged.csv --score-column score --decision-column decision
ok "logged scores are stored" jq -e '.scored_by == "column" and .decisions.approve == 1000' out
run 0 $RBA -S st sample show $V 5
out_has "score       0.1 (from column 'score')"
out_has "decision    approve"
# without an id column: data row numbers
cut -d, -f2- "$FIX/german-credit.csv" > noid.csv
run 0 $RBA -S st -q sample add $V noid.csv
run 0 $RBA -S st sample show $V 1000
out_has "case        1000 (version $V)"

# a kill part-way leaves the store as it was
awk -F, 'NR == 1 { print; next } { row[NR - 1] = substr($0, index($0, ",") + 1); n = NR - 1 }
	END { for (i = 0; i < 1200000; i++) print (i + 1) "," row[i % n + 1] }' \
	"$FIX/german-credit.csv" > big.csv
run 0 $RBA -S st -q sample add $V "$FIX/german-credit.csv"
run 0 $RBA -S st --json sample show $V
before=$(jq -r .digest out)
sed 's/^version: .*/version: fresh/' "$FIX/pins/german-categorical-mlp.yaml" > fresh.yaml
run 0 $RBA -S st -q register fresh.yaml --policy "$FIX/policy/credit.yaml"
for target in fresh german-categorical-logistic $V; do
	$RBA -S st sample add $target big.csv > /dev/null 2>&1 &
	pid=$!
	sleep 0.5
	kill -9 $pid 2> /dev/null
	wait $pid 2> /dev/null
	ok "sample add of $target was killed part-way" test $? -eq 137
done
# What their steps committed (65,536 cases each) is marked dead: no
# sample's, not damage; the next sample add clears it.  (Whether a kill
# landed after a step is a race: t-sample-steps counts the dead records
# kill by kill.)
run 0 $RBA -S st store check
out_has "clean: no damage found"
run 0 $RBA -S st version list
out_has "$V"
run 0 $RBA -S st --json sample show $V
ok "the earlier sample is intact" jq -e --arg d "$before" '.digest == $d and .cases == 1000' out
run 0 $RBA -S st --json sample show german-categorical-logistic
ok "the other version's sample is intact" jq -e '.cases == 1000' out
run 2 $RBA -S st sample show fresh
err_is "rebuild-audit: cannot show sample 'fresh': version 'fresh' has no sample"
run 0 $RBA -S st -q sample add fresh "$FIX/german-credit.csv"
run 0 $RBA -S st --json store check
ok "the next sample add cleared what the kills left" \
	jq -e '.clean and .checked.dead_marks == 0 and .checked.samples == 3' out
run 0 $RBA -S st audit $V
out_has "bit-identical"
