# t-torch.sh (make check-external) - the PyTorch example
# (contrib/examples/pytorch): an MLP trained by the lender's own script
# at a git commit this test makes, once with ATEN_CPU_CAPABILITY=default
# and audited under avx2.  The weights move in their last bits, no
# decision flips: metric-equivalent under a score tolerance of 0.0005,
# not reproducible under 1e-5, the changed environment field named.
# Needs python3-torch (make check-external installs it) and a CPU with
# AVX2.
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
sed 's/^version: .*/version: torch-strict/' pins.yaml > strict.yaml

ATEN_CPU_CAPABILITY=default
export ATEN_CPU_CAPABILITY
run 0 $RBA -S st -q register pins.yaml --policy "$EX/policy-0.0005.yaml"
run 0 $RBA -S st -q register strict.yaml --policy "$EX/policy-1e-5.yaml"
run 0 $RBA -S st sample add torch-credit "$CSV"
run 0 $RBA -S st sample add torch-strict "$CSV"
# the same capability rebuilds the same bytes
run 0 $RBA -S st audit torch-credit
out_has 'bit-identical'

ATEN_CPU_CAPABILITY=avx2
run 0 $RBA -S st --json audit torch-credit
jq '.audits[0]' out > rec.json && mv rec.json out
ok "avx2 against default, tolerance 0.0005: metric-equivalent" \
	test "$(jq -r .verdict out)" = metric-equivalent
printf "torch: max score delta %s, flips %s\n" "$(jq -r .sample.max_score_delta out)" "$(jq -r .sample.flips out)" >&2
ok "another artifact, no flips, a score moved" sh -c \
	"jq -e '.digests.artifact_rebuilt != .digests.artifact_pinned and .sample.flips == 0 and .sample.max_score_delta > 0.00001 and .sample.max_score_delta <= 0.0005' out"
ok "the environment link names ATEN_CPU_CAPABILITY, default to avx2" sh -c \
	"jq -e '.links.environment.state == \"changed\" and any(.links.environment.fields[]; .key == \"var.aten_cpu_capability\" and .pinned == \"default\" and .current == \"avx2\")' out"
ok "and the capability the probe saw" sh -c \
	"jq -e 'any(.links.environment.fields[]; .key == \"probe.002\")' out"
run 1 $RBA -S st --json audit torch-strict
jq '.audits[0]' out > rec.json && mv rec.json out
ok "avx2 against default, tolerance 1e-5: not-reproducible" \
	test "$(jq -r .verdict out)" = not-reproducible
ok "the reason is the score delta over 1e-5" sh -c \
	"jq -e 'any(.reasons[]; test(\"maximum score delta .* exceeds the tolerance 1e-05\"))' out"
unset ATEN_CPU_CAPABILITY
ok "no work directory is left" sh -c "[ -z \"\$(ls tmp)\" ]"
