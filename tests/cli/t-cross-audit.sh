# cross-audit.sh (make check-arm64's audit of a store made on another
# machine), with this machine on both sides, and with an "other machine"
# whose scores differ or whose audit fails: it must say no.
run 0 sh "$TOP/tests/cross-audit.sh" "$RBA" "$RBA"
out_has "cross-audit: ok   german-categorical-gbdt: bit-identical there, 1000 cases, 0 flips, max score delta 0"
out_has "cross-audit: a store made here audits bit-identical there, and back"
# a score one ulp-ish off on the other side
cat > drift.sh <<EOS
#!/bin/sh
out=\$("$RBA" "\$@"); rc=\$?
case " \$* " in
*" audit "*) printf '%s\n' "\$out" | jq -c '.audits[0].sample.max_score_delta = 1e-07' ;;
*) [ -z "\$out" ] || printf '%s\n' "\$out" ;;
esac
exit \$rc
EOS
run 1 sh "$TOP/tests/cross-audit.sh" "$RBA" sh drift.sh
out_has "cross-audit: FAIL german-numeric-logistic:"
out_lacks "a store made here audits bit-identical there"
# an audit that cannot run there
cat > broken.sh <<EOS
#!/bin/sh
case " \$* " in *" audit "*) echo "rebuild-audit: cannot audit" >&2; exit 2 ;; esac
exec "$RBA" "\$@"
EOS
run 1 sh "$TOP/tests/cross-audit.sh" "$RBA" sh broken.sh
out_has "cross-audit: FAIL audit german-categorical-mlp there: rebuild-audit: cannot audit"
out_lacks "a store made here audits bit-identical there"
