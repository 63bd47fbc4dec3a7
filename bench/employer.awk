# employer.awk - adds an employer column of LEVELS levels (default 3000)
# with a real effect to a credit table whose label is the last column:
#   awk -v levels=3000 -f bench/employer.awk credit.csv > credit-emp.csv
# Row k of the first LEVELS rows has employer k (every level occurs);
# every later row draws one with a skewed frequency (employer k about
# 1 / (k + 20)); a fifth of the employers are risky (a row of theirs
# defaults with probability one half whatever it was) and a fifth safe
# (a row of theirs does not default with probability one half).  Its own
# Park-Miller generator, so the bytes are the same for any awk.
function u() { seed = (seed * 48271) % 2147483647; return seed / 2147483647 }
BEGIN {
	FS = OFS = ","
	if (levels == "") levels = 3000
	seed = 20261201
	tot = 0
	for (k = 1; k <= levels; k++) {
		w[k] = 1 / (k + 20)
		tot += w[k]
		r = u()
		kind[k] = r < 0.2 ? 1 : r < 0.4 ? -1 : 0
	}
	c = 0
	for (k = 1; k <= levels; k++) {
		c += w[k] / tot
		cum[k] = c
	}
}
NR == 1 {
	$NF = "employer" OFS $NF
	print
	next
}
{
	r = u()
	lo = 1
	hi = levels
	if (NR - 1 <= levels)
		lo = hi = NR - 1
	while (lo < hi) {
		mid = int((lo + hi) / 2)
		if (cum[mid] < r) lo = mid + 1; else hi = mid
	}
	y = $NF
	if (kind[lo] == 1 && u() < 0.5) y = 1
	else if (kind[lo] == -1 && u() < 0.5) y = 0
	$NF = sprintf("E%04d", lo) OFS y
	print
}
