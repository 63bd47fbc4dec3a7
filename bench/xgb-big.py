#!/usr/bin/python3
"""xgb-big.py - the XGBoost side of bench-scale.sh.

Reads a numeric snapshot CSV with pandas (every column but the label and
the id a float32 input, an empty field NaN), splits it like `split:
{order: tail}` (the last round(n * validation) rows validate), trains
XGBoost 1.7 with tree_method=hist on nthread threads with the given
parameters, and prints one line: "auc=<validation AUC> seconds=<training
wall time> total=<wall time of the whole script>".  The peak memory is
the caller's to measure (/usr/bin/time -v), Python and pandas included.

usage: xgb-big.py CSV LABEL POSITIVE ID TREES DEPTH LR [NTHREAD]
"""
import sys
import time

t00 = time.perf_counter()
import numpy as np
import pandas as pd
import xgboost as xgb


def main():
    path, label, positive, idcol = sys.argv[1:5]
    trees, depth, lr = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
    nthread = int(sys.argv[8]) if len(sys.argv) > 8 else 1
    df = pd.read_csv(path, dtype={label: str})
    y = (df[label].values == positive).astype(np.int32)
    x = df.drop(columns=[label, idcol]).to_numpy(dtype=np.float32)
    del df
    n = len(y)
    nval = int(n * 0.25 + 0.5)
    ntr = n - nval
    dtr = xgb.DMatrix(x[:ntr], label=y[:ntr], nthread=nthread)
    dva = xgb.DMatrix(x[ntr:], nthread=nthread)
    del x
    params = {"objective": "binary:logistic", "tree_method": "hist",
              "max_depth": depth, "eta": lr, "min_child_weight": 1,
              "lambda": 1, "gamma": 0, "max_bin": 256, "subsample": 1,
              "colsample_bytree": 1, "nthread": nthread, "base_score": 0.5}
    t0 = time.perf_counter()
    bst = xgb.train(params, dtr, num_boost_round=trees)
    secs = time.perf_counter() - t0
    pred = bst.predict(dva)
    from sklearn.metrics import roc_auc_score
    print("auc=%.6f seconds=%.4f total=%.4f" % (roc_auc_score(y[ntr:], pred), secs,
                                              time.perf_counter() - t00))


if __name__ == "__main__":
    main()
