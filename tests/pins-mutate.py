#!/usr/bin/env python3
"""pins-mutate.py - mutations of pins files for tests/pins-diff.sh.

    python3 tests/pins-mutate.py OUTDIR COUNT SEED < list-of-seed-files

Writes COUNT files to OUTDIR, each a seed (a file named on standard
input, a contrib/ template with its placeholders filled, or one of the
full records below) with one to four mutations: lines deleted,
duplicated or swapped, values replaced by other types, numbers out of
range, enumeration words of other keys, nulls, empty and flow
mappings and lists, deep nesting, unknown keys and keys of other
sections inserted in every section, UTF-8 oddities, bytes flipped.
Deterministic for a given SEED and list.
"""
import os
import random
import re
import sys

DIGEST = "sha256:" + "9a5fb32561e18f48dbbe9b109aa7e02b59539569fa95226708a4b5b3be86dee0"
COMMIT = "0123456789abcdef0123456789abcdef01234567"

FULL = [
    """schema: rebuild-audit/pins/v1
version: full-mlp
snapshot: %s
code_revision: abc
trainer_abi: 1
environment: %s
artifact: %s
data:
  label: class
  positive: "2"
  id: id
  exclude: [a, b]
  categorical: [c, d]
  standardize: true
  split:
    validation: 0.25
    order: random
    seed: 3
  missing: ["", "NA", "?"]
  impute: mean
model:
  kind: mlp
  hidden: [8, 4]
  activation: relu
  dropout: 0.1
train:
  seed: 1
  epochs: 5
  batch_size: 32
  optimizer: adamw
  lr: 0.01
  weight_decay: 0.001
  betas: [0.9, 0.99]
  eps: 1.0e-7
eval:
  subset: 100
  reduction: sum
  dropout: on
  input_scale: 2.0
determinism:
  mode: fast
  threads: 2
trainer:
  kind: builtin
""" % (DIGEST, DIGEST, DIGEST),
    """schema: rebuild-audit/pins/v1
version: full-sgd
snapshot: %s
data:
  label: class
  categorical: [c, d, e]
  native: [d]
  missing: ["NA"]
  impute: 0.5
model:
  kind: mlp
train:
  optimizer: sgd
  momentum: 0.5
  lr: 0.1
eval:
  subset: validation
""" % DIGEST,
    """schema: rebuild-audit/pins/v1
version: full-gbdt
snapshot: %s
data:
  label: class
  positive: yes
  categorical: [c, d, e]
  native: [e, c]
  missing: ["NA"]
model:
  kind: gbdt
  trees: 10
  max_depth: 3
  max_leaves: 8
  learning_rate: 0.5
  min_child_weight: 0.5
  lambda: 2
  gamma: 0.1
  max_bins: 64
  subsample: 0.9
  colsample: 0.7
train:
  seed: 9
determinism: {mode: strict, threads: 4}
""" % DIGEST,
    """schema: rebuild-audit/pins/v1
version: full-exec
snapshot: %s
code_revision: %s
environment: %s
data:
  label: class
  id: id
  exclude: [x]
train:
  seed: 7
trainer:
  kind: exec
  repository: /srv/repo.git
  revision: %s
  command: [/usr/bin/python3, train.py, "{snapshot}", "{params}", "{artifact}"]
  artifact: model.json
  format: opaque
  params:
    eta: 0.3
    depth: 4
    neg: -2
    flag: true
    name: "hist"
    word: fast
    quoted: "12"
    big: 123456789012345678901
  environment:
    packages: [python3-numpy, python3-xgboost, zlib1g]
    variables:
      OMP_NUM_THREADS: "1"
      EMPTY: ""
      B_VAR: x
    probe: [/usr/bin/python3, -c, "print(1)"]
    pass: [CUDA_VISIBLE_DEVICES, A_B]
  limits:
    seconds: 300
    memory: 4294967296
    output: 16777216
    processes: 64
  score:
    command: [/usr/bin/python3, score.py, "{artifact}", "{cases}", "{scores}"]
""" % (DIGEST, COMMIT, DIGEST, COMMIT),
]


# Records one step from a rule: each breaks (or just keeps) one rule
# that a single mutation of the full records above seldom reaches.
HEAD = "schema: rebuild-audit/pins/v1\nversion: edge\nsnapshot: %s\n" % DIGEST
EXEC = ("trainer:\n  kind: exec\n  repository: /r\n  revision: %s\n"
        "  command: [a]\n  artifact: m\n  format: opaque\n" % COMMIT)
EDGES = [
    HEAD + "data:\n  label: y\n  missing: [NA]\n  impute: mean\nmodel:\n  kind: gbdt\n",
    HEAD + "data:\n  label: y\n  missing: []\n  impute: 1\n",
    HEAD + "data:\n  label: y\n  categorical: [c]\n  native: [c]\n" + EXEC,
    HEAD + "trainer_abi: 1\ndata: {label: y}\n" + EXEC,
    HEAD + "data: {label: y}\nmodel: {}\n" + EXEC,
    HEAD + "data: {label: y}\ntrain: {seed: 1, epochs: 3}\n" + EXEC,
    HEAD + "code_revision: %s\ndata: {label: y}\n" % ("f" * 40) + EXEC,
    HEAD + "data: {label: y}\n" + EXEC + "  environment:\n    variables: {PATH: x}\n    pass: [HOME]\n",
    HEAD + "data: {label: y}\n" + EXEC + "  environment:\n    variables: {Ab: x}\n    pass: [aB]\n",
    HEAD + "data: {label: y}\n" + EXEC + "  environment:\n    pass: [X]\n    variables: {X: x}\n",
    HEAD + "data: {label: y}\n" + EXEC + "  params: {%s}\n" % ", ".join("p%d: %d" % (i, i) for i in range(65)),
    HEAD + "data: {label: y}\n" + EXEC + "  environment:\n    variables: {%s}\n" % ", ".join("V%d: x" % i for i in range(33)),
    HEAD + "data: {label: y}\n" + EXEC + "  score: {command: ~}\n",
    HEAD + "data: {label: y}\n" + EXEC + "  score: ~\n  limits: ~\n  environment: ~\n  params: ~\n",
    HEAD + "data: {label: y}\ntrainer: {kind: ~, kind: exec}\n",
    HEAD + "data: {label: y}\ntrainer: {kind: exec, repository: ~, repository: /r}\n",
    HEAD + "data: {label: y}\ntrainer: {kind: builtin, score: {command: [a]}}\n",
    HEAD + "data: {label: y}\nmodel: {kind: gbdt}\ntrain: {lr: 0.1}\n",
    HEAD + "data: {label: y}\nmodel: {kind: gbdt, hidden: [2]}\n",
    HEAD + "data: {label: y}\nmodel: {trees: 2}\n",
    HEAD + "data: {label: y}\ntrain: {optimizer: sgd}\n",
    HEAD + "data: {label: y}\ntrain: {optimizer: sgd, weight_decay: 0.2, betas: [0.1, 0.2]}\n",
    HEAD + "data: {label: y}\ntrain: {optimizer: adamw, momentum: 0.1}\n",
    HEAD + "data: {label: y}\neval: {subset: 12, subset: all}\n",
    HEAD + "data: ~\n", HEAD + "data:\n  label: ~\n", HEAD + "data: []\n",
    HEAD + "data: {label: y, id: y}\n", HEAD + "data: {label: y, exclude: [y]}\n",
    HEAD + "data: {label: y, id: i, categorical: [i]}\n",
    HEAD + "data: {label: y, exclude: [c], categorical: [c]}\n",
    HEAD + "data: {label: y, categorical: [b, a], native: [a, z]}\n",
    HEAD + "data: {label: y}\nmodel: {kind: gbdt, max_leaves: 1}\n",
    HEAD + "schema: rebuild-audit/pins/v1\ndata: {label: y}\n",
    HEAD + "data: {label: y}\nversion: ~\n", "~\n", "[]\n", "", "# only\n", "x\n",
    "schema: rebuild-audit/pins/v1\n", "schema: ~\nversion: ~\nsnapshot: ~\ndata: ~\n",
    "{schema: rebuild-audit/pins/v1, version: f, snapshot: %s, data: {label: y}, model: ~, train: ~, eval: ~, determinism: ~, trainer: ~, code_revision: ~, trainer_abi: ~, environment: ~, artifact: ~}\n" % DIGEST,
]

KEYS = {
    "schema": ["rebuild-audit/pins/v1", "rebuild-audit/pins/v2",
               "rebuild-audit/policy/v1", "rebuild-audit/pins/v10"],
    "version": ["v1", ".x", "-x", "a" * 129, "a" * 128, "ok_name-1.2"],
    "snapshot": [DIGEST, DIGEST.upper(), "sha256:abc", DIGEST[7:]],
    "code_revision": [COMMIT, "main", "x" * 300],
    "trainer_abi": ["1", "0", "4294967295", "4294967296", "2"],
    "environment": [DIGEST, "nope"], "artifact": [DIGEST, "model.json", ".x", "a/b", "a" * 129],
    "data": ["{label: y}", "[]", "{}", "~"],
    "model": ["{kind: gbdt}", "{}", "[]", "{kind: mlp, trees: 3}"],
    "train": ["{seed: 1}", "{epochs: 3}", "{}", "[1]"],
    "eval": ["{}", "{subset: 5}", "[]"],
    "determinism": ["{}", "{threads: 300}", "[]"],
    "trainer": ["{kind: exec}", "{kind: builtin}", "{}", "{kind: builtin, repository: x}"],
    "label": ["class", "id", "c", "", '""', "x" * 257, "x" * 256],
    "positive": ["2", "good", '""'], "id": ["id", "class", "c", "x"],
    "exclude": ["[class]", "[id]", "[a, a]", "[c]", "[]", "[x, y]"],
    "categorical": ["[class]", "[id]", "[a]", "[c, c]", "[c]", "[]", "[q, r, s]"],
    "native": ["[c]", "[z]", "[]", "[c, c]", "[e, d]"],
    "standardize": ["true", "false", "yes", "1"],
    "split": ["{validation: 0.5}", "{order: tail}", "{seed: 4}", "[]", "{}", "{bogus: 1}"],
    "validation": ["0", "1", "0.5", "1e-300", "0.999999"],
    "order": ["random", "tail", "head"], "seed": ["0", "18446744073709551615", "18446744073709551616", "-1"],
    "missing": ["[]", '[""]', "[NA, NA]", '["a,b"]', '["a\\"b"]', "[~]", "[" + "x" * 65 + "]", "[[a]]"],
    "impute": ["mean", "0", "-1.5", "none", "3.4e38", "3.5e38", ".5", "+2", "median"],
    "kind": ["mlp", "gbdt", "exec", "builtin", "xgb"],
    "hidden": ["[]", "[0]", "[4096]", "[4097]", "[1, 2, 3]", "[" + ", ".join(["1"] * 17) + "]", "8"],
    "activation": ["relu", "tanh"], "dropout": ["0", "0.99", "1", "-0.1", "off", "on"],
    "trees": ["1", "10000", "10001", "0"], "max_depth": ["1", "16", "17"],
    "max_leaves": ["0", "1", "2", "65536", "65537"],
    "learning_rate": ["0", "1", "1.5", "0.1"], "min_child_weight": ["0", "-1", "5"],
    "lambda": ["0", "-0.0", "1e308"], "gamma": ["0", "-1e-9"], "max_bins": ["1", "2", "256", "257"],
    "subsample": ["0", "1", "0.5"], "colsample": ["1.0001", "0.3"],
    "epochs": ["1", "100000", "100001", "2.0"], "batch_size": ["1", "1048576", "1048577"],
    "optimizer": ["adamw", "sgd", "adam"], "lr": ["0", "1e-9", "-1", "nan", ".inf", "0x1"],
    "weight_decay": ["0", "-0", "0.5"], "betas": ["[0.9, 0.999]", "[1, 0]", "[0.5]", "{a: 1}", "[0.1, 0.2, 0.3]"],
    "eps": ["0", "1e-12"], "momentum": ["0", "0.9", "1"],
    "subset": ["all", "validation", "0", "1", "1000000000", "1000000001", "01", "\"5\"", "-3", "rows"],
    "reduction": ["mean", "sum", "max"], "input_scale": ["0", "2", "-1"],
    "mode": ["strict", "fast", "loose"], "threads": ["1", "256", "257", "0"],
    "repository": ["/r", "x" * 1025, "\"\""], "revision": [COMMIT, COMMIT.upper(), "main", COMMIT[:7]],
    "command": ["[a]", "[]", "[a, \"\"]", "a", "[" + ", ".join(["a"] * 65) + "]"],
    "format": ["xgboost-json", "opaque", "onnx"],
    "params": ["{}", "{a: 1}", "{a: [1]}", "{a: ~}", "{\"\": 1}", "{a: 1, a: 2}", "[]", "{b: 1.5, a: -0, c: 007}"],
    "packages": ["[a]", "[ab]", "[Ab]", "[a+b.c-d]", "[zz, aa]", "[]"],
    "variables": ["{PATH: x}", "{A: 1}", "{1A: x}", "{A: ''}", "{A: [1]}", "{a: x, A: y}", "{}", "[]"],
    "probe": ["[x]", "[]", "~"], "pass": ["[HOME]", "[A-B]", "[OMP_NUM_THREADS]", "[z, y]", "[a, A]", "[]"],
    "limits": ["{seconds: 0}", "{memory: 1}", "{}", "[]"],
    "seconds": ["1", "604800", "604801", "0"], "memory": ["16777216", "16777215", "1099511627776", "1099511627777"],
    "output": ["1023", "1024", "68719476736", "68719476737"], "processes": ["0", "1", "65536", "65537"],
    "score": ["{command: [s]}", "{}", "[]", "{command: []}", "{other: 1}"],
}
VALUES = [
    "~", "null", "Null", "NULL", "", "''", '""', "0", "1", "-1", "2", "0.5", "1.0e-8",
    "1e400", "-1e400", "nan", ".nan", ".inf", "-.inf", "inf", "0x10", "0o7", "007",
    "1_000", "+1", "-0", "-0.0", ".5", "5.", "1e", "18446744073709551615",
    "18446744073709551616", "99999999999999999999999", "4294967296", "true", "false",
    "True", "yes", "no", "on", "off", "y", "\"true\"", "'1'", "\"1.5\"", "[]", "{}",
    "[1, 2]", "[a, b]", "{a: 1}", "{a: {b: {c: {d: {e: 1}}}}}",
    "[[[[[[[[1]]]]]]]]", "[[[[[[1]]]]]]", "{a: [b, {c: [d]}]}", "é", "\"\\u00e9\"", "\u200b",
    "\u202eevil", "😀", "\"\\0\"", "\"a\\nb\"", "\"\\t\"", "a b", "'x'''", "x" * 257,
    "\"" + "é" * 130 + "\"", "- a", "|\n  literal", ">\n  folded", "\"sha256:\"",
    DIGEST, COMMIT,
] + [w for ws in KEYS.values() for w in ws if len(w) < 40]
ODD_BYTES = [b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xff", b"\x00", b"\x07", b"\t",
             b"\xef\xbb\xbf", b"\xf4\x90\x80\x80", b"\r", b"\xe2\x80\xa8", b"\xc2\x85"]
KEYLINE = re.compile(r"^(\s*)(- )?([A-Za-z_][A-Za-z0-9_]*):( ?)(.*)$")


def mutate(lines, rng):
    # weights favour the schema over YAML syntax (ydoc.c's, not pins.c's)
    op = rng.choice([0, 1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 10, 11, 12, 12, 13])
    n = len(lines)
    if n == 0:
        return ["schema: rebuild-audit/pins/v1"]
    i = rng.randrange(n)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])
    elif op == 2:
        j = rng.randrange(n)
        lines[i], lines[j] = lines[j], lines[i]
    elif op in (3, 4, 5, 6):
        # a value replaced: by one of its own key's, or of any
        cand = [k for k in range(n) if KEYLINE.match(lines[k])]
        if not cand:
            return lines
        i = rng.choice(cand)
        m = KEYLINE.match(lines[i])
        key = m.group(3)
        if op != 6 and key in KEYS:
            val = rng.choice(KEYS[key])
        else:
            val = rng.choice(VALUES)
        lines[i] = "%s%s%s: %s" % (m.group(1), m.group(2) or "", key, val)
    elif op in (7, 8, 9):
        # a key inserted at the indentation of a line: known keys of every
        # section, unknown ones, nulls
        m = re.match(r"^(\s*)", lines[i])
        ind = m.group(1)
        if op == 9:
            key = rng.choice(["bogus", "Label", "x", "schema2", "é", "\"label\"", "'seed'", "1"])
        else:
            key = rng.choice(list(KEYS))
        r = rng.random()
        val = rng.choice(KEYS.get(key, VALUES)) if r < 0.6 else rng.choice(VALUES) if r < 0.9 else ""
        lines.insert(i + rng.randrange(2), "%s%s: %s" % (ind, key, val))
    elif op == 10:
        # a value replaced by a block of its own: a mapping, a list, deep
        cand = [k for k in range(n) if KEYLINE.match(lines[k])]
        if not cand:
            return lines
        i = rng.choice(cand)
        m = KEYLINE.match(lines[i])
        ind = m.group(1) + ("  " if not m.group(2) else "    ")
        lines[i] = "%s%s%s:" % (m.group(1), m.group(2) or "", m.group(3))
        kind = rng.randrange(4)
        if kind == 0:
            block = [ind + "- " + rng.choice(VALUES[:40])]
        elif kind == 1:
            k2 = rng.choice(list(KEYS))
            block = [ind + k2 + ": " + rng.choice(KEYS[k2])]
        elif kind == 2:
            block = [ind + "  " * d + "k%d:" % d for d in range(rng.randrange(3, 10))]
        else:
            block = []
        lines[i + 1:i + 1] = block
    elif op == 11:
        # a whole section emptied, nulled, or made a list
        cand = [k for k in range(n) if re.match(r"^[a-z_]+:\s*$", lines[k])]
        if not cand:
            return lines
        i = rng.choice(cand)
        j = i + 1
        while j < n and (lines[j].startswith(" ") or lines[j].startswith("-")):
            j += 1
        repl = rng.choice(["", " ~", " {}", " []", " [a]", " null", " 1"])
        lines[i:j] = [lines[i].rstrip() + repl]
    elif op == 12:
        # a list entry changed, or the list made deeper
        cand = [k for k in range(n) if re.match(r"^\s*- ", lines[k]) or "[" in lines[k]]
        if not cand:
            return lines
        i = rng.choice(cand)
        lines[i] = re.sub(r"([\[, ])([^\[\],]+)([\],])",
                          lambda mm: mm.group(1) + rng.choice(VALUES[:50]) + mm.group(3),
                          lines[i], count=1)
    else:
        # a character of a line replaced by a UTF-8 oddity or a stray byte
        s = lines[i]
        k = rng.randrange(len(s) + 1)
        odd = rng.choice(["é", "\u200b", "\ufeff", "😀", "\x85", "\u2028", "'", "\"", "#", ":", "&a", "*a", "!!str ", "{", "["])
        lines[i] = s[:k] + odd + s[k + rng.randrange(2):]
    return lines


def main():
    out, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    seeds = []
    for name in sys.stdin.read().split():
        with open(name, "rb") as f:
            seeds.append(f.read())
    for tmpl in sorted(os.listdir("contrib/examples")):
        path = os.path.join("contrib/examples", tmpl, "pins.yaml.in")
        if os.path.exists(path):
            text = open(path, "rb").read().decode()
            text = (text.replace("@SNAPSHOT@", DIGEST).replace("@REPO@", "/srv/r.git")
                    .replace("@COMMIT@", COMMIT).replace("@THREADS@", "2")
                    .replace("@ETA@", "0.3"))
            text = re.sub(r"@[A-Z_]+@", "1", text)
            seeds.append(text.encode())
            with open(os.path.join(out, "contrib-%s.yaml" % tmpl), "wb") as f:
                f.write(text.encode())
    for k, text in enumerate(FULL):
        seeds.append(text.encode())
        with open(os.path.join(out, "full-%d.yaml" % k), "wb") as f:
            f.write(text.encode())
    for k, text in enumerate(EDGES):
        with open(os.path.join(out, "edge-%02d.yaml" % k), "wb") as f:
            f.write(text.encode())
    # the full records carry most keys: they are mutated more often
    weighted = seeds + [t.encode() for t in FULL] * 6 + [t.encode() for t in EDGES] * 2
    for n in range(count):
        base = rng.choice(weighted)
        if rng.random() < 0.03:
            b = bytearray(base)
            for _ in range(rng.randrange(1, 4)):
                if b:
                    p = rng.randrange(len(b))
                    b[p:p + rng.randrange(2)] = rng.choice(ODD_BYTES)
            data = bytes(b)
        else:
            lines = base.decode("utf-8", "surrogateescape").split("\n")
            for _ in range(rng.choice([1, 1, 1, 1, 2, 2, 3])):
                lines = mutate(lines, rng)
            data = "\n".join(lines).encode("utf-8", "surrogateescape")
        with open(os.path.join(out, "m%05d.yaml" % n), "wb") as f:
            f.write(data)


main()
