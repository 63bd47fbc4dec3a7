# t-keys.sh - keygen and verify: minisign-compatible keys and signatures.
K=$FIX/keys
jq_out() { jq -e "$1" out > /dev/null; }
# The interoperability checks below need minisign; make deps installs it,
# so its absence is a failure, not a skip.
ok "minisign installed (make deps)" command -v minisign

# keygen: two files, the secret one 0600, nothing secret printed.
run 0 $RBA keygen -o k
out_has 'public key: k.pub'
out_has 'key id: '
err_empty
ok "k.key is mode 600" [ "$(stat -c %a k.key)" = 600 ]
ok "k.pub exists" [ -f k.pub ]
ok "key id printed is the public key's" \
	grep -qF "$(sed -n 's/^key id: //p' out)" k.pub
ok "no secret key bytes in stdout" sh -c '! grep -qF "$(sed -n 2p k.key | cut -c 20-80)" out err'
ok "public key line is 56 base64 characters" [ "$(sed -n 2p k.pub | tr -d '\n' | wc -c)" = 56 ]
ok "no temporaries left" [ "$(ls | grep -c tmp)" = 0 ]

# keygen refuses to overwrite either file, and writes nothing.
cp k.key k.key.orig
cp k.pub k.pub.orig
run 2 $RBA keygen -o k
err_is "rebuild-audit: keygen failed 'k.key': already exists (keygen never overwrites a key)"
ok "k.key unchanged" cmp -s k.key k.key.orig
ok "k.pub unchanged" cmp -s k.pub k.pub.orig
echo x > only.pub
run 2 $RBA keygen -o only
err_is "rebuild-audit: keygen failed 'only.pub': already exists (keygen never overwrites a key)"
ok "no only.key left behind" [ ! -e only.key ]
ln -s nowhere link.key
run 2 $RBA keygen -o link
ok "nothing written through a dangling link" sh -c '[ ! -e nowhere ] && [ ! -e link.pub ]'
run 2 $RBA keygen -o nodir/k
err_has "no such file or directory"
ok "nothing written for a missing directory" [ ! -e nodir ]
run 2 $RBA keygen -o c --comment "$(printf 'two\nlines')"
err_has 'line break'
ok "nothing written for a bad comment" sh -c '[ ! -e c.key ] && [ ! -e c.pub ]'
run 0 $RBA keygen -o c --comment 'acme model risk'
ok "custom public key comment" [ "$(sed -n 1p c.pub)" = 'untrusted comment: acme model risk' ]
run 0 $RBA -q keygen -o q
out_empty
run 0 $RBA --json keygen -o j
ok "keygen --json parses" jq_out '.public_key == "j.pub" and .secret_key == "j.key" and (.key_id | length) == 16 and .passphrase_protected == false'

# keygen usage.
run 2 $RBA keygen
err_has "bad usage 'keygen'"
run 2 $RBA keygen -o
run 2 $RBA keygen -o x --bogus
run 2 $RBA keygen -o x extra
ok "usage errors write nothing" sh -c '[ ! -e x.key ] && [ ! -e x.pub ]'
run 0 $RBA keygen -h
out_has 'keygen -o PREFIX'

# keygen with a passphrase file: bad ones refused before anything is written.
: > empty.pass
run 2 $RBA keygen -o e --passphrase-file empty.pass
err_is "rebuild-audit: cannot read passphrase 'empty.pass:1': passphrase is empty"
run 2 $RBA keygen -o e --passphrase-file missing.pass
err_has "missing.pass"
printf 'one\ntwo\n' > two.pass
run 2 $RBA keygen -o e --passphrase-file two.pass
ok "nothing written for a bad passphrase file" sh -c '[ ! -e e.key ] && [ ! -e e.pub ]'

# verify: the minisign fixtures (made by minisign -S, legacy -l too).
run 0 $RBA verify "$K/message.txt" -p "$K/minisign-test-only.pub"
out_has "signed by key 517DABC399AC8744"
out_has "trusted comment: fixture: prehashed signature by minisign-test-only"
err_empty
run 0 $RBA verify "$K/message.txt" -p "$K/minisign-test-only.pub" -x "$K/message.txt.legacy.minisig"
out_has "trusted comment: fixture: legacy signature by minisign-test-only"
run 0 $RBA verify "$K/message.txt" -p "$K/minisign-test-only-enc.pub" -x "$K/message.txt.enc.minisig"
run 0 $RBA verify "$K/message.txt" -p "$K/rba-test-only.pub" -x "$K/message.txt.rba.minisig"
run 0 $RBA -q verify "$K/message.txt" -p "$K/minisign-test-only.pub"
out_empty
run 0 $RBA --json verify "$K/message.txt" -p "$K/minisign-test-only.pub" -x "$K/message.txt.legacy.minisig"
ok "verify --json parses" jq_out '.valid == true and .key_id == "517DABC399AC8744" and .prehashed == false and .trusted_comment == "fixture: legacy signature by minisign-test-only"'

# verify: exit 1 when the answer is no, naming what failed.
cp "$K/message.txt" m.txt
cp "$K/message.txt.minisig" m.txt.minisig
run 0 $RBA verify m.txt -p "$K/minisign-test-only.pub"
printf 'x' >> m.txt
run 1 $RBA verify m.txt -p "$K/minisign-test-only.pub"
err_is "rebuild-audit: verification failed 'm.txt': signature does not match the file"
out_empty
run 1 $RBA --json verify m.txt -p "$K/minisign-test-only.pub"
ok "failed verify --json parses" jq_out '.valid == false and .failed == "signature"'
cp "$K/message.txt" m.txt
run 1 $RBA verify m.txt -p "$K/rba-test-only.pub"
err_is "rebuild-audit: verification failed 'm.txt': signed by key 517DABC399AC8744, not by key 7734D3625FDFAA32 of the public key"
sed '3s/prehashed/Prehashed/' "$K/message.txt.minisig" > m.txt.minisig
run 1 $RBA verify m.txt -p "$K/minisign-test-only.pub"
err_is "rebuild-audit: verification failed 'm.txt': trusted comment signature does not verify"
sed '2s/^RUR/RUS/' "$K/message.txt.minisig" > m.txt.minisig
run 1 $RBA verify m.txt -p "$K/minisign-test-only.pub"
err_has "verification failed 'm.txt'"
sed '2s/$/*/' "$K/message.txt.minisig" > m.txt.minisig
run 1 $RBA verify m.txt -p "$K/minisign-test-only.pub"
err_is "rebuild-audit: verification failed 'm.txt': malformed signature 'm.txt.minisig' line 2: not valid base64"
head -n 3 "$K/message.txt.minisig" > m.txt.minisig
run 1 $RBA verify m.txt -p "$K/minisign-test-only.pub"
err_is "rebuild-audit: verification failed 'm.txt': malformed signature 'm.txt.minisig' line 4: missing (4 lines expected)"
: > m.txt.minisig
run 1 $RBA verify m.txt -p "$K/minisign-test-only.pub"
err_has "malformed signature 'm.txt.minisig'"
head -c 20000 /dev/zero > m.txt.minisig
run 1 $RBA verify m.txt -p "$K/minisign-test-only.pub"
err_has "larger than"
# CRLF line ends are accepted, as minisign accepts them.
sed 's/$/\r/' "$K/message.txt.minisig" > m.txt.minisig
run 0 $RBA verify m.txt -p "$K/minisign-test-only.pub"

# verify: exit 2 when it could not check.
cp "$K/message.txt.minisig" m.txt.minisig
run 2 $RBA verify absent.txt -p "$K/minisign-test-only.pub"
err_is "rebuild-audit: cannot read 'absent.txt': no such file or directory"
run 2 $RBA verify m.txt -p absent.pub
err_is "rebuild-audit: cannot read public key 'absent.pub': no such file or directory"
run 2 $RBA verify m.txt -p "$K/minisign-test-only.pub" -x absent.minisig
err_is "rebuild-audit: cannot read signature 'absent.minisig': no such file or directory"
run 2 $RBA verify m.txt -p m.txt
err_has "cannot read public key 'm.txt:"
run 2 $RBA verify m.txt -p "$K/minisign-test-only.key"
err_is "rebuild-audit: cannot read public key '$K/minisign-test-only.key': this is a secret key, not a public key (give the .pub file)"
run 2 $RBA verify m.txt -p "$K/minisign-test-only-enc.key"
err_is "rebuild-audit: cannot read public key '$K/minisign-test-only-enc.key': this is a secret key, not a public key (give the .pub file)"
out_empty
run 2 $RBA verify m.txt
err_has "bad usage 'verify'"
run 2 $RBA verify -p "$K/minisign-test-only.pub"
run 2 $RBA verify m.txt m.txt -p "$K/minisign-test-only.pub"
run 2 $RBA verify m.txt -p "$K/minisign-test-only.pub" --bogus

# Our key pair with minisign: it signs with our secret key, accepts the
# signature with our public key, and so do we.
printf 'an evidence file\n' > ev.json
run 0 minisign -S -s k.key -m ev.json -t 'by minisign with our key'
run 0 minisign -Vm ev.json -p k.pub
run 0 $RBA verify ev.json -p k.pub
out_has 'trusted comment: by minisign with our key'

# Every single-byte change of the signature, trusted comment and global
# signature lines: both minisign and verify refuse it.  A base64 character
# is replaced by the one 32 places away, which changes a data bit: minisign
# 0.11 ignores the unused low bits of the last character before "=", so a
# change of those bits alone passes minisign (verify refuses it too; the
# unit tests try every value).
cp ev.json.minisig ev.orig
start=$(( $(head -n 1 ev.orig | wc -c) ))
size=$(wc -c < ev.orig)
missed=
i=$start
while [ $i -lt $size ]; do
	cp ev.orig ev.json.minisig
	c=$(dd if=ev.orig bs=1 skip=$i count=1 2>/dev/null)
	r=$(printf '%s' "$c" | tr 'A-Za-z0-9+/' 'g-z0-9+/A-Za-f')
	if [ "$r" = "$c" ]; then r=A; fi
	printf '%s' $r | dd of=ev.json.minisig bs=1 seek=$i conv=notrunc 2>/dev/null
	$RBA -q verify ev.json -p k.pub > /dev/null 2>&1
	a=$?
	minisign -q -Vm ev.json -p k.pub > /dev/null 2>&1
	b=$?
	if [ $a = 0 ] || [ $b = 0 ]; then missed="$missed $i"; fi
	i=$((i + 1))
done
ok "every signature byte change refused by both (missed:$missed)" [ -z "$missed" ]
ok "the loop covered the signature" [ $((size - start)) -gt 200 ]

# A passphrase-protected key at minisign's full scrypt cost: minisign
# decrypts it with the same passphrase typed at its prompt.
printf 'test-only passphrase\n' > good.pass
run 0 $RBA keygen -o e --passphrase-file good.pass
out_has 'passphrase-protected'
ok "e.key is mode 600" [ "$(stat -c %a e.key)" = 600 ]
ok "passphrase not printed" sh -c '! grep -q "test-only passphrase" out err'
printf 'signed with a protected key\n' > p.txt
minisign -S -s e.key -m p.txt -t 'protected' < good.pass > /dev/null 2>&1
ok "minisign decrypts our protected key" [ $? = 0 ]
run 0 $RBA verify p.txt -p e.pub
out_has 'trusted comment: protected'
