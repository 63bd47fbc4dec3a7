# t-json.sh - --json on the commands that print a result a script reads
# and printed text before: runs list, keygen --check, audit --all --shard
# K/N --list, report, history checkpoint, vkey and watch, gate calibrate,
# validate and check, bisect, store snapshot --prune.  Each output is
# one JSON document, read with jq.
export REBUILD_AUDIT_STORE=$PWD/st
V=german-numeric-logistic
P=$FIX/pins/synth-chapter.yaml
jq_out() { jq -e "$1" out > /dev/null; }
json_ok() { ok "$1: one JSON document" jq -e . out; }

ok "jq installed" command -v jq

run 0 $RBA init
run 0 $RBA snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA register "$FIX/pins/$V.yaml" --policy "$FIX/policy/credit.yaml"
head -n 40 "$FIX/german-credit-numeric.csv" > cases.csv
run 0 $RBA sample add $V cases.csv
run 0 $RBA audit $V
run 0 $RBA keygen -o k
run 0 $RBA keygen -o other

# ---- runs list ---------------------------------------------------------------
run 0 $RBA runs list --json
json_ok "runs list"
ok "runs list: the register run" jq_out ".runs | length == 1 and .[0].kind == \"run\" and .[0].version == \"$V\" and (.[0].val_loss | type) == \"number\""
ID=$(jq -r '.runs[0].id' out)
run 0 $RBA runs list
ok "runs list: the same id as the text" grep -q "^$ID " out
run 0 $RBA --json runs list --version no-such-version
ok "runs list: none of another version" jq_out '.runs == []'

# ---- keygen --check ----------------------------------------------------------
run 0 $RBA --json keygen --check k.key k.pub
json_ok "keygen --check"
KID=$(sed -n "1s/.* \([0-9A-F]\{16\}\)$/\1/p" k.pub)
ok "keygen --check: a match" jq_out ".match == true and .key_id == \"$KID\" and .public_key_id == \"$KID\" and .public_key == \"k.pub\""
err_empty
run 1 $RBA keygen --check k.key other.pub --json
ok "keygen --check: no match" jq_out ".match == false and .key_id == \"$KID\" and .public_key_id != \"$KID\""
err_has "keys do not match 'k.key'"

# ---- audit --all --shard K/N --list -------------------------------------------
run 0 $RBA --json audit --all --shard 0/1 --list
json_ok "audit --shard --list"
ok "audit --shard --list: the version" jq_out ".shard == 0 and .shards == 1 and .split == \"balanced\" and .versions == [\"$V\"]"
run 0 $RBA --json audit --all --shard 1/2 --split hash --list
ok "audit --shard --list: the hash split" jq_out '.split == "hash" and .shard == 1 and .shards == 2 and (.versions | type) == "array"'

# ---- report ------------------------------------------------------------------
run 0 $RBA export $V -k k.key -o ev.json
run 0 $RBA --json report ev.json -p k.pub -o ev.html
json_ok "report"
ok "report: what it wrote, verified" jq_out ".report == \"ev.html\" and .kind == \"audit\" and .evidence == \"ev.json\" and .verified == true and .key_id == \"$KID\" and .bytes > 1000"
ok "report: the evidence digest" jq_out ".digest == \"sha256:$(sha256sum ev.json | cut -c1-64)\""
run 0 $RBA --json report ev.json -o ev2.html --unverified
ok "report --unverified: the reason" jq_out '.verified == false and (.reason | length) > 0'
run 0 $RBA --json report --store --history -o h.html
ok "report --history" jq_out ".report == \"h.html\" and .kind == \"history\" and .store == \"$PWD/st\""

# ---- history checkpoint and vkey ---------------------------------------------
run 0 $RBA --json history checkpoint -k k.key -o ck
json_ok "history checkpoint"
ok "history checkpoint: its size and origin" jq_out '.checkpoint == "ck" and .tree_size == 1 and (.origin | startswith("rebuild-audit.dev/store/"))'
ORIGIN=$(jq -r .origin out)
run 0 $RBA --json history vkey -p k.pub
json_ok "history vkey"
ok "history vkey: the key, its origin and id" jq_out ".origin == \"$ORIGIN\" and .key_id == \"$KID\" and (.vkey | startswith(\"$ORIGIN+\"))"
jq -r .vkey out > vk
run 0 $RBA history vkey -p k.pub
ok "history vkey: the same key as the text" cmp out vk
run 0 $RBA history prove 1 --checkpoint ck --vkey vk

# ---- gate and bisect ---------------------------------------------------------
run 0 $RBA snapshot synth -o s.csv
run 0 $RBA snapshot add s.csv
sed 's/lr: 0.02,/lr: 0.2,/; s/^version: .*/version: synth-lr10/' $P > lr10.yaml
sed 's/lr: 0.02,/lr: 0.2,/; s/batch_size: 128,/batch_size: 127,/; s/^version: .*/version: synth-two/' $P > two.yaml
run 0 $RBA sweep $P --seeds 0-5 -j 2 --json
SWEEP=$(jq -r .sweep out)
run 0 $RBA --json gate calibrate "$SWEEP" --k 3 -o gate.yaml
json_ok "gate calibrate"
ok "gate calibrate: the threshold" jq_out '.gate == "gate.yaml" and .metric == "val_loss" and .op == "<=" and .threshold > .median and .seeds == 6'
run 0 $RBA --json gate validate gate.yaml $P --seeds 100-103 -j 2
json_ok "gate validate"
ok "gate validate: four seeds, the alarms counted" jq_out '(.seeds | length) == 4 and (.seeds | map(select(.pass == false)) | length) == .false_alarms and .pass == true'
run 1 $RBA --json gate check gate.yaml lr10.yaml
json_ok "gate check (fail)"
ok "gate check: lr x10 fails" jq_out '.pass == false and .op == ">" and (.seeds | length) == 1 and .value > .threshold'
run 0 $RBA --json gate check gate.yaml "$SWEEP"
ok "gate check of a stored sweep passes" jq_out '.pass == true and .n == 6 and (has("seeds") | not)'
run 0 $RBA --json bisect $P two.yaml --gate gate.yaml
json_ok "bisect"
ok "bisect: the culprit, confirmed" jq_out '(.edits | length) == 2 and .result == "culprit" and .culprit.path == "train.lr" and .culprit.confirmed == true'
ok "bisect: every step, the confirmation last" jq_out '(.steps | length) == .evaluations and .steps[-1].kind == "confirm" and .steps[0].kind == "all" and .steps[0].pass == false'
run 1 $RBA --json bisect $P $P --gate gate.yaml
ok "bisect: no edits" jq_out '.edits == [] and .result == "no-edits"'

# ---- history watch -------------------------------------------------------------
run 0 $RBA --json history watch ck --vkey vk
ok "history watch: consistent" jq_out '.consistent == true and .checkpoint == "ck" and .tree_size == 1 and .history_size >= 1 and (has("finding") | not)'
# a store rolled back behind a checkpoint: its copy before one more audit
cp -r st st-before
run 0 $RBA audit $V
run 0 $RBA history checkpoint -k k.key -o ck2
REBUILD_AUDIT_STORE=$PWD/st-before run 1 $RBA --json history watch ck2 --vkey vk
ok "history watch: not consistent, one document" jq_out '.consistent == false and .tree_size == 2 and .history_size == 1 and (.finding | length) > 0'
export REBUILD_AUDIT_STORE=$PWD/st

# ---- store snapshot --prune ------------------------------------------------------
mkdir shared
for r in run-20261101T021500Z run-20261102T021500Z run-20261103T021500Z; do
	mkdir -p "shared/$r/records/imported"
	$RBA -q store snapshot "shared/$r/snapshot" > /dev/null
done
touch -d "2026-11-01 02:15" shared/run-20261101T021500Z/snapshot/rebuild-audit-snapshot
touch -d "2026-11-02 02:15" shared/run-20261102T021500Z/snapshot/rebuild-audit-snapshot
touch shared/run-20261102T021500Z/records/not-imported.0000000000000000.json
run 0 $RBA --json store snapshot --prune 1 shared --dry-run
json_ok "store snapshot --prune --dry-run"
ok "prune --dry-run: what it would do" jq_out '.keep == 1 and .dry_run == true and .removed == 0 and ([.runs[].fate] | sort) == ["newest", "unimported", "would-remove"]'
ok "prune --dry-run: nothing removed" test -d shared/run-20261101T021500Z
run 0 $RBA --json store snapshot --prune 1 shared
ok "prune: one removed, one kept for its records" jq_out '.removed == 1 and (.runs[] | select(.fate == "unimported") | .unimported) == 1 and (.runs[] | select(.fate == "removed") | .path) == "shared/run-20261101T021500Z"'
err_has "not imported"
