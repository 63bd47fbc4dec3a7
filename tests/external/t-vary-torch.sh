# t-vary-torch.sh (make check-external) - vary on the PyTorch example
# (contrib/examples/pytorch): registered with ATEN_CPU_CAPABILITY=default,
# its bits follow the capability, so `vary --factors cpu-features` names
# the variable's other values as changing the artifact, with the flips
# and the largest score difference on the sample, while the other
# factors leave it alone.  Needs python3-torch (make check-external
# installs it) and a CPU with AVX2.
EX=$TOP/contrib/examples/pytorch
CSV=$FIX/german-credit-numeric.csv
mkdir -p tmp
TMPDIR=$PWD/tmp
export TMPDIR
if ! grep -qw avx2 /proc/cpuinfo; then
	fail "this CPU has no AVX2: ATEN_CPU_CAPABILITY=avx2 cannot differ from default"
fi
mkdir repo
cp "$EX/train.py" "$EX/score.py" repo/
git -C repo init -q
git -C repo add .
git -C repo -c user.name=test -c user.email=test@example.org commit -qm "torch model"
C=$(git -C repo rev-parse HEAD)
run 0 $RBA -S st init
run 0 $RBA -S st snapshot add "$CSV"
SNAP=$(grep -o 'sha256:[0-9a-f]*' out | head -n 1)
sed -e "s|@SNAPSHOT@|$SNAP|; s|@REPO@|$PWD/repo|; s|@COMMIT@|$C|" "$EX/pins.yaml.in" > pins.yaml
ATEN_CPU_CAPABILITY=default
export ATEN_CPU_CAPABILITY
run 0 $RBA -S st -q register pins.yaml --policy "$EX/policy-0.0005.yaml"
run 0 $RBA -S st sample add torch-credit "$CSV"
run 1 $RBA -S st --json vary torch-credit --factors cpu-features,timezone,hostname -j 2
ok "the control is the pinned artifact" jq -e '.control.pinned' out
ok "avx2 changes the artifact" jq -e \
	'[.factors[] | select(.factor == "cpu-features" and (.detail | startswith("ATEN_CPU_CAPABILITY=avx2")))][0] | .changes_artifact and .max_score_delta > 0 and .flips >= 0' out
ok "no factor but cpu-features changes it" jq -e \
	'[.factors[] | select(.factor != "cpu-features") | .state == "same"] | all' out
run 1 $RBA -S st vary torch-credit --factors cpu-features
out_has 'cpu-features       changes the artifact: '
out_has 'ATEN_CPU_CAPABILITY=avx2 (here: default)'
