#!/usr/bin/python3
"""xgb-train.py - the XGBoost side of bench-gbdt.sh and t-gbdt-xgboost.sh.

Reads a snapshot CSV as rebuild-audit does (label column, optional id
column dropped, listed columns one-hot with levels sorted bytewise,
every other column numeric, an empty field NaN: a missing value), splits it like `split: {order: tail}` (the
last round(n * validation) rows validate), trains XGBoost with
tree_method=hist on one thread with the given parameters, and prints
one line: "auc=<validation AUC> seconds=<training wall time>".

usage: xgb-train.py CSV LABEL POSITIVE ID|- CATS(comma list or -)
                    TREES DEPTH LR [VALIDATION]
"""
import csv
import sys
import time

import numpy as np
import xgboost as xgb


def auc(score, pos):
    order = np.argsort(score, kind="mergesort")
    s = score[order]
    p = pos[order]
    n = len(s)
    ranks = np.empty(n)
    i = 0
    while i < n:
        j = i
        while j < n and s[j] == s[i]:
            j += 1
        ranks[i:j] = (i + 1 + j) / 2.0
        i = j
    npos = p.sum()
    nneg = n - npos
    return (ranks[p == 1].sum() - npos * (npos + 1) / 2.0) / (npos * nneg)


def main():
    path, label, positive, idcol, cats = sys.argv[1:6]
    trees, depth, lr = int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
    val = float(sys.argv[9]) if len(sys.argv) > 9 else 0.25
    cats = [] if cats == "-" else cats.split(",")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    cols = [c for c in head if c not in (label, idcol)]
    feats = []
    for c in cols:
        k = head.index(c)
        if c in cats:
            levels = sorted({r[k] for r in body}, key=lambda s: s.encode())
            for lv in levels:
                feats.append(np.array([1.0 if r[k] == lv else 0.0 for r in body],
                                      dtype=np.float32))
        else:
            # an empty field is a missing value, NaN to XGBoost
            feats.append(np.array([float(r[k]) if r[k] != "" else np.nan
                                   for r in body], dtype=np.float32))
    x = np.stack(feats, axis=1)
    y = np.array([1 if r[head.index(label)] == positive else 0 for r in body])
    n = len(body)
    nval = min(max(int(n * val + 0.5), 1), n - 1)
    ntr = n - nval
    dtr = xgb.DMatrix(x[:ntr], label=y[:ntr], nthread=1)
    dva = xgb.DMatrix(x[ntr:], nthread=1)
    params = {"objective": "binary:logistic", "tree_method": "hist",
              "max_depth": depth, "eta": lr, "min_child_weight": 1,
              "lambda": 1, "gamma": 0, "max_bin": 256, "subsample": 1,
              "colsample_bytree": 1, "nthread": 1, "base_score": 0.5}
    t0 = time.perf_counter()
    bst = xgb.train(params, dtr, num_boost_round=trees)
    secs = time.perf_counter() - t0
    pred = bst.predict(dva)
    print("auc=%.6f seconds=%.4f" % (auc(pred, y[ntr:]), secs))


if __name__ == "__main__":
    main()
