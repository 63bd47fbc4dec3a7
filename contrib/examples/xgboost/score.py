#!/usr/bin/python3
"""Score cases with an XGBoost JSON model (rebuild-audit exec scorer).

usage: score.py ARTIFACT CASES SCORES THREADS

CASES is a CSV whose header names the model's input columns; SCORES gets
one probability of the positive class per case, in order, printed with
9 significant digits (float32 round-trips).  A feature the model needs
and the cases lack is an error (exit 2, one line on stderr).
"""
import csv
import sys

import numpy as np
import xgboost as xgb


def main(argv):
    artifact, cases, scores, threads = argv[1:5]
    booster = xgb.Booster(params={"nthread": int(threads)})
    booster.load_model(artifact)
    with open(cases, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    names = booster.feature_names or []
    missing = [n for n in names if n not in header]
    if missing:
        sys.stderr.write("score.py: the cases lack feature '%s'\n" % missing[0])
        sys.exit(2)
    idx = [header.index(n) for n in names]
    x = np.array([[float(r[i]) if r[i] != "" else np.nan for i in idx]
                  for r in body], dtype=np.float32).reshape(len(body), len(idx))
    p = booster.predict(xgb.DMatrix(x, feature_names=names))
    with open(scores, "w") as f:
        for v in p:
            f.write("%.9g\n" % float(v))


if __name__ == "__main__":
    main(sys.argv)
