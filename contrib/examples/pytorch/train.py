#!/usr/bin/python3
"""Train a small PyTorch MLP on a credit CSV (rebuild-audit exec trainer).

usage: train.py SNAPSHOT PARAMS ARTIFACT SEED THREADS

The model goes to ARTIFACT as JSON: the feature names, the
standardization, and every weight as the float32 value it holds, so that
the same weights give the same bytes.  ATen's vector kernels are chosen
by ATEN_CPU_CAPABILITY (default, avx2, ...): another choice rounds some
sums differently, and the weights move in their last bits.
"""
import csv
import json
import sys

import torch


def load(path, label="class", positive="2", ident="id"):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    feats = [c for c in header if c not in (label, ident)]
    idx = [header.index(c) for c in feats]
    li = header.index(label)
    x = torch.tensor([[float(r[i]) for i in idx] for r in body],
                     dtype=torch.float64)
    y = torch.tensor([1.0 if r[li] == positive else 0.0 for r in body])
    return feats, x, y


def build(n_in, hidden):
    layers, width = [], n_in
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, 1))
    return torch.nn.Sequential(*layers)


def main(argv):
    snap, params_path, artifact, seed, threads = argv[1:6]
    with open(params_path) as f:
        params = json.load(f)
    torch.set_num_threads(int(threads))
    torch.manual_seed(int(seed))
    torch.use_deterministic_algorithms(True)
    feats, x, y = load(snap)
    mean = x.mean(0)
    std = x.std(0, unbiased=False).clamp_min(1e-12)
    xs = ((x - mean) / std).float()
    hidden = [int(h) for h in str(params.get("hidden", "32,32")).split(",")]
    model = build(len(feats), hidden)
    opt = torch.optim.Adam(model.parameters(), lr=float(params.get("lr", 0.01)))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    g = torch.Generator().manual_seed(int(seed))
    batch = int(params.get("batch", 64))
    for _ in range(int(params.get("epochs", 30))):
        perm = torch.randperm(len(y), generator=g)
        for i in range(0, len(y), batch):
            b = perm[i:i + batch]
            opt.zero_grad()
            loss = loss_fn(model(xs[b]).squeeze(1), y[b])
            loss.backward()
            opt.step()
    out = {"features": feats, "mean": [float(v) for v in mean.float()],
           "std": [float(v) for v in std.float()], "hidden": hidden,
           "layers": [{"weight": [[float(v) for v in row] for row in m.weight],
                       "bias": [float(v) for v in m.bias]}
                      for m in model if isinstance(m, torch.nn.Linear)]}
    with open(artifact, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
