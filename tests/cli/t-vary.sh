# t-vary.sh - vary (audit/vary.h): trainers that embed one input of
# their environment change under that factor only, with the flips and
# the largest score difference on the sample; an XGBoost hist trainer
# under none, threads included; a builtin strict version under none of
# threads and isa; unknown factors refused with the list; a control
# that cannot be rebuilt is exit 2; a kill leaves no process and no work
# directory.  Needs bubblewrap, git and python3-xgboost (make deps).
EX=$TOP/contrib/examples/xgboost
CSV=$FIX/german-credit-numeric.csv
POL=$EX/policy.yaml
mkdir -p tmp
TMPDIR=$PWD/tmp
export TMPDIR

mkdir repo
cp "$TOP/tests/cli/exec/vary.py" "$EX/train.py" "$EX/score.py" repo/
git -C repo init -q
git -C repo add .
git -C repo -c user.name=t -c user.email=t@example.org commit -q -m "trainers"
C1=$(git -C repo rev-parse HEAD)
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$CSV"
SNAP=$(grep -o 'sha256:[0-9a-f]*' out | head -n 1)
head -n 41 "$CSV" > cases.csv

# pins VERSION MODE: an opaque trainer that embeds MODE's input
pins() {
	cat <<EOF
schema: rebuild-audit/pins/v1
version: $1
snapshot: $SNAP
data: {label: class, positive: "2", id: id, split: {validation: 0.25, order: tail}}
train: {seed: 7}
trainer:
  kind: exec
  repository: $PWD/repo
  revision: $C1
  command: [/usr/bin/python3, vary.py, $2, "{artifact}"]
  artifact: model.txt
  format: opaque
  environment: {pass: [RBA_TEST_SLEEP]}
  limits: {seconds: 120, memory: 1073741824, output: 4194304}
  score: {command: [/usr/bin/python3, vary.py, score, "{artifact}", "{cases}", "{scores}"]}
EOF
}
# the factors that changed the artifact, in order, comma-separated
changed() { jq -r '[.factors[] | select(.changes_artifact) | .factor] | join(",")' out; }

# one embedder: changes under exactly its factor
embedder() { # MODE FACTOR
	pins "v-$1" "$1" > "p-$1.yaml"
	run 0 $RBA -S st -q register "p-$1.yaml" --policy "$POL"
	run 0 $RBA -S st -q sample add "v-$1" cases.csv
	run 1 $RBA -S st --json vary "v-$1" -j 2
	ok "$1: only $2 changes the artifact" test "$(changed)" = "$2"
	ok "$1: the control is the pinned artifact" jq -e '.control.pinned' out
	ok "$1: every other factor that ran is the same" jq -e \
		"[.factors[] | select(.factor != \"$2\" and .state != \"not-tried\") | .state == \"same\"] | all" out
	ok "$1: the changed factor is scored on the sample" jq -e \
		".factors[] | select(.factor == \"$2\") | .flips >= 0 and .max_score_delta > 0 and (.artifact | startswith(\"sha256:\"))" out
}
embedder tz timezone
embedder host hostname
embedder cwd path
if ls /usr/lib/*/faketime/libfaketime.so.1 > /dev/null 2>&1; then
	embedder clock time
fi

# the text report: one line per factor, with the effect
run 1 $RBA -S st vary v-tz --factors timezone,umask
out_has 'vary v-tz: 1 of 2 factors change the artifact (exit 1)'
out_has 'the pinned artifact'
out_has 'timezone           changes the artifact: '
out_has ' on 40 cases'
out_has 'umask              same'
out_has 'TZ=UTC -> GMT-14'
out_has 'recorded           vary/v-tz@'
run 0 $RBA -S st runs list
out_has 'vary/v-tz@'

# an honest trainer: nothing changes it
pins v-honest honest > p-honest.yaml
run 0 $RBA -S st -q register p-honest.yaml --policy "$POL"
run 0 $RBA -S st --json vary v-honest -j 2
ok "honest: no factor changes it" test "$(changed)" = ""
ok "honest: the report says why a factor was not tried" jq -e \
	'.factors[] | select(.factor == "cpu-features") | .state == "not-tried" and (.detail | contains("environment.pass"))' out
ok "honest: no sample, nothing scored" jq -e '.sample_cases == 0 and .not_scored == "the version has no sample"' out

# XGBoost hist: the same under every factor, threads included
sed -e "s|@SNAPSHOT@|$SNAP|; s|@REPO@|$PWD/repo|; s|@COMMIT@|$C1|" \
    -e "s|@ETA@|0.3|; s|@THREADS@|1|g" "$EX/pins.yaml.in" > px.yaml
run 0 $RBA -S st -q register px.yaml --policy "$POL"
run 0 $RBA -S st -q sample add xgb-credit cases.csv
run 0 $RBA -S st --json vary xgb-credit -j 2
ok "xgboost: no factor changes it" test "$(changed)" = ""
ok "xgboost: threads went 1 -> 2, {threads} and OMP_NUM_THREADS" jq -e \
	'.factors[] | select(.factor == "threads") | .state == "same" and (.detail | contains("OMP_NUM_THREADS: 1 -> 2"))' out

# the builtin trainer: strict mode is the same at any thread count and
# on every kernel path this CPU has
run 0 $RBA -S st snapshot add "$FIX/german-credit.csv"
run 0 $RBA -S st -q register "$FIX/pins/german-categorical-logistic.yaml" --policy "$FIX/policy/credit.yaml"
V=$(sed -n 's/^version: //p' "$FIX/pins/german-categorical-logistic.yaml")
run 0 $RBA -S st --json vary "$V" --factors threads,isa
ok "builtin: neither threads nor isa changes the artifact" test "$(changed)" = ""
ok "builtin: threads ran" jq -e '.factors[] | select(.factor == "threads") | .state == "same"' out

# refusals: unknown names with the list, a factor of the other kind
dump() { mdb_dump -a st > "$1" 2>&1; }
dump before.dump
run 2 $RBA -S st vary v-tz --factors timezone,colour
err_has "unknown factor 'colour'; exec trainers have: threads, timezone, locale"
err_has 'builtin trainers: threads, isa, compiler'
run 2 $RBA -S st vary v-tz --factors isa
err_has "factor 'isa' is one of builtin trainers; this version's are: threads, timezone"
run 2 $RBA -S st vary "$V" --factors hostname
err_has "factor 'hostname' is one of exec trainers"
run 2 $RBA -S st vary no-such-version
err_has "no version 'no-such-version'"
run 2 $RBA -S st vary v-tz -j 0
dump after.dump
ok "refusals: the store is unchanged" cmp -s before.dump after.dump

# kill -9 of vary while a variation runs: nothing is left.  The sleep
# is marked with this shell's pid, so the processes looked for are this
# run's (its value is on the sandbox's command lines), not another's.
mark="RBA_TEST_SLEEP=60.$$"
env "$mark" $RBA -S st vary v-honest -j 2 > /dev/null 2>&1 &
vpid=$!
i=0
while [ $i -lt 200 ] && ! ps -eo args | grep -v grep | grep -qF "$mark"; do
	sleep 0.1
	i=$((i + 1))
done
ok "kill: a variation is running" sh -c "ps -eo args | grep -v grep | grep -qF '$mark'"
kill -9 $vpid
wait $vpid 2> /dev/null
i=0
while [ $i -lt 150 ] && { ps -eo args | grep -v grep | grep -qF "$mark" || [ -n "$(ls tmp)" ]; }; do
	sleep 0.1
	i=$((i + 1))
done
ok "kill: no process of a sandbox is left" sh -c "! ps -eo args | grep -v grep | grep -qF '$mark'"
ok "kill: no work directory is left" sh -c "[ -z \"\$(ls tmp)\" ]"

# a control that cannot be rebuilt: exit 2 with its reason, nothing kept
mv repo repo.away
dump before.dump
run 2 $RBA -S st vary v-tz --factors umask
err_has "cannot vary 'v-tz': the control rebuild of version 'v-tz' failed: repository $PWD/repo is not a directory git can read"
dump after.dump
ok "control: the store is unchanged" cmp -s before.dump after.dump
mv repo.away repo

# the signed variation report: export, verify, and every edit refused
run 0 $RBA keygen -o key
run 0 $RBA -S st export v-tz --vary -k key.key -o vt.json
out_has 'exported variation evidence of v-tz (run vary/v-tz@'
run 0 minisign -Vm vt.json -p key.pub
run 0 $RBA verify vt.json -p key.pub
out_has 'variation evidence consistent: version v-tz'
out_has 'factors change the artifact (timezone)'
run 0 $RBA --json verify vt.json -p key.pub
ok "verify --json: the kind and the changed factors" jq -e \
	'.kind == "vary" and .vary.version == "v-tz" and .vary.changed_factors == "timezone"' out
ok "the evidence holds the kept report" jq -e \
	'.predicateType == "https://rebuild-audit.dev/vary-evidence/v1" and .predicate.report.schema == "rebuild-audit/vary/v1"' vt.json
TC=$(sed -n '3s/^trusted comment: //p' vt.json.minisig)
vresign() { # sed-expression, expected reason
	sed "$1" vt.json > vx.json
	ok "the edit '$1' changes the evidence" sh -c '! cmp -s vx.json vt.json'
	minisign -S -s key.key -m vx.json -t "$TC" > /dev/null 2>&1
	run 1 $RBA verify vx.json -p key.pub
	err_has "$2"
}
vresign 's/"state": "changes", "changes_artifact": true/"state": "same", "changes_artifact": false/' "its artifact and the control's disagree with its state"
vresign 's/"changes_artifact": true/"changes_artifact": false/' "changes_artifact disagrees with its state"
vresign 's/"pinned": true/"pinned": false/' "control.pinned disagrees with the digests"
vresign 's/"name": "v-tz.artifact"/"name": "v-host.artifact"/' "the subject is not named v-tz.artifact"
vresign 's/"flips": [0-9]*/"flips": 4000/' "flips is not a count of the sample's cases"
vresign 's/"state": "same"/"state": "fine"/' "is not one a run has"
run 2 $RBA -S st export v-honest-none --vary -k key.key -o none.json
err_has "no version 'v-honest-none'"
run 0 $RBA -S st -q register "$FIX/pins/german-numeric-logistic.yaml" --policy "$FIX/policy/credit.yaml"
V2=$(sed -n 's/^version: //p' "$FIX/pins/german-numeric-logistic.yaml")
run 2 $RBA -S st export "$V2" --vary -k key.key -o nb.json
err_has "has no variation report (run 'rebuild-audit vary"
run 0 $RBA -S st vary "$V2" --factors threads
run 0 $RBA -S st export "$V2" --vary -k key.key -o nb.json
run 2 $RBA -S st export "$V2" --vary -k key.key -o nb.json
err_has 'exists'
run 2 $RBA -S st export v-tz --vary --cases -k key.key -o x.json

# the page of a variation report: verified first, every factor's row
run 0 $RBA report vt.json -p key.pub -o vt.html
out_has 'from variation evidence'
ok "page: the changed factor" grep -q 'CHANGES THE ARTIFACT' vt.html
ok "page: a factor that did not" grep -q 'same artifact' vt.html
ok "page: what was changed, escaped" grep -q 'TZ=UTC -&gt; GMT-14' vt.html
run 1 $RBA report vx.json -p key.pub -o vx.html
ok "page: an inconsistent file is not drawn" test ! -e vx.html
