#!/usr/bin/python3
"""Train a scikit-learn logistic regression on a credit CSV
(rebuild-audit exec trainer).

usage: train.py SNAPSHOT PARAMS ARTIFACT SEED

The model goes to ARTIFACT as JSON: the feature names, the
standardization, the coefficients and the intercept as the float64
values they hold (repr), so the same model gives the same bytes.
"""
import csv
import json
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler


def load(path, label="class", positive="2", ident="id"):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    feats = [c for c in header if c not in (label, ident)]
    idx = [header.index(c) for c in feats]
    li = header.index(label)
    x = np.array([[float(r[i]) for i in idx] for r in body])
    y = np.array([1 if r[li] == positive else 0 for r in body])
    return feats, x, y


def main(argv):
    snap, params_path, artifact, seed = argv[1:5]
    with open(params_path) as f:
        params = json.load(f)
    feats, x, y = load(snap)
    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=float(params.get("C", 1.0)),
                               max_iter=int(params.get("max_iter", 1000)),
                               random_state=int(seed))
    model.fit(scaler.transform(x), y)
    out = {"features": feats,
           "mean": [float(v) for v in scaler.mean_],
           "scale": [float(v) for v in scaler.scale_],
           "coef": [float(v) for v in model.coef_[0]],
           "intercept": float(model.intercept_[0])}
    with open(artifact, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
