# blank.awk - blanks a seeded random share of the fields of a CSV table
# without quotes, for missing-value benches and tests.
#
#   awk -v seed=1 -v pct=10 -v keep=id,class -f bench/blank.awk in.csv
#
# Each field of a data row outside the columns named in keep becomes
# empty when the next draw of a Park-Miller generator (x = 16807 x mod
# 2^31 - 1, exact in awk's doubles, so the same on every awk) is below
# pct percent of its range.  The header and the kept columns pass as
# they are.
BEGIN {
	FS = OFS = ","
	x = seed + 0
	if (x <= 0)
		x = 1
	n = split(keep, k, ",")
	for (i = 1; i <= n; i++)
		skip[k[i]] = 1
	lim = pct / 100 * 2147483647
}
NR == 1 {
	for (i = 1; i <= NF; i++)
		if ($i in skip)
			kept[i] = 1
	print
	next
}
{
	for (i = 1; i <= NF; i++) {
		if (i in kept)
			continue
		x = (x * 16807) % 2147483647
		if (x < lim)
			$i = ""
	}
	print
}
