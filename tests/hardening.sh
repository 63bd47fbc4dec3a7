#!/bin/sh
# hardening.sh BIN - the release binary is hardened: a position-
# independent executable, full RELRO (GNU_RELRO and BIND_NOW), the stack
# protector and fortified libc calls linked in.  readelf(1) from binutils.
set -u
bin=${1:?usage: hardening.sh BIN}
fail=0
no() { echo "check-hardening: $bin: $*" >&2; fail=1; }
readelf -h "$bin" | grep -q 'Type: *DYN' || no "not a position-independent executable"
readelf -d "$bin" | grep -q 'FLAGS_1.*PIE' || no "no PIE flag"
readelf -l "$bin" | grep -q 'GNU_RELRO' || no "no RELRO segment"
readelf -d "$bin" | grep -Eq 'BIND_NOW|FLAGS_1.*NOW' || no "no BIND_NOW (partial RELRO only)"
readelf --dyn-syms -W "$bin" | grep -q '__stack_chk_fail' || no "no stack protector"
nchk=$(readelf --dyn-syms -W "$bin" | grep -c '__[a-z_]*_chk')
[ "$nchk" -gt 0 ] || no "no fortified libc call"
[ $fail = 0 ] && echo "check-hardening: PIE, full RELRO, stack protector, $nchk fortified functions"
exit $fail
