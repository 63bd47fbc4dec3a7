#!/usr/bin/python3
"""An XGBoost trainer for forensics of exec versions (t-exec-forensics).

usage: fx_train.py SNAPSHOT PARAMS ARTIFACT SEED THREADS METRICS

Trains on the pins' training part (split order tail, validation 0.25:
the last round(n / 4) rows are held out), writes the model as XGBoost
JSON and its validation metrics to METRICS.  The param "metrics_mode"
makes a bad metrics file on purpose: "garbage" (not JSON), "string" (a
value that is not a number), "noloss" (no val_loss), "none" (no file).
"""
import csv
import json
import sys

import numpy as np
import xgboost as xgb


def main(argv):
    snap, params_path, artifact, seed, threads, metrics = argv[1:7]
    with open(params_path) as f:
        params = json.load(f)
    rounds = int(params.pop("rounds", 20))
    mode = params.pop("metrics_mode", "ok")
    params.update({"objective": "binary:logistic", "tree_method": "hist",
                   "seed": int(seed), "nthread": int(threads)})
    with open(snap, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    feats = [c for c in header if c not in ("class", "id")]
    idx = [header.index(c) for c in feats]
    li = header.index("class")
    x = np.array([[float(r[i]) if r[i] != "" else np.nan for i in idx]
                  for r in body], dtype=np.float32)
    y = np.array([1.0 if r[li] == "2" else 0.0 for r in body])
    ntr = len(y) - int(len(y) * 0.25 + 0.5)
    booster = xgb.train(params, xgb.DMatrix(x[:ntr], label=y[:ntr],
                                            feature_names=feats),
                        num_boost_round=rounds)
    booster.save_model(artifact)
    p = booster.predict(xgb.DMatrix(x[ntr:], feature_names=feats))
    yv = y[ntr:]
    pt = np.where(yv == 1.0, p, 1.0 - p)
    m = {"val_loss": float(-np.mean(np.log(np.maximum(pt, 1e-30)))),
         "val_acc": float(np.mean((p >= 0.5) == (yv == 1.0))),
         "rounds": rounds}
    if mode == "none":
        return
    with open(metrics, "w") as f:
        if mode == "garbage":
            f.write('{"val_loss": 0.5,')
        elif mode == "string":
            f.write('{"val_loss": "0.5"}')
        else:
            if mode == "noloss":
                del m["val_loss"]
            json.dump(m, f)


if __name__ == "__main__":
    main(sys.argv)
