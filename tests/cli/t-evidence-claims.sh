# t-evidence-claims.sh - what signed evidence claims is what was checked:
# the sample claim (the stored scores are the pinned artifact's, or
# production did not run it bit for bit), and the first format's files
# read and verified as before.
SCHEMA=$FIX/evidence/predicate-v4.schema.json
JSONSCHEMA=/usr/bin/jsonschema
valid_schema() { "$JSONSCHEMA" -i "$1" "$SCHEMA" > /dev/null 2>&1; }
resign() { minisign -S -s k.key -m "$1" -t "$2" > /dev/null 2>&1; }
tcomment() { sed -n '3s/^trusted comment: //p' "$1"; }
# edit_refused FILE SED-EXPRESSION REASON: FILE edited, signed again with
# its own trusted comment, and refused by verify for REASON.
edit_refused() {
	sed "$2" "$1" > x.json
	if cmp -s x.json "$1"; then fail "edit '$2' changed nothing"; return; fi
	resign x.json "$(tcomment "$1.minisig")"
	run 1 $RBA verify x.json -p k.pub
	err_has "$3"
}

ok "minisign installed" command -v minisign
ok "jsonschema installed (python3-jsonschema)" test -x "$JSONSCHEMA"

# ---- the first format: read and verified as it always was ------------
for f in "$FIX"/evidence/v1/*.json; do
	run 0 $RBA verify "$f" -p "$FIX/keys/rba-test-only.pub"
	out_has "evidence consistent: version "
	ok "$(basename "$f") is of the first format" test \
		"$(jq -r .predicateType "$f")" = https://rebuild-audit.dev/audit-evidence/v1
done
ok "the first format's schema still takes its files" \
	"$JSONSCHEMA" -i "$FIX/evidence/v1/v1-bit-identical.json" "$FIX/evidence/predicate.schema.json"
# a first-format file edited and signed again is refused as before
cp "$FIX/keys/rba-test-only.key" k.key
cp "$FIX/keys/rba-test-only.pub" k.pub
cp "$FIX/evidence/v1/v1-bit-identical.json" v1.json
cp "$FIX/evidence/v1/v1-bit-identical.json.minisig" v1.json.minisig
edit_refused v1.json 's/"verdict": "bit-identical"/"verdict": "metric-equivalent"/' \
	"verdict metric-equivalent, but the rebuilt artifact is the pinned one"

# ---- the sample claim --------------------------------------------------
# The pinned artifact is its own rebuild and made the sample's decisions,
# but the logged scores are its scores plus 0.0003, beyond the declared
# logging precision 0.0001: the artifact is reproduced, production did
# not run it bit for bit.  The policy (no near-threshold rule) was
# declared before the sample.
run 0 $RBA init
run 0 $RBA snapshot add "$FIX/german-credit-numeric.csv"
sed 's/^version: .*/version: logs/' "$FIX/pins/german-numeric-logistic.yaml" > logs.yaml
run 0 $RBA register logs.yaml --policy "$FIX/policy/audit-tolerant.yaml"
head -n 61 "$FIX/german-credit-numeric.csv" > cases.csv
run 0 $RBA version export-artifact logs logs.bin
run 0 $RBA score logs.bin cases.csv --policy "$FIX/policy/audit-tolerant.yaml"
cut -d, -f2 out | sed '1s/.*/logged/' > logged.txt
paste -d, cases.csv logged.txt > exact.csv
awk -F, 'BEGIN { OFS = "," } NR > 1 { $NF = sprintf("%.9g", $NF + 0.0003) } { print }' exact.csv > off.csv
run 0 $RBA -q sample add logs off.csv --score-column logged --score-precision 0.0001
run 0 $RBA keygen -o mine
mv mine.key k.key
mv mine.pub k.pub
run 0 $RBA --json audit logs
ok "the audit: metric-equivalent, the rebuild the pinned artifact" jq -e \
	'.audits[0].verdict == "metric-equivalent" and .audits[0].digests.artifact_rebuilt == .audits[0].digests.artifact_pinned and .audits[0].digests.artifact_decisions == .audits[0].digests.artifact_pinned' out
off=$(jq '.audits[0].sample.scores_off_precision' out)
ok "every logged score is off ($off)" test "$off" = 60
pinned=$(jq -r '.audits[0].digests.artifact_pinned' out)
run 0 $RBA export logs -k k.key -o claim.json
out_has "guarantee: a rebuild of version logs from its pins gives the pinned artifact $pinned bit for bit, but 60 stored scores of the audit sample are not its (beyond the logging precision 0.0001 declared with the sample): production did not run it bit for bit on those cases; it reproduces every decision on the audit sample of 60 cases and every score within 0.0005"
run 0 minisign -Vm claim.json -p k.pub
run 0 $RBA verify claim.json -p k.pub
out_has "evidence consistent: version logs"
out_has "verdict metric-equivalent"
ok "the fourth format (the second's members and the log)" test "$(jq -r .predicateType claim.json)" = https://rebuild-audit.dev/audit-evidence/v4
ok "the schema of the fourth format accepts it" valid_schema claim.json
ok "the predicate carries the sample claim" jq -e \
	'.predicate.sample.score_precision == 0.0001 and .predicate.results.scores_off_precision == 60 and (.predicate.results.scores_off_case | type) == "string"' claim.json
ok "what it does not guarantee" jq -e \
	'.predicate.not_guaranteed | startswith("that production ran the pinned artifact bit for bit on the 60 cases whose stored scores are not its")' claim.json
# the claim edited and signed again: refused
edit_refused claim.json 's/"scores_off_precision": 60,/"scores_off_precision": 0,/' \
	"verdict metric-equivalent, but the rebuilt artifact is the pinned one"
edit_refused claim.json 's/"scores_off_precision": 60,/"scores_off_precision": 59,/' \
	"predicate.guarantee is not the guarantee of verdict metric-equivalent"
edit_refused claim.json 's/"score_precision": 0.0001/"score_precision": 0.001/' \
	"predicate.guarantee is not the guarantee of verdict metric-equivalent"
edit_refused claim.json 's/"verdict": "metric-equivalent"/"verdict": "bit-identical"/' \
	"verdict bit-identical, but 60 stored scores of the audit sample are not the pinned artifact's"
# with the logged scores exact: bit-identical, both claims in the words
run 0 $RBA -q sample add logs exact.csv --score-column logged
run 0 $RBA audit logs
out_has "bit-identical"
run 0 $RBA export logs -k k.key -o exact.json
out_has "every stored score of the audit sample is the pinned artifact's at binary32, bit for bit"
run 0 $RBA verify exact.json -p k.pub
ok "no stored score off" jq -e '.predicate.results.scores_off_precision == 0 and .predicate.results.scores_off_case == null' exact.json
ok "the schema accepts it" valid_schema exact.json
edit_refused exact.json 's/"scores_off_precision": 0,/"scores_off_precision": 2,/' \
	"verdict bit-identical, but 2 stored scores of the audit sample are not the pinned artifact's"

# ---- declared before, and the audits since ------------------------------
# A version whose first sample the model does not give (not
# reproducible), then one it does (bit-identical), then an ad hoc yes:
# "latest" is the version's own audit, and the failure one audit earlier
# is in its evidence.
sed 's/^version: .*/version: twice/' "$FIX/pins/german-numeric-logistic.yaml" > twice.yaml
run 0 $RBA register twice.yaml --policy "$FIX/policy/credit.yaml"
awk -F, 'NR == 1 { print $0 ",score"; next } { print $0 "," (NR % 3 ? "0.1" : "0.9") }' cases.csv > scored.csv
run 0 $RBA -q sample add twice scored.csv --score-column score
run 1 $RBA audit twice
audits() { $RBA --json history twice | jq '[.[] | select(.record.schema == "rebuild-audit/audit/v1")]'; }
failed=$(audits | jq '.[0].id')
run 0 $RBA -q sample add twice cases.csv
run 0 $RBA audit twice
good=$(audits | jq '.[0].id')
run 2 $RBA audit twice --policy "$FIX/policy/audit-tolerant.yaml"
out_has "bit-identical"
adhoc=$(audits | jq '.[0].id')
ok "three audits" test "$failed" -lt "$good" -a "$good" -lt "$adhoc"
run 0 $RBA export twice -k k.key -o twice.json
out_has "audit $good of version twice at "
out_has "earlier audits since the policy was declared: 1 listed, 1 did not reproduce or did not measure"
ok "latest passes over the ad hoc audit" jq -e --argjson g "$good" \
	'.predicate.audit.id == $g and .predicate.policy.ad_hoc == false' twice.json
ok "who judged, declared when" jq -e \
	'.predicate.policy.judged_by == "version" and (.predicate.policy.declared_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")) and .predicate.history.earlier_since == .predicate.policy.declared_at' twice.json
ok "the failure one audit earlier is listed" jq -e --argjson f "$failed" \
	'.predicate.history.earlier_audits == [.predicate.history.earlier_audits[] | select(.id == $f and .verdict == "not-reproducible" and .exit_status == 1 and .ad_hoc == false and (.policy | startswith("sha256:")))]' twice.json
ok "and said in what is not guaranteed" jq -e \
	'.predicate.not_guaranteed | contains("1 of the 1 earlier audits of version twice since its policy was declared did not reproduce or did not measure")' twice.json
ok "the schema accepts it" valid_schema twice.json
run 0 $RBA verify twice.json -p k.pub
out_has "earlier audits since the policy was declared: 1 listed, 1 did not reproduce or did not measure"
out_has "policy: the version's, declared "
run 0 $RBA --json verify twice.json -p k.pub
ok "verify --json: who judged and the earlier audits" jq -e \
	'.evidence.policy.judged_by == "version" and .evidence.policy.ad_hoc == false and .evidence.earlier_audits == {"listed": 1, "not_reproduced_or_not_measured": 1}' out
# the list edited and signed again
edit_refused twice.json 's/"exit_status": 1,/"exit_status": 0,/' \
	"predicate.history.earlier_audits[0]: verdict not-reproducible with exit status 0"
edit_refused twice.json "s/\"id\": $failed,/\"id\": $good,/" \
	"predicate.history.earlier_audits[0]: record $good is not before the audit record $good"
edit_refused twice.json 's/"earlier_since": "2/"earlier_since": "1/' \
	"predicate.history.earlier_since is not the policy's declared_at"
# the ad hoc audit by id: said in the predicate, the guarantee and by verify
run 0 $RBA export twice --audit "$adhoc" -k k.key -o adhoc.json
out_has "guarantee: ad hoc, not the version's audit: judged by policy sha256:"
ok "ad hoc in the predicate, every earlier audit listed" jq -e --argjson g "$good" \
	'.predicate.policy.ad_hoc and .predicate.policy.judged_by == "option" and .predicate.policy.declared_at == null and .predicate.audit.exit_status == 2 and .predicate.history.earlier_since == null and ([.predicate.history.earlier_audits[].id] | length == 2 and .[1] == $g)' adhoc.json
ok "the schema accepts it" valid_schema adhoc.json
run 0 $RBA verify adhoc.json -p k.pub
out_has "ad hoc: judged by a policy given for this audit, not the one declared for the version: not the version's audit"
edit_refused adhoc.json 's/"ad_hoc": true,/"ad_hoc": false,/' \
	"verdict bit-identical with exit status 2"
edit_refused adhoc.json 's/"guarantee": "ad hoc, not the version.s audit: /"guarantee": "/' \
	"predicate.guarantee is not the guarantee of verdict bit-identical"
# a version whose only audit is ad hoc has nothing for "latest" to sign
sed 's/^version: .*/version: onlyadhoc/' "$FIX/pins/german-numeric-logistic.yaml" > onlyadhoc.yaml
run 0 $RBA register onlyadhoc.yaml --policy "$FIX/policy/credit.yaml"
run 0 $RBA -q sample add onlyadhoc cases.csv
run 2 $RBA audit onlyadhoc --policy "$FIX/policy/audit-tolerant.yaml"
only=$($RBA --json history onlyadhoc | jq '.[0].id')
run 2 $RBA export onlyadhoc -k k.key -o only.json
err_is "rebuild-audit: cannot export 'onlyadhoc': no audit of version 'onlyadhoc' in the history that is not ad hoc (1 ad hoc, the newest record $only: export one with --audit ID, or run 'rebuild-audit audit onlyadhoc')"
ok "nothing written" test ! -e only.json
run 0 $RBA export onlyadhoc --audit "$only" -k k.key -o only.json
out_has "guarantee: ad hoc, not the version's audit"
