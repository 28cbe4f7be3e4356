"""Random-graph networks: WS / ER / BA DAGs (oriented by node index), 3 stages at 56/28/14."""
import os, sys
import numpy as np
import onnx
from onnxb import B, write_renamed_duplicates


def ws(n, k, p, rng):
    edges = set()
    for i in range(n):
        for j in range(1, k // 2 + 1):
            edges.add((i, (i + j) % n))
    out = set()
    for (u, v) in sorted(edges):
        if rng.random() < p:
            for _ in range(100):
                w = int(rng.integers(n))
                if w != u and (u, w) not in out and (w, u) not in out:
                    v = w
                    break
        out.add((u, v))
    return {(min(u, v), max(u, v)) for u, v in out if u != v}


def er(n, p, rng):
    return {(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p}


def ba(n, m, rng):
    edges = set()
    deg = np.zeros(n)
    for v in range(m, n):
        if v == m:
            targets = list(range(m))
        else:
            pr = deg[:v] / deg[:v].sum()
            targets = list(rng.choice(v, size=m, replace=False, p=pr))
        for t in targets:
            edges.add((int(t), v)); deg[t] += 1; deg[v] += 1
    return edges


def sepconv(b, x, cout, stride):
    c = b.C(x)
    h = b.conv(x, c, 3, stride, groups=c)
    return b.conv(h, cout, 1)


def stage(b, x, n, edges, cout, stride, agg):
    preds = {v: sorted(u for (u, w) in edges if w == v) for v in range(n)}
    succs = {v: [w for (u, w) in edges if u == v] for v in range(n)}
    out = {}
    for v in range(n):
        if not preds[v]:
            inputs, s = [x], stride
        else:
            inputs, s = [out[u] for u in preds[v]], 1
        if len(inputs) == 1:
            a = inputs[0]
        elif agg == "weighted":
            terms = [b.mul(t, b.const("aggw", float(b.rng.random()), ())) for t in inputs]
            a = b.add_chain(terms)
        else:
            a = b.sum(inputs)
        h = b.un("Relu", a)
        h = b.bn(sepconv(b, h, cout, s))
        out[v] = h
    outs = [out[v] for v in range(n) if not succs[v]]
    if len(outs) == 1:
        return outs[0]
    if agg == "weighted":
        return b.add_chain(outs)
    return b.sum(outs)


def build(cfg, seed):
    rng = np.random.default_rng(seed)
    b = B(rng, weight_data=(seed % 4 == 0))
    C = cfg["C"]
    x = b.input("input", (1, 3, 224, 224))
    h = b.bn(b.conv(x, C // 2, 3, 2))
    h = b.bn(sepconv(b, b.un("Relu", h), C, 2))
    for si, (mult, stride) in enumerate(((1, 1), (2, 2), (4, 2))):
        n, edges = cfg["n"][si], {tuple(e) for e in cfg["edges"][si]}
        h = stage(b, h, n, edges, C * mult, stride, cfg["agg"])
    h = b.bn(b.conv(b.un("Relu", h), 1280, 1))
    y = b.head(b.un("Relu", h), 1000)
    return b.model(["input"], [y])


def main(out_dir, count=50, seed=11):
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    index = []
    for i in range(count):
        kind = ["ws", "er", "ba"][i % 3]
        ns, es = [], []
        for si in range(3):
            n = int(rng.integers(16, 65))
            if kind == "ws":
                k = int(rng.choice([4, 6, 8])); e = ws(n, k, float(rng.uniform(0.2, 0.8)), rng)
            elif kind == "er":
                e = er(n, float(rng.uniform(0.05, 0.3)), rng)
            else:
                e = ba(n, int(rng.integers(1, 6)), rng)
            ns.append(n); es.append(sorted([list(x) for x in e]))
        cfg = {"kind": kind, "n": ns, "edges": es, "C": int(rng.choice([32, 78, 109])),
               "agg": "weighted" if i % 2 else "sum"}
        fn = f"rand_{i:03d}_{kind}_{'-'.join(map(str, ns))}_{cfg['agg']}.onnx"
        onnx.save(build(cfg, i), os.path.join(out_dir, fn))
        index.append({"file": fn, "kind": kind, "n": ns, "edges": sum(len(e) for e in es), "C": cfg["C"], "agg": cfg["agg"]})
    write_renamed_duplicates(out_dir, index, (1, 2))


if __name__ == "__main__":
    # gen_rand.py DIR [COUNT [SEED]]: another SEED draws other networks.
    main(sys.argv[1] if len(sys.argv) > 1 else "models/rand",
         int(sys.argv[2]) if len(sys.argv) > 2 else 50, int(sys.argv[3]) if len(sys.argv) > 3 else 11)
