#!/usr/bin/python3
# unseen_paths.py ARTIFACT CASES.CSV ID - where the levels unseen in
# training of case ID went, computed from the artifact's bytes as
# rebuild-audit-artifact(5) lays out a format 4 forest, independently of
# the tool: for each native column whose value in the case is none of
# its levels, the splits on its feature that the case's path through
# every tree met, the trees whose path met one, and the forest's trees.
# Prints one JSON list, in column order, as dispute --json's
# explanation.unseen gives them (without "went"); exits 1 when such a
# level would go left at a split, against the format's rule.
import csv
import json
import math
import struct
import sys

import numpy as np


class Cur:
    def __init__(self, b):
        self.b, self.o = b, 0

    def u8(self):
        self.o += 1
        return self.b[self.o - 1]

    def u32(self):
        self.o += 4
        return struct.unpack_from('<I', self.b, self.o - 4)[0]

    def f32(self):
        self.o += 4
        return np.float32(struct.unpack_from('<f', self.b, self.o - 4)[0])

    def s(self):
        n = self.u32()
        self.o += n
        return self.b[self.o - n:self.o].decode()


def main():
    art, cases, case_id = sys.argv[1], sys.argv[2], sys.argv[3]
    c = Cur(open(art, 'rb').read())
    assert c.b[:8] == b'RBAMODEL'
    c.o = 8
    fmt, _abi, kind, _obj = c.u32(), c.u32(), c.u8(), c.u8()
    assert fmt == 4 and kind == 2, (fmt, kind)
    nfeat, ncls = c.u32(), c.u32()
    c.s()  # label
    for _ in range(c.u32()):
        c.s()  # classes
    c.u32()  # positive
    cols = []
    for _ in range(c.u32()):
        name, k = c.s(), c.u8()
        levels = [c.s() for _ in range(c.u32())] if k in (2, 3) else []
        cols.append((name, k, levels))
    mean = [c.f32() for _ in range(nfeat)]
    scale = [c.f32() for _ in range(nfeat)]
    tokens = [c.s() for _ in range(c.u32())]
    assert c.u8() == 0  # a forest has no imputation
    K = 1 if ncls == 2 else ncls
    for _ in range(K):
        c.f32()  # base margins
    edges = [[c.f32() for _ in range(c.u32())] for _ in range(nfeat)]
    trees = []
    for _ in range(c.u32()):
        nodes = []
        for _ in range(c.u32()):
            t = c.u8()
            if t == 0:
                c.f32(), c.f32()
                nodes.append((0,))
            elif t in (1, 2):
                f, e, right = c.u32(), c.u32(), c.u32()
                c.f32()
                nodes.append((t, f, edges[f][e], right))
            else:
                f = c.u32()
                cats = set(c.u32() for _ in range(c.u32()))
                right = c.u32()
                c.f32()
                nodes.append((3, f, cats, right))
        trees.append(nodes)
    assert c.o == len(c.b)

    with open(cases, newline='') as fh:
        rows = list(csv.DictReader(fh))
    idcol = next(iter(rows[0]))
    row = next(r for r in rows if r[idcol] == case_id)
    x, f0, f = [], [], 0
    for name, k, levels in cols:
        v = row[name]
        f0.append(f)
        if k == 1:
            x.append(np.float32('nan') if v in tokens else np.float32(float(v)))
        elif k == 2:
            x.extend(np.float32(1.0 if v == lv else 0.0) for lv in levels)
        else:
            x.append(np.float32(levels.index(v) if v in levels else len(levels)))
        f += 1 if k != 2 else len(levels)
    assert len(x) == nfeat
    x = [(xi - m) / s for xi, m, s in zip(x, mean, scale)]

    out = []
    for j, (name, k, levels) in enumerate(cols):
        if k != 3 or row[name] in levels:
            continue
        splits = met_trees = 0
        for nodes in trees:
            i = met = 0
            while nodes[i][0] != 0:
                t, feat, arg, right = nodes[i]
                v = x[feat]
                if t == 3:
                    left = float(v) == math.floor(float(v)) and int(v) in arg
                else:
                    left = bool(v < arg) or (t == 2 and math.isnan(v))
                if feat == f0[j]:
                    if left:
                        print('%s went left in a tree' % name, file=sys.stderr)
                        sys.exit(1)
                    met += 1
                i = i + 1 if left else right
            splits += met
            met_trees += met > 0
        out.append({'column': name, 'value': row[name], 'splits': splits,
                    'trees': met_trees, 'forest_trees': len(trees)})
    print(json.dumps(out))


main()
