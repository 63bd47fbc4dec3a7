# t-diff.sh - diff: where two artifacts of one kind differ; an audit that
# is not bit-identical keeps its rebuilt artifact, so diff --store shows
# where it differs from the pinned one.
V=german-numeric-logistic
PINS=$FIX/pins/german-numeric-logistic.yaml
POL=$FIX/policy/credit.yaml
run 0 $RBA init
run 0 $RBA snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA register "$PINS" --policy "$POL"
head -n 61 "$FIX/german-credit-numeric.csv" > cases.csv
run 0 $RBA sample add $V cases.csv
run 0 $RBA audit $V
run 0 $RBA version export-artifact $V old.bin
# identical: one line, exit 0
run 0 $RBA diff old.bin old.bin
out_is_line() { printf '%s\n' "$1" > .want; cmp -s out .want; }
ok "one line when bit-identical" out_is_line "identical: sha256:$(sha256sum old.bin | cut -c 1-64) ($(wc -c < old.bin) bytes)"
run 0 $RBA diff --store $V
out_has "identical: sha256:$(sha256sum old.bin | cut -c 1-64)"
out_has "rebuilt bit for bit"
# the lr: 0.01000001 replacement of the integrity tests
sed 's/lr: 0.01,/lr: 0.01000001,/' "$PINS" > lr7.yaml
run 0 $RBA register lr7.yaml --replace
run 0 $RBA version export-artifact $V new.bin
run 1 $RBA audit $V
run 1 $RBA diff old.bin new.bin
out_has "artifacts differ: network 'old.bin' against 'new.bin'"
out_has "standardization mean   24        same (24 values)"
out_has "layer 1 weights        24x2      42 of 48 differ, largest 45 ulps"
out_has "layer 1 bias           2         2 of 2 differ, largest 2 ulps"
err_empty
run 1 $RBA --json diff old.bin new.bin
ok "--json: the layers that differ and their largest ulps" jq -e '.identical == false and .kind == "network" and ([.tensors[] | select(.differ > 0) | .name] == ["layer 1 weights", "layer 1 bias"]) and .tensors[2].max_ulps == 45 and .tensors[2].first == 0' out
# in the store: the rebuild is the new pin, the decisions the old one's
run 1 $RBA diff --store $V
out_has "the artifact that made the stored decisions against the rebuilt artifact"
out_has "layer 1 weights        24x2      42 of 48 differ, largest 45 ulps"
# a rebuild that is not the pinned artifact is kept in the store
run 0 $RBA -S s2 init
run 0 $RBA -S s2 snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S s2 register "$PINS" --artifact new.bin --policy "$POL"
run 0 $RBA -S s2 sample add $V cases.csv
run 1 $RBA -S s2 audit $V
out_has "is not the pinned"
run 1 $RBA -S s2 diff --store $V
out_has "audit 1 of version $V: the pinned artifact against the rebuilt artifact"
out_has "layer 1 weights        24x2      42 of 48 differ, largest 45 ulps"
run 0 $RBA -S s2 version export-artifact $V pinned.bin
ok "the pinned artifact is the one given" cmp -s pinned.bin new.bin
# the audit page names the command that shows where
run 0 $RBA keygen -o k
run 0 $RBA -S s2 export $V -k k.key -o nr.json
run 0 $RBA report nr.json -o nr.html -p k.pub
ok "the report points at diff" grep -qF '<code id="diff-hint">rebuild-audit diff --store german-numeric-logistic --audit 1</code>' nr.html
run 0 $RBA -S s2 store check
out_has "clean: no damage found"
# forests: the first tree that differs, and what
run 0 $RBA train "$FIX/pins/german-numeric-gbdt.yaml" -o g1.bin --snapshot "$FIX/german-credit-numeric.csv" --no-keep
sed 's/learning_rate: 0.1,/learning_rate: 0.1000001,/' "$FIX/pins/german-numeric-gbdt.yaml" > g2.yaml
run 0 $RBA train g2.yaml -o g2.bin --snapshot "$FIX/german-credit-numeric.csv" --no-keep
run 1 $RBA diff g1.bin g2.bin
out_has "artifacts differ: forest 'g1.bin' against 'g2.bin'"
out_has "trees       100 and 100, 0 identical; first that differs: tree 1, node 6: leaf value"
run 1 $RBA --json diff g1.bin g2.bin
ok "--json: trees" jq -e '.kind == "forest" and .trees.identical == 0 and .trees.first_differing.tree == 1' out
run 0 $RBA diff g1.bin g1.bin
# bad input: one line, exit 2
run 2 $RBA diff g1.bin old.bin
err_is "rebuild-audit: cannot diff 'g1.bin' and 'old.bin': artifacts of two kinds: a forest and a network"
out_empty
head -c 300 new.bin > bad.bin
run 2 $RBA diff old.bin bad.bin
err_is "rebuild-audit: cannot load artifact 'bad.bin': truncated: the layer sizes need more bytes than remain at byte 30"
out_empty
run 2 $RBA diff old.bin missing.bin
err_is "rebuild-audit: cannot load artifact 'missing.bin': no such file or directory"
run 2 $RBA diff old.bin
err_has "diff needs two artifact files A B"
run 2 $RBA diff --store $V --audit 2
err_is "rebuild-audit: cannot diff '$V': history record 2 is not an audit of '$V' that rebuilt an artifact"
run 2 $RBA diff --store nosuch
err_is "rebuild-audit: cannot diff 'nosuch': no audit of version 'nosuch' that rebuilt an artifact"
