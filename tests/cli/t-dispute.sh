# dispute: the one answer a reviewer needs, and its exit status.
V=german-categorical-mlp
POL=$FIX/policy/credit.yaml
DSCHEMA=$FIX/evidence/dispute-v2.schema.json
JSONSCHEMA=/usr/bin/jsonschema
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$FIX/german-credit.csv"
run 0 $RBA -S st -q register "$FIX/pins/german-categorical-mlp.yaml" --policy "$POL"
run 0 $RBA -S st -q sample add $V "$FIX/german-credit.csv"

# the first declined case and the first approved one of the sample
declined=
approved=
i=1
while [ $i -le 60 ] && { [ -z "$declined" ] || [ -z "$approved" ]; }; do
	d=$($RBA -S st --json sample show $V $i | jq -r .decision)
	[ "$d" = decline ] && [ -z "$declined" ] && declined=$i
	[ "$d" = approve ] && [ -z "$approved" ] && approved=$i
	i=$((i + 1))
done
ok "the sample has a declined case" test -n "$declined"

# a declined case of a bit-identical version: it stands
run 0 $RBA -S st dispute $V $declined
out_has "dispute     case $declined of version $V"
out_has "decision decline"
out_has "threshold   stored score"
out_has "version     bit-identical: the rebuilt artifact is bit-identical to the pinned one"
ok "the last line is the answer" test "$(tail -n 1 out)" = "the disputed decline stands"
# its principal reasons: exact Shapley values over the columns (an MLP)
out_has "reasons     log-odds of class 2 by exact Shapley values, from the rebuilt artifact, bit-identical to the one that made the decision"
out_has "  1. "
out_has "  4. "
out_lacks "  5. "
out_has "(agrees, tolerance 1e-06)"
out_has "the log-odds give the score"
out_has "artifact    pinned sha256:"
out_lacks "scored as stored"
run 0 $RBA -S st --json dispute $V $declined --reasons 2
ok "reasons in JSON: two, toward decline, adding up" jq -e '.explanation.ok and
	.explanation.method == "shapley" and .explanation.direction == "up" and
	(.explanation.principal_reasons | length) <= 2 and
	([.explanation.principal_reasons[].contribution] | all(. > 0)) and
	(.explanation.contributions | length) == 20 and
	((.explanation.baseline + ([.explanation.contributions[].contribution] | add)
	  - .explanation.margin) | fabs) <= 1e-6 and .explanation.sum_ok and
	.explanation.score_check.ok and .explanation.decision_artifact and
	.scoring.artifact == "rebuilt" and .scoring.audit_record == null' out
run 2 $RBA -S st dispute $V $declined --reasons many
err_has "bad usage 'dispute': --reasons needs a count from 0 to 64, not 'many'"
# -q: no report when the answer is yes, wherever -q stands
run 0 $RBA -S st -q dispute $V $declined
out_empty
run 0 $RBA -S st dispute $V $declined -q
out_empty
run 0 $RBA -S st audit $V
run 0 $RBA -S st dispute $V $declined --show-inputs
out_has "version     bit-identical: audit record 1 of"
out_has "  checking_status"
# a bit-identical audit proves the stored artifact: no retrain
out_has "scored as stored: no retrain, audit record 1 proves it"
out_has "decided by  sha256:"
out_has "(the stored artifact)"
out_has "reasons     log-odds of class 2 by exact Shapley values, from the stored artifact, which made the decision"
out_has "the disputed decline stands"
run 0 $RBA -S st --json dispute $V $declined
ok "no retrain after a bit-identical audit" jq -e '.scoring.artifact == "stored" and
	.scoring.audit_record == 1 and .timings.rebuild_s == 0 and
	.standing.audit_record == 1 and .answer == "stands"' out
# the signed answer to this one dispute
run 0 $RBA keygen -o k
run 0 $RBA -S st dispute $V $declined --export -k k.key -o d.json
out_has "exported    d.json, signed in d.json.minisig"
ok "the answer stays last" test "$(tail -n 1 out)" = "the disputed decline stands"
run 0 minisign -Vm d.json -p k.pub
run 0 $RBA verify d.json -p k.pub
out_has "dispute evidence consistent: version $V, case $declined: the disputed decline stands"
ok "the evidence holds inputs, reasons and digests" jq -e '.predicateType ==
	"https://rebuild-audit.dev/dispute-evidence/v2" and
	(.predicate.dispute.inputs | length) == 22 and .predicate.dispute.explanation.ok and
	.predicate.dispute.scoring.audit_record == 1 and .predicate.history.id >= 1 and
	.subject[0].digest.sha256 == (.predicate.dispute.digests.artifact_decisions | ltrimstr("sha256:"))' d.json
# the JSON schema of dispute evidence accepts it, and refuses a document
# without a required member and one with a value outside an enum
ok "jsonschema installed (python3-jsonschema)" test -x "$JSONSCHEMA"
run 0 "$JSONSCHEMA" -i d.json "$DSCHEMA"
# (one run for the four, each refusal named on stderr)
jq 'del(.predicate.dispute.explanation.baseline)' d.json > s1.json
jq '.predicate.dispute.explanation.method = "lime"' d.json > s2.json
jq '.predicate.dispute.scoring.artifact = "cached"' d.json > s3.json
jq '.predicate.dispute.stands = true' d.json > s4.json
run 1 "$JSONSCHEMA" -i s1.json -i s2.json -i s3.json -i s4.json "$DSCHEMA"
err_has "'baseline' is a required property"
err_has "'lime' is not one of ['linear', 'treeshap', 'shapley', None]"
err_has "'cached' is not one of ['rebuilt', 'stored']"
err_has "Additional properties are not allowed ('stands' was unexpected)"
# one changed byte: both refuse it
sed 's/"the disputed decline stands"/"the disputed decline standz"/' d.json > d2.json
cp d.json.minisig d2.json.minisig
ok "the byte changed" sh -c '! cmp -s d.json d2.json'
run 1 minisign -Vm d2.json -p k.pub
run 1 $RBA verify d2.json -p k.pub
err_has "verification failed 'd2.json'"
# re-signed after the change: the signature holds, the contents do not
tc=$(sed -n 's/^trusted comment: //p' d.json.minisig)
minisign -S -s k.key -m d2.json -t "$tc" > /dev/null 2>&1 < /dev/null
run 0 minisign -Vm d2.json -p k.pub
run 1 $RBA verify d2.json -p k.pub
err_has "dispute evidence: the answer 'stands' has the line 'the disputed decline standz', not the one its stored decision and its reasons' accuracy give, 'the disputed decline stands'"
# refused_resigned FILE MESSAGE: FILE signed with d.json's trusted comment
# (the signature holds), and verify refuses its contents with MESSAGE
refused_resigned() {
	minisign -S -s k.key -m "$1" -t "$tc" > /dev/null 2>&1 < /dev/null
	run 0 minisign -Vm "$1" -p k.pub
	run 1 $RBA verify "$1" -p k.pub
	err_has "dispute evidence: $2"
}
jq -c '.predicate.dispute.explanation.contributions[0].contribution += 0.5' d.json > d3.json
refused_resigned d3.json "the contributions and the baseline do not add up to the case's margin"
# a member verify does not check, or one named twice (a reader taking the
# last would see another answer; the JSON reader refuses a key given
# twice), re-signed: verify says no
jq -c '.predicate.dispute.stored.override = "approve"' d.json > d4.json
refused_resigned d4.json "'predicate.dispute.stored' has a member missing, unknown or twice"
jq -c '.extra = 1' d.json > d5.json
refused_resigned d5.json "the statement has a member missing, unknown or twice"
jq -c 'del(.predicate.dispute.timings.total_s)' d.json > d6.json
refused_resigned d6.json "'predicate.dispute.timings' has a member missing, unknown or twice"
sed 's/"answer_line":/"answer":"escalate","answer_line":/' d.json > d7.json
ok "a member named twice" sh -c '[ $(grep -o "\"answer\":" d7.json | wc -l) -eq 2 ]'
refused_resigned d7.json "not JSON (byte "
err_has ": duplicate key 'answer')"
jq -c '.predicate.dispute.explanation.principal_reasons[0].note = "x"' d.json > d8.json
refused_resigned d8.json "a principal reason has a member missing, unknown or twice"
k=$(jq -r '.predicate.dispute.inputs | keys_unsorted[0]' d.json)
sed "s/\"inputs\": {/\"inputs\": {\"$k\": \"x\", /" d.json > d9.json
ok "an input named twice" test "$(grep -o "\"$k\":" d9.json | wc -l)" -eq \
	"$(($(grep -o "\"$k\":" d.json | wc -l) + 1))"
refused_resigned d9.json "not JSON (byte "
err_has ": duplicate key '$k')"
run 2 $RBA -S st dispute $V $declined --export -o x.json
err_has "bad usage 'dispute': --export needs -k KEY and -o FILE"
run 0 $RBA -S st --json dispute $V $declined --rebuild
ok "--rebuild retrains" jq -e '.scoring.artifact == "rebuilt" and
	.scoring.audit_record == null and .timings.rebuild_s > 0 and
	.answer == "stands"' out
run 0 $RBA -S st --json dispute $V $approved --show-inputs
ok "dispute --json" jq -e --arg id "$approved" '.case == $id and .answer == "stands" and
	.answer_line == "the disputed approve stands" and .stored.decision == "approve" and
	.rebuilt.score == .stored.score and .standing.verdict == "bit-identical" and
	.standing.audit_record == 1 and (.inputs | length) == 22' out

# pins edited after registration: a flipped case escalates
run 0 $RBA -S st version export-artifact $V orig.bin
sed 's/lr: 0.02/lr: 0.03/' "$FIX/pins/german-categorical-mlp.yaml" > edited.yaml
run 0 $RBA -S st -q register edited.yaml --artifact orig.bin --policy "$POL" --replace
# before any audit of this rebuild: no standing to rest on
run 1 $RBA -S st dispute $V $approved
ok "escalates without an audit of the rebuild" sh -c 'tail -n 1 out | grep -q "^escalate: "'
run 1 $RBA -S st --json audit $V
flipped=$(jq -r '.audits[0].sample.flipped_cases[0].id' out)
ok "the edited version has a flipped case" test -n "$flipped" -a "$flipped" != null
run 1 $RBA -S st dispute $V "$flipped"
ok "a flipped case escalates with its decisions" sh -c \
	'tail -n 1 out | grep -q "^escalate: the rebuilt model decides .* where the stored decision was "'
# (record 2 is the history record of register --replace)
out_has "version     not-reproducible: audit record 3 of"
out_has "also        the version does not reproduce (audit record 3:"
run 1 $RBA -S st --json dispute $V "$flipped"
ok "escalate in JSON" jq -e '.answer == "escalate" and (.reasons | length) == 2 and
	.rebuilt.decision != .stored.decision and .margin >= 0' out
# the escalation signed: retrained, and the schema accepts it too
run 1 $RBA -S st dispute $V "$flipped" --export -k k.key -o esc.json
run 0 $RBA verify esc.json -p k.pub
run 0 "$JSONSCHEMA" -i esc.json "$DSCHEMA"
ok "escalate evidence: retrained, with its reasons" jq -e '.predicate.dispute.answer ==
	"escalate" and (.predicate.dispute.reasons | length) == 2 and
	.predicate.dispute.scoring.artifact == "rebuilt"' esc.json
jq '.predicate.dispute.reasons = []' esc.json > s5.json
run 1 "$JSONSCHEMA" -i s5.json "$DSCHEMA"

# A sample whose scores production logged (rounded to 3 decimals): the
# reasons are checked against the score the deciding model computes, not
# the logged number, and the answer exports and verifies.
LV=german-numeric-logistic
run 0 $RBA -S lg init
run 0 $RBA -S lg snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S lg -q register "$FIX/pins/$LV.yaml" --policy "$POL"
run 0 $RBA -S lg version export-artifact $LV lg.bin
run 0 $RBA score lg.bin "$FIX/german-credit-numeric.csv" --policy "$POL"
awk -F, 'NR > 1 { printf "%.3f,%s\n", $2, $3 }' out > lgscores.txt
awk -F, 'NR == FNR { s[FNR] = $0; next } FNR == 1 { print $0 ",score,decision"; next }
	{ print $0 "," s[FNR - 1] }' lgscores.txt "$FIX/german-credit-numeric.csv" > logged.csv
run 0 $RBA -S lg -q sample add $LV logged.csv --score-column score --decision-column decision
lcase=$(awk -F, 'NR > 1 && $NF == "decline" { print $1; exit }' logged.csv)
run 0 $RBA -S lg dispute $LV "$lcase" --export -k k.key -o lg.json
out_has "the rescored score is"
out_lacks "DISAGREES"
ok "logged scores: the check is of the model's own score" jq -e '.predicate.dispute.explanation.score_check |
	.score_of == "rescored" and .ok' lg.json
run 0 $RBA verify lg.json -p k.pub
run 0 "$JSONSCHEMA" -i lg.json "$DSCHEMA"
# the score a margin explains, moved and re-signed: verify says no
jq -c '.predicate.dispute.explanation.score_check.score += 0.001' lg.json > lg2.json
minisign -S -s k.key -m lg2.json -t "$(sed -n 's/^trusted comment: //p' lg.json.minisig)" > /dev/null 2>&1 < /dev/null
run 1 $RBA verify lg2.json -p k.pub
err_has "dispute evidence: the score the reasons explain is not the rebuilt score"

# could not answer
run 2 $RBA -S st dispute $V no-such-case
err_is "rebuild-audit: cannot answer the dispute of 'no-such-case': no case 'no-such-case' in the sample of version '$V'"
run 2 $RBA -S st dispute nope 1
err_is "rebuild-audit: cannot answer the dispute of 'nope': no version 'nope' in the store"
run 2 $RBA -S st dispute $V
err_has "bad usage 'dispute': dispute needs a VERSION and a CASE"
run 2 $RBA -S nostore dispute $V 1
err_has "rebuild-audit: cannot open store 'nostore':"
