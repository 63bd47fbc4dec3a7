#!/usr/bin/python3
"""Score cases with the logistic regression train.py wrote
(rebuild-audit exec scorer).

usage: score.py ARTIFACT CASES SCORES

One probability of the positive class per case, in order, %.9g.
"""
import csv
import json
import math
import sys


def main(argv):
    artifact, cases, scores = argv[1:4]
    with open(artifact) as f:
        a = json.load(f)
    with open(cases, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    missing = [n for n in a["features"] if n not in header]
    if missing:
        sys.stderr.write("score.py: the cases lack feature '%s'\n" % missing[0])
        sys.exit(2)
    idx = [header.index(n) for n in a["features"]]
    with open(scores, "w") as f:
        for r in body:
            z = a["intercept"]
            for k, i in enumerate(idx):
                z += a["coef"][k] * (float(r[i]) - a["mean"][k]) / a["scale"][k]
            f.write("%.9g\n" % (1.0 / (1.0 + math.exp(-z))))


if __name__ == "__main__":
    main(sys.argv)
