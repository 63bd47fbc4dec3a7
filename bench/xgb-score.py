#!/usr/bin/python3
"""xgb-score.py - the XGBoost side of bench-xgboost.sh.

    xgb-score.py CREDIT.csv N RUNS OUTDIR

Reads the credit-shaped table (bench/credit-synth.awk: id, 23 inputs,
default), repeats its rows to N cases and blanks about 5% of the inputs
(NaN, a fixed pattern), trains 100 trees of depth 6 (binary:logistic,
hist, one thread) on the table itself, and writes into OUTDIR: model.json,
x.f32 (the N cases as float32 rows), cases.csv (the same cases, a
missing input as an empty field) and xgb.f32 (Booster.predict(
output_margin=True) on a DMatrix of the cases at nthread 1).  Then times
that predict RUNS times and prints "cases=N runs=R median_seconds=S
best_seconds=B" (each run on a new DMatrix, built outside the timing).
"""
import csv
import os
import sys
import time

import numpy as np
import xgboost as xgb


def main():
    path, n, runs, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    names = head[1:-1]
    base = np.array([[float(v) for v in r[1:-1]] for r in body], dtype=np.float32)
    y = np.array([int(r[-1]) for r in body])
    x = base[np.arange(n) % len(base)].copy()
    # about 5% missing, spread over every input
    rng = np.random.default_rng(20261201)
    x[rng.random(x.shape) < 0.05] = np.nan
    tr = base.copy()
    tr[rng.random(tr.shape) < 0.05] = np.nan
    params = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": 6,
              "eta": 0.1, "nthread": 1, "seed": 0, "max_bin": 256}
    bst = xgb.train(params, xgb.DMatrix(tr, label=y, feature_names=names, nthread=1),
                    num_boost_round=100)
    bst.save_model(os.path.join(out, "model.json"))
    x.tofile(os.path.join(out, "x.f32"))
    with open(os.path.join(out, "cases.csv"), "w") as f:
        f.write("id," + ",".join(names) + "\n")
        for i in range(n):
            f.write(str(i + 1) + "," + ",".join("" if v != v else "%.9g" % v
                                                 for v in x[i].tolist()) + "\n")
    bst.set_param({"nthread": 1})
    secs = []
    for _ in range(runs):
        # a new DMatrix each run, built outside the timing: XGBoost keeps
        # a DMatrix's predictions and would answer a second call from them
        dm = xgb.DMatrix(x, feature_names=names, missing=np.nan, nthread=1)
        t0 = time.perf_counter()
        m = bst.predict(dm, output_margin=True)
        secs.append(time.perf_counter() - t0)
        del dm
    m.astype(np.float32).tofile(os.path.join(out, "xgb.f32"))
    secs.sort()
    med = secs[runs // 2] if runs % 2 else (secs[runs // 2 - 1] + secs[runs // 2]) / 2
    print("cases=%d runs=%d median_seconds=%.4f best_seconds=%.4f" % (n, runs, med, secs[0]))


if __name__ == "__main__":
    main()
