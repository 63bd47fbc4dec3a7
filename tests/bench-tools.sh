#!/bin/sh
# bench-tools.sh BUILD - make check's run of the benchmark tools that
# `make bench` drives (bench_score, bench_csv, bench_tlog, bench_run,
# bench_xgb's refusal, and bench/lib.sh's timed), each on a small input: they are built with
# -Werror and must run to the end with the figures' shape.  The cases
# file is over 128 KiB, so that memory a tool freed too early is
# returned to the system and reading it faults (bench_score once
# encoded cases whose text it had freed).  Exit 0, or 1 naming the tool
# that failed.
set -u
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-bench-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "bench-tools: FAIL $1"; fail=1; }

awk -v rows=3000 -f "$top/bench/credit-synth.awk" > "$tmp/cases.csv"
# a forest and a network trained on those rows, as bench-gbdt does
snap=$(sha256sum "$tmp/cases.csv" | cut -d' ' -f1)
for kind in gbdt mlp; do
	case $kind in
	gbdt) model='{kind: gbdt, trees: 20, max_depth: 6, learning_rate: 0.3}'
	      train='{seed: 0}' ;;
	mlp) model='{kind: mlp, hidden: [16], activation: relu, dropout: 0}'
	     train='{seed: 0, epochs: 1, batch_size: 128, optimizer: adamw, lr: 0.01}' ;;
	esac
	cat > "$tmp/$kind.yaml" <<EOP
schema: rebuild-audit/pins/v1
version: bench-tools-$kind
snapshot: sha256:$snap
data: {label: default, positive: "1", id: id, standardize: true,
       split: {validation: 0.25, order: tail, seed: 0}}
model: $model
train: $train
determinism: {mode: strict, threads: 1}
EOP
	"$build/rebuild-audit" train "$tmp/$kind.yaml" --snapshot "$tmp/cases.csv" \
		--no-keep -o "$tmp/$kind.bin" > /dev/null 2> "$tmp/err" ||
		{ bad "train $kind: $(cat "$tmp/err")"; continue; }
	out=$("$build/bench_score" "$tmp/$kind.bin" "$tmp/cases.csv" 7000 3 2> "$tmp/err")
	case $out in
	"cases=7000 seconds="*" mean_score="*) ;;
	*) bad "bench_score ($kind): $out $(cat "$tmp/err")" ;;
	esac
done
out=$("$build/bench_csv" "$tmp/cases.csv" 2 2> "$tmp/err")
case $out in
"bytes=$(wc -c < "$tmp/cases.csv" | tr -d ' ') rows=3000 "*) ;;
*) bad "bench_csv: $out $(cat "$tmp/err")" ;;
esac
"$build/rebuild-audit" -S "$tmp/st" init > /dev/null 2>&1 || bad "init"
out=$("$build/bench_tlog" fill "$tmp/st" 300 2> "$tmp/err")
case $out in
"records=300 seconds="*) ;;
*) bad "bench_tlog fill: $out $(cat "$tmp/err")" ;;
esac
out=$("$build/bench_tlog" prove "$tmp/st" 150 3 2> "$tmp/err")
case $out in
"tree_size=300 id=150 hashes="*) ;;
*) bad "bench_tlog prove: $out $(cat "$tmp/err")" ;;
esac
# bench_run: the command's streams and exit status pass through, and
# its figures are the command's (a busy loop of user time, a peak of
# RSS above 32 MiB), not bench_run's
out=$("$build/bench_run" "$tmp/br" sh -c 'echo out; echo err >&2; exit 3' 2> "$tmp/err")
rc=$?
[ "$rc" = 3 ] && [ "$out" = out ] && [ "$(cat "$tmp/err")" = err ] ||
	bad "bench_run: status $rc, out '$out', err '$(cat "$tmp/err")'"
rm -f "$tmp/br"
"$build/bench_run" "$tmp/br" awk 'BEGIN { s = "x"; while (length(s) < 33554432) s = s s; for (i = 0; i < 3000000; i++) n += i }' ||
	bad "bench_run: awk failed"
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	exit !(v["wall"] > 0 && v["cpu"] >= v["user"] && v["user"] > 0.01 && v["maxrss_kib"] > 32768) }' \
	"$tmp/br" || bad "bench_run: figures $(cat "$tmp/br")"
rm -f "$tmp/br"
"$build/bench_run" "$tmp/br" "$tmp/no-such-command" 2> /dev/null
[ $? = 127 ] || bad "bench_run: a missing command is not status 127"
# bench_run replaces no file: OUT forgotten, the command's program is
# OUT, and must be left as it is, the command not run
printf '#!/bin/sh\necho ran > "%s/ran"\n' "$tmp" > "$tmp/prog"
chmod +x "$tmp/prog"
cp "$tmp/prog" "$tmp/prog.keep"
"$build/bench_run" "$tmp/prog" sh -c 'exit 0' 2> "$tmp/err"
rc=$?
[ $rc = 2 ] && cmp -s "$tmp/prog" "$tmp/prog.keep" && [ ! -e "$tmp/ran" ] &&
	grep -q 'prog: exists; not replaced' "$tmp/err" ||
	bad "bench_run: an existing OUT: status $rc, $(cat "$tmp/err")"
"$build/bench_run" "$tmp/br2" "$tmp/prog" > /dev/null ||
	bad "bench_run: the program did not run"
[ -s "$tmp/ran" ] || bad "bench_run: the program did not run"
# bench_xgb (XGBoost's models need python3-xgboost to make: only its
# refusal here) replaces no margins file either, and says so before it
# reads the model
"$build/bench_xgb" "$tmp/no-model.json" "$tmp/no-x.f32" 1 "$tmp/prog" 2> "$tmp/err"
rc=$?
[ $rc = 2 ] && cmp -s "$tmp/prog" "$tmp/prog.keep" &&
	grep -q 'prog: exists; not replaced' "$tmp/err" ||
	bad "bench_xgb: an existing MARGINS: status $rc, $(cat "$tmp/err")"
# bench/lib.sh's timed, through bench_run and (where there is one)
# through /usr/bin/time: "seconds maxrss_kib" of the command
. "$top/bench/lib.sh"
for via in bench_run time; do
	case $via in
	bench_run) RBA_BENCH_RUN=$build/bench_run ;;
	time) [ -x /usr/bin/time ] || continue; RBA_BENCH_RUN= ;;
	esac
	export RBA_BENCH_RUN
	rm -f "$tmp/t"
	timed "$tmp/t" awk 'BEGIN { s = "x"; while (length(s) < 33554432) s = s s }' ||
		bad "lib.sh timed via $via: failed"
	awk '{ exit !(NF == 2 && $1 > 0 && $2 > 32768) }' "$tmp/t" 2> /dev/null ||
		bad "lib.sh timed via $via: '$(cat "$tmp/t" 2> /dev/null)'"
done
[ $fail = 0 ] && echo "bench-tools: bench_score (forest, network), bench_csv, bench_tlog, bench_run, bench_xgb, lib.sh ran"
exit $fail
