# chunks.py DIR - reads `mdb_dump -s samples` on stdin and writes each
# sample chunk record (tag 0x31, see store/store_priv.h) found in it as
# seeds of fuzz_chunk: its zstd frame (selector 0x01; 0x03 with the id
# column 0) and the raw chunk the frame holds (selector 0x00, zstd(1)
# decompresses it).
import subprocess
import sys

out = sys.argv[1]
lines = sys.stdin.read().split('\n')
data = [l[1:] for l in lines if l.startswith(' ')]
n = 0
for i in range(1, len(data), 2):
    v = bytes.fromhex(data[i])
    if len(v) < 2 + 32 + 8 + 32 or v[0] != 0x31:
        continue
    frame = v[2 + 32 + 8:-32] if v[1] == 2 else v[2 + 32 + 8:]
    for sel in (1, 3):
        with open('%s/seed-frame-%d-%d' % (out, n, sel), 'wb') as f:
            f.write(bytes([sel]) + frame)
    raw = subprocess.run(['zstd', '-dc'], input=frame, capture_output=True,
                         check=True).stdout
    with open('%s/seed-raw-%d' % (out, n), 'wb') as f:
        f.write(bytes([0]) + raw)
    n += 1
print('chunks: %d records' % n, file=sys.stderr)
