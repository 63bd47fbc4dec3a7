# lib.sh - helpers for benchmarks: medians and /usr/bin/time -v figures.

# The top of the tree, taken when this file is sourced (before any cd).
bench_top=$(cd "$(dirname "$0")/.." && pwd)

# median of numbers on stdin
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# timed OUTFILE cmd...: runs cmd under /usr/bin/time -v; OUTFILE gets
# "seconds maxrss_kib"
timed() {
	out=$1
	shift
	/usr/bin/time -v -o "$out.tv" "$@" > /dev/null 2> "$out.err" || { cat "$out.err" >&2; return 1; }
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; el = s }
		/Maximum resident set size/ { rss = $2 } END { print el, rss }' "$out.tv" > "$out"
}

# german_cases N OUT: German-credit-shaped cases with running ids 1..N
# (the fixture's rows repeated), as CSV with its header.
german_cases() {
	awk -v n="$1" -F, 'NR == 1 { print; next } { row[NR - 1] = substr($0, index($0, ",") + 1); m = NR - 1 }
		END { for (i = 0; i < n; i++) print (i + 1) "," row[i % m + 1] }' \
		"$bench_top/fixtures/german-credit.csv" > "$2"
}
