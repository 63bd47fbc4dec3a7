# store-seed.sh - sourced by crash.sh and faults.sh: the store both
# start from.  store_seed "CMD" makes it with CMD (the binary and its
# -S STORE): the German numeric snapshot, version $V registered under the
# credit policy, cases-a.csv (200 cases) kept as its sample and audited,
# cases-b.csv (300) beside it, and the key pair k.key/k.pub ($RBA
# keygen).  Needs $RBA, $FIX and $V; exits 2 when a step fails.
store_seed() {
	$1 init > /dev/null || exit 2
	$1 snapshot add "$FIX/german-credit-numeric.csv" > /dev/null || exit 2
	$1 register "$FIX/pins/$V.yaml" --policy "$FIX/policy/credit.yaml" > /dev/null 2>&1 || exit 2
	head -n 201 "$FIX/german-credit-numeric.csv" > cases-a.csv
	head -n 301 "$FIX/german-credit-numeric.csv" > cases-b.csv
	$1 sample add $V cases-a.csv > /dev/null || exit 2
	$1 audit $V > /dev/null || exit 2
	$RBA keygen -o k > /dev/null || exit 2
}
