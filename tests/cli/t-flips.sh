# flips: the byte-flip sweep on a small store (one version, a 200-case
# sample, two audits).  A flip that changes what mdb_dump -a prints must
# make store check exit non-zero and audit --all -q not exit 0, and no
# command may die by a signal.  make check sweeps FLIPS_OFFSETS offsets
# (2,000 by default, bits 0 and 7 of each); make check-flips sweeps them
# all.  Sanitizer builds keep their own fault handlers: skipped there.
V=german-numeric-logistic
: "${FLIPS_BIN:=$TOP/build/flips}"
if [ -n "${RBA_SANITIZED:-}" ]; then
	echo "t-flips: skipped under the sanitizers (their handlers report faults)" >&2
	return 0 2> /dev/null || exit 0
fi
ok "the sweep harness is built" test -x "$FLIPS_BIN"
head -n 201 "$FIX/german-credit-numeric.csv" > cases.csv
sed 's/epochs: 30/epochs: 2/' "$FIX/pins/german-numeric-logistic.yaml" > pins.yaml
ok "a small store" sh -c "$RBA -S st init > /dev/null &&
	$RBA -S st snapshot add '$FIX/german-credit-numeric.csv' > /dev/null &&
	$RBA -S st -q register pins.yaml --policy '$FIX/policy/credit.yaml' > /dev/null &&
	$RBA -S st -q sample add $V cases.csv &&
	$RBA -S st -q audit $V && $RBA -S st -q audit $V"
run 0 $RBA -S st store check
n=${FLIPS_OFFSETS:-2000}
[ "$n" = all ] && n=0
"$FLIPS_BIN" "$RBA" st $V 7 -n "$n" -s "${FLIPS_SEED:-1}" -b 07 -j "${FLIPS_JOBS:-2}" > out 2> err
rc=$?
tail -n 1 out >&2
ok "every live flip detected, no crash (flips exit $rc)" test $rc -eq 0
if [ $rc -ne 0 ]; then grep -E '^(missed|crash)' out | head -n 20 >&2; fi
ok "some flips were live" grep -Eq ' [1-9][0-9]* live' out
