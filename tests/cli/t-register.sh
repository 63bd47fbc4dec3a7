# register, version list/show/export-artifact, policy set.
P=$FIX/pins/german-numeric-logistic.yaml
POL=$FIX/policy/credit.yaml
run 0 $RBA -S st init
run 2 $RBA -S st register "$P"
err_has "is not in the store (add it with 'rebuild-audit snapshot add FILE')"
run 0 $RBA -S st snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st register "$P" --policy "$POL"
out_has "artifact: sha256:"
out_has "trainer_abi: 1"
out_has "environment: sha256:"
out_has "code_revision: "
cp out completed.yaml
# the completed pins are valid pins, and name the same config
run 0 $RBA check completed.yaml
cfg1=$(grep '^config:' out)
run 0 $RBA check "$P"
ok "config hash unchanged by filling the pins" test "$(grep '^config:' out)" = "$cfg1"
art=$(sed -n 's/^artifact: //p' completed.yaml)
run 2 $RBA -S st register "$P"
err_is "rebuild-audit: cannot register 'german-numeric-logistic': version 'german-numeric-logistic' is already registered (--replace replaces it)"
t0=$(txnid st)
run 0 $RBA -S st register --replace "$P"
ok "replace wrote" test "$(txnid st)" != "$t0"
run 0 $RBA -S st version list
out_has "german-numeric-logistic"
run 0 $RBA -S st --json version list
ok "version list --json" jq -e '.[0].name == "german-numeric-logistic"' out
run 0 $RBA -S st version show german-numeric-logistic
out_has "$art"
out_has "config        ${cfg1#config: }"
run 0 $RBA -S st --json version show german-numeric-logistic
ok "show --json artifact" jq -e --arg a "$art" '.artifact == $a' out
run 0 $RBA -S st version export-artifact german-numeric-logistic model.bin
ok "exported artifact hashes to its digest" test "sha256:$(sha256sum model.bin | cut -d' ' -f1)" = "$art"
run 2 $RBA -S st version show nope
err_is "rebuild-audit: cannot show version 'nope': no such version"
run 2 $RBA -S st version export-artifact nope x.bin
err_has "no such version"
ok "no file for a missing version" test ! -e x.bin
# a registration that trains reproduces the trained digest
run 0 $RBA -S st2 init
run 0 $RBA -S st2 snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st2 register completed.yaml
out_has "artifact: $art"
# --artifact: the deployed file; a pinned digest it does not match is refused
run 0 $RBA -S st3 init
run 0 $RBA -S st3 snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st3 register completed.yaml --artifact model.bin
out_has "artifact: $art"
# a valid artifact that is not the one the completed pins name
run 0 $RBA train "$FIX/pins/german-numeric-mlp.yaml" -o other.bin --snapshot "$FIX/german-credit-numeric.csv"
other=$(sed -n 1p out)
t3=$(txnid st3)
run 2 $RBA -S st3 register --replace completed.yaml --artifact other.bin
err_is "rebuild-audit: cannot register 'german-numeric-logistic': the pins name artifact $art but the file is $other"
ok "a refused registration writes nothing" test "$(txnid st3)" = "$t3"
printf 'not an artifact' > junk.bin
run 2 $RBA -S st3 register --replace "$P" --artifact junk.bin
err_has "rebuild-audit: cannot register"
# policy set
run 0 $RBA -S st policy set german-numeric-logistic "$POL"
out_has "sha256:"
run 2 $RBA -S st policy set nope "$POL"
err_is "rebuild-audit: cannot set policy 'nope': no such version"
run 2 $RBA -S st policy set german-numeric-logistic "$P"
err_has "rebuild-audit: invalid policy"
run 2 $RBA -S st policy frob
err_has "bad usage 'policy'"
run 2 $RBA -S st register "$FIX/invalid/pins-lr-zero.yaml"
err_has "rebuild-audit: invalid pins"
