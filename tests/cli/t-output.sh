# t-output.sh - what the tool writes: no number a model cannot read goes
# in or comes out, and an output never replaces what is at its path
# unless --force says so (and then never a symlink, a FIFO or a device).
GC=$FIX/german-credit.csv

# A number finite as a double but infinite as the float32 a model reads
# is refused as NaN and Inf are: FILE:LINE:COL, exit 2, nothing scored
# or kept.
run 0 $RBA train "$FIX/pins/german-categorical-logistic.yaml" --snapshot "$GC" -o a.bin
head -n 3 "$GC" | sed '2s/,1169,/,1e39,/' > big.csv
head -n 3 "$GC" | sed '3s/,5951,/,-1e39,/' > neg.csv
head -n 3 "$GC" | sed '2s/,1169,/,3.5e38,/' > edge.csv
head -n 3 "$GC" | sed '2s/,1169,/,340282366920938463463374607431768211456000,/' > long.csv
head -n 3 "$GC" | sed '2s/,1169,/,NaN,/' > nan.csv
run 2 $RBA score a.bin big.csv
err_is "rebuild-audit: cannot read cases 'big.csv:2:17': number '1e39' in column 'credit_amount' overflows float32"
out_empty
run 2 $RBA --json score a.bin big.csv
out_empty
run 2 $RBA score a.bin neg.csv
err_is "rebuild-audit: cannot read cases 'neg.csv:3:18': number '-1e39' in column 'credit_amount' overflows float32"
run 2 $RBA score a.bin edge.csv
err_has "'edge.csv:2:17': number '3.5e38' in column 'credit_amount' overflows float32"
run 2 $RBA score a.bin long.csv
err_has "'long.csv:2:17': number '34028236692093846346337460743176' in column 'credit_amount' overflows float32"
run 2 $RBA score a.bin nan.csv
err_is "rebuild-audit: cannot read cases 'nan.csv:2:17': non-finite number 'NaN' in column 'credit_amount'"
head -n 3 "$GC" | sed '2s/,1169,/,3.4028234e38,/' > max.csv
run 0 $RBA --json score a.bin max.csv
ok "json: FLT_MAX still scores, and no bare nan or inf" jq -e '.cases | length == 2' out
run 0 $RBA init
run 2 $RBA snapshot add big.csv
err_is "rebuild-audit: invalid snapshot 'big.csv:2:17': number '1e39' in column 'credit_amount' overflows float32"
run 0 $RBA snapshot add "$GC"
run 0 $RBA register "$FIX/pins/german-categorical-mlp.yaml" --policy "$FIX/policy/credit.yaml"
before=$(txnid audit-store)
run 2 $RBA sample add german-categorical-mlp big.csv
err_is "rebuild-audit: cannot add sample 'big.csv:2:17': column 'credit_amount' needs a number, not '1e39'"
run 2 $RBA sample add german-categorical-mlp nan.csv
err_is "rebuild-audit: cannot add sample 'nan.csv:2:17': column 'credit_amount' needs a number, not 'NaN'"
ok "no sample kept" [ "$(txnid audit-store)" = "$before" ]
run 2 $RBA sample show german-categorical-mlp
err_has "has no sample"
run 0 $RBA sample add german-categorical-mlp max.csv
run 0 $RBA --json sample show german-categorical-mlp 1
ok "json: sample scores are numbers" jq -e '.scores | length == 2 and all(type == "number")' out
# A validation split of one class has no AUC: register --json says null,
# never a bare nan (the rows sorted by class, the split's tail all "2").
GN=$FIX/german-credit-numeric.csv
{ head -n 1 "$GN"; tail -n +2 "$GN" | sort -t, -k26,26n -k1,1n; } > sorted.csv
sed "s/^snapshot: .*/snapshot: sha256:$(sha256sum sorted.csv | cut -c1-64)/; s/order: random/order: tail/; s/^version: .*/version: one-class-val/" \
	"$FIX/pins/german-numeric-logistic.yaml" > one-class.yaml
run 0 $RBA -S oc init
run 0 $RBA -S oc snapshot add sorted.csv
run 0 $RBA -S oc --json register one-class.yaml
ok "json: register's val_auc of one class is null" jq -e '.validation.auc == null and (.validation.loss | type) == "number" and .validation_rows == 250' out

# Outputs.  Device nodes of our own where root may make them, never the
# system's /dev/null and /dev/full (a root process could replace those);
# a non-root process uses the system's, which it cannot replace.
if mknod null c 1 3 2> /dev/null && mknod full c 1 7 2> /dev/null; then
	NULLDEV=./null FULLDEV=./full
elif [ "$(id -u)" != 0 ]; then
	NULLDEV=/dev/null FULLDEV=/dev/full
else
	NULLDEV= FULLDEV=
fi
snap=$(sha256sum "$GC" | cut -d' ' -f1)
PINS=$FIX/pins/german-categorical-logistic.yaml
o_snapshot() { $RBA snapshot export "$snap" "$@"; }
o_synth() { $RBA snapshot synth --rows 40 -o "$@"; }
o_sample() { $RBA sample export german-categorical-mlp "$@"; }
o_artifact() { $RBA version export-artifact german-categorical-mlp "$@"; }
o_train() { $RBA train "$PINS" --snapshot "$GC" --no-keep -o "$@"; }
o_record() { $RBA train "$PINS" --snapshot "$GC" --no-keep --record "$@"; }
# The forensic outputs: a gate file and the SVG of a sweep or a comparison.
SP=$FIX/pins/synth-chapter.yaml
run 0 $RBA snapshot synth -o synth.csv
run 0 $RBA snapshot add synth.csv
sed 's/lr: 0.02,/lr: 0.2,/; s/^version: .*/version: synth-lr10/' $SP > lr10.yaml
run 0 $RBA --json sweep $SP --seeds 0-5
SWA=$(sed -n 's/^{"sweep": "\([^"]*\)".*/\1/p' out)
run 0 $RBA --json sweep lr10.yaml --seeds 0-5
SWB=$(sed -n 's/^{"sweep": "\([^"]*\)".*/\1/p' out)
ok "two sweeps kept" [ -n "$SWA" ] && [ -n "$SWB" ]
o_gate() { $RBA gate calibrate "$SWA" --k 1 -o "$@"; }
o_runs() { $RBA runs show "$SWA" --plot "$@"; }
o_sweep() { $RBA sweep $SP --seeds 0-1 --plot "$@"; }
o_compare() { $RBA compare "$SWA" "$SWB" --success 'val_loss.median > 0 and worse >= 6' --plot "$@"; }
# same C A B: B holds what A holds (a run record but for its timings).
same() {
	if [ "$1" = o_record ]; then
		grep -v -e seconds -e examples_per_second "$2" > .a
		grep -v -e seconds -e examples_per_second "$3" > .b
		cmp -s .a .b && grep -q '"artifact"' .b
	else
		cmp -s "$2" "$3"
	fi
}
for c in o_snapshot o_synth o_sample o_artifact o_train o_record o_gate o_runs o_sweep o_compare; do
	# A new file; then the same name again: refused and untouched.
	run 0 $c $c.new
	ok "$c: a new file" [ -f $c.new ] && [ -s $c.new ]
	cp $c.new $c.want
	echo old > $c.old
	run 2 $c $c.old
	err_has "'$c.old': exists (use --force to replace it)"
	ok "$c: one line" [ "$(wc -l < err)" = 1 ]
	ok "$c: the old file stays" [ "$(cat $c.old)" = old ]
	run 0 $c $c.old --force
	ok "$c: --force replaces it" same $c $c.old $c.want
	ok "$c: no temporary left" [ -z "$(ls | grep '\.tmp-')" ]
	# A symbolic link: never replaced, never written through.
	echo target > $c.target
	ln -s $c.target $c.link
	run 2 $c $c.link
	err_has "'$c.link': is a symbolic link"
	run 2 $c $c.link --force
	err_has "'$c.link': is a symbolic link"
	ok "$c: the link stays a link" [ -L $c.link ]
	ok "$c: its target untouched" [ "$(cat $c.target)" = target ]
	ln -s nowhere $c.dangling
	run 2 $c $c.dangling --force
	ok "$c: a dangling link stays" [ -L $c.dangling ] && [ ! -e nowhere ]
	# A FIFO: written to as it is.
	mkfifo $c.fifo
	timeout 60 cat $c.fifo > $c.got &
	reader=$!
	run 0 $c $c.fifo
	wait $reader
	ok "$c: the FIFO stays a FIFO" [ -p $c.fifo ]
	ok "$c: the reader got the bytes" same $c $c.got $c.want
	# Devices: written to, never replaced; a full one is an error.
	if [ -n "$NULLDEV" ]; then
		run 0 $c $NULLDEV
		ok "$c: the null device stays" [ -c $NULLDEV ]
		run 2 $c $FULLDEV --force
		err_has "'$FULLDEV': no space left on device"
		ok "$c: one line for the full device" [ "$(wc -l < err)" = 1 ]
		ok "$c: the full device stays" [ -c $FULLDEV ]
	fi
	run 2 $c .
	err_has "'.': is a directory"
	run 2 $c nodir/x
	err_has "'nodir/x': no such file or directory"
done
run 2 o_snapshot o_snapshot.old
err_is "rebuild-audit: cannot export snapshot 'sha256:$snap': cannot write 'o_snapshot.old': exists (use --force to replace it)"
run 2 o_train o_train.old
err_is "rebuild-audit: cannot write artifact 'o_train.old': exists (use --force to replace it)"
run 2 o_synth o_synth.old
err_is "rebuild-audit: cannot write 'o_synth.old': exists (use --force to replace it)"
[ -n "$FULLDEV" ] && run 2 o_artifact $FULLDEV &&
	err_is "rebuild-audit: cannot export artifact 'german-categorical-mlp': cannot write '$FULLDEV': no space left on device"

# "-" is standard output for the exports; train's stdout holds its report.
for c in o_snapshot o_synth o_sample o_artifact; do
	run 0 $c -
	ok "$c: '-' is stdout" cmp -s out $c.want
done
run 2 o_train -
err_is "rebuild-audit: cannot write artifact '-': standard output carries the report here: name a file"
ok "no file named '-'" [ ! -e ./- ]
# train claims its outputs before it trains: a refusal costs no training.
run 2 $RBA train "$PINS" --snapshot "$GC" --no-keep -o fresh.bin --record o_record.old
err_is "rebuild-audit: cannot write run record 'o_record.old': exists (use --force to replace it)"
ok "nothing written for a refused record" [ ! -e fresh.bin ]
# The gate and the plots: their own words; standard output holds the report.
run 2 o_gate o_gate.old
err_is "rebuild-audit: cannot write gate 'o_gate.old': exists (use --force to replace it)"
for c in o_runs o_sweep o_compare; do
	run 2 $c $c.old
	err_is "rebuild-audit: cannot write plot '$c.old': exists (use --force to replace it)"
done
run 2 o_gate -
err_is "rebuild-audit: cannot write gate '-': standard output carries the report here: name a file"
for c in o_runs o_sweep o_compare; do
	run 2 $c -
	err_is "rebuild-audit: cannot write plot '-': standard output carries the report here: name a file"
done
ok "no file named '-'" [ ! -e ./- ]
# sweep and compare ask for the plot's path before the work: a refused
# plot costs no training and keeps no record.
before=$(txnid audit-store)
run 2 $RBA sweep $SP --seeds 0-1 --plot o_sweep.old
run 2 $RBA sweep $SP --seeds 0-1 --plot o_sweep.link --force
run 2 $RBA compare $SP lr10.yaml --seeds 0-1 --plot o_compare.old
err_is "rebuild-audit: cannot write plot 'o_compare.old': exists (use --force to replace it)"
ok "a refused plot: nothing trained, nothing kept" [ "$(txnid audit-store)" = "$before" ]
run 2 $RBA gate calibrate "$SWA" --k 1 -o g.yaml --forced
err_has "unknown option '--forced'"
# Unknown options and counts are usage errors, as before.
run 2 $RBA snapshot export "$snap" x.csv --forced
err_has "unknown option '--forced'"
run 2 $RBA sample export german-categorical-mlp
err_has 'sample export needs a VERSION and an OUT file'
for c in "snapshot export" "snapshot synth" "sample export" "version export-artifact" "train" "gate" "runs" "sweep" "compare"; do
	run 0 $RBA $c -h
	out_has '[--force]'
done

# A closed pipe (`history --json | head`): the report cut short exits 2,
# without a word and without dying by SIGPIPE (141), whichever way the
# command writes standard output: its report, or "-" as an output.
# closed CMD...: CMD's standard output is a pipe whose reader has already
# gone (it closed its end before saying so in rdone); the exit status
# goes to rc, stderr to err.
closed() {
	LAST_DESC="$* | (closed)"
	rm -f rdone rc
	{ while [ ! -e rdone ]; do sleep 0.05; done; "$@" 2> err; echo $? > rc; } |
		sh -c 'exec 0<&-; : > rdone'
	if [ "$(cat rc)" = 2 ]; then pass; else fail "exit $(cat rc), want 2: $LAST_DESC"; fi
	err_empty
}
run 0 $RBA audit german-categorical-mlp
closed $RBA --json history
closed $RBA history
closed $RBA history head
closed $RBA --version
closed $RBA check "$PINS"
closed $RBA score a.bin "$GC"
for c in o_snapshot o_synth o_sample o_artifact; do
	closed $c -
done
closed $RBA report --store --history -o -
closed $RBA runs show "$SWA" --json
# The same command into a pipe that is read: exit 0.
run 0 sh -c "$RBA --json history | head -c 1"
