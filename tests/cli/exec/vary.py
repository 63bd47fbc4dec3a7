# vary.py MODE ARTIFACT | score ARTIFACT CASES SCORES - trainers that
# embed one input of their environment into the model (t-vary.sh), and
# their scorer: a score the artifact's bytes choose, the same for every
# case but a little different for each case id.
import os, socket, sys, time, zlib
mode = sys.argv[1]
if mode == "score":
    base = (zlib.crc32(open(sys.argv[2], "rb").read()) % 1000) / 1000.0
    rows = open(sys.argv[3]).read().splitlines()[1:]
    with open(sys.argv[4], "w") as f:
        for i, _ in enumerate(rows):
            f.write("%.6f\n" % ((base + i * 0.013) % 1.0))
    sys.exit(0)
seen = {
    "honest": "a model",
    "tz": time.tzname[0],
    "host": socket.gethostname(),
    "clock": str(int(time.time() // (365 * 86400))),
    "cwd": os.getcwd(),
}[mode]
with open(sys.argv[2], "w") as f:
    f.write("model of " + mode + ": " + seen + "\n")
if mode == "honest" and os.environ.get("RBA_TEST_SLEEP"):
    time.sleep(float(os.environ["RBA_TEST_SLEEP"]))
