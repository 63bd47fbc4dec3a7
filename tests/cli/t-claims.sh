# What a "yes" claims is what was checked: declared provenance kept or
# refused, logged scores held to the pinned artifact's, an audit racing
# a replace, tolerances declared before the sample they judge.
P=$FIX/pins/german-numeric-logistic.yaml
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$FIX/german-credit-numeric.csv"

# ---- declared provenance is kept or refused, never replaced ----------
sed 's/^version: .*/version: dv/' "$P" > declared.yaml
printf 'code_revision: "9.9.9+deadbeef"\n' >> declared.yaml
run 2 $RBA -S st register declared.yaml
err_has "rebuild-audit: cannot register 'declared.yaml:20:16': the pins declare code revision '9.9.9+deadbeef' but this build is '"
run 2 $RBA -S st version show dv
err_has "no such version"
sed 's/^version: .*/version: de/' "$P" > declared-env.yaml
printf 'environment: sha256:%064d\n' 1 >> declared-env.yaml
run 2 $RBA -S st register declared-env.yaml
err_has "rebuild-audit: cannot register 'declared-env.yaml:20:14': the pins declare environment sha256:0000000000000000000000000000000000000000000000000000000000000001 but this machine's is sha256:"
# an artifact built elsewhere keeps what its pins declare ...
run 0 $RBA -S st train "$P" -o built.bin --no-keep
sed 's/^version: .*/version: elsewhere/' "$P" > elsewhere.yaml
printf 'code_revision: "9.9.9+deadbeef"\nenvironment: sha256:%064d\n' 1 >> elsewhere.yaml
run 0 $RBA -S st register elsewhere.yaml --artifact built.bin --policy "$FIX/policy/credit.yaml"
out_has 'code_revision: "9.9.9+deadbeef"'
out_has "environment: sha256:0000000000000000000000000000000000000000000000000000000000000001"
run 0 $RBA -S st version show elsewhere
out_has "code          9.9.9+deadbeef"
# ... and an audit here names both as changed links
run 0 $RBA -S st -q sample add elsewhere "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st --json audit elsewhere
ok "declared code revision is a changed link" jq -e '.audits[0].links.code_revision.state == "changed" and .audits[0].links.code_revision.pinned == "9.9.9+deadbeef"' out
ok "declared environment is a changed link" jq -e '.audits[0].links.environment.state == "changed" and (.audits[0].links.environment.pinned | endswith("0001"))' out
# pins that declare this build's own values train as before
run 0 $RBA -S st register "$P"
sed -n '/^code_revision:/p;/^environment:/p' out > own.txt
{ sed 's/^version: .*/version: own/' "$P"; cat own.txt; } > own.yaml
run 0 $RBA -S st register own.yaml

# ---- an audit racing a replace records nothing ------------------------
run 0 $RBA -S st -q policy set own "$FIX/policy/credit.yaml"
run 0 $RBA -S st -q sample add own "$FIX/german-credit-numeric.csv"
# the audit holds between its verdict and its record until 'go' exists
( REBUILD_AUDIT_TEST_HOLD_RECORD=$PWD/go $RBA_TEST -S st audit own > race.out 2> race.err
  echo $? > race.rc ) &
i=0; while [ ! -e go.held ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
ok "the audit reached its record" test -e go.held
heads_before=$($RBA -S st history own | wc -l)
sed 's/epochs: 30/epochs: 31/' own.yaml | grep -v '^artifact:' > own2.yaml
run 0 $RBA -S st register --replace own2.yaml
touch go
wait
ok "the racing audit exits 2" test "$(cat race.rc)" = 2
ok "it says the version changed" grep -qF "version 'own' changed while it was audited" race.err
ok "it does not say bit-identical" sh -c '! grep -q "bit-identical" race.out'
run 0 $RBA -S st --json history own
ok "no audit record after the replace" jq -e '[.[] | select(.record.schema == "rebuild-audit/audit/v1")] | length == 0' out
run 0 $RBA -S st history --verify
# the same hold with nothing changed records as usual
rm -f go go.held
( REBUILD_AUDIT_TEST_HOLD_RECORD=$PWD/go $RBA_TEST -S st -q audit own > race.out 2> race.err
  echo $? > race.rc ) &
i=0; while [ ! -e go.held ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
touch go
wait
ok "an audit of an unchanged version records (exit $(cat race.rc))" test "$(cat race.rc)" != 2
run 0 $RBA -S st --json history own
ok "its record is there" jq -e '[.[] | select(.record.schema == "rebuild-audit/audit/v1")] | length == 1' out

# ---- logged scores are held to the pinned artifact's ------------------
# "own" scores the cases; the logs are those scores (the tool's own
# 9-digit output), or the same plus 0.0003.
run 0 $RBA -S st version export-artifact own own.bin
run 0 $RBA score own.bin "$FIX/german-credit-numeric.csv" --policy "$FIX/policy/credit.yaml"
cut -d, -f2 out | sed '1s/.*/logged/' > logged.txt
ok "score printed a score per case" test "$(wc -l < logged.txt)" = 1001
paste -d, "$FIX/german-credit-numeric.csv" logged.txt > logs-exact.csv
awk -F, 'BEGIN { OFS = "," } NR > 1 { $NF = sprintf("%.9g", $NF + 0.0003) } { print }' logs-exact.csv > logs-off.csv
for kind in exact off; do
	sed 's/^version: .*/version: logs-'$kind'/' own2.yaml > logs-$kind.yaml
	run 0 $RBA -S st register logs-$kind.yaml --artifact own.bin --policy "$FIX/policy/credit.yaml"
	run 0 $RBA -S st -q sample add logs-$kind logs-$kind.csv --score-column logged
done
# the tool's own score output reads back as the very float it printed
run 0 $RBA -S st audit logs-exact
out_has "bit-identical"
# scores 0.0003 off: within the 0.0005 tolerance, so no flip and no
# score over it, but production did not run this artifact bit for bit;
# the policy requires bits near a band edge, so not reproducible
run 1 $RBA -S st --json audit logs-off
ok "logs off the model are not bit-identical" jq -e '.audits[0].verdict == "not-reproducible"' out
ok "the sample claim is named" jq -e '.audits[0].warnings | any(test("stored scores of the audit sample are not the pinned artifact"))' out
ok "the near-threshold rule applies" jq -e '.audits[0].reasons | any(test("near-threshold rule"))' out
ok "the record counts the scores off" jq -e '.audits[0].sample.scores_off_precision > 900' out
# a declared logging precision that covers the difference: bit-identical
sed 's/^version: .*/version: logs-declared/' own2.yaml > logs-declared.yaml
run 0 $RBA -S st register logs-declared.yaml --artifact own.bin --policy "$FIX/policy/credit.yaml"
run 0 $RBA -S st -q sample add logs-declared logs-off.csv --score-column logged --score-precision 0.00031
run 0 $RBA -S st audit logs-declared
out_has "bit-identical"
run 0 $RBA -S st sample show logs-declared
out_has "0.00031"
# without a score column there is nothing to declare
run 2 $RBA -S st sample add logs-declared logs-off.csv --score-precision 0.1
err_has "--score-precision needs --score-column"
# logged probabilities outside [0, 1] are refused where they stand
awk -F, 'BEGIN { OFS = "," } NR == 3 { $NF = "1.5" } { print }' logs-exact.csv > logs-bad.csv
run 2 $RBA -S st sample add logs-declared logs-bad.csv --score-column logged
err_has "logs-bad.csv:3:"
err_has "is not in [0, 1]"

# ---- the tolerance declared before the sample judges it ---------------
# logs-off fails under its declared policy (bits near a band edge); a
# looser policy set afterwards does not judge the sample it holds
run 0 $RBA -S st policy set logs-off "$FIX/policy/audit-tolerant.yaml"
err_has "is looser than"
run 1 $RBA -S st --json audit logs-off
ok "a loosened policy does not judge the older sample" jq -e '.audits[0].verdict == "not-reproducible" and .audits[0].policy.judged_by == "sample"' out
ok "the record says when its tolerance was declared" jq -e '.audits[0].policy.declared_at | test("^20")' out
run 2 $RBA -S st -q audit --all
out_has "audit logs-off: NOT REPRODUCIBLE"
# an ad hoc --policy is labelled and never exits 0
run 2 $RBA -S st --json audit --policy "$FIX/policy/audit-tolerant.yaml" logs-off
ok "ad hoc: the verdict under it, labelled" jq -e '.audits[0].verdict == "metric-equivalent" and .audits[0].policy.ad_hoc and .audits[0].policy.judged_by == "option"' out
ok "ad hoc: said in words" jq -e '.audits[0].warnings | any(test("^ad hoc"))' out
# the version's own declared policy given as --policy is not ad hoc
run 2 $RBA -S st --json audit --policy "$FIX/policy/audit-tolerant.yaml" logs-exact
ok "ad hoc even when bit-identical" jq -e '.audits[0].policy.ad_hoc and .audits[0].verdict == "bit-identical"' out
run 0 $RBA -S st --json audit --policy "$FIX/policy/credit.yaml" logs-exact
ok "the declared policy by name is not ad hoc" jq -e '(.audits[0].policy.ad_hoc | not) and .audits[0].verdict == "bit-identical"' out
# a sample added after the looser policy is judged by it
run 0 $RBA -S st -q sample add logs-off logs-off.csv --score-column logged
run 0 $RBA -S st --json audit logs-off
ok "a sample added after the policy is judged by it" jq -e '.audits[0].verdict == "metric-equivalent" and .audits[0].policy.judged_by == "version"' out
# a policy at least as strict in every term judges an older sample
sed 's/max_score_delta: 0.0005/max_score_delta: 0.0001/' "$FIX/policy/credit.yaml" > strict.yaml
ok "a stricter policy file" sh -c '! cmp -s strict.yaml "$FIX/policy/credit.yaml"'
run 0 $RBA -S st policy set logs-exact strict.yaml
err_lacks_looser=$(grep -c "looser" err)
ok "a stricter policy is not called looser" test "$err_lacks_looser" = 0
run 0 $RBA -S st --json audit logs-exact
ok "a stricter policy set later judges the older sample" jq -e '.audits[0].policy.judged_by == "version" and .audits[0].verdict == "bit-identical"' out
run 0 $RBA -S st --json history logs-off
ok "policy set is in the history" jq -e '[.[] | select(.record.schema == "rebuild-audit/policy-set/v1" and .record.stricter == false)] | length == 1' out
run 0 $RBA -S st history --verify

# ---- messages that name what they speak of ----------------------------
# a positive class the snapshot lacks is named at the pins key
sed 's/^version: .*/version: p7/; s/positive: "2"/positive: "7"/' "$P" > p7.yaml
run 2 $RBA -S st register p7.yaml
err_is "rebuild-audit: cannot register 'p7.yaml:7:13': positive class '7' does not occur in column 'class' of the snapshot"
# after two replaces the warning names the artifact that made the
# sample's decisions, not the one replaced last
sed 's/^version: .*/version: twice/' "$P" > twice-a.yaml
sed 's/epochs: 30/epochs: 31/' twice-a.yaml > twice-b.yaml
sed 's/epochs: 30/epochs: 32/' twice-a.yaml > twice-c.yaml
run 0 $RBA -S st register twice-a.yaml --policy "$FIX/policy/credit.yaml"
first=$($RBA -S st --json version show twice | jq -r .artifact)
run 0 $RBA -S st -q sample add twice "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st register twice-b.yaml --replace
err_has "holds decisions made by artifact $first"
run 0 $RBA -S st register twice-c.yaml --replace
err_has "holds decisions made by artifact $first"
# evaluate of an artifact with the pins of another kind of model
run 0 $RBA -S st train "$FIX/pins/german-numeric-gbdt.yaml" -o trees.bin --no-keep
run 2 $RBA -S st evaluate trees.bin --pins "$P"
err_has "the artifact is gradient-boosted trees, the pins describe a network with hidden layers []"
sed 's/hidden: \[\]/hidden: [8]/' "$P" > mlp8.yaml
run 2 $RBA -S st evaluate built.bin --pins mlp8.yaml
err_has "the artifact is a network with hidden layers [], the pins describe a network with hidden layers [8]"
run 0 $RBA -S st evaluate built.bin --pins "$P"
# a split that leaves fewer than 3 rows on a side is refused
head -n 9 "$FIX/german-credit-numeric.csv" > tiny.csv
tiny=$($RBA -S st snapshot add tiny.csv)
sed "s/^version: .*/version: tiny/; s/^snapshot: .*/snapshot: $tiny/" "$P" > tiny.yaml
run 2 $RBA -S st register tiny.yaml
err_has "a validation split of 0.25 leaves 2 of the 8 rows to validate and 6 to train: each side needs at least 3"
# score takes its case ids from the pins' id column, as sample add does
sed 's/^id,/case,/' "$FIX/german-credit-numeric.csv" | head -n 4 > renamed.csv
sed 's/^  id: id$/  id: case/' "$P" > case-id.yaml
run 0 $RBA score own.bin renamed.csv --pins case-id.yaml
ok "score names the pins' id column" sh -c 'head -n 1 out | grep -q "^case,score"'
ok "and its ids" sh -c 'sed -n 2p out | grep -q "^1,"'
run 2 $RBA score own.bin renamed.csv --pins "$P"
err_has "no column 'id' for the pins' data.id"
