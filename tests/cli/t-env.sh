# t-env.sh - rebuild-audit env: the environment record and its digest.
run 0 $RBA env
err_empty
out_has 'abi.trainer=1'
out_has 'determinism.mode=strict'
out_has 'determinism.threads=1'
out_has 'openblas.threads=unused'
out_has 'tool.version=0.'
out_has 'lib.libsodium='
out_has 'lib.lmdb='
out_has 'lib.zstd='
out_has 'lib.libyaml='
out_has 'lib.openblas='
out_has 'cpu.model='
out_has 'build.flags='
sed '/^$/,$d' out > rec
tail -n 1 out > digest
ok "record: sorted keys" sh -c 'cut -d= -f1 rec | LC_ALL=C sort -c'
ok "record: key=value lines" sh -c '! grep -qv "^[a-z0-9._]*=." rec'
ok "digest is sha256 of the record" [ "$(cat digest)" = "sha256:$(sha256sum rec | cut -d' ' -f1)" ]
run 0 $RBA env
ok "stable across runs" [ "$(tail -n 1 out)" = "$(cat digest)" ]

# Fast mode differs where it should, and only there.
run 0 $RBA env --mode fast --threads 2
sed '/^$/,$d' out > fast
out_has 'determinism.mode=fast'
out_has 'openblas.threads=2'
ok "fast differs in three fields" [ "$(diff rec fast | grep -c '^>')" = 3 ]
ok "digests differ" [ "$(tail -n 1 out)" != "$(cat digest)" ]

# From pins, and as JSON.
sed 's/mode: strict/mode: fast/' "$FIX/pins/german-numeric-mlp.yaml" > fast.yaml
run 0 $RBA env --pins fast.yaml
out_has 'determinism.mode=fast'
run 0 $RBA --json env
ok "json: digest" jq -e --arg d "$(cat digest)" '.digest == $d' out
ok "json: record" jq -e '.record["abi.trainer"] == "1" and .record["determinism.mode"] == "strict"' out
ok "json: text hashes to the digest" sh -c 'jq -j .text out | sha256sum | cut -d" " -f1 | sed "s/^/sha256:/" | cmp -s - digest'

run 2 $RBA env --mode bogus
err_has '--mode is strict or fast'
run 2 $RBA env --threads 0
err_has '--threads is 1 to 64'
run 2 $RBA env extra
err_has "unexpected argument 'extra'"
run 2 $RBA env --pins missing.yaml
err_has "invalid pins 'missing.yaml'"

# OpenBLAS is loaded only when asked for: never by a command that does not
# need it (its threads start as it loads), always by fast mode
run 0 env LD_DEBUG=files $RBA check "$FIX/pins/german-numeric-logistic.yaml"
ok "check does not load OpenBLAS" test "$(grep -c libopenblas err)" -eq 0
run 0 env LD_DEBUG=files $RBA env --mode fast --threads 2
ok "fast mode loads OpenBLAS" test "$(grep -c libopenblas err)" -gt 0
out_has 'openblas.threads=2'
