# t-range.sh - a finite float32 that the model's standardization takes
# beyond float32 (3.4e38 in people_liable, whose scale is about 0.36) is
# refused where inputs are encoded: score says FILE:LINE:COL and prints
# nothing; training data holding one in its validation rows is refused
# at its line before any training, and nothing is stored.
GC=$FIX/german-credit.csv
WHY="column 'people_liable': value '3.4e38' is beyond what the model's standardization can take"
run 0 $RBA train "$FIX/pins/german-categorical-logistic.yaml" --snapshot "$GC" --no-keep -o a.bin
head -n 3 "$GC" | sed '2s/,A173,1,/,A173,3.4e38,/' > big.csv
head -n 3 "$GC" | sed '3s/,A173,1,/,A173,-3.4e38,/' > neg.csv
head -n 3 "$GC" | sed '2s/,A173,1,/,A173,3.4e37,/' > fine.csv

# score: refused, exit 2, nothing printed, with the field's column
run 2 $RBA score a.bin big.csv
err_is "rebuild-audit: cannot score 'big.csv:2:68': $WHY"
out_empty
run 2 $RBA --json score a.bin big.csv
err_is "rebuild-audit: cannot score 'big.csv:2:68': $WHY"
out_empty
run 2 $RBA score a.bin neg.csv
err_is "rebuild-audit: cannot score 'neg.csv:3:69': column 'people_liable': value '-3.4e38' is beyond what the model's standardization can take"
out_empty
# ... after 999 good cases, still all or nothing
awk -F, 'NR == 1001 { $19 = "3.4e38" } { print }' OFS=, "$GC" > late.csv
col=$(awk -F, 'NR == 1001 { n = 1; for (i = 1; i < 19; i++) n += length($i) + 1; print n }' late.csv)
run 2 $RBA score a.bin late.csv
err_is "rebuild-audit: cannot score 'late.csv:1001:$col': $WHY"
out_empty
# what standardizes to a finite value still scores, to a number
run 0 $RBA --json score a.bin fine.csv
ok "json: 3.4e37 scores, a number" jq -e '.cases | length == 2 and all(.score | type == "number")' out
run 0 $RBA score a.bin fine.csv
out_lacks "nan"

# training: the value in a validation row (split order tail) would be
# inf there; refused before training, at its line, and nothing stored
run 0 $RBA init
awk -F, 'NR == 1001 { $19 = "3.4e38" } { print }' OFS=, "$GC" > wide.csv
D=$(sha256sum wide.csv | cut -c1-64)
sed "s/^snapshot: .*/snapshot: sha256:$D/; s/order: random/order: tail/; s/^version: .*/version: wide/" \
	"$FIX/pins/german-categorical-logistic.yaml" > wide.yaml
run 2 $RBA train wide.yaml --snapshot wide.csv --no-keep -o w.bin
err_is "rebuild-audit: cannot train 'wide.csv:1001': $WHY"
ok "no artifact written" [ ! -e w.bin ]
run 0 $RBA snapshot add wide.csv
before=$(txnid audit-store)
run 2 $RBA register wide.yaml
err_is "rebuild-audit: cannot register 'sha256:$D:1001': $WHY"
run 2 $RBA sweep wide.yaml --seeds 0-1
err_has "$WHY"
ok "nothing stored" [ "$(txnid audit-store)" = "$before" ]
run 2 $RBA version show wide
# the same value in a training row widens the scale it is divided by
awk -F, 'NR == 2 { $19 = "3.4e38" } { print }' OFS=, "$GC" > head.csv
sed "s/^snapshot: .*/snapshot: sha256:$(sha256sum head.csv | cut -c1-64)/" wide.yaml > head.yaml
run 0 $RBA train head.yaml --snapshot head.csv --no-keep -o h.bin

# sample add scores through sample/scorer (the sparse path, and the
# dense one): the same refusal at the case's line, nothing stored
run 0 $RBA snapshot add "$GC"
run 0 $RBA register "$FIX/pins/german-categorical-mlp.yaml" --policy "$FIX/policy/credit.yaml"
before=$(txnid audit-store)
run 2 $RBA sample add german-categorical-mlp big.csv
err_is "rebuild-audit: cannot add sample 'big.csv:2': case '1': $WHY"
run 2 $RBA sample add german-categorical-mlp late.csv
err_is "rebuild-audit: cannot add sample 'late.csv:1001': case '1000': $WHY"
ok "no sample kept" [ "$(txnid audit-store)" = "$before" ]
run 2 $RBA sample show german-categorical-mlp
err_has "has no sample"
run 0 $RBA sample add german-categorical-mlp fine.csv
run 0 $RBA --json sample show german-categorical-mlp 1
ok "json: 3.4e37 stored with finite scores" jq -e '.scores | length == 2 and all(type == "number")' out
