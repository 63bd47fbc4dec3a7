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
( REBUILD_AUDIT_TEST_HOLD_RECORD=$PWD/go $RBA -S st audit own > race.out 2> race.err
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
( REBUILD_AUDIT_TEST_HOLD_RECORD=$PWD/go $RBA -S st -q audit own > race.out 2> race.err
  echo $? > race.rc ) &
i=0; while [ ! -e go.held ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
touch go
wait
ok "an audit of an unchanged version records (exit $(cat race.rc))" test "$(cat race.rc)" != 2
run 0 $RBA -S st --json history own
ok "its record is there" jq -e '[.[] | select(.record.schema == "rebuild-audit/audit/v1")] | length == 1' out
