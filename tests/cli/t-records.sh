# t-records.sh - what the records say is this version's: provenance
# kept per version (two versions that train the same bytes, exec
# versions at two commits, an old store's provenance kept with the
# artifact), the tool's own score output read back as the model's
# scores, and ad hoc verdicts labelled wherever they appear.
P=$FIX/pins/german-numeric-logistic.yaml
POL=$FIX/policy/credit.yaml
CSV=$FIX/german-credit-numeric.csv
KEY=$FIX/keys/rba-test-only.key
PUB=$FIX/keys/rba-test-only.pub
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$CSV"

# ---- provenance belongs to the version --------------------------------
# a and b differ only in determinism.threads: the same bytes, two configs
sed 's/^version: .*/version: a/' "$P" > a.yaml
sed 's/^version: .*/version: b/; s/threads: 1/threads: 2/' "$P" > b.yaml
run 0 $RBA -S st --json register a.yaml --policy "$POL"
A=$(jq -r .artifact out)
run 0 $RBA -S st --json register b.yaml --policy "$POL"
ok "threads 1 and 2 train the same artifact" test "$(jq -r .artifact out)" = "$A"
run 0 $RBA -S st -q sample add a "$CSV"
run 0 $RBA -S st -q sample add b "$CSV"
run 0 $RBA -S st -v audit a
out_has "audit a: bit-identical (exit 0)"
out_has "  config         same "
out_lacks "the pins were edited after the artifact was trained"
run 0 $RBA -S st --json audit b
ok "b's own provenance: config same" jq -e '.audits[0].links.config.state == "same"' out
run 0 $RBA -S st --json history a
ok "a's record in the history: config same, never edited" jq -e '
	[.[] | select(.record.schema == "rebuild-audit/audit/v1")] | length == 1 and
	(.[0].record.links.config.state == "same") and
	(.[0].record.pins.config_hash_trained == .[0].record.pins.config_hash)' out
run 0 $RBA -S st export a -k "$KEY" -o a.json
run 0 $RBA verify a.json -p "$PUB"
ok "the signed evidence: config same" jq -e '.predicate.links.config.state == "same"' a.json
ok "the signed evidence: no edit claimed" sh -c '! grep -q "edited after" a.json'
run 0 $RBA report a.json -p "$PUB" -o a.html
ok "the report page: no edit claimed" sh -c '! grep -q "edited after" a.html'
# a version registered from a file of the same bytes has no provenance of
# its own: the other versions' trainings are not its
run 0 $RBA -S st version export-artifact a a.bin
sed 's/^version: .*/version: c/; s/threads: 1/threads: 2/' "$P" > c.yaml
run 0 $RBA -S st register c.yaml --artifact a.bin --policy "$POL"
run 0 $RBA -S st -q sample add c "$CSV"
run 0 $RBA -S st --json audit c
ok "another version's training is not c's: config unknown" jq -e '
	.audits[0].links.config.state == "unknown" and .audits[0].links.snapshot.state == "unknown" and
	.audits[0].pins.config_hash_trained == null' out
# its own training stays with the version through a replace from the file
sed 's/lr: 0.01/lr: 0.03/' a.yaml > a2.yaml
run 0 $RBA -S st -q register a2.yaml --artifact a.bin --policy "$POL" --replace
run 1 $RBA -S st --json audit a
ok "the version's own pins edited after its training: config changed" jq -e '
	.audits[0].links.config.state == "changed" and
	(.audits[0].links.config.note | test("edited after"))' out
run 0 $RBA -S st --json audit b
ok "b is untouched by a's replace" jq -e '.audits[0].links.config.state == "same"' out
run 0 $RBA -S st store check
out_has "clean: no damage found"

# exec versions at two commits that train the same bytes: each audit
# names its own commit in the code link (bubblewrap and git)
mkdir -p tmp repo
TMPDIR=$PWD/tmp
export TMPDIR
git_commit() { git -C repo -c user.name=test -c user.email=test@example.org commit -q "$@"; }
cp "$FIX/xgboost/binary.json" repo/model-src.json
git -C repo init -q
git -C repo add .
git_commit -m "a model"
C1=$(git -C repo rev-parse HEAD)
echo "the same model" > repo/README
git -C repo add README
git_commit -m "a note"
C2=$(git -C repo rev-parse HEAD)
SNAP=$(sed -n 's/^snapshot: //p' "$P")
xpins() {
	printf '%s\n' "schema: rebuild-audit/pins/v1" "version: $1" "snapshot: $SNAP" \
		"data: {label: class, positive: \"2\", id: id, split: {validation: 0.25, order: tail}}" \
		"train: {seed: 7}" "determinism: {threads: 1}" "trainer:" "  kind: exec" \
		"  repository: $PWD/repo" "  revision: $2" \
		"  command: [/bin/cp, model-src.json, \"{artifact}\"]" \
		"  artifact: model.json" "  format: xgboost-json"
}
xpins x1 "$C1" > x1.yaml
xpins x2 "$C2" > x2.yaml
run 0 $RBA -S st --json register x1.yaml --policy "$POL"
XA=$(jq -r .artifact out)
run 0 $RBA -S st --json register x2.yaml --policy "$POL"
ok "two commits, the same bytes" test "$(jq -r .artifact out)" = "$XA"
run 0 $RBA -S st -q sample add x1 "$CSV"
run 0 $RBA -S st --json audit x1
ok "the exec version's own commit in its code link" jq -e --arg c "$C1" '
	.audits[0].verdict == "bit-identical" and
	.audits[0].links.code_revision.state == "same" and
	.audits[0].links.code_revision.pinned == $c' out
run 0 $RBA -S st -q sample add x2 "$CSV"
run 0 $RBA -S st --json audit x2
ok "and the other's its own" jq -e --arg c "$C2" '
	.audits[0].links.code_revision.state == "same" and
	.audits[0].links.code_revision.pinned == $c' out

# ---- an old store: provenance kept with the artifact ------------------
# seed-audited.mdb was written by an earlier tool (version records of
# the first format, provenance as the artifact blob's meta)
mkdir old
cp "$FIX/fuzz/store/seed-audited.mdb" old/data.mdb
chmod 600 old/data.mdb
OV=german-numeric-logistic
run 0 $RBA -S old store check
out_has "clean: no damage found"
run 0 $RBA -S old --json audit $OV
ok "an old store's provenance serves the version that registered it" jq -e '
	.audits[0].links.config.state == "same" and .audits[0].links.snapshot.state == "same" and
	.audits[0].pins.config_hash_trained != null and
	(.audits[0].links.code_revision.pinned | test("e77b9082e487"))' out
run 0 $RBA -S old version export-artifact $OV old.bin
run 0 $RBA -S old version show $OV
sed -n '/^schema:/,$p' out | sed 's/^version: .*/version: other/; s/threads: 1/threads: 2/' |
	grep -Ev '^(artifact|environment|code_revision):' > other.yaml
ok "other's pins" grep -q 'threads: 2' other.yaml
run 0 $RBA -S old register other.yaml --artifact old.bin --policy "$POL"
run 0 $RBA -S old -q sample add other "$CSV"
run 0 $RBA -S old --json audit other
ok "an old store's provenance is not taken for another version's" jq -e '
	.audits[0].links.config.state == "unknown"' out
run 0 $RBA -S old --json audit $OV
ok "the old version still has its own" jq -e '.audits[0].links.config.state == "same"' out
run 0 $RBA -S old store check
out_has "clean: no damage found"

# ---- the tool's own score output as the logs --------------------------
# the logs of production are `score`'s output of the deployed artifact
run 0 $RBA -S st version export-artifact b b.bin
run 0 $RBA score b.bin "$CSV" --policy "$POL"
cut -d, -f2 out | sed '1s/.*/logged/' > logged.txt
ok "score printed a score per case" test "$(wc -l < logged.txt)" = 1001
paste -d, "$CSV" logged.txt > logs-exact.csv
# exact logs under a policy that tolerates no score change: bit-identical
sed 's/max_score_delta: 0.0005/max_score_delta: 0/' "$POL" > exact.yaml
ok "a policy with max_score_delta 0" grep -q 'max_score_delta: 0,' exact.yaml
sed 's/^version: .*/version: logs/' "$P" > logs.yaml
run 0 $RBA -S st register logs.yaml --artifact b.bin --policy exact.yaml
run 0 $RBA -S st -q sample add logs logs-exact.csv --score-column logged
run 0 $RBA -S st --json audit logs
ok "its own nine digits read back as its own scores" jq -e '.audits[0].verdict == "bit-identical" and
	.audits[0].sample.max_score_delta == 0 and .audits[0].sample.scores_off_precision == 0' out
run 0 $RBA -S st export logs --cases -k "$KEY" -o logs.json
run 0 $RBA verify logs.json -p "$PUB"
ok "every case's delta is 0 at binary32" jq -e '.predicate.results.max_score_delta == 0 and
	(.predicate.results.cases | length) == 1000' logs.json
# logs one binary32 step off the model's scores still count
python3 - logs-exact.csv > logs-ulp.csv <<'PY'
import struct, sys
rows = open(sys.argv[1]).read().splitlines()
print(rows[0])
for i, r in enumerate(rows[1:]):
    head, _, v = r.rpartition(",")
    if i == 7:
        b = struct.unpack("<I", struct.pack("<f", float(v)))[0] + 1
        v = "%.9g" % struct.unpack("<f", struct.pack("<I", b))[0]
    print(head + "," + v)
PY
ok "one score moved by one ulp" test "$(diff logs-exact.csv logs-ulp.csv | grep -c '^>')" = 1
sed 's/^version: .*/version: logs-ulp/' "$P" > logs-ulp.yaml
run 0 $RBA -S st register logs-ulp.yaml --artifact b.bin --policy exact.yaml
run 0 $RBA -S st -q sample add logs-ulp logs-ulp.csv --score-column logged
run 1 $RBA -S st --json audit logs-ulp
ok "a log one float ulp off counts" jq -e '.audits[0].verdict == "not-reproducible" and
	.audits[0].sample.max_score_delta > 0 and .audits[0].sample.max_score_delta < 1e-7 and
	.audits[0].sample.max_delta_case == "8" and .audits[0].sample.scores_off_precision == 1' out
run 0 $RBA -S st export logs-ulp --cases -k "$KEY" -o logs-ulp.json
run 0 $RBA verify logs-ulp.json -p "$PUB"
# a flipped case, the largest delta, whose log rounds toward the model's
# score at binary32: its delta is the binary32 one, in the record and
# in the evidence checked against it
awk -F, 'BEGIN { OFS = "," } $1 == "980" { $NF = "0.50000008" } { print }' logs-exact.csv > logs-edge.csv
ok "case 980 logged across the edge" grep -q '^980,.*,0.50000008$' logs-edge.csv
sed 's/max_flips: 0/max_flips: 1/; s/max_score_delta: 0.0005/max_score_delta: 0.001/; s/require_bits: true/require_bits: false/' "$POL" > edge.yaml
sed 's/^version: .*/version: logs-edge/' "$P" > logs-edge.yaml
run 0 $RBA -S st register logs-edge.yaml --artifact b.bin --policy edge.yaml
run 0 $RBA -S st -q sample add logs-edge logs-edge.csv --score-column logged
run 0 $RBA -S st --json audit logs-edge
ok "one flip, the largest delta, at binary32" jq -e '.audits[0].verdict == "metric-equivalent" and
	.audits[0].sample.flips == 1 and .audits[0].sample.max_delta_case == "980" and
	(.audits[0].sample.flipped_cases[0].stored_score - .audits[0].sample.flipped_cases[0].rebuilt_score) >
	.audits[0].sample.max_score_delta' out
run 0 $RBA -S st export logs-edge -k "$KEY" -o logs-edge.json
run 0 $RBA verify logs-edge.json -p "$PUB"
run 0 $RBA -S st store check
out_has "clean: no damage found"
# ---- an ad hoc verdict is labelled ad hoc -----------------------------
# logs 0.0003 off the model's scores fail the declared policy (a flip
# at an edge); a lax policy given for one audit accepts them
awk -F, 'BEGIN { OFS = "," } NR > 1 { $NF = sprintf("%.9g", $NF + 0.0003) } { print }' logs-exact.csv > logs-off.csv
sed 's/^version: .*/version: off/' "$P" > off.yaml
run 0 $RBA -S st register off.yaml --artifact b.bin --policy "$POL"
run 0 $RBA -S st -q sample add off logs-off.csv --score-column logged
run 1 $RBA -S st audit off
sed 's/max_flips: 0/max_flips: 5/; s/require_bits: true/require_bits: false/' "$POL" > lax.yaml
run 2 $RBA -S st audit --policy lax.yaml off
out_has "audit off: metric-equivalent, ad hoc (exit 2)"
ID=$(sed -n 's/^recorded      history record //p' out)
ok "the ad hoc audit was recorded" test -n "$ID"
run 0 $RBA -S st history off
ok "history labels the ad hoc record" grep -Eq "^$ID +.* off +metric-equivalent, ad hoc +[0-9a-f]" out
ok "history does not label the declared audit" grep -Eq "^$((ID - 1)) +.* off +not-reproducible +[0-9a-f]" out
run 0 $RBA -S st --json history off
ok "history --json labels the ad hoc record" jq -e --argjson id "$ID" '
	(.[] | select(.id == $id) | .ad_hoc == true and .record.verdict == "metric-equivalent") and
	(.[] | select(.id == $id - 1) | .ad_hoc == false)' out
run 0 $RBA -S st export off --audit "$ID" -k "$KEY" -o adhoc.json
out_has "audit $ID of version off at "
out_has ": metric-equivalent, ad hoc"
ok "the statement says ad hoc" jq -e '.predicate.policy.ad_hoc == true and
	(.predicate.guarantee | test("^ad hoc"))' adhoc.json
run 0 $RBA verify adhoc.json -p "$PUB"
out_has ", verdict metric-equivalent, ad hoc"
run 0 $RBA report adhoc.json -p "$PUB" -o adhoc.html
ok "the page title says ad hoc" grep -q '<title>Version off: an ad hoc audit' adhoc.html
ok "the page claims no declared tolerance" sh -c '! grep -q "within the declared tolerance" adhoc.html'
ok "the tolerance section names the policy given" grep -q '<h2>Tolerance of the policy given for this audit' adhoc.html
# the first format's ad hoc file: its record says ad hoc
run 0 $RBA report "$FIX/evidence/v1/v1-ad-hoc.json" -p "$PUB" -o v1.html
ok "a first-format ad hoc page says so in its title" grep -q '<title>Version german-numeric-logistic: an ad hoc audit' v1.html
run 0 $RBA verify "$FIX/evidence/v1/v1-ad-hoc.json" -p "$PUB"
out_has ", verdict bit-identical, ad hoc"
# a version's own audit is not labelled
ok "a declared audit's title is as before" grep -q '<title>Version a rebuilds bit-identical to its pinned artifact</title>' a.html

run 0 $RBA -S st history --verify
