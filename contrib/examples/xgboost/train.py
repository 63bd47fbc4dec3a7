#!/usr/bin/python3
"""Train an XGBoost model on a credit CSV (rebuild-audit exec trainer).

usage: train.py SNAPSHOT PARAMS ARTIFACT SEED THREADS [METRICS]

SNAPSHOT is the CSV the pins name (label column 'class', positive class
'2', id column 'id'); PARAMS the JSON of the pins' trainer.params; the
model is written to ARTIFACT as XGBoost JSON.  The 'hist' tree method
gives the same bytes at any thread count.
"""
import csv
import json
import sys

import numpy as np
import xgboost as xgb


def load(path, label="class", positive="2", ident="id"):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    feats = [c for c in header if c not in (label, ident)]
    idx = [header.index(c) for c in feats]
    li = header.index(label)
    x = np.array([[float(r[i]) if r[i] != "" else np.nan for i in idx]
                  for r in body], dtype=np.float32)
    y = np.array([1.0 if r[li] == positive else 0.0 for r in body])
    return feats, x, y


def main(argv):
    snap, params_path, artifact, seed, threads = argv[1:6]
    metrics = argv[6] if len(argv) > 6 else None
    with open(params_path) as f:
        params = json.load(f)
    rounds = int(params.pop("rounds", 50))
    params.update({"objective": "binary:logistic", "tree_method": "hist",
                   "seed": int(seed), "nthread": int(threads)})
    feats, x, y = load(snap)
    dtrain = xgb.DMatrix(x, label=y, feature_names=feats)
    booster = xgb.train(params, dtrain, num_boost_round=rounds)
    booster.save_model(artifact)
    if metrics:
        p = booster.predict(dtrain)
        acc = float(np.mean((p >= 0.5) == (y == 1.0)))
        loss = float(-np.mean(y * np.log(np.clip(p, 1e-7, 1)) +
                              (1 - y) * np.log(np.clip(1 - p, 1e-7, 1))))
        with open(metrics, "w") as f:
            json.dump({"train_accuracy": acc, "train_loss": loss}, f)


if __name__ == "__main__":
    main(sys.argv)
