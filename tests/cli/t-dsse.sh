# t-dsse.sh - export --dsse: the in-toto statement in a DSSE envelope
# signed with the export key's Ed25519 key over PAE, and verify of the
# envelope: the signature, then the statement as verify checks a
# minisign-signed one, with --vkey and --checkpoint; each refusal one
# line, exit 1 as for any failed check.
V=german-numeric-logistic
jq_out() { jq -e "$1" out > /dev/null; }
b64d() { base64 -d 2> /dev/null; }
# set_env FILTER OUT: the envelope ev.dsse with a jq edit, as OUT
set_env() { jq -c "$1" ev.dsse > "$2"; }

ok "jq installed" command -v jq

run 0 $RBA init
run 0 $RBA snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA register "$FIX/pins/$V.yaml" --policy "$FIX/policy/credit.yaml"
head -n 40 "$FIX/german-credit-numeric.csv" > cases.csv
run 0 $RBA sample add $V cases.csv
run 0 $RBA audit $V
run 0 $RBA keygen -o k
run 0 $RBA keygen -o other

# ---- export --dsse ---------------------------------------------------------
run 0 $RBA export $V -k k.key -o ev.dsse --dsse
out_has 'evidence: ev.dsse ('
out_has 'signature: in the file, a DSSE envelope (payloadType application/vnd.in-toto+json)'
err_empty
ok "no .minisig beside the envelope" test ! -e ev.dsse.minisig
ok "the digest printed is the envelope's" grep -qF "sha256:$(sha256sum ev.dsse | cut -c 1-64)" out
KID=$(sed -n "1s/.* \([0-9A-F]\{16\}\)$/\1/p" k.pub)
ok "the envelope: payloadType, one signature by the key" jq -e \
	".payloadType == \"application/vnd.in-toto+json\" and (.signatures | length) == 1 and .signatures[0].keyid == \"$KID\" and (.signatures[0].sig | length) == 88" ev.dsse
jq -r .payload ev.dsse | b64d > payload.json
ok "the payload is the in-toto statement" jq -e \
	"._type == \"https://in-toto.io/Statement/v1\" and .predicate.verdict == \"bit-identical\" and .subject[0].name == \"$V.artifact\"" payload.json
# the same statement export signs with minisign, byte for byte
run 0 $RBA export $V -k k.key -o ev.json
ok "the payload is the statement of a minisign export" cmp payload.json ev.json
run 2 $RBA export $V -k k.key -o ev.dsse --dsse
err_has "ev.dsse"
run 0 $RBA export $V -k k.key -o ev.dsse --dsse --force
run 0 $RBA --json export $V -k k.key -o ev2.dsse --dsse
ok "export --dsse --json" jq_out '.file == "ev2.dsse" and .signature == null and .envelope == "dsse" and .trusted_comment == null and .verdict == "bit-identical"'
run 2 $RBA export $V --vary -k k.key -o v.dsse --dsse
err_has "--dsse wraps audit evidence"

# The signature is Ed25519 over PAE = "DSSEv1" SP LEN(type) SP type SP
# LEN(body) SP body, checked apart from the tool with OpenSSL.
if command -v openssl > /dev/null && openssl version | grep -q '^OpenSSL 3'; then
	T=application/vnd.in-toto+json
	printf 'DSSEv1 %d %s %d ' ${#T} "$T" "$(wc -c < payload.json)" > pae.bin
	cat payload.json >> pae.bin
	jq -r '.signatures[0].sig' ev.dsse | b64d > sig.bin
	{ printf '\060\052\060\005\006\003\053\145\160\003\041\000'; sed -n 2p k.pub | b64d | tail -c 32; } > pub.der
	ok "OpenSSL: the signature verifies over PAE" \
		openssl pkeyutl -verify -pubin -keyform DER -inkey pub.der -rawin -in pae.bin -sigfile sig.bin
	printf 'x' >> pae.bin
	ok "OpenSSL: not over anything else" sh -c \
		'! openssl pkeyutl -verify -pubin -keyform DER -inkey pub.der -rawin -in pae.bin -sigfile sig.bin'
fi

# ---- verify ------------------------------------------------------------------
run 0 $RBA verify ev.dsse -p k.pub
out_has "signature verified: 'ev.dsse' signed by key $KID"
out_has 'envelope: DSSE, payloadType application/vnd.in-toto+json'
out_has "evidence consistent: version $V, audit 1 at "
out_has 'verdict bit-identical'
out_has 'log: audit record 1 is leaf 0 of that tree'
err_empty
run 0 $RBA --json verify ev.dsse -p k.pub
ok "verify --json of an envelope" jq_out ".valid == true and .envelope == \"dsse\" and .key_id == \"$KID\" and .trusted_comment == null and .evidence.version == \"$V\" and .evidence.verdict == \"bit-identical\" and .evidence.log.tree_size == 1"

# the log's key alone (--vkey), and a later checkpoint it grew into
run 0 $RBA history vkey -p k.pub
cp out vk
run 0 $RBA verify ev.dsse --vkey vk
out_has 'envelope: DSSE'
out_has "(this file's key, verified)"
run 0 $RBA audit $V
run 0 $RBA history checkpoint -k k.key -o ck2
run 0 $RBA verify ev.dsse -p k.pub --vkey vk --checkpoint ck2
out_has "log: checkpoint 'ck2' of 2 records extends it"
run 0 $RBA --json verify ev.dsse -p k.pub --checkpoint ck2
ok "verify --checkpoint --json" jq_out '.evidence.log.consistent_with.tree_size == 2'
run 2 $RBA verify ev.dsse -p k.pub -x ev.json.minisig
err_has "'ev.dsse' is a DSSE envelope, which carries its signature: no -x"

# ---- refusals: one line each, exit 1 ------------------------------------------
refused() { # FILE WHAT REASON
	run 1 $RBA verify "$1" -p k.pub
	out_empty
	err_is_line "rebuild-audit: verification failed '$1': $3"
	run 1 $RBA --json verify "$1" -p k.pub
	ok "$2: --json names the check" jq_out ".valid == false and .failed == \"$2\""
}
err_is_line() {
	if [ "$(wc -l < err)" = 1 ] && [ "$(cat err)" = "$1" ]; then pass; else
		fail "stderr is not the one line '$1': $LAST_DESC"; fi
}
set_env '.payload = "not base64!"' bad-b64.dsse
refused bad-b64.dsse "malformed envelope" "payload is not base64"
set_env '.signatures[0].sig = "%%%"' bad-sig64.dsse
refused bad-sig64.dsse "malformed envelope" "signatures[0].sig is not base64"
set_env 'del(.signatures)' nosigs.dsse
refused nosigs.dsse "malformed envelope" "signatures is missing or not an array"
set_env '.payloadType = "application/json"' type.dsse
refused type.dsse "payload type" "the envelope's payloadType is 'application/json', not 'application/vnd.in-toto+json'"
# the statement changed after signing (a verdict, re-encoded)
jq -r .payload ev.dsse | b64d | sed 's/"bit-identical"/"metric-equivalent"/' | base64 -w0 > tampered.b64
set_env ".payload = \"$(cat tampered.b64)\"" tampered.dsse
refused tampered.dsse "signature" "the signature does not verify over the envelope's payload (PAE): the payload or its type was changed after signing"
# the payloadType changed after signing, to another in-toto spelling
set_env '.payloadType = "application/vnd.in-toto+JSON"' type2.dsse
refused type2.dsse "payload type" "the envelope's payloadType is 'application/vnd.in-toto+JSON', not 'application/vnd.in-toto+json'"
# a signature by another key
OKID=$(sed -n "1s/.* \([0-9A-F]\{16\}\)$/\1/p" other.pub)
run 0 $RBA export $V -k other.key -o other.dsse --dsse
refused other.dsse "key id" "signed by key $OKID, not by key $KID"
# the key id claimed, the signature another key's: the keyid is a hint
set_env ".signatures[0].sig = \"$(jq -r '.signatures[0].sig' other.dsse)\"" claim.dsse
refused claim.dsse "signature" "the signature does not verify over the envelope's payload (PAE): the payload or its type was changed after signing"
# an unknown member is ignored (DSSE's parsing rules); a keyid left out
# is tried
set_env '.extra = 1 | .signatures[0] |= del(.keyid)' nokeyid.dsse
run 0 $RBA verify nokeyid.dsse -p k.pub
out_has 'evidence consistent'
# URL-safe base64 without padding, as DSSE allows
set_env '.payload |= (gsub("\\+"; "-") | gsub("/"; "_") | rtrimstr("=") | rtrimstr("="))' url.dsse
run 0 $RBA verify url.dsse -p k.pub
out_has 'evidence consistent'

# ---- report of an envelope -----------------------------------------------------
run 0 $RBA --json report ev.dsse -p k.pub -o ev.html
ok "report: the envelope verified, its statement drawn" jq_out ".kind == \"audit\" and .verified == true and .key_id == \"$KID\" and .digest == \"sha256:$(sha256sum ev.dsse | cut -c1-64)\""
ok "report: the page shows the verdict" grep -q 'bit-identical' ev.html
run 1 $RBA report ev.dsse -p other.pub -o ev-other.html
err_has "verification failed 'ev.dsse': key id: signed by key $KID, not by key $OKID"
ok "report: no page of an envelope that does not verify" test ! -e ev-other.html
run 0 $RBA --json report tampered.dsse -p k.pub -o t.html --unverified
ok "report --unverified: drawn, with the reason" jq_out '.verified == false and (.reason | startswith("signature: "))'
run 2 $RBA report bad-b64.dsse -o b.html --unverified
err_has "payload is not base64"
run 2 $RBA report ev.dsse -p k.pub -x ev.json.minisig -o x.html
err_has "a DSSE envelope carries its signature: no -x"

# ---- a dispute statement in an envelope --------------------------------------
# export --dsse wraps audit evidence only, but verify takes any of the
# tool's statements in an envelope: a dispute answer signed over PAE by
# the key (here with OpenSSL, from the unencrypted minisign secret key:
# its Ed25519 seed is bytes 62..93 of the decoded blob, after the key id), with no trusted
# comment to name it, verifies; its payload changed does not.
if command -v openssl > /dev/null && openssl version | grep -q '^OpenSSL 3'; then
	run 0 $RBA dispute $V 3 --export -k k.key -o d.json
	# wrap FILE OUT: FILE as the payload of an envelope signed by k.key
	wrap() {
		T=application/vnd.in-toto+json
		printf 'DSSEv1 %d %s %d ' ${#T} "$T" "$(wc -c < "$1")" > pae-d.bin
		cat "$1" >> pae-d.bin
		{ printf '\060\056\002\001\000\060\005\006\003\053\145\160\004\042\004\040'
		  sed -n 2p k.key | b64d | tail -c +63 | head -c 32; } > sk.der
		openssl pkeyutl -sign -keyform DER -inkey sk.der -rawin -in pae-d.bin -out sig-d.bin &&
		jq -n --arg p "$(base64 -w0 < "$1")" --arg s "$(base64 -w0 < sig-d.bin)" --arg k "$KID" \
			'{payloadType: "application/vnd.in-toto+json", payload: $p, signatures: [{keyid: $k, sig: $s}]}' > "$2"
	}
	wrap d.json d.dsse
	run 0 $RBA verify d.dsse -p k.pub
	out_has 'envelope: DSSE'
	err_empty
	sed 's/"stands"/"escalate"/' d.json > d-edit.json
	if ! cmp -s d.json d-edit.json; then
		wrap d-edit.json d-edit.dsse
		run 1 $RBA verify d-edit.dsse -p k.pub
	fi
	# signed over other bytes than its payload: refused
	jq --arg p "$(base64 -w0 < d-edit.json)" '.payload = $p' d.dsse > d-swap.dsse
	run 1 $RBA verify d-swap.dsse -p k.pub
	err_has "signature"
fi
