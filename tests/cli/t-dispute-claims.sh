# t-dispute-claims.sh - what a dispute answer claims is what was checked:
# an answer without its reasons is incomplete and escalates, and verify
# refuses signed dispute evidence that stands without them.
POL=$FIX/policy/credit.yaml
JSONSCHEMA=/usr/bin/jsonschema
tcomment() { sed -n '3s/^trusted comment: //p' "$1"; }
resign() { minisign -S -s k.key -m "$1" -t "$2" > /dev/null 2>&1 < /dev/null; }
# refused FILE REASON: FILE, signed again with the trusted comment TC (the
# signature holds), is refused by verify for REASON
refused() {
	resign "$1" "$TC"
	run 0 minisign -Vm "$1" -p k.pub
	run 1 $RBA verify "$1" -p k.pub
	err_has "dispute evidence: $2"
}
ok "minisign installed" command -v minisign
ok "jsonschema installed (python3-jsonschema)" test -x "$JSONSCHEMA"
run 0 $RBA keygen -o k

# ---- no reasons: an MLP too wide for any Shapley computation ---------
# 640 columns and hidden layers of 1024 and 512 units: not even the
# estimate's fewest permutations fit in the work cap (rebuild/explain.h)
run 0 $RBA snapshot synth --rows 100 --features 640 --classes 2 -o wide.csv
wide=$(cat out)
cat > wide.yaml <<EOF
schema: rebuild-audit/pins/v1
version: wide-mlp
snapshot: $wide
data:
  label: class
  positive: "1"
  id: null
  exclude: []
  categorical: []
  standardize: true
  split: {validation: 0.25, order: random, seed: 0}
model:
  {kind: mlp, hidden: [1024, 512], activation: relu, dropout: 0.0}
train:
  {seed: 0, epochs: 1, batch_size: 64, optimizer: adamw, lr: 0.02,
   weight_decay: 0.0, betas: [0.9, 0.999], eps: 1.0e-8}
eval: {subset: all, reduction: mean, dropout: off, input_scale: 1.0}
determinism: {mode: strict, threads: 1}
EOF
run 0 $RBA -S w init
run 0 $RBA -S w snapshot add wide.csv
run 0 $RBA -S w -q register wide.yaml --policy "$POL"
run 0 $RBA -S w -q sample add wide-mlp wide.csv
run 1 $RBA -S w dispute wide-mlp 1
out_has "reasons     none: "
ok "without its reasons the answer is incomplete: it escalates" sh -c \
	'tail -n 1 out | grep -q "^escalate: the principal reasons could not be computed: "'
out_lacks " stands"
run 1 $RBA -S w --json dispute wide-mlp 1
ok "escalate in JSON, the reasons' error the reason" jq -e '.answer == "escalate" and
	(.explanation.ok | not) and (.reasons[-1] | startswith("the principal reasons could not be computed: "))' out
# -q: an escalation is always reported
run 1 $RBA -S w -q dispute wide-mlp 1
out_has "escalate: the principal reasons could not be computed"
# the incomplete answer signed: it verifies as what it is, an escalation
run 1 $RBA -S w dispute wide-mlp 1 --export -k k.key -o w.json
run 0 $RBA verify w.json -p k.pub
out_has "case 1: escalate: the principal reasons could not be computed"
TC=$(tcomment w.json.minisig)
# made to stand and signed again: verify refuses a standing answer
# without its reasons
dec=$(jq -r .predicate.dispute.stored.decision w.json)
jq -c --arg l "the disputed $dec stands" '.predicate.dispute.answer = "stands" |
	.predicate.dispute.answer_line = $l | .predicate.dispute.reasons = []' w.json > w2.json
TC=$(echo "$TC" | sed 's/answer escalate$/answer stands/')
refused w2.json "the answer 'stands' has no reasons: the principal reasons could not be computed"
