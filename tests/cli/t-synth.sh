# t-synth.sh - rebuild-audit snapshot synth: the controlled synthetic task.
golden=$(sed -n 's/^synth-snapshot //p' "$FIX/golden/strict-abi1.txt")
run 0 $RBA snapshot synth -o s.csv
err_empty
ok "digest is the golden one" [ "$(cat out)" = "$golden" ]
ok "sha256sum agrees" [ "sha256:$(sha256sum s.csv | cut -d' ' -f1)" = "$golden" ]
ok "4000 rows and a header" [ "$(wc -l < s.csv)" = 4001 ]
ok "header x1..x32,class" [ "$(head -n 1 s.csv)" = "$(seq -s, -f 'x%g' 1 32),class" ]
ok "4 classes" [ "$(tail -n +2 s.csv | cut -d, -f33 | sort -u | tr '\n' ' ')" = "0 1 2 3 " ]
run 0 $RBA snapshot synth --rows 10 --features 3 --classes 2 --noise 0 --seed 5 -o small.csv
ok "small: 10 rows" [ "$(wc -l < small.csv)" = 11 ]
ok "small: header" [ "$(head -n 1 small.csv)" = "x1,x2,x3,class" ]
run 0 $RBA snapshot synth --rows 10 --features 3 --classes 2 --noise 0 --seed 6 -o other.csv
ok "another seed, other data" sh -c '! cmp -s small.csv other.csv'
run 0 $RBA snapshot synth --rows=10 --features=3 --classes=2 --noise=0 --seed=5 -o -
ok "-o - writes to stdout" cmp -s out small.csv
run 0 $RBA --json snapshot synth --rows 10 -o j.csv
ok "json" jq -e '.rows == 10 and (.snapshot | startswith("sha256:"))' out

# The synthetic CSV trains like any snapshot (the pinned digest matches).
run 0 $RBA train "$FIX/pins/synth-chapter.yaml" --snapshot s.csv
ok "chapter pins: golden artifact" [ "$(cat out)" = "$(sed -n 's/^synth-chapter //p' "$FIX/golden/strict-abi1.txt")" ]

run 2 $RBA snapshot synth --rows 0 -o x.csv
err_has '--rows is 1 to'
run 2 $RBA snapshot synth --noise 1.5 -o x.csv
err_has '--noise is 0 to 1'
run 2 $RBA snapshot synth --noise nan -o x.csv
err_has '--noise is 0 to 1'
run 2 $RBA snapshot synth --classes 1 -o x.csv
err_has '--classes is 2 to'
run 2 $RBA snapshot synth --seed -1 -o x.csv
err_has '--seed is an unsigned integer'
run 2 $RBA snapshot synth
err_has 'needs -o OUT'
run 2 $RBA snapshot synth --bogus -o x.csv
err_has "unexpected argument '--bogus'"
ok "no file on errors" [ ! -e x.csv ]
run 2 $RBA snapshot synth -o nodir/x.csv
err_has "cannot write 'nodir/x.csv'"
