# t-report-history.sh - report --store --history: every version's audits
# over time and the guarantee the history supports, never stronger than
# the weakest scheduled audit, with its failures and gaps.  Audits are
# run at chosen times with faketime(1), the clock stopped there (-f):
# a clock left to run from them gives a loaded machine's audit a second
# more, and the sentences another time.
V=german-numeric-logistic
PINS=$FIX/pins/german-numeric-logistic.yaml
POL=$FIX/policy/credit.yaml
ok "faketime installed" command -v faketime
# (a sanitized build's runtime must come first among the libraries, and
# faketime preloads its own: ASan is told not to insist)
at() {
	when=$1
	shift
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		faketime -f "$when" "$@"
}

run 0 at '2026-11-01 06:00:00' $RBA init
run 0 at '2026-11-01 06:00:00' $RBA snapshot add "$FIX/german-credit-numeric.csv"
run 0 at '2026-11-01 06:00:00' $RBA register "$PINS" --policy "$POL"
head -n 61 "$FIX/german-credit-numeric.csv" > cases.csv
run 0 at '2026-11-01 06:00:00' $RBA sample add $V cases.csv
# no audit yet: no guarantee
run 0 $RBA report --store --history -o empty.html
ok "no audit, no guarantee" grep -q 'No scheduled audit of 0 versions: the history supports no guarantee' empty.html
# daily at 08:00, but nothing from the 6th to the 8th
for d in 01 02 03 04 05 09 10 11; do
	run 0 at "2026-11-$d 08:00:00" $RBA audit $V
done
run 0 $RBA report --store --history -o h.html
out_has "report: h.html ("
out_has "from the history of store"
err_empty
ok "a mark per audit" test "$(grep -c 'class="audit-mark"' h.html)" = 8
ok "each bit-identical" test "$(grep -c 'data-verdict="bit-identical"' h.html)" = 8
ok "the guarantee over the period" grep -qF 'Over these 8 scheduled rebuilds of version german-numeric-logistic between 2026-11-01T08:00:00Z and 2026-11-11T08:00:00Z, every rebuild was bit-identical to its pinned artifact' h.html
ok "the gap said plainly" grep -qF '1 gap: no scheduled audit between 2026-11-05T08:00:00Z and 2026-11-09T08:00:00Z (4.0 days)' h.html
ok "overdue by now" grep -qF 'none since 2026-11-11T08:00:00Z' h.html
ok "the footer names the history head" grep -qF "@bottom-left{content:\"history head $($RBA history head | grep -o 'sha256:[0-9a-f]*' | head -1)" h.html
# a failure: stored scores from a column the model does not give
awk -F, 'NR == 1 { print $0 ",score"; next } { print $0 "," (NR % 3 ? "0.1" : "0.9") }' cases.csv > scored.csv
run 0 at '2026-11-12 07:00:00' $RBA sample add $V scored.csv --score-column score
run 1 at '2026-11-12 08:00:00' $RBA audit $V
run 0 at '2026-11-12 09:00:00' $RBA sample add $V cases.csv
run 0 at '2026-11-13 08:00:00' $RBA audit $V
# an ad hoc audit under a looser policy: drawn, never counted
sed 's/max_score_delta: 0.0005/max_score_delta: 0.001/' "$POL" > loose.yaml
run 2 at '2026-11-13 09:00:00' $RBA audit $V --policy loose.yaml
run 2 $RBA report --store --history -o h.html
err_has "exists (use --force to replace it)"
run 0 $RBA report --store --history -o h.html --force
ok "marks coloured and shaped by verdict" test "$(grep -c 'data-verdict="not-reproducible"' h.html)" = 1
ok "the ad hoc audit drawn hollow" test "$(grep -c 'data-ad-hoc="1"' h.html)" = 1
ok "no guarantee over a period with a failure" grep -qF 'between 2026-11-01T08:00:00Z and 2026-11-13T08:00:00Z the history supports no guarantee: 1 failed (not-reproducible on 2026-11-12T08:00:00Z, record ' h.html
ok "the guarantee since the failure" grep -qF 'since the last failure, at the one scheduled rebuild of version german-numeric-logistic on 2026-11-13T08:00:00Z, every rebuild was bit-identical' h.html
ok "ad hoc counted apart" grep -qF '10 scheduled audits, 1 failed, 1 ad hoc' h.html
ok "never a bit-identical claim for the whole period" sh -c "! grep -qF 'Over these 10 scheduled rebuilds of version german-numeric-logistic between 2026-11-01T08:00:00Z and 2026-11-13T08:00:00Z, every' h.html"
# an audit recorded after the others but run before them (faked here;
# a fleet's import appends records so): the period runs from the
# earliest audit to the latest, and the failure stays the last one
run 0 at '2026-10-30 08:00:00' $RBA audit $V
run 0 $RBA report --store --history -o late.html
ok "the period from the earliest audit to the latest, not the chain's first and last" \
	grep -qF 'Over these 11 scheduled rebuilds of version german-numeric-logistic between 2026-10-30T08:00:00Z and 2026-11-13T08:00:00Z the history supports no guarantee' late.html
ok "since the failure: only what came after it in time" \
	grep -qF 'since the last failure, at the one scheduled rebuild of version german-numeric-logistic on 2026-11-13T08:00:00Z, every rebuild was bit-identical' late.html
# bad usage and a missing store: exit 2, one line
run 2 $RBA report --store -o x.html
err_has "--store and --history go together"
run 2 $RBA report --store --history ev.json -o x.html
err_has "--store --history takes no FILE"
run 2 $RBA -S nowhere report --store --history -o x.html
err_is "rebuild-audit: cannot open store 'nowhere': no store at 'nowhere'"
ok "nothing written" test ! -e x.html
