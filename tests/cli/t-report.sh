# t-report.sh - report: the HTML page of signed evidence, verified first,
# drawn by Debian's Chromium to PDF and PNG (few runs: each takes a
# second or two), read back with pdftotext and a PNG reader.
V=german-numeric-logistic
PINS=$FIX/pins/german-numeric-logistic.yaml
POL=$FIX/policy/credit.yaml
CHROMIUM=/usr/bin/chromium
PY=/usr/bin/python3
ok "chromium installed" test -x "$CHROMIUM"
ok "pdftotext installed (poppler-utils)" command -v pdftotext
ok "minisign installed" command -v minisign

# chrome MODE FILE.html OUT: MODE pdf or png; Chromium's log in OUT.log
# (--enable-logging=stderr --v=1: CSP violations are console messages)
# and its net log in OUT.net.json (every request it attempted).  Host
# names resolve nowhere, so nothing leaves the machine whatever a page
# asks for.
chrome() {
	case $1 in
	pdf) what="--print-to-pdf=$3 --no-pdf-header-footer" ;;
	png) what="--screenshot=$3 --window-size=800,1800" ;;
	esac
	# shellcheck disable=SC2086
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --user-data-dir="$PWD/chrome-profile" \
		--host-resolver-rules='MAP * ~NOTFOUND' --enable-logging=stderr --v=1 \
		--log-net-log="$3.net.json" $what "file://$PWD/$2" > "$3.log" 2>&1 < /dev/null
}
# Requests the page made: the net log's URLs other than file: and the
# browser's own services (updates, accounts, time, dictionaries).
page_requests() {
	grep -o '"url":"[^"]*"' "$1.net.json" | sed 's/^"url":"//; s/"$//' |
		grep -v '^file:' |
		grep -Ev '^https?://([a-z0-9-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)(/|:|$)' |
		sort -u
}
csp_violations() { grep -c 'violates the following Content Security Policy' "$1.log"; }
# pdftext PDF: the text, one line per page (form feeds), spaces squeezed.
pdftext() { pdftotext "$1" - | tr '\n' ' ' | tr '\f' '\n' | tr -s ' '; }
# pngstat PNG: "W H NONWHITE COLOURS" of an 8-bit RGB(A) PNG, decoded
# here with zlib (no imaging library).
pngstat() {
	"$PY" - "$1" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride, prev, out = zlib.decompress(idat), w * bpp, bytearray(w * bpp), 0
nonwhite, colours = 0, set()
for y in range(h):
    f, line = raw[out], bytearray(raw[out + 1:out + 1 + stride])
    out += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        px = bytes(line[x:x + 3])
        if px != b"\xff\xff\xff":
            nonwhite += 1
        colours.add(px)
    prev = line
print(w, h, nonwhite, len(colours))
PY
}

# ---- a store: a bit-identical audit, and a dispute ---------------------------
run 0 $RBA init
run 0 $RBA snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA register "$PINS" --policy "$POL"
head -n 121 "$FIX/german-credit-numeric.csv" > cases.csv
run 0 $RBA sample add $V cases.csv
run 0 $RBA audit $V
run 0 $RBA keygen -o k
KEYID=$(sed -n 1p k.pub | sed 's/.*public key //')
run 0 $RBA export $V -k k.key -o ev.json
# under a policy without statements the answer keeps the v2 bytes
run 0 $RBA dispute $V 5 --export -k k.key -o dn.json
ok "no statements, dispute evidence v2" jq -e '.predicateType == "https://rebuild-audit.dev/dispute-evidence/v2"' dn.json

# ---- audit evidence ------------------------------------------------------------
run 0 $RBA report ev.json -o ev.html -p k.pub
out_has "report: ev.html ("
out_has "from audit evidence 'ev.json' (sha256:$(sha256sum ev.json | cut -c 1-64)), verified with key $KEYID"
err_empty
ok "one self-contained page" grep -q '^<!DOCTYPE html>' ev.html
ok "a CSP that forbids every other host" \
	grep -qF "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:;" ev.html
ok "no script" sh -c "! grep -qi '<script' ev.html"
ok "nothing that loads: no src, href, url(), @import, link" \
	sh -c "! grep -Eqi ' (src|href|xlink:href)=|url\\(|@import|<link|<iframe|<object|<embed' ev.html"
ok "the print footer: the digest and key id" \
	grep -qF "@bottom-left{content:\"evidence sha256:$(sha256sum ev.json | cut -c 1-64) key $KEYID\"" ev.html
ok "page numbers" grep -qF 'counter(page) " of " counter(pages)' ev.html
ok "no banner on verified evidence" sh -c "! grep -q 'NOT VERIFIED' ev.html"
ok "the title is the verdict" grep -qF '<h1 id="title">Version german-numeric-logistic rebuilds bit-identical to its pinned artifact</h1>' ev.html
ok "the links, each SAME" test "$(grep -o '<span class="same">SAME</span>' ev.html | wc -l)" = 7
ok "band edges at the policy's thresholds" \
	test "$(grep -o 'class="band-edge" data-edge="[^"]*"' ev.html | sed 's/.*="//; s/"//' | tr '\n' ' ')" = "0.3 0.5 "
ok "no flipped mark when nothing flipped" sh -c "! grep -q 'class=\"flip-mark\"' ev.html"
ok "this tool's own trainer: no exec trainer section (t-exec draws one)" sh -c "! grep -q 'id=\"trainer\"\\|The trainer that ran' ev.html"
# An existing output only with --force; nothing replaced without it.
cp ev.html before.html
run 2 $RBA report ev.json -o ev.html -p k.pub
err_is "rebuild-audit: cannot write 'ev.html': exists (use --force to replace it)"
ok "not replaced" cmp -s ev.html before.html
run 0 $RBA -q report ev.json -o ev.html -p k.pub --force
out_empty

# ---- every case (v3), flipped cases -------------------------------------------
# Stored scores from a column: the model's, to 9 digits, with the cases
# just below 0.30 pushed above it and those just above 0.50 below it.
run 0 $RBA version export-artifact $V art.bin
run 0 $RBA score art.bin cases.csv --pins "$PINS"
cp out scores.csv
awk -F, 'NR == FNR { if (FNR > 1) s[$1] = $2; next }
	FNR == 1 { print $0 ",score"; next }
	{ v = s[$1]; if (v > 0.26 && v < 0.30) v += 0.05; else if (v > 0.5 && v < 0.53) v -= 0.04; print $0 "," v }' \
	scores.csv cases.csv > scored.csv
run 0 $RBA sample add $V scored.csv --score-column score
run 1 $RBA audit $V
run 0 $RBA export $V -k k.key -o f3.json --cases
run 0 $RBA verify f3.json -p k.pub
ok "the v4 schema accepts it" /usr/bin/jsonschema -i f3.json "$FIX/evidence/predicate-v4.schema.json"
ok "v4 with every case" jq -e '.predicateType == "https://rebuild-audit.dev/audit-evidence/v4" and (.predicate.results.cases | length) == .predicate.sample.cases and .predicate.results.flips > 0' f3.json
FLIPS=$(jq .predicate.results.flips f3.json)
# a rebuilt score changed and re-signed: verify says what disagrees
jq -r '.predicate.results.cases[0].rebuilt_score' f3.json > s0
s0=$(cat s0)
sed "0,/\"rebuilt_score\": $s0,/s//\"rebuilt_score\": 0.999,/" f3.json > t3.json
ok "one case's score changed" sh -c "! cmp -s t3.json f3.json"
minisign -S -s k.key -m t3.json -t "$(sed -n '3s/^trusted comment: //p' f3.json.minisig)" > /dev/null 2>&1
run 1 $RBA verify t3.json -p k.pub
err_has "results.cases give"
run 1 $RBA report t3.json -o t3.html -p k.pub
ok "refused evidence writes nothing" test ! -e t3.html
run 0 $RBA report f3.json -o f3.html -p k.pub
ok "the title says what flipped" grep -qF "does not reproduce: $FLIPS of the 120 decisions on its audit sample flipped</h1>" f3.html
ok "a flipped mark per flipped case" test "$(grep -o 'class="flip-mark"' f3.html | wc -l)" = "$FLIPS"
ok "the marks are the flipped cases" test \
	"$(grep -o 'class="flip-mark" data-case="[^"]*"' f3.html | sed 's/.*="//; s/"//' | sort | tr '\n' ' ')" = \
	"$(jq -r '.predicate.results.flipped_cases[].id' f3.json | sort | tr '\n' ' ')"
# every case drawn: a mark of its own, or counted in a grey cell
ok "every case drawn" test "$(( $(grep -Eo 'class="(flip|near|case)-mark"' f3.html | wc -l) + \
	$(grep -o 'class="case-bin" data-count="[0-9]*"' f3.html | sed 's/.*="//; s/"//' | awk '{ n += $1 } END { print n + 0 }') ))" = 120
ok "a near-threshold table row per near-threshold case the evidence counts" \
	test "$(grep -c 'class="near-case"' f3.html)" = "$(jq .predicate.results.near_threshold_cases f3.json)"
ok "band edges at the policy's thresholds" \
	test "$(grep -o 'class="band-edge" data-edge="[^"]*"' f3.html | sed 's/.*="//; s/"//' | tr '\n' ' ')" = "0.3 0.5 "
ok "the histogram counts every case" \
	test "$(grep -o 'class="bin" data-count="[0-9]*"' f3.html | sed 's/.*="//; s/"//' | awk '{ n += $1 } END { print n }')" = 120
ok "a flipped-cases table row per flipped case" test "$(grep -c 'class="flipped-case"' f3.html)" = "$FLIPS"

# ---- Chromium: PDF and PNG, no request ------------------------------------------
chrome pdf f3.html f3.pdf
ok "chromium printed the audit report" test -s f3.pdf
pdftext f3.pdf > f3.txt
pages=$(wc -l < f3.txt)
ok "more than one page ($pages)" test "$pages" -gt 1
ok "pdftotext finds the verdict sentence" \
	grep -qF "Version german-numeric-logistic does not reproduce: $FLIPS of the 120 decisions on its audit sample flipped" f3.txt
ok "the digest on every page" test "$(grep -cF "evidence sha256:$(sha256sum f3.json | cut -c 1-64) key $KEYID" f3.txt)" = "$pages"
ok "page N of M on every page" test "$(grep -cE "page [0-9]+ of $pages" f3.txt)" = "$pages"
ok "no CSP violation (audit pdf)" test "$(csp_violations f3.pdf)" = 0
ok "no request from the page (audit pdf)" test -z "$(page_requests f3.pdf)"
chrome png f3.html f3.png
# RBA_REPORT_PNG=FILE keeps this picture (the README's doc/report-audit.png)
if [ -n "${RBA_REPORT_PNG:-}" ]; then cp f3.png "$RBA_REPORT_PNG"; fi
set -- $(pngstat f3.png)
ok "the audit PNG is 800 wide" test "$1" = 800
ok "the audit PNG is not blank ($3 pixels not white, $4 colours)" test "$3" -gt 20000 -a "$4" -gt 8
ok "no request from the page (audit png)" test -z "$(page_requests f3.png)"
# The checks can fail: an empty page is blank, and a page without the
# CSP that asks for an image shows its request in the net log; with
# the CSP the request is a logged violation instead.
printf '<!DOCTYPE html><html><body></body></html>\n' > empty.html
sed 's|<meta http-equiv="Content-Security-Policy"[^>]*>||; s|</body>|<img src="http://report-probe.invalid/x.png" alt="x"></body>|' f3.html > probe.html
sed 's|</body>|<img src="http://report-probe.invalid/x.png" alt="x"></body>|' f3.html > probe-csp.html
chrome png empty.html empty.png
set -- $(pngstat empty.png)
ok "an empty page reads as blank ($3)" test "$3" -lt 100
chrome png probe.html probe.png
ok "the net log shows a request when a page makes one" sh -c "page_requests() { grep -o '\"url\":\"[^\"]*\"' \"\$1.net.json\"; }; page_requests probe.png | grep -q report-probe.invalid"
chrome png probe-csp.html probe-csp.png
ok "the CSP blocks it, and the log says so" test "$(csp_violations probe-csp.png)" -gt 0

# a dispute of a flipped case escalates: marked white on black
FID=$(jq -r '.predicate.results.flipped_cases[0].id' f3.json)
run 1 $RBA dispute $V "$FID" --export -k k.key -o de.json
run 0 $RBA report de.json -o de.html -p k.pub
ok "escalate is marked otherwise than stands" grep -qF '<span class="no" id="answer">&#9888; ESCALATE</span>' de.html

# ---- metric-equivalent: production did not run the artifact bit for bit -----------
# Logged scores 1e-4 off the model's (away from the edges, so that no
# decision flips): within the tolerance, not the artifact's own.
awk -F, 'NR == FNR { if (FNR > 1) s[$1] = $2; next }
	FNR == 1 { print $0 ",score"; next }
	{ v = s[$1]; if ((v < 0.298 || v > 0.302) && (v < 0.498 || v > 0.502)) v += 0.0001; print $0 "," v }' \
	scores.csv cases.csv > off.csv
run 0 $RBA -S me init
run 0 $RBA -S me snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S me register "$PINS" --policy "$FIX/policy/audit-tolerant.yaml"
run 0 $RBA -S me sample add $V off.csv --score-column score
run 0 $RBA -S me audit $V
out_has "metric-equivalent"
run 0 $RBA -S me export $V -k k.key -o me.json
run 0 $RBA report me.json -o me.html -p k.pub
ok "metric-equivalent: the warning that production did not run it bit for bit" \
	grep -q 'production did not run it bit for bit' me.html
ok "metric-equivalent: the artifact row says the same, not that it made the decisions" \
	sh -c "grep -o '<td id=\"artifact-note\">.*</td>' me.html | grep -q 'production did not run it bit for bit' &&
		! grep -q 'stored decisions were made by' me.html"
ok "metric-equivalent: no contradiction found in verified evidence" sh -c "! grep -q 'id=\"disagree\"' me.html"
# a flip written into it: --unverified draws it, saying the verdict and
# the count disagree
sed 's/"flips": 0,/"flips": 1,/' me.json > me1.json
ok "one count changed" test "$(cmp -l me.json me1.json | wc -l)" = 1
run 0 $RBA report me1.json -o me1.html --unverified
ok "a tampered count beside the verdict: the page says the two disagree" \
	grep -qF 'the verdict is metric-equivalent, but results.flips is 1 where the policy tolerates 0: the two disagree' me1.html
ok "and that the verdict cannot be taken as stated" grep -qF 'The file contradicts itself, so its verdict cannot be taken as stated' me1.html

# ---- dispute evidence, under a policy with reason statements ---------------------
C=german-categorical-logistic
run 0 $RBA -S cat init
run 0 $RBA -S cat snapshot add "$FIX/german-credit.csv"
run 0 $RBA -S cat register "$FIX/pins/german-categorical-logistic.yaml" --policy "$FIX/policy/credit-statements.yaml"
head -n 41 "$FIX/german-credit.csv" > cat.csv
run 0 $RBA -S cat sample add $C cat.csv
run 0 $RBA -S cat audit $C
run 1 $RBA -S cat policy check $C "$POL"
out_has "statements  0, covering 0 of the 20 input columns"
run 1 $RBA -S cat policy check $C
out_has "statements  25, covering 16 of the 20 input columns"
out_has "without     personal_status_sex"
out_has "without     foreign_worker"
run 0 $RBA -S cat dispute $C 2
out_has "1. duration_months = 48       +0.764397  Length of the requested loan term"
out_has "(no statement: personal_status_sex)"
err_is "rebuild-audit: warning: 1 principal reason without a statement in the policy, printed by column name: personal_status_sex"
run 0 $RBA -S cat dispute $C 2 --export -k k.key -o dv.json
run 0 minisign -Vm dv.json -p k.pub
run 0 $RBA verify dv.json -p k.pub
ok "dispute evidence v3 with statements" jq -e '.predicateType == "https://rebuild-audit.dev/dispute-evidence/v3" and .predicate.dispute.explanation.statements_missing == 1 and .predicate.dispute.explanation.principal_reasons[0].statement == "Length of the requested loan term" and .predicate.dispute.explanation.principal_reasons[3].statement == null' dv.json
ok "the v3 dispute schema accepts it" /usr/bin/jsonschema -i dv.json "$FIX/evidence/dispute-v3.schema.json"
# a statement changed and re-signed: verify says which
sed 's/"statement": "Length of the requested loan term"/"statement": "Length of the loan"/' dv.json > ds.json
minisign -S -s k.key -m ds.json -t "$(sed -n '3s/^trusted comment: //p' dv.json.minisig)" > /dev/null 2>&1
run 1 $RBA verify ds.json -p k.pub
err_has "principal reason 1: the statement is not the one the policy gives column 'duration_months'"
run 0 $RBA report dn.json -o dn.html -p k.pub
ok "without statements the page says so" grep -qF 'The policy of this evidence has no reason statements' dn.html
run 0 $RBA report dv.json -o dv.html -p k.pub
out_has "from dispute evidence 'dv.json'"
ok "the title is the answer" grep -qF '<h1 id="title">Case 2 of version german-categorical-logistic: the disputed decline stands</h1>' dv.html
ok "a waterfall bar per contribution" test "$(grep -o 'class="wf-bar' dv.html | wc -l)" = "$(jq '.predicate.dispute.explanation.contributions | length' dv.json)"
ok "band edges on the band scale" \
	test "$(grep -o 'class="band-edge" data-edge="[^"]*"' dv.html | sed 's/.*="//; s/"//' | tr '\n' ' ')" = "0.3 0.5 "
ok "the add-up check" grep -qF 'agrees within the tolerance 1e-06' dv.html
ok "the missing statement counted" grep -qF '1 principal reason without a statement in the policy' dv.html
ok "the answer marked, not only worded" grep -qF '<span class="ok" id="answer">&#10003; STANDS</span>' dv.html
ok "the inputs table: the model's inputs, one row per column the reasons name" \
	test "$(sed -n '/<table id="inputs">/,/<\/table>/p' dv.html | grep -c '^<tr><td')" = \
	"$(jq '.predicate.dispute.explanation.contributions | length' dv.json)"
ok "the outcome label is not listed as an input" \
	sh -c "! sed -n '/<table id=\"inputs\">/,/<\/table>/p' dv.html | grep -q '<td class=\"mono\">class</td>'"
ok "it is listed with the case's other columns" \
	sh -c "sed -n '/<table id=\"other-columns\">/,/<\/table>/p' dv.html | grep -q '<td class=\"mono\">class</td>'"
ok "no 'null' where the answer was not retrained" sh -c "! grep -q 'retrain reason</th><td>null' dv.html && grep -q 'id=\"retrain\">no: the stored artifact' dv.html"
ok "the waterfall has a log-odds axis with ticks" \
	test "$(sed -n '/<svg id="waterfall"/,/<\/svg>/p' dv.html | grep -Eo '<line [^>]*stroke="#000"/><text [^>]*>-?[0-9.]+</text>' | wc -l)" -ge 3
chrome pdf dv.html dv.pdf
pdftext dv.pdf > dv.txt
ok "pdftotext finds the case and its answer" grep -qF "Case 2 of version german-categorical-logistic: the disputed decline stands" dv.txt
ok "pdftotext finds each reason statement" sh -c "jq -r '.predicate.dispute.explanation.principal_reasons[] | .statement // empty' dv.json > st.txt; test \$(wc -l < st.txt) = 3 && while IFS= read -r l; do grep -qF \"\$l\" dv.txt || exit 1; done < st.txt"
ok "pdftotext finds the column standing in" grep -qF "(no statement: the column name) personal_status_sex" dv.txt
ok "the dispute digest on every page" test "$(grep -cF "evidence sha256:$(sha256sum dv.json | cut -c 1-64)" dv.txt)" = "$(wc -l < dv.txt)"
ok "no CSP violation (dispute pdf)" test "$(csp_violations dv.pdf)" = 0
ok "no request from the page (dispute pdf)" test -z "$(page_requests dv.pdf)"
chrome png dv.html dv.png
set -- $(pngstat dv.png)
ok "the dispute PNG is not blank ($3 pixels not white)" test "$3" -gt 20000 -a "$4" -gt 8

# ---- one changed byte: refused; --unverified: a banner on every page ------------
sed 's/"verdict": "not-reproducible"/"verdict": "not-reproducibl3"/' f3.json > x.json
ok "one byte changed" test "$(cmp -l f3.json x.json | wc -l)" = 1
cp f3.json.minisig x.json.minisig
run 1 $RBA report x.json -o x.html -p k.pub
err_is "rebuild-audit: verification failed 'x.json': signature: signature does not match the file"
ok "nothing written" test ! -e x.html
run 0 $RBA report x.json -o x.html -p k.pub --unverified
out_has "NOT VERIFIED: signature: "
ok "the screen banner" grep -q '<div class="banner" id="unverified">NOT VERIFIED' x.html
chrome pdf x.html x.pdf
pdftext x.pdf > x.txt
ok "the banner on every printed page ($(wc -l < x.txt))" \
	test "$(grep -c 'NOT VERIFIED: the signature of this evidence was not verified' x.txt)" = "$(wc -l < x.txt)"
run 0 $RBA report dv.json -o dvu.html --unverified
out_has "NOT VERIFIED: no public key was given"
# a key that did not sign it: refused too
run 0 $RBA keygen -o other
run 1 $RBA report ev.json -o o.html -p other.pub
err_has "verification failed 'ev.json'"

# ---- bad input: one line, exit 2 --------------------------------------------------
printf '{"hello": 1}\n' > plain.json
minisign -S -s k.key -m plain.json -t "a note" > /dev/null 2>&1
run 2 $RBA report plain.json -o p.html -p k.pub
err_is "rebuild-audit: cannot report 'plain.json': not rebuild-audit evidence (a signed file of another kind)"
ok "nothing written" test ! -e p.html
printf 'not json\n' > junk.json
run 2 $RBA report junk.json -o j.html --unverified
err_is "rebuild-audit: cannot report 'junk.json:1:1': not evidence: not JSON: unexpected character"
jq 'del(.predicate.results.flips)' f3.json > nf.json
run 2 $RBA report nf.json -o nf.html --unverified
err_is "rebuild-audit: cannot report 'nf.json': member 'predicate.results.flips' missing or not a number or null"
ok "nothing written" test ! -e nf.html
run 2 $RBA report ev.json -p k.pub
err_has "-o OUT is required"
run 2 $RBA report ev.json -o y.html
err_has "-p PUB is required"
run 2 $RBA report missing.json -o y.html -p k.pub
err_is "rebuild-audit: cannot read 'missing.json': no such file or directory"

# ---- the first formats still draw -------------------------------------------------
for f in "$FIX"/evidence/v1/*.json "$FIX"/evidence/dispute-v1.json; do
	b=$(basename "$f" .json)
	run 0 $RBA report "$f" -x "$f.minisig" -o "$b.html" -p "$FIX/keys/rba-test-only.pub"
	out_has "verified with key"
done
ok "v1 not-reproducible: a mark per listed flipped case" \
	test "$(grep -c 'class="flip-mark"' v1-not-reproducible.html)" = "$(jq .predicate.results.flipped_cases_listed "$FIX/evidence/v1/v1-not-reproducible.json")"
ok "v1: the earlier audits are said not to be stated" grep -qF 'Earlier audits: not stated (evidence v1).' v1-bit-identical.html
ok "dispute v1: only the nearest edge" grep -qF 'states only the nearest edge' dispute-v1.html
