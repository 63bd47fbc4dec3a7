# Smaller things found on a trial with an unseen data set: each
# diagnostic and report says exactly what happened.

# check: an empty file says so, with the file name and no position.
: > empty.yaml
run 2 $RBA check empty.yaml
err_is "rebuild-audit: cannot check 'empty.yaml': empty file"
out_empty
printf '\n   \n# only a comment\n' > blank.yaml
run 2 $RBA check blank.yaml
err_is "rebuild-audit: cannot check 'blank.yaml': empty file"
run_in empty.yaml 2 $RBA check -
err_is "rebuild-audit: cannot check '-': empty file"
run 2 $RBA -S st register empty.yaml
err_is "rebuild-audit: invalid pins 'empty.yaml': empty file"

# A column named in the pins that the snapshot lacks: the subject is the
# pins file at the value naming it (train and register, each key).
P=$FIX/pins/german-numeric-logistic.yaml
SN=sha256:8b10ea46325d3e933960aad0fcb919f16588f01d80a673356a9daf574a91c9a9
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$FIX/german-credit-numeric.csv"
before=$(txnid st)
sed 's/label: class/label: klass/' "$P" > label.yaml
run 2 $RBA -S st train label.yaml
err_is "rebuild-audit: cannot train 'label.yaml:6:10': data.label names column 'klass', which the snapshot '$SN' does not have"
run 2 $RBA -S st register label.yaml
err_is "rebuild-audit: cannot register 'label.yaml:6:10': data.label names column 'klass', which the snapshot '$SN' does not have"
out_empty
sed 's/id: id/id: applicant/' "$P" > id.yaml
run 2 $RBA -S st register id.yaml
err_is "rebuild-audit: cannot register 'id.yaml:8:7': data.id names column 'applicant', which the snapshot '$SN' does not have"
# listed out of order: the position follows the name, not the sorted slot
sed 's/exclude: \[\]/exclude: [zeta, a1]/' "$P" > excl.yaml
run 2 $RBA -S st register excl.yaml
err_is "rebuild-audit: cannot register 'excl.yaml:9:13': data.exclude names column 'zeta', which the snapshot '$SN' does not have"
sed 's/categorical: \[\]/categorical:\n    - a1\n    - nope/' "$P" > cat.yaml
run 2 $RBA -S st register cat.yaml
err_is "rebuild-audit: cannot register 'cat.yaml:12:7': data.categorical names column 'nope', which the snapshot '$SN' does not have"
ok "nothing stored by a pins naming a missing column" test "$(txnid st)" = "$before"

# sample add keeps the SHA-256 of the submitted bytes; sample show prints
# it; sample export gives back a normalized form (LF line ends, quotes only
# where needed), equal to the submitted bytes when they were in that form.
V=german-numeric-logistic
run 0 $RBA -S st register "$P" --policy "$FIX/policy/credit.yaml"
head -n 41 "$FIX/german-credit-numeric.csv" > lf.csv
sed 's/$/\r/' lf.csv > crlf.csv
lf_sum=sha256:$(sha256sum < lf.csv | cut -d' ' -f1)
crlf_sum=sha256:$(sha256sum < crlf.csv | cut -d' ' -f1)
run 0 $RBA -S st sample add $V crlf.csv
out_has "source     $crlf_sum ($(wc -c < crlf.csv) bytes as submitted)"
run 0 $RBA -S st sample show $V
out_has "source      $crlf_sum (the file as submitted)"
run 0 $RBA -S st --json sample show $V
ok "--json sample show: source_digest" test "$(jq -r .source_digest out)" = "$crlf_sum"
run 0 $RBA -S st sample export $V back.csv
ok "export of a CRLF file gives LF line ends" cmp -s back.csv lf.csv
ok "so its bytes differ from the submitted ones" test "sha256:$(sha256sum < back.csv | cut -d' ' -f1)" != "$crlf_sum"
# from standard input: the bytes as read
run_in lf.csv 0 $RBA -S st --json sample add $V -
ok "--json sample add: source_digest of stdin" test "$(jq -r .source_digest out)" = "$lf_sum"
ok "--json sample add: source_bytes" test "$(jq -r .source_bytes out)" = "$(wc -c < lf.csv)"
run 0 $RBA -S st --json sample show $V
ok "sample show: source stdin" test "$(jq -r .source out)" = stdin
run 0 $RBA -S st sample export $V - 
ok "export of a normalized file is the submitted bytes" test "sha256:$(sha256sum < out | cut -d' ' -f1)" = "$lf_sum"

# register keeps the run record of its training, in the version's
# transaction, under "<version>@<registered unix time>"; version show
# prints its validation metrics.
run 0 $RBA -S st --json version show $V
reg=$(jq -r .registered out)
id=$(jq -r .run.id out)
ok "run id is version@registered time" test "$id" = "$V@$(date -u -d "$reg" +%s)"
ok "--json version show: the run's metrics" jq -e '.run.epochs == 30 and
	.run.train_examples == 750 and .run.validation_examples == 250 and
	(.run.val_loss | type) == "number" and (.run.val_acc | type) == "number" and
	(.run.val_auc | type) == "number" and .run.examples_per_second > 0' out
val_acc=$(jq -r .run.val_acc out)
run 0 $RBA -S st version show $V
out_has "run           $id"
out_has "validation    loss "
out_has "after 30 epochs (750 train, 250 validation examples)"
out_has " examples/second"
ok "the store holds a run/v2 record under the id" sh -c "mdb_dump -s runs -p st | grep -F '$id' | grep -qF '\"schema\": \"rebuild-audit/run/v2\"'"
# train --record writes the same record format; train keeps it in the
# store too, under train/<version>/s<seed>@<time>
run 0 $RBA -S st train "$P" --record rec.json
ok "train --record: the same final metrics" test "$(jq -r .final.val_acc rec.json)" = "$val_acc"
tid=$(sed -n 's/^rebuild-audit: run kept as //p' err)
ok "train names the run it kept" sh -c "echo '$tid' | grep -q '^train/$V/s0@[0-9]*$'"
run 0 $RBA -S st --json runs show "$tid"
ok "the kept run is the --record file's run" test "$(jq -r .final.val_acc out)" = "$val_acc"
run 0 $RBA -S st -q train "$P" --no-keep
err_empty
# an artifact given with --artifact: no training, no run
run 0 $RBA -S st version export-artifact $V art.bin
sed "s/^version: .*/version: given/" "$P" > given.yaml
run 0 $RBA -S st register given.yaml --artifact art.bin
run 0 $RBA -S st version show given
out_has "run           none kept (registered with --artifact, or before runs were kept)"
run 0 $RBA -S st --json version show given
ok "--json: run null" jq -e '.run == null' out
ok "two run records in the store: register's and train's" test "$(mdb_dump -s runs -p st | grep -c '^ [a-z].*@[0-9]*$')" -eq 2
# a damaged run record is never shown as none: exit 2, one line
mdb_dump -s runs st > runs.txt
awk 'NR > 0 && length($0) > 400 && !done { c = substr($0, 301, 1); $0 = substr($0, 1, 300) (c == "0" ? "1" : "0") substr($0, 302); done = 1 } { print }' runs.txt > runs2.txt
ok "the run record was altered" test "$(cmp -s runs.txt runs2.txt; echo $?)" = 1
run 0 mdb_load -s runs -f runs2.txt st
run 2 $RBA -S st version show $V
out_has "run           $id: cannot be read (see the error below)"
ok "one diagnostic line" test "$(wc -l < err)" -eq 1
err_has "rebuild-audit: cannot read the training run of '$V': "
# nothing kept when register fails
before=$(txnid st)
run 2 $RBA -S st register label.yaml
ok "no run kept by a failed register" test "$(txnid st)" = "$before"

# Progress: only when stderr is a terminal and -q is not given.  Here
# stderr is a file: nothing but the diagnostics and notes of each command.
run 0 $RBA -S st train "$P"
ok "train: its one note on stderr, no progress" test "$(wc -l < err)" -eq 1
err_has "rebuild-audit: run kept as train/"
sed 's/^version: .*/version: again/' "$P" > again.yaml
run 0 $RBA -S st register again.yaml --policy "$FIX/policy/credit.yaml"
ok "register: its one note on stderr, no progress" test "$(wc -l < err)" -eq 1
err_has "rebuild-audit: registered 'again': artifact "
ok "no carriage return on stderr" sh -c '! grep -q "$(printf "\r")" err'
run 0 $RBA -S st sample add again lf.csv
err_empty
# On a terminal (script(1) gives the commands one), the epochs and the
# share of the file read show, and the line is erased at the end.
ok "script(1) installed (util-linux)" command -v script
script -qec "$RBA -S st train '$P' > /dev/null" /dev/null > tty.txt 2>&1
ok "train on a terminal: epoch progress" grep -q "training: epoch 30/30" tty.txt
ok "train on a terminal: the line is erased" grep -q "$(printf '\033')\[K" tty.txt
script -qec "$RBA -S st -q train '$P' > /dev/null" /dev/null > tty.txt 2>&1
ok "train -q on a terminal: no progress" test ! -s tty.txt
script -qec "$RBA -S st register --replace again.yaml --policy '$FIX/policy/credit.yaml' > /dev/null" /dev/null > tty.txt 2>&1
ok "register on a terminal: epoch progress" grep -q "training: epoch 30/30" tty.txt
script -qec "$RBA -S st sample add again lf.csv > /dev/null" /dev/null > tty.txt 2>&1
ok "sample add on a terminal: percentage of the file and cases" \
	grep -q "sample add: 100% of $(wc -c < lf.csv) bytes, 40 cases" tty.txt
