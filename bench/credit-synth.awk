# credit-synth.awk - a deterministic credit-shaped table for bench-gbdt.sh:
#   awk -v rows=30000 -f bench/credit-synth.awk > credit.csv
# 23 inputs shaped like a card-default table (credit limit, sex,
# education, marriage, age, six months of repayment status, bill and
# payment amounts) and a binary default label from a non-linear rule
# with noise.  Its own Park-Miller generator (products below 2^53, exact
# in any awk); exp, log and cos come from the awk's libm, so the bytes are
# fixed for one awk and libm (the bench prints their digest).
function u() { seed = (seed * 48271) % 2147483647; return seed / 2147483647 }
function nrm(  a, b) { a = u(); b = u(); if (a < 1e-12) a = 1e-12
	return sqrt(-2 * log(a)) * cos(6.283185307179586 * b) }
BEGIN {
	if (rows == "") rows = 30000
	seed = 20261130
	printf "id,limit_bal,sex,education,marriage,age"
	for (m = 0; m < 6; m++) printf ",pay_%d", m
	for (m = 1; m <= 6; m++) printf ",bill_amt%d", m
	for (m = 1; m <= 6; m++) printf ",pay_amt%d", m
	printf ",default\n"
	for (i = 1; i <= rows; i++) {
		risk = nrm()
		limit = int(exp(11 + 0.8 * nrm() - 0.3 * risk) / 10000 + 1) * 10000
		sex = u() < 0.6 ? 2 : 1
		edu = 1 + int(u() * 4)
		mar = 1 + int(u() * 3)
		age = 21 + int(u() * 45 + 3 * nrm())
		if (age < 21) age = 21
		line = i "," limit "," sex "," edu "," mar "," age
		late = 0
		for (m = 0; m < 6; m++) {
			p = int(risk + 0.8 * nrm() - 0.5)
			if (p < -2) p = -2
			if (p > 8) p = 8
			if (m < 2 && p > 0) late += p
			line = line "," p
		}
		util = 1 / (1 + exp(-(risk + 0.5 * nrm())))
		for (m = 1; m <= 6; m++) {
			bill[m] = int(limit * util * (0.9 + 0.2 * u()))
			line = line "," bill[m]
		}
		paid = 0
		for (m = 1; m <= 6; m++) {
			pa = int(bill[m] * (u() < 0.3 + 0.1 * risk ? 0.02 : 0.1 + 0.4 * u()))
			if (pa < 0) pa = 0
			if (m == 1) paid = pa / (bill[m] + 1)
			line = line "," pa
		}
		z = -1.6 + 0.9 * late - 0.8 * (limit > 200000) + 1.2 * (util > 0.8) \
		    - 2 * paid + 0.3 * (age < 25) + 0.2 * (edu == 4) + 0.6 * nrm()
		print line "," (u() < 1 / (1 + exp(-z)) ? 1 : 0)
	}
}
