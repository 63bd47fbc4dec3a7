# t-lock.sh - one writer at a time, and nobody waits without a word: a
# command reads its input before it takes the store's write lock; one
# that waits for the lock says so within a second and gives up after
# --wait SECONDS (exit 2); once the holder is done, a waiting one goes on.
# Bounds are generous (a loaded machine): a wait-for-file loop, never a
# bare sleep, and no time asserted tighter than several seconds.
V=german-numeric-logistic
P=$FIX/policy/credit.yaml
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$FIX/german-credit-numeric.csv"
run 0 $RBA -S st -q register "$FIX/pins/$V.yaml" --policy "$P"
head -n 101 "$FIX/german-credit-numeric.csv" > cases.csv

# until SECONDS COMMAND...: polls COMMAND every tenth of a second; 0 once
# it holds, 1 when SECONDS passed first.
until_ok() {
	n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do
		"$@" 2> /dev/null && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
alive() { kill -0 "$1" 2> /dev/null; }
now() { date +%s; }

# A writer slow to send its input holds no lock meanwhile: while
# `sample add V -` reads a FIFO that stays open, other writers go on.
mkfifo in.fifo
exec 3<> in.fifo
cat cases.csv >&3
timeout 120 $RBA -S st sample add $V - < in.fifo > add.out 2> add.err 3>&- &
adder=$!
run 0 timeout 60 $RBA -S st --wait 20 policy set $V "$P"
err_empty
run 0 timeout 60 $RBA -S st --wait 20 sample add $V cases.csv
ok "the slow writer still reads its input" alive $adder
exec 3>&-
wait $adder
ok "then it adds its sample" [ $? = 0 ]
ok "from standard input" grep -q "sample of '$V': 100 cases" add.out

# A holder of the write lock (flock(1) on the store's lock file, its pid
# in the file as the tool writes its own) until release appears.
hold() {
	rm -f locked release
	sh -c 'echo $$ > st/write.lock; exec flock st/write.lock sh -c "touch locked; while [ ! -e release ]; do sleep 0.1; done"' &
	holder=$!
	until_ok 60 test -e locked
}
ok "the holder has the lock" hold

# Waiting says so once, names the store and the holder, and gives up.
t0=$(now)
$RBA -S st --wait 2 policy set $V "$P" > out 2> err &
w=$!
until_ok 60 grep -q waiting err
ok "the waiting line comes while it waits" alive $w
wait $w
rc=$?
t1=$(now)
ok "it gives up: exit 2" [ $rc = 2 ]
ok "after its --wait (2 s), not before" [ $((t1 - t0)) -ge 2 ]
ok "and well before the default" [ $((t1 - t0)) -lt 60 ]
ok "two lines: waiting, then giving up" [ "$(wc -l < err)" = 2 ]
ok "the waiting line" [ "$(head -n 1 err)" = "rebuild-audit: waiting for the store's write lock 'st' (held by pid $holder)" ]
ok "the giving up" [ "$(tail -n 1 err)" = "rebuild-audit: cannot set policy '$V': gave up after 2 s waiting for the store's write lock (held by pid $holder)" ]
# Other writers wait alike: sample add, an audit's record.
before=$(txnid st)
run 2 $RBA -S st --wait 1 sample add $V cases.csv
err_has "rebuild-audit: waiting for the store's write lock 'st' (held by pid $holder)"
err_has "gave up after 1 s waiting for the store's write lock"
run 2 $RBA -S st --wait 1 audit $V
err_has "gave up after 1 s waiting for the store's write lock"
# --wait 0: no wait at all, and no waiting line; after the command too.
run 2 $RBA -S st --wait 0 policy set $V "$P"
err_is "rebuild-audit: cannot set policy '$V': gave up after 0 s waiting for the store's write lock (held by pid $holder)"
run 2 $RBA -S st policy set $V "$P" --wait=0
err_has "gave up after 0 s"
ok "nothing was written meanwhile" [ "$(txnid st)" = "$before" ]
# Readers never wait.
run 0 $RBA -S st --wait 0 version list
run 0 $RBA -S st --wait 0 sample show $V

# Once the holder is done, a waiting command goes on.
$RBA -S st --wait 120 policy set $V "$P" > out 2> err &
w=$!
until_ok 60 grep -q waiting err
ok "it waits" alive $w
touch release
wait $holder
wait $w
ok "then it goes on: exit 0" [ $? = 0 ]
ok "having said it waited, once" [ "$(cat err)" = "rebuild-audit: waiting for the store's write lock 'st' (held by pid $holder)" ]
ok "and it wrote" [ "$(txnid st)" != "$before" ]

# The option itself.
run 2 $RBA -S st --wait policy set $V "$P"
err_has "bad usage '--wait': needs a number of seconds"
run 2 $RBA -S st --wait -1 version list
err_has "bad usage '--wait': needs a number of seconds"
run 0 $RBA --help
out_has "--wait SECONDS"
