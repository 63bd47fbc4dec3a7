# make demo's script runs to the end and tells the whole story.
G=credit-2026-11-gbdt
golden=$(sed -n "s/^german-categorical-gbdt //p" "$FIX/golden/strict-abi1.txt")
# dispute_block N: what the demo's Nth dispute of the trees version printed
dispute_block() {
	awk -v n="$1" -v c="\$ rebuild-audit dispute $G " \
		'index($0, c) == 1 { k++; on = k == n; next } on && /^$/ { exit } on' out
}
run 0 env DEMO_OUT="$PWD/demo-out" sh "$TOP/tests/demo.sh" "$RBA"
out_has '$ rebuild-audit register credit-2026-11.yaml --policy credit-policy.yaml'
out_has "audit credit-2026-11: bit-identical (exit 0)"
out_has "the disputed decline stands"
out_has "history intact: 1 record"
out_has "clean: no damage found"
out_has "history head: record 1, sha256:"
out_has "Signature and comment signature verified"
out_has "evidence consistent: version credit-2026-11"
# the trees: registered under its own name, audited, disputed twice
out_has "\$ rebuild-audit register $G.yaml --policy credit-policy.yaml > /dev/null"
err_has "registered '$G': artifact $golden;"
out_has "audit $G: bit-identical (exit 0)"
out_has "recorded      history record 2"
dispute_block 1 > first
dispute_block 2 > second
ok "the first dispute of the trees retrained" grep -q "^artifact    pinned sha256:[0-9a-f]*, rebuilt sha256:" first
ok "with its principal reasons by TreeSHAP" sh -c 'grep -A1 "^reasons     log-odds of class 2 by exact path-dependent TreeSHAP, from the rebuilt artifact, bit-identical to the one that made the decision" first | grep -q "^  1\. "'
ok "the first trees decline stands" test "$(tail -n 1 first)" = "the disputed decline stands"
ok "the second did not retrain, relying on the audit record" \
	grep -q "scored as stored: no retrain, audit record 2 proves it" second
ok "with the reasons of the stored artifact" sh -c 'grep -A1 "^reasons     log-odds of class 2 by exact path-dependent TreeSHAP, from the stored artifact, which made the decision" second | grep -q "^  1\. "'
ok "the second trees decline stands" test "$(tail -n 1 second)" = "the disputed decline stands"
# a printed command pastes into a shell: quoted where it needs quotes
out_has "--seeds 0-5 -j 2 --hypothesis 'lr x10 is harmless' --success 'val_loss.median <= 0'"
out_has "DECLARED BEFORE THE RUN"
out_has "result            NOT MET"
# the pages: written, kept, and said where
out_has "report: audit-report.html ("
out_has "verified with key"
out_has "# the reports are in $PWD/demo-out: audit-report.html, dispute-report.html, history.html"
ok "the audit page kept" grep -q 'rebuilds bit-identical to its pinned artifact</h1>' demo-out/audit-report.html
ok "the dispute page kept, with the policy's statements" grep -q 'class="statement">[A-Z]' demo-out/dispute-report.html
ok "the history page kept" grep -q 'Over these 2 scheduled rebuilds of 2 versions' demo-out/history.html
