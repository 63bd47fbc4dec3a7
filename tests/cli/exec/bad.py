#!/usr/bin/python3
"""Misbehaving exec trainers for tests/cli/t-exec.sh.

usage: bad.py MODE SNAPSHOT PARAMS ARTIFACT SEED THREADS

exit3   prints a line on stderr and exits 3
noart   exits 0 without writing the artifact
sleep   sleeps far past any time limit
net     opens a TCP connection to 1.1.1.1:80
escape  writes into the code directory, outside /out
slow    sleeps $RBA_TEST_SLEEP seconds, then trains as train.py does

and as a score command (bad.py MODE ARTIFACT CASES SCORES):

short   writes one score fewer than there are cases
nan     writes "nan" for every case
"""
import os
import socket
import sys
import time


def main(argv):
    mode = argv[1]
    rest = argv[1:]
    if mode == "exit3":
        sys.stderr.write("bad.py: giving up on purpose\n")
        sys.exit(3)
    if mode == "noart":
        print("trained nothing")
        return
    if mode == "sleep":
        time.sleep(3600)
        return
    if mode == "net":
        socket.create_connection(("1.1.1.1", 80), timeout=5)
        return
    if mode == "escape":
        with open("/code/escaped.txt", "w") as f:
            f.write("out of the box\n")
        return
    if mode in ("short", "nan"):
        with open(argv[3]) as f:
            n = sum(1 for _ in f) - 1
        with open(argv[4], "w") as f:
            for _ in range(n - 1 if mode == "short" else n):
                f.write("0.25\n" if mode == "short" else "nan\n")
        return
    if mode == "slow":
        time.sleep(float(os.environ.get("RBA_TEST_SLEEP", "0") or 0))
        import train
        train.main(rest)
        return
    sys.stderr.write("bad.py: unknown mode %s\n" % mode)
    sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
