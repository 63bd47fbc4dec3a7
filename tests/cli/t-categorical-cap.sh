# t-categorical-cap.sh - a one-hot categorical column over the cap of
# 4096 levels is refused in one line, exit 2, nothing stored.
awk 'BEGIN { print "id,emp,x,y"; for (i = 1; i <= 5000; i++) printf "%d,E%05d,%d,%d\n", i, i, i % 7, i % 2 }' > cap.csv
d=$(sha256sum cap.csv | cut -d' ' -f1)
printf 'schema: rebuild-audit/pins/v1\nversion: cap\nsnapshot: sha256:%s\ndata: {label: y, id: id, categorical: [emp]}\nmodel: {kind: gbdt, trees: 2}\n' "$d" > cap.yaml
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add cap.csv
before=$(txnid st)
run 2 $RBA -S st register cap.yaml --policy "$FIX/policy/credit.yaml"
err_is "rebuild-audit: cannot register 'cap': column 'emp' has 5000 distinct values, over the limit of 4096"
ok "nothing stored" [ "$(txnid st)" = "$before" ]
run 2 $RBA train cap.yaml --snapshot cap.csv
err_has "column 'emp' has 5000 distinct values, over the limit of 4096"
