#!/usr/bin/python3
"""Score cases with the MLP train.py wrote (rebuild-audit exec scorer).

usage: score.py ARTIFACT CASES SCORES THREADS

One probability of the positive class per case, in order, %.9g.
"""
import csv
import json
import sys

import torch

sys.path.insert(0, "/code")
from train import build  # noqa: E402


def main(argv):
    artifact, cases, scores, threads = argv[1:5]
    torch.set_num_threads(int(threads))
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
    x = torch.tensor([[float(r[i]) for i in idx] for r in body],
                     dtype=torch.float32)
    x = (x - torch.tensor(a["mean"])) / torch.tensor(a["std"])
    model = build(len(idx), a["hidden"])
    with torch.no_grad():
        lin = [m for m in model if isinstance(m, torch.nn.Linear)]
        for m, w in zip(lin, a["layers"]):
            m.weight.copy_(torch.tensor(w["weight"]))
            m.bias.copy_(torch.tensor(w["bias"]))
        p = torch.sigmoid(model(x).squeeze(1))
    with open(scores, "w") as f:
        for v in p.tolist():
            f.write("%.9g\n" % v)


if __name__ == "__main__":
    main(sys.argv)
