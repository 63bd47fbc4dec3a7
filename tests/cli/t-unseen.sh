# t-unseen.sh - a level unseen in training, in a native categorical
# column, disputed: where it went on the case's path (the splits on its
# column the path met, each sending it right, or none) in the text
# answer, dispute --json (schema v4) and signed dispute evidence v4,
# each count checked against an independent walk of the artifact's bytes
# (unseen_paths.py); verify refuses an edited note, and --artifact
# checks the levels and the paths against the artifact; the dispute page
# lists the level in the words of the text answer.
V=german-native-gbdt
GC=$FIX/german-credit.csv
POL=$FIX/policy/credit.yaml
PINS=$FIX/pins/$V.yaml
PY=/usr/bin/python3
PATHS=$TOP/tests/cli/unseen_paths.py
S4=$FIX/evidence/dispute-v4.schema.json

# case 2 asks for purpose A499; case 3 for purpose A4XX and savings S99
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "purpose") pc = i; if ($i == "savings") sc = i } }
	NR == 3 { $pc = "A499" } NR == 4 { $pc = "A4XX"; $sc = "S99" } NR <= 61 { print }' OFS=, "$GC" > cases.csv
run 0 $RBA train "$PINS" --snapshot "$GC" -o n.bin
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$GC"
run 0 $RBA -S st -q register "$PINS" --policy "$POL"
run 0 $RBA -S st -q sample add $V cases.csv
run 0 $RBA -S st audit $V
out_has "bit-identical"

# ---- the text answer and --json, against the walk of the artifact's bytes
run 0 $PY "$PATHS" n.bin cases.csv 2
cp out want2.json
ok "the walk finds one unseen level on case 2" jq -e 'length == 1 and .[0].column == "purpose" and .[0].splits > 0' want2.json
sp=$(jq '.[0].splits' want2.json)
tr=$(jq '.[0].trees' want2.json)
run 0 $RBA -S st dispute $V 2 --show-inputs
out_has "  purpose                  A499 (a level not seen in training)"
out_has "  savings                  A61
"
run 0 $RBA -S st dispute $V 2
out_has "unseen      purpose = A499: a level not seen in training; it went right at each of the $sp splits on purpose on its path (in $tr of the 100 trees) (contribution "
out_has "the disputed decline stands"
run 0 $RBA -S st --json dispute $V 2
cp out d2.json
ok "dispute --json is schema v4" jq -e '.schema == "rebuild-audit/dispute/v4"' d2.json
ok "its unseen list is the walk's" sh -c "[ \"\$(jq -cS '[.explanation.unseen[] | del(.went)]' d2.json)\" = \"\$(jq -cS . want2.json)\" ]"
ok "it went right" jq -e '.explanation.unseen[0].went == "right"' d2.json
ok "the same with a rebuild" sh -c "$RBA -S st --json dispute $V 2 --rebuild | jq -e '.explanation.unseen == $(jq -c .explanation.unseen d2.json)'"
# two unseen levels: both, in column order
run 0 $PY "$PATHS" n.bin cases.csv 3
cp out want3.json
run 0 $RBA -S st --json dispute $V 3
ok "case 3: two unseen levels, in column order, as the walk gives them" sh -c "[ \"\$(jq -cS '[.explanation.unseen[] | del(.went)]' out)\" = \"\$(jq -cS . want3.json)\" ] && jq -e '[.explanation.unseen[].column] == [\"purpose\", \"savings\"]' out"
run 0 $RBA -S st dispute $V 3
out_has "unseen      purpose = A4XX: a level not seen in training; it went right at each of the $(jq '.[0].splits' want3.json) splits on purpose"
out_has "unseen      savings = S99: a level not seen in training; it went right at each of the $(jq '.[1].splits' want3.json) splits on savings"
# a case with every level seen keeps v2, without the member
run 0 $RBA -S st --json dispute $V 5
ok "no unseen level: schema v2, no unseen member" jq -e '.schema == "rebuild-audit/dispute/v2" and (.explanation | has("unseen") | not)' out
run 0 $RBA -S st dispute $V 5
out_lacks "unseen"

# ---- a small forest: no split on the column on its path, or one
sed 's/^version: .*/version: small-native/; s/trees: 100, max_depth: 4/trees: 2, max_depth: 2/' "$PINS" > small.yaml
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "purpose") pc = i; if ($i == "checking_status") cc = i } }
	NR == 3 { $pc = "A499" } NR == 5 { $cc = "A19" } NR <= 21 { print }' OFS=, "$GC" > small.csv
run 0 $RBA train small.yaml --snapshot "$GC" -o s.bin
run 0 $RBA -S st -q register small.yaml --policy "$POL"
run 0 $RBA -S st -q sample add small-native small.csv
run 0 $PY "$PATHS" s.bin small.csv 2
ok "the walk: purpose meets no split on case 2's path" jq -e '.[0].splits == 0 and .[0].trees == 0' out
run 0 $RBA -S st dispute small-native 2
out_has "unseen      purpose = A499: a level not seen in training; no split on this column was on its path (in any of the 2 trees) (contribution "
run 0 $RBA -S st --json dispute small-native 2
ok "no split: went null, splits 0, trees 0" jq -e '.explanation.unseen == [{"column": "purpose", "value": "A499", "went": null, "splits": 0, "trees": 0, "forest_trees": 2}]' out
# no split on purpose on its path: any level of purpose scores the same
for lv in A40 A41 A43 A499; do
	awk -F, -v lv=$lv 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "purpose") pc = i } NR == 3 { $pc = lv } NR <= 3 { print }' OFS=, "$GC" > p-$lv.csv
	$RBA score s.bin p-$lv.csv | awk -F, '$1 == 2 { print $2 }' > score-$lv
done
ok "case 2 scores the same whatever its purpose" sh -c 'for lv in A40 A41 A43; do cmp -s score-$lv score-A499 || exit 1; done; test -s score-A499'
run 0 $PY "$PATHS" s.bin small.csv 4
ok "the walk: checking_status meets one split on case 4's path" jq -e '.[0].column == "checking_status" and .[0].splits == 1 and .[0].trees == 1' out
run 0 $RBA -S st dispute small-native 4
out_has "unseen      checking_status = A19: a level not seen in training; it went right at the one split on checking_status on its path (in 1 of the 2 trees) (contribution "

# ---- signed dispute evidence v4
run 0 $RBA keygen -o k
run 0 $RBA keygen -o other
run 0 $RBA -S st dispute $V 2 --export -k k.key -o ev.json
out_has "exported    ev.json, signed in ev.json.minisig"
run 0 minisign -Vm ev.json -p k.pub
ok "predicate v4, its dispute v4" jq -e '.predicateType == "https://rebuild-audit.dev/dispute-evidence/v4" and .predicate.dispute.schema == "rebuild-audit/dispute/v4"' ev.json
ok "the signed note is the walk's" sh -c "[ \"\$(jq -cS '[.predicate.dispute.explanation.unseen[] | del(.went)]' ev.json)\" = \"\$(jq -cS . want2.json)\" ]"
run 0 /usr/bin/jsonschema -i ev.json "$S4"
run 1 /usr/bin/jsonschema -i ev.json "$FIX/evidence/dispute-v2.schema.json"
run 0 $RBA -S st dispute $V 5 --export -k k.key -o ev5.json
run 1 /usr/bin/jsonschema -i ev5.json "$S4"
run 0 $RBA verify ev.json -p k.pub
out_has "dispute evidence consistent: version $V, case 2: the disputed decline stands"
out_has "not checked: that each level named unseen in training is none of the artifact's levels, and where it went on the case's path"
run 0 $RBA verify ev.json -p k.pub --artifact n.bin
out_has "checked against artifact n.bin: the levels unseen in training and where they went"
out_lacks "not checked"
run 0 $RBA -S st version export-artifact $V stored.bin
run 0 $RBA verify ev.json -p k.pub --artifact stored.bin
out_has "checked against artifact stored.bin"
run 0 $RBA --json verify ev.json -p k.pub --artifact n.bin
ok "verify --json says the artifact was checked" jq -e '.valid and .dispute.artifact_checked == "n.bin" and .dispute.not_checked == null' out
run 0 $RBA verify ev5.json -p k.pub --artifact n.bin
# under a policy with statements: v4 with v3's statement members
run 0 $RBA -S st dispute $V 2 --policy "$FIX/policy/credit-statements.yaml" --export -k k.key -o evs.json
ok "v4 with statements" jq -e '.predicate.dispute.explanation | has("statements_missing") and has("unseen") and (.principal_reasons[0] | has("statement"))' evs.json
run 0 /usr/bin/jsonschema -i evs.json "$S4"
run 0 $RBA verify evs.json -p k.pub --artifact n.bin

# ---- edited notes are refused
tc=$(sed -n '3s/^trusted comment: //p' ev.json.minisig)
resign() { minisign -S -s "$1" -m "$2" -t "$tc" > /dev/null 2>&1; }
sed "s/\"splits\": $sp,/\"splits\": $((sp - 1)),/" ev.json > e1.json
cp ev.json.minisig e1.json.minisig
run 1 $RBA verify e1.json -p k.pub
err_is "rebuild-audit: verification failed 'e1.json': signature does not match the file"
resign other.key e1.json
run 1 $RBA verify e1.json -p k.pub
err_has "not by key"
# re-signed with the key: the file alone still agrees with itself, the artifact does not
resign k.key e1.json
run 0 $RBA verify e1.json -p k.pub
run 1 $RBA verify e1.json -p k.pub --artifact n.bin
err_is "rebuild-audit: verification failed 'e1.json': dispute evidence: the unseen level of column 'purpose' met $sp splits on its path in $tr of the artifact's 100 trees, not what the evidence says"
# a level the artifact has, claimed unseen
sed 's/A499/A43/g' ev.json > e2.json
resign k.key e2.json
run 1 $RBA verify e2.json -p k.pub --artifact n.bin
err_is "rebuild-audit: verification failed 'e2.json': dispute evidence: the evidence says the level 'A43' of column 'purpose' is unseen in training, but the artifact's level list has it"
run 1 $RBA --json verify e2.json -p k.pub --artifact n.bin
ok "verify --json names the artifact as what failed" jq -e '.valid == false and .failed == "artifact" and (.reason | contains("level list has it"))' out
# the note dropped, the file made v2: only the artifact can tell
sed 's/dispute-evidence\/v4/dispute-evidence\/v2/; s/rebuild-audit\/dispute\/v4/rebuild-audit\/dispute\/v2/; s/"unseen": \[[^]]*\], //' ev.json > e3.json
resign k.key e3.json
run 0 $RBA verify e3.json -p k.pub
run 1 $RBA verify e3.json -p k.pub --artifact n.bin
err_is "rebuild-audit: verification failed 'e3.json': dispute evidence: the level 'A499' of column 'purpose' is none of the artifact's levels, but the evidence does not say where it went"
# what the file itself shows is checked without the artifact
sed 's/"went": "right"/"went": null/' ev.json > e4.json
resign k.key e4.json
run 1 $RBA verify e4.json -p k.pub
err_is "rebuild-audit: verification failed 'e4.json': dispute evidence: the unseen level of 'purpose' met splits on its path but did not go right, as such a level does"
sed "s/\"trees\": $tr,/\"trees\": $((sp + 1)),/" ev.json > e5.json
resign k.key e5.json
run 1 $RBA verify e5.json -p k.pub
err_has "which no forest's paths give"
sed 's/"unseen": \[[^]]*\], //' ev.json > e6.json
resign k.key e6.json
run 1 $RBA verify e6.json -p k.pub
err_is "rebuild-audit: verification failed 'e6.json': dispute evidence: 'predicate.dispute.explanation' has a member missing, unknown or twice"
sed 's/"column": "purpose", "value": "A499", "went"/"column": "purpose", "value": "A49", "went"/' ev.json > e7.json
resign k.key e7.json
run 1 $RBA verify e7.json -p k.pub
err_is "rebuild-audit: verification failed 'e7.json': dispute evidence: the unseen level 'A49' of 'purpose' is not the case's value of that column"
sed 's/"forest_trees": 100}/"forest_trees": 100, "left": 0}/' ev.json > e8.json
resign k.key e8.json
run 1 $RBA verify e8.json -p k.pub
err_is "rebuild-audit: verification failed 'e8.json': dispute evidence: an unseen level's entry has a member missing, unknown or twice"
# --artifact that cannot answer: exit 2
run 2 $RBA verify ev.json -p k.pub --artifact s.bin
err_has "rebuild-audit: cannot check against artifact 's.bin': the artifact is sha256:"
run 2 $RBA verify ev.json -p k.pub --artifact nope.bin
err_is "rebuild-audit: cannot read artifact 'nope.bin': no such file or directory"
run 0 $RBA -S st export $V -k k.key -o audit.json
run 2 $RBA verify audit.json -p k.pub --artifact n.bin
err_is "rebuild-audit: cannot check against an artifact 'audit.json': --artifact checks dispute evidence, and this is none"

# ---- the dispute page
run 0 $RBA -S st dispute $V 2
where=$(sed -n 's/^unseen      purpose = A499: a level not seen in training; \(.*\) (contribution .*/\1/p' out)
ok "the text answer's words" test -n "$where"
run 0 $RBA report ev.json -o ev.html -p k.pub
ok "the page lists the unseen level in the text answer's words" grep -qF "<tr class=\"unseen-level\"><td class=\"mono\">purpose</td><td class=\"mono\">A499</td><td>a level not seen in training; $where</td></tr>" ev.html
ok "the case's inputs mark it" grep -qF '<td class="mono">A499 (a level not seen in training)</td>' ev.html
run 0 $RBA report ev5.json -o ev5.html -p k.pub
ok "a page without one has no such section" sh -c '! grep -q "unseen" ev5.html'
run 0 $RBA -S st dispute small-native 2 --export -k k.key -o evn.json
run 0 $RBA verify evn.json -p k.pub --artifact s.bin
run 0 $RBA report evn.json -o evn.html -p k.pub
ok "no split on its path, on the page" grep -qF '<td>a level not seen in training; no split on this column was on its path (in any of the 2 trees)</td>' evn.html
run 1 $RBA report e4.json -o e4.html -p k.pub
ok "an edited note makes no page" test ! -e e4.html
