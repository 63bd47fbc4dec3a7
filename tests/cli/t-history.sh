# history: every audit kept, newest first, hash-chained; --verify.
V=german-categorical-mlp
run 0 $RBA -S st init
run 0 $RBA -S st history
out_has "no audits recorded"
run 0 $RBA -S st history --verify
out_has "history intact: 0 records"
run 0 $RBA -S st snapshot add "$FIX/german-credit.csv"
run 0 $RBA -S st -q register "$FIX/pins/german-categorical-mlp.yaml" --policy "$FIX/policy/credit.yaml"
sed 's/^version: .*/version: second/' "$FIX/pins/german-categorical-mlp.yaml" > second.yaml
run 0 $RBA -S st -q register second.yaml --policy "$FIX/policy/credit.yaml"
run 0 $RBA -S st -q sample add $V "$FIX/german-credit.csv"
run 0 $RBA -S st -q sample add second "$FIX/german-credit.csv"
run 0 $RBA -S st -q audit $V
run 0 $RBA -S st -q audit second
run 0 $RBA -S st -q audit $V

run 0 $RBA -S st history
ok "a header and three records" test "$(wc -l < out)" -eq 4
ok "newest first" sh -c 'sed -n 2p out | grep -q "^3 .* german-categorical-mlp .* bit-identical .* 1000 .* 0 .* 0$"'
run 0 $RBA -S st history second
ok "one version's records" test "$(wc -l < out)" -eq 2
out_has "second"
run 0 $RBA -S st --json history
ok "history --json: ids descending, chained, records parsed" jq -e '
	length == 3 and [.[].id] == [3, 2, 1] and .[0].prev == .[1].digest and
	.[1].prev == .[2].digest and .[2].prev == "sha256:" + ("0" * 64) and
	all(.record.schema == "rebuild-audit/audit/v1" and .record.verdict == "bit-identical") and
	.[0].record.policy.digest == .[0].record.digests.policy and
	(.[0].record.tool.libraries | has("lmdb") and has("zstd") and has("libsodium")) and
	(.[0].record.timings | has("rebuild_s"))' out
run 0 $RBA -S st history --verify
out_is_text() { printf '%s\n' "$1" > .want; out_is .want; }
out_is_text "history intact: 3 records"
run 0 $RBA -S st --json history --verify
ok "verify --json" jq -e '.intact and .records == 3' out
run 2 $RBA -S st history nope
err_is "rebuild-audit: cannot read history 'nope': no version 'nope' in the store"

# a record edited in place breaks the chain at that record
mdb_dump -s history st > dump.txt
awk 'BEGIN { n = 0 } /^ 40/ && length($0) > 400 { n++; if (n == 2) {
		c = substr($0, 401, 1); $0 = substr($0, 1, 400) (c == "0" ? "1" : "0") substr($0, 402) } }
	{ print }' dump.txt > dump2.txt
ok "a history record was altered" test "$(cmp -s dump.txt dump2.txt; echo $?)" = 1
run 0 mdb_load -s history -f dump2.txt st
run 1 $RBA -S st history --verify
out_has "history broken at record 2:"
run 1 $RBA -S st --json history --verify
ok "verify --json names the first bad record" jq -e '.intact == false and .first_bad == 2' out
run 2 $RBA -S st history
err_has "rebuild-audit: cannot read history 'st': "
err_has "tampered"
# usage
run 2 $RBA -S st history --verify $V
err_has "bad usage 'history': --verify checks the whole history: no VERSION"
run 2 $RBA -S st history a b
err_has "bad usage 'history'"
