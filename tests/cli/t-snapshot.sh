# init and snapshot add/list/show/export, exit statuses, tampering.
GC=sha256:9a5fb32561e18f48dbbe9b109aa7e02b59539569fa95226708a4b5b3be86dee0
GN=sha256:8b10ea46325d3e933960aad0fcb919f16588f01d80a673356a9daf574a91c9a9

# a command that needs a store, without one
run 2 $RBA -S st snapshot list
err_has "rebuild-audit: cannot open store 'st':"
run 0 $RBA -S st init
out_has "created store 'st'"
run 2 $RBA -S st init
err_has "rebuild-audit: cannot create store 'st':"
run 0 mdb_stat -a st
for db in meta blobs versions samples history runs; do out_has "Status of $db"; done

# the store path rules: -S, then $REBUILD_AUDIT_STORE, then ./audit-store
run 0 $RBA init
ok "./audit-store is the default" test -f audit-store/data.mdb
run 0 env REBUILD_AUDIT_STORE=envst $RBA init
ok "REBUILD_AUDIT_STORE is used" test -f envst/data.mdb

run 0 $RBA -S st snapshot add "$FIX/german-credit.csv"
out_is_text() { printf '%s\n' "$1" > .want; out_is .want; }
out_is_text "$GC"
ok "digest equals sha256sum" test "$(sha256sum "$FIX/german-credit.csv" | cut -d' ' -f1)" = "${GC#sha256:}"
t0=$(txnid st)
run 0 $RBA -S st snapshot add "$FIX/german-credit.csv" --name gc
out_is_text "$GC"
run 0 $RBA -S st snapshot add --name numeric "$FIX/german-credit-numeric.csv"
out_is_text "$GN"
run 0 $RBA -S st --json snapshot add "$FIX/german-credit-numeric.csv"
out_has '"existed": true'
run 0 $RBA -S st snapshot list
out_has "gc"
out_has "numeric"
ok "two snapshots listed" test "$(wc -l < out)" -eq 2
run 0 $RBA -S st --json snapshot list
ok "list --json parses" jq -e 'length == 2 and .[0].rows == 1000' out
run 0 $RBA -S st snapshot show 9a5f
out_has "rows     1000"
out_has "checking_status                  text"
out_has "credit_amount                    numeric"
run 0 $RBA -S st --json snapshot show "$GC"
ok "show --json has 22 typed columns" jq -e '.header | length == 22' out
run 0 $RBA -S st snapshot export 9a5fb325 copy.csv
ok "export is byte-identical" cmp copy.csv "$FIX/german-credit.csv"
run 0 $RBA -S st snapshot export 8b10 -
out_is "$FIX/german-credit-numeric.csv"

# errors: unknown digest, bad digest, usage, missing file
run 2 $RBA -S st snapshot show abcd
err_has "rebuild-audit: cannot show snapshot 'abcd':"
run 2 $RBA -S st snapshot show xyz
err_has "rebuild-audit: cannot show snapshot 'xyz':"
run 2 $RBA -S st snapshot add
err_has "rebuild-audit: bad usage 'snapshot':"
run 2 $RBA -S st snapshot frobnicate
err_has "unknown subcommand 'frobnicate'"
run 2 $RBA -S st snapshot add missing.csv
err_is "rebuild-audit: cannot add snapshot 'missing.csv': no such file or directory"
run 2 $RBA -S st snapshot export 9a5f nodir/out.csv
err_has "rebuild-audit: cannot export snapshot '$GC':"

# help for the tool and the command
run 0 $RBA --help
out_has "snapshot"
# --help lists the commands in alphabetical order, as the table has them
sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' out > cmds
ok "--help lists more than 20 commands" test "$(wc -l < cmds)" -gt 20
ok "--help lists the commands in alphabetical order" env LC_ALL=C sort -c cmds
run 0 $RBA snapshot -h
out_has "usage: rebuild-audit snapshot add FILE [--name N]"
run 2 $RBA frobnicate
err_is "rebuild-audit: unknown command 'frobnicate': see 'rebuild-audit --help'"
run 2 $RBA --frobnicate
err_has "unknown option"
run 0 $RBA --version
out_has "libsodium"
out_has "zstd"
out_has "lmdb"
out_has "libyaml"
out_has "openblas"

# tampering: flip one byte of a stored chunk with the LMDB tools
mdb_dump -s blobs st > dump.txt
awk 'BEGIN { done = 0 }
	!done && prev ~ /^ 9a5fb325/ && /^ 11/ && length($0) > 400 { $0 = substr($0, 1, 300) (substr($0, 301, 1) == "0" ? "1" : "0") substr($0, 302); done = 1 }
	{ print; prev = $0 }' dump.txt > dump2.txt
ok "a chunk was altered" test "$(cmp -s dump.txt dump2.txt; echo $?)" = 1
run 0 mdb_load -s blobs -f dump2.txt st
run 2 $RBA -S st snapshot export 9a5f tampered.csv
err_has "tampered"
ok "no output file after tampering" test ! -e tampered.csv
ok "no temporary left" test -z "$(ls | grep tampered.csv.tmp)"
run 2 $RBA -S st snapshot export 9a5f -
out_empty
err_has "tampered"
# the other snapshot still exports
run 0 $RBA -S st snapshot export 8b10 ok.csv
ok "untouched snapshot intact" cmp ok.csv "$FIX/german-credit-numeric.csv"

# a full stdout is an error, not exit 0
if [ -w /dev/full ]; then
	$RBA -S st snapshot list > /dev/full 2> err
	ok "write error to stdout exits 2" test $? -eq 2
	err_has "write failed 'stdout'"
fi

# a kill in the middle of an add leaves the store as it was before it
awk 'BEGIN { print "id,x,label"; for (i = 0; i < 4000000; i++) printf "%d,%d.5,c%d\n", i, i, i % 7 }' > big.csv
cp -r st st.before
t1=$(txnid st)
# Kill it part-way; should an add finish before the kill (a fast
# machine), kill the next one sooner.
killed=0
for delay in 0.2 0.1 0.05 0.02 0.01; do
	$RBA -S st snapshot add big.csv > /dev/null 2>&1 &
	pid=$!
	sleep $delay
	kill -9 $pid 2> /dev/null
	wait $pid 2> /dev/null
	if [ $? -eq 137 ]; then killed=1; break; fi
	# it completed: take the snapshot out again by starting over
	rm -rf st && cp -r st.before st
done
ok "snapshot add was killed part-way" test $killed -eq 1
ok "the killed add wrote nothing" test "$(txnid st)" = "$t1"
run 0 $RBA -S st snapshot list
ok "the earlier snapshots are intact" test "$(wc -l < out)" -eq 2
run 0 $RBA -S st snapshot export 8b10 again.csv
ok "and readable" cmp again.csv "$FIX/german-credit-numeric.csv"

# a full map is the store's failure, not the file's: on standard input it
# says so; by name the map grows first and the add succeeds
awk 'BEGIN { srand(1); print "id,x,y,z"; for (i = 0; i < 300000; i++) printf "%d,%.9f,%.9f,%.9f\n", i, rand(), rand(), rand() }' > rand.csv
run 0 env REBUILD_AUDIT_MAPSIZE=2m $RBA -S small init
run_in rand.csv 2 env REBUILD_AUDIT_MAPSIZE=2m $RBA -S small snapshot add -
err_is "rebuild-audit: cannot add snapshot '-': the store's map is full: give the file by name, so the map can grow to its size before the write"
run 0 env REBUILD_AUDIT_MAPSIZE=2m $RBA -S small snapshot add rand.csv
out_is_text "sha256:$(sha256sum rand.csv | cut -d' ' -f1)"

# option errors: one diagnostic line of ours, then the usage
run 2 $RBA -S st snapshot add --bogus x.csv
ok "no getopt message" test "$(grep -c '^add:' err)" -eq 0
ok "first line is ours" test "$(head -n 1 err)" = "rebuild-audit: bad usage 'snapshot': unknown option or missing value '--bogus'"
