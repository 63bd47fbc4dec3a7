# make demo's script runs to the end and tells the whole story.
run 0 sh "$TOP/tests/demo.sh" "$RBA"
out_has '$ rebuild-audit register credit-2026-11.yaml --policy credit-policy.yaml'
out_has "audit credit-2026-11: bit-identical (exit 0)"
out_has "the disputed decline stands"
out_has "history intact: 1 record"
out_has "clean: no damage found"
out_has "history head: record 1, sha256:"
out_has "Signature and comment signature verified"
out_has "evidence consistent: version credit-2026-11"
out_has "DECLARED BEFORE THE RUN"
out_has "result            NOT MET"
