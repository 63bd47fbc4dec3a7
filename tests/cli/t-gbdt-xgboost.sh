# t-gbdt-xgboost.sh - validation AUC of our trees against XGBoost 1.7
# (python3-xgboost, installed by `make deps`; tree_method=hist, one
# thread, the same parameters): German credit, tail split, 100 trees of
# depth 4, learning rate 0.1.  Ours must be within 0.005 or better.
py=/usr/bin/python3
for v in german-numeric german-categorical; do
	case $v in
	german-numeric) csv=$FIX/german-credit-numeric.csv cats=- ;;
	*) csv=$FIX/german-credit.csv
	   cats=checking_status,credit_history,purpose,savings,employment_since,personal_status_sex,other_debtors,property,other_installment_plans,housing,job,telephone,foreign_worker ;;
	esac
	# XGBoost draws its own rows and columns: compare without sampling
	sed 's/subsample: 0.8, colsample: 0.8/subsample: 1, colsample: 1/' \
		"$FIX/pins/$v-gbdt.yaml" > p.yaml
	run 0 $RBA --json train p.yaml --snapshot "$csv"
	ours=$(jq -r .val_auc out)
	run 0 $py "$TOP/bench/xgb-train.py" "$csv" class 2 id "$cats" 100 4 0.1
	theirs=$(sed 's/auc=\([^ ]*\).*/\1/' out)
	ok "$v: AUC $ours within 0.005 of XGBoost's $theirs or better" \
		awk -v a="$ours" -v b="$theirs" 'BEGIN { exit !(a >= b - 0.005) }'
done
