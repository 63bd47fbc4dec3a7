# Trainer ABI 2 (fused multiply-adds; train/abi.h): pins that give
# trainer_abi: 2 train its golden artifact on every vector path (base:
# the soft fma of an x86-64 CPU without FMA instructions), register with
# it, audit bit-identical, and differ from ABI 1's artifact; the default
# stays ABI 1.
golden1() { sed -n "s/^$1 //p" "$FIX/golden/strict-abi1.txt"; }
golden2() { sed -n "s/^$1 //p" "$FIX/golden/strict-abi2.txt"; }
GC=$FIX/german-credit.csv
GN=$FIX/german-credit-numeric.csv
abi2() { { grep -v '^trainer_abi:' "$FIX/pins/$1.yaml"; echo 'trainer_abi: 2'; } > "$1-abi2.yaml"; }
abi2 german-categorical-mlp
abi2 german-numeric-gbdt

# train: ABI 2's golden artifact, on every path, not ABI 1's
run 0 $RBA --json train german-categorical-mlp-abi2.yaml --snapshot "$GC" --no-keep
ok "train --json names ABI 2" jq -e '.trainer_abi == 2' out
a2=$(jq -r .artifact out)
v2=$(jq -r .val_loss out)
ok "ABI 2 artifact is golden" [ "$a2" = "$(golden2 german-categorical-mlp)" ]
ok "ABI 2 artifact differs from ABI 1's" [ "$a2" != "$(golden1 german-categorical-mlp)" ]
for isa in base avx2 avx512; do
	run 0 env RBA_STRICT_ISA=$isa $RBA train german-categorical-mlp-abi2.yaml --snapshot "$GC" --no-keep
	ok "ABI 2 on path $isa: the same artifact" [ "$(cat out)" = "$a2" ]
done
# fast mode under ABI 2: OpenBLAS's products, ABI 2's dropout (16-bit
# draws): the validation loss of the strict model within float noise
sed 's/mode: strict/mode: fast/' german-categorical-mlp-abi2.yaml > fast-abi2.yaml
run 0 $RBA --json train fast-abi2.yaml --snapshot "$GC" --no-keep
ok "ABI 2 fast mode: the strict model's validation loss" \
	jq -e --argjson v "$v2" '(.val_loss - $v) | fabs < 0.001' out
run 0 $RBA train "$FIX/pins/german-categorical-mlp.yaml" --snapshot "$GC" --no-keep
ok "no trainer_abi: ABI 1, the default" [ "$(cat out)" = "$(golden1 german-categorical-mlp)" ]
# trees under ABI 2 are ABI 1's arithmetic: another artifact only by the
# ABI it records
run 0 $RBA train german-numeric-gbdt-abi2.yaml --snapshot "$GN" --no-keep
ok "ABI 2 forest is golden" [ "$(cat out)" = "$(golden2 german-numeric-gbdt)" ]
ok "ABI 2 forest differs from ABI 1's" [ "$(cat out)" != "$(golden1 german-numeric-gbdt)" ]

# register and audit: bit-identical, on every path and two threads
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$GC"
run 0 $RBA -S st register german-categorical-mlp-abi2.yaml --policy "$FIX/policy/credit.yaml"
out_has "trainer_abi: 2"
out_has "artifact: $a2"
run 0 $RBA -S st -q sample add german-categorical-mlp "$GC"
run 0 $RBA -S st --json audit german-categorical-mlp
ok "ABI 2 audit bit-identical" jq -e '.audits[0].verdict == "bit-identical"' out
ok "ABI 2 audit delta 0" jq -e '.audits[0].sample.max_score_delta == 0 and .audits[0].sample.flips == 0' out
ok "ABI 2 audit links: pinned and rebuilt 2" \
	jq -e '.audits[0].links.trainer_abi | .pinned == 2 and .rebuilt == 2 and .artifact == 2' out
for isa in base avx2; do
	run 0 env RBA_STRICT_ISA=$isa $RBA -S st --json audit german-categorical-mlp --threads 2
	ok "ABI 2 audit on path $isa bit-identical" jq -e '.audits[0] | .verdict == "bit-identical" and .sample.max_score_delta == 0' out
done
run 0 $RBA -S st version show german-categorical-mlp
out_has "$a2"
