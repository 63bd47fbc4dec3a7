# t-train.sh - rebuild-audit train: digests, artifacts, run records, errors.
golden() { sed -n "s/^$1 //p" "$FIX/golden/strict-abi1.txt"; }
GN=$FIX/german-credit-numeric.csv
GC=$FIX/german-credit.csv

# The same digest twice, equal to the golden one and to sha256sum.
run 0 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$GN" -o a.bin
out_is_digest=$(cat out)
err_is "rebuild-audit: no store at './audit-store': the run record is not kept"
ok "digest is the golden one" [ "$out_is_digest" = "$(golden german-numeric-logistic)" ]
ok "sha256sum agrees" [ "sha256:$(sha256sum a.bin | cut -d' ' -f1)" = "$out_is_digest" ]
run 0 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$GN" -o b.bin
ok "second run, same digest" [ "$(cat out)" = "$out_is_digest" ]
ok "same bytes" cmp -s a.bin b.bin

# The run record, and the quality bar of the logistic model.
run 0 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$GN" --record run.json
ok "record is JSON" jq -e . run.json
ok "record: config hash" jq -e '.config_hash | test("^sha256:[0-9a-f]{64}$")' run.json
ok "record: snapshot" jq -e '.snapshot == "sha256:8b10ea46325d3e933960aad0fcb919f16588f01d80a673356a9daf574a91c9a9"' run.json
ok "record: environment" jq -e '.environment | test("^sha256:[0-9a-f]{64}$")' run.json
ok "record: artifact" jq -e --arg d "$out_is_digest" '.artifact == $d' run.json
ok "record: code revision" jq -e '.code_revision | startswith("0.")' run.json
ok "record: seed and abi" jq -e '.seed == 0 and .trainer_abi == 1' run.json
ok "record: one curve point per epoch" jq -e '.curves | length == 30' run.json
ok "record: curves have losses" jq -e '[.curves[] | .train_loss > 0 and .val_loss > 0 and .val_acc > 0 and .val_auc > 0.5] | all' run.json
ok "record: validation accuracy >= 0.73" jq -e '.final.val_acc >= 0.73' run.json
ok "record: examples per second" jq -e '.examples_per_second > 0 and .train_seconds > 0 and .wall_seconds > 0' run.json
ok "record: split sizes" jq -e '.examples.train == 750 and .examples.validation == 250 and .examples.features == 24' run.json

# The categorical encoding and an MLP.
run 0 $RBA train "$FIX/pins/german-categorical-mlp.yaml" --snapshot "$GC"
ok "categorical MLP golden" [ "$(cat out)" = "$(golden german-categorical-mlp)" ]
run 0 $RBA --json train "$FIX/pins/german-categorical-mlp.yaml" --snapshot "$GC"
ok "--json" jq -e --arg d "$(golden german-categorical-mlp)" '.artifact == $d and .trainer_abi == 1' out

# Thread count is not in the bits; fast mode runs.
sed 's/threads: 1/threads: 2/' "$FIX/pins/german-categorical-mlp.yaml" > t2.yaml
run 0 $RBA train t2.yaml --snapshot "$GC"
ok "threads 2, same digest" [ "$(cat out)" = "$(golden german-categorical-mlp)" ]
sed 's/mode: strict/mode: fast/' "$FIX/pins/german-categorical-mlp.yaml" > fast.yaml
run 0 $RBA train fast.yaml --snapshot "$GC" --record fast.json
out_has 'sha256:'
ok "fast record says fast" jq -e '.mode == "fast"' fast.json

# From a store, by digest.
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$GN"
run 0 $RBA -S st train "$FIX/pins/german-numeric-logistic.yaml"
ok "from the store, same digest" [ "$(cat out)" = "$out_is_digest" ]

# Errors: exit 2 with one diagnostic.
run 2 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$GC"
err_is "rebuild-audit: cannot train '$GC': does not match the pinned snapshot sha256:8b10ea46325d3e933960aad0fcb919f16588f01d80a673356a9daf574a91c9a9"
out_empty
run 2 $RBA -S nostore train "$FIX/pins/german-numeric-logistic.yaml"
# A store that cannot keep the run: exit 2 and no digest, the training
# is not reported as done.
mkdir bad && head -c 4096 st/data.mdb > bad/data.mdb
run 2 $RBA -S bad train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$GN"
out_empty
err_has "rebuild-audit: cannot open store 'bad': "
run 0 $RBA -S bad train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$GN" --no-keep
ok "--no-keep never opens the store" [ "$(cat out)" = "$out_is_digest" ]
err_empty
run 2 $RBA -S nostore train "$FIX/pins/german-numeric-logistic.yaml"
err_has "no store at 'nostore' holds it; give --snapshot FILE"
run 2 $RBA -S st train "$FIX/pins/german-categorical-mlp.yaml"
err_has "cannot load snapshot"
run 2 $RBA train missing.yaml --snapshot "$GN"
err_has "invalid pins 'missing.yaml'"
run 2 $RBA train
err_has "needs a pins file"
run 2 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --bogus
err_has "unknown option '--bogus'"
run 2 $RBA train "$FIX/pins/german-numeric-logistic.yaml" --snapshot "$GN" -o nodir/a.bin
err_has "cannot write artifact 'nodir/a.bin'"
ok "no partial artifact" [ ! -e nodir/a.bin ]
sed 's/^snapshot:/trainer_abi: 3\nsnapshot:/' "$FIX/pins/german-numeric-logistic.yaml" > abi3.yaml
run 2 $RBA train abi3.yaml --snapshot "$GN"
err_has "trainer ABI 3 is not known to this build (it knows 1 to 2)"
sed 's/label: class/label: klass/' "$FIX/pins/german-numeric-logistic.yaml" > nolabel.yaml
run 2 $RBA train nolabel.yaml --snapshot "$GN"
err_is "rebuild-audit: cannot train 'nolabel.yaml:6:10': data.label names column 'klass', which the snapshot '$GN' does not have"
sed 's/categorical: \[\]/categorical: []\n  exclude: [a1]/; s/  exclude: \[\]//' "$FIX/pins/german-numeric-logistic.yaml" > excl.yaml
run 0 $RBA train excl.yaml --snapshot "$GN"
ok "excluding a column changes the model" [ "$(cat out)" != "$out_is_digest" ]
sed 's/categorical: \[checking_status,/categorical: [/' "$FIX/pins/german-categorical-logistic.yaml" > notcat.yaml
run 2 $RBA train notcat.yaml --snapshot "$GC"
err_is "rebuild-audit: cannot train '$GC:2': column 'checking_status' is not numeric ('A11'): declare it categorical or exclude it"
sed 's/positive: "2"/positive: "3"/' "$FIX/pins/german-numeric-logistic.yaml" > pos3.yaml
run 2 $RBA train pos3.yaml --snapshot "$GN"
err_has "positive class '3' does not occur in column 'class'"
