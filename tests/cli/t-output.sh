# t-output.sh - what the tool writes: no number a model cannot read goes
# in or comes out, and an output never replaces what is at its path
# unless --force says so (and then never a symlink, a FIFO or a device).
GC=$FIX/german-credit.csv

# A number finite as a double but infinite as the float32 a model reads
# is refused as NaN and Inf are: FILE:LINE:COL, exit 2, nothing scored
# or kept.
run 0 $RBA train "$FIX/pins/german-categorical-logistic.yaml" --snapshot "$GC" -o a.bin
head -n 3 "$GC" | sed '2s/,1169,/,1e39,/' > big.csv
head -n 3 "$GC" | sed '3s/,5951,/,-1e39,/' > neg.csv
head -n 3 "$GC" | sed '2s/,1169,/,3.5e38,/' > edge.csv
head -n 3 "$GC" | sed '2s/,1169,/,340282366920938463463374607431768211456000,/' > long.csv
head -n 3 "$GC" | sed '2s/,1169,/,NaN,/' > nan.csv
run 2 $RBA score a.bin big.csv
err_is "rebuild-audit: cannot read cases 'big.csv:2:17': number '1e39' in column 'credit_amount' overflows float32"
out_empty
run 2 $RBA --json score a.bin big.csv
out_empty
run 2 $RBA score a.bin neg.csv
err_is "rebuild-audit: cannot read cases 'neg.csv:3:18': number '-1e39' in column 'credit_amount' overflows float32"
run 2 $RBA score a.bin edge.csv
err_has "'edge.csv:2:17': number '3.5e38' in column 'credit_amount' overflows float32"
run 2 $RBA score a.bin long.csv
err_has "'long.csv:2:17': number '34028236692093846346337460743176' in column 'credit_amount' overflows float32"
run 2 $RBA score a.bin nan.csv
err_is "rebuild-audit: cannot read cases 'nan.csv:2:17': non-finite number 'NaN' in column 'credit_amount'"
head -n 3 "$GC" | sed '2s/,1169,/,3.4028234e38,/' > max.csv
run 0 $RBA --json score a.bin max.csv
ok "json: FLT_MAX still scores, and no bare nan or inf" jq -e '.cases | length == 2' out
run 0 $RBA init
run 2 $RBA snapshot add big.csv
err_is "rebuild-audit: invalid snapshot 'big.csv:2:17': number '1e39' in column 'credit_amount' overflows float32"
run 0 $RBA snapshot add "$GC"
run 0 $RBA register "$FIX/pins/german-categorical-mlp.yaml" --policy "$FIX/policy/credit.yaml"
before=$(txnid audit-store)
run 2 $RBA sample add german-categorical-mlp big.csv
err_is "rebuild-audit: cannot add sample 'big.csv:2:17': column 'credit_amount' needs a number, not '1e39'"
run 2 $RBA sample add german-categorical-mlp nan.csv
err_is "rebuild-audit: cannot add sample 'nan.csv:2:17': column 'credit_amount' needs a number, not 'NaN'"
ok "no sample kept" [ "$(txnid audit-store)" = "$before" ]
run 2 $RBA sample show german-categorical-mlp
err_has "has no sample"
run 0 $RBA sample add german-categorical-mlp max.csv
run 0 $RBA --json sample show german-categorical-mlp 1
ok "json: sample scores are numbers" jq -e '.scores | length == 2 and all(type == "number")' out
