# lib.sh - helpers for benchmarks: medians, and a command's time and
# peak memory.

# The top of the tree, taken when this file is sourced (before any cd).
bench_top=$(cd "$(dirname "$0")/.." && pwd)

# median of numbers on stdin
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# measure OUTFILE cmd...: runs cmd (its streams are the caller's);
# OUTFILE gets "wall_seconds cpu_seconds maxrss_kib", the CPU seconds
# user + system.  By bench_run (RBA_BENCH_RUN, which make bench sets:
# microseconds) where there is one, else by /usr/bin/time -v
# (hundredths, 3 % of a 0.3 s run).  It sets no variable but _mo.
measure() {
	_mo=$1
	shift
	if [ -n "${RBA_BENCH_RUN:-}" ] && [ -x "$RBA_BENCH_RUN" ]; then
		rm -f "$_mo.br" # (bench_run replaces no file)
		"$RBA_BENCH_RUN" "$_mo.br" "$@" || return 1
		awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print v["wall"], v["cpu"], v["maxrss_kib"] }' "$_mo.br" > "$_mo"
	else
		/usr/bin/time -v -o "$_mo.tv" "$@" || return 1
		awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; el = s }
			/User time/ { u = $2 } /System time/ { sy = $2 }
			/Maximum resident set size/ { rss = $2 } END { print el, u + sy, rss }' "$_mo.tv" > "$_mo"
	fi
}

# timed OUTFILE cmd...: runs cmd (output discarded, errors shown when it
# fails); OUTFILE gets "seconds maxrss_kib"
timed() {
	out=$1
	shift
	measure "$out.m" "$@" > /dev/null 2> "$out.err" || { cat "$out.err" >&2; return 1; }
	awk '{ print $1, $3 }' "$out.m" > "$out"
}

# german_cases N OUT: German-credit-shaped cases with running ids 1..N
# (the fixture's rows repeated), as CSV with its header.
german_cases() {
	awk -v n="$1" -F, 'NR == 1 { print; next } { row[NR - 1] = substr($0, index($0, ",") + 1); m = NR - 1 }
		END { for (i = 0; i < n; i++) print (i + 1) "," row[i % m + 1] }' \
		"$bench_top/fixtures/german-credit.csv" > "$2"
}
