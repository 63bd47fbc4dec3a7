#!/usr/bin/env python3
# torch-train.py SYNTH.CSV [THREADS] - the chapter workload of
# fixtures/pins/synth-chapter.yaml in PyTorch, for bench-train.sh: 3,000
# training rows (a random 25 % of the 4,000 validate), standardized from
# the training split, MLP 32-32 with ReLU and dropout 0.3, AdamW (lr 0.02,
# weight decay 0.003, betas 0.9/0.999, eps 1e-8), batch 128, a shuffle per
# epoch, 20 epochs, the validation loss after each epoch, as the tool's
# trainer does.  Prints one line of JSON: the training loop's seconds (the
# same span as the tool's train_seconds: from the first epoch to the
# last evaluation) and the final validation loss.
import csv
import json
import sys
import time

import torch

path = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_num_threads(threads)
torch.manual_seed(0)
with open(path, newline="") as f:
    rows = list(csv.reader(f))
head, body = rows[0], rows[1:]
label = head.index("class")
feat = [i for i in range(len(head)) if i != label]
classes = sorted({r[label] for r in body})
x = torch.tensor([[float(r[i]) for i in feat] for r in body], dtype=torch.float32)
y = torch.tensor([classes.index(r[label]) for r in body], dtype=torch.long)
perm = torch.randperm(len(body))
nval = len(body) // 4
va, tr = perm[:nval], perm[nval:]
mean, std = x[tr].mean(0), x[tr].std(0)
x = (x - mean) / std
xt, yt, xv, yv = x[tr], y[tr], x[va], y[va]
model = torch.nn.Sequential(
    torch.nn.Linear(len(feat), 32), torch.nn.ReLU(), torch.nn.Dropout(0.3),
    torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Dropout(0.3),
    torch.nn.Linear(32, len(classes)))
opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.003,
                        betas=(0.9, 0.999), eps=1e-8)
lossf = torch.nn.CrossEntropyLoss()
t0 = time.perf_counter()
for epoch in range(20):
    model.train()
    order = torch.randperm(len(tr))
    for s in range(0, len(tr), 128):
        idx = order[s:s + 128]
        opt.zero_grad()
        loss = lossf(model(xt[idx]), yt[idx])
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        val_loss = lossf(model(xv), yv).item()
t1 = time.perf_counter()
print(json.dumps({"train_seconds": t1 - t0, "val_loss": val_loss}))
