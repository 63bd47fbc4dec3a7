# t-score.sh - rebuild-audit score: an artifact file scores a cases file.
GC=$FIX/german-credit.csv
run 0 $RBA train "$FIX/pins/german-categorical-logistic.yaml" --snapshot "$GC" -o a.bin
run 0 $RBA score a.bin "$GC"
err_empty
ok "header: id and score" [ "$(head -n 1 out)" = "id,score" ]
ok "one line per case" [ "$(wc -l < out)" = 1001 ]
ok "ids in order" [ "$(sed -n 2p out | cut -d, -f1)" = 1 ]
ok "scores are probabilities" awk -F, 'NR > 1 && !($2 >= 0 && $2 <= 1) { exit 1 }' out
cp out scores.csv
run 0 $RBA score a.bin "$GC"
ok "the same scores twice" cmp -s out scores.csv

# A policy adds the decision; its bands follow the score.
run 0 $RBA score a.bin "$GC" --policy "$FIX/policy/credit.yaml"
ok "header with decision" [ "$(head -n 1 out)" = "id,score,decision" ]
ok "decisions follow the bands" awk -F, 'NR > 1 {
	want = $2 < 0.30 ? "approve" : ($2 < 0.50 ? "refer" : "decline")
	if ($3 != want) exit 1 }' out
ok "some of each decision" sh -c '[ $(cut -d, -f3 out | sort -u | wc -l) = 4 ]'

# JSON, and --id-column.
run 0 $RBA --json score a.bin "$GC" --policy "$FIX/policy/credit.yaml"
ok "json: all cases" jq -e '.cases | length == 1000' out
ok "json: artifact digest" jq -e --arg d "sha256:$(sha256sum a.bin | cut -d' ' -f1)" '.artifact == $d' out
ok "json: case fields" jq -e '.cases[0] | .id == "1" and (.score | type) == "number" and (.probabilities | keys) == ["1","2"] and (.decision | type) == "string"' out
run 0 $RBA score a.bin "$GC" --id-column age
ok "--id-column" [ "$(head -n 2 out | tail -n 1 | cut -d, -f1)" = 67 ]
head -n 3 "$GC" | cut -d, -f2- > noid.csv
run 0 $RBA score a.bin noid.csv
ok "no id column: row numbers" [ "$(cut -d, -f1 out | tr '\n' ' ')" = "row 1 2 " ]

# A multiclass model: one probability per class, argmax decisions.
run 0 $RBA snapshot synth --rows 400 --features 5 --classes 3 -o s.csv
snap=$(cat out)
sed "s/^snapshot: .*/snapshot: $snap/" "$FIX/pins/synth-chapter.yaml" > s.yaml
run 0 $RBA train s.yaml --snapshot s.csv -o m.bin
run 0 $RBA score m.bin s.csv --policy "$FIX/policy/argmax.yaml"
ok "multiclass header" [ "$(head -n 1 out)" = "row,p_0,p_1,p_2,decision" ]
ok "argmax decisions" awk -F, 'NR > 1 { b = 0; for (i = 1; i < 3; i++) if ($(i + 2) > $(b + 2)) b = i; if ($5 != b) exit 1 }' out
run 2 $RBA score m.bin s.csv --policy "$FIX/policy/credit.yaml"
err_has 'decision bands need a model with a positive class'

# Cases the model cannot score: exit 2, the line and the reason.
sed '3s/,A43,/,A99,/' "$GC" > unknown.csv
run 2 $RBA score a.bin unknown.csv
err_is "rebuild-audit: cannot score 'unknown.csv:3': unknown level 'A99' of categorical column 'purpose'"
out_empty
cut -d, -f1-3 "$GC" > narrow.csv
run 2 $RBA score a.bin narrow.csv
err_is "rebuild-audit: cannot score 'narrow.csv:1': the cases lack input column 'credit_history'"
run 2 $RBA score a.bin "$GC" --id-column nope
err_has "no column 'nope' for --id-column"
head -c 100 a.bin > short.bin
run 2 $RBA score short.bin "$GC"
err_has "rebuild-audit: cannot load artifact 'short.bin': truncated: "
run 2 $RBA score "$GC" "$GC"
err_has "not an artifact (bad magic) at byte 0"
run 2 $RBA score missing.bin "$GC"
err_has "cannot load artifact 'missing.bin'"
run 2 $RBA score a.bin missing.csv
err_has "cannot read cases 'missing.csv'"
run 2 $RBA score a.bin
err_has 'needs an artifact and a cases file'
run 2 $RBA score a.bin "$GC" --policy missing.yaml
err_has "invalid policy 'missing.yaml'"

# The cases are streamed, but the report is all or nothing: a bad case
# after 10,000 good ones prints nothing and exits 2, and an error of the
# file's form further down still wins over it, as in a whole-file read.
awk -F, 'NR == 1 { print; next } { row[NR - 1] = substr($0, index($0, ",") + 1); m = NR - 1 }
	END { for (i = 0; i < 100000; i++) print (i + 1) "," row[i % m + 1] }' "$GC" > big.csv
head -n 10001 big.csv > ten.csv
sed '10002q' big.csv | sed '10002s/,A4[0-9],/,A99,/' > late.csv
run 2 $RBA score a.bin late.csv
err_is "rebuild-audit: cannot score 'late.csv:10002': unknown level 'A99' of categorical column 'purpose'"
out_empty
run 2 $RBA --json score a.bin late.csv --policy "$FIX/policy/credit.yaml"
out_empty
{ cat late.csv; echo '1,2'; } > late-ragged.csv
run 2 $RBA score a.bin late-ragged.csv
err_is "rebuild-audit: cannot read cases 'late-ragged.csv:10003:4': ragged row: 2 fields, header has 22"
out_empty
run 0 $RBA score a.bin ten.csv
ok "10,000 cases scored" [ "$(wc -l < out)" = 10001 ]
ok "the first 1,000 as scored alone" sh -c 'head -n 1001 out | cmp -s - scores.csv'
ok "every 1,000th case scored alike across blocks" awk -F, 'NR > 1 { s[NR - 2] = $2 }
	END { for (i = 1000; i < 10000; i++) if (s[i] != s[i - 1000]) exit 1 }' out
# A report over the memory spool goes through a file in $TMPDIR.
run 0 $RBA --json score a.bin big.csv --policy "$FIX/policy/credit.yaml"
ok "json: 100,000 cases through the spool file" jq -e '.cases | length == 100000 and .[99999].id == "100000"' out
run 2 env TMPDIR="$PWD/nonexistent" $RBA --json score a.bin big.csv
err_has "cannot create a temporary file in '$PWD/nonexistent'"
out_empty

# Two threads (the default: a helper scores and formats each block of
# 4,096 while the next is read) or one: the same report, byte for byte,
# and the same diagnostics.  A failure of the helper's (the spool file)
# comes before a ragged row further down, as it would with one thread.
run 0 $RBA score a.bin big.csv --policy "$FIX/policy/credit.yaml" --threads 1
cp out big1.csv
run 0 $RBA score a.bin big.csv --policy "$FIX/policy/credit.yaml" --threads 2
ok "100,000 cases: the same report on two threads as on one" cmp -s out big1.csv
run 0 $RBA --json score a.bin big.csv --threads 1
cp out big1.json
run 0 $RBA --json score a.bin big.csv
ok "json: the same report on two threads as on one" cmp -s out big1.json
{ cat big.csv; echo '1,2'; } > big-ragged.csv
for t in 1 2; do
	run 2 $RBA score a.bin late.csv --threads $t
	err_is "rebuild-audit: cannot score 'late.csv:10002': unknown level 'A99' of categorical column 'purpose'"
	run 2 $RBA score a.bin late-ragged.csv --threads $t
	err_is "rebuild-audit: cannot read cases 'late-ragged.csv:10003:4': ragged row: 2 fields, header has 22"
	run 2 $RBA --json score a.bin big-ragged.csv --threads $t
	err_is "rebuild-audit: cannot read cases 'big-ragged.csv:100002:4': ragged row: 2 fields, header has 22"
	run 2 env TMPDIR="$PWD/nonexistent" $RBA --json score a.bin big-ragged.csv --threads $t
	err_has "cannot create a temporary file in '$PWD/nonexistent'"
	out_empty
done
run 2 $RBA score a.bin big.csv --threads 3
err_has "--threads takes 1 or 2"
# Every cell of the CSV out by the one quoting rule (data/csv_write.h):
# an id column named with a comma, ids with a comma and a quote.
awk -F, 'NR == 1 { sub(/^id,/, "\"i,d\","); print; next }
	NR == 2 { sub(/^[^,]*,/, "\"a,\"\"b\"\"\","); print; next } NR < 5' "$GC" > odd.csv
run 0 $RBA score a.bin odd.csv --id-column 'i,d' --policy "$FIX/policy/credit.yaml"
ok "a header cell with a comma is quoted" sh -c 'head -n 1 out | grep -qx "\"i,d\",score,decision"'
ok "an id with a comma and a quote is quoted, the quote doubled" sh -c 'sed -n 2p out | grep -q "^\"a,\"\"b\"\"\","'
ok "the quoted id reads back as one field" sh -c 'sed -n 2p out | awk -F, "{ exit !(NF == 4) }"'
