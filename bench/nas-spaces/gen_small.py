"""Small candidates (<= 14 ops) for the brute-force check: NB201 cells, MBv3 SE blocks, random DAGs."""
import os, sys
import numpy as np
import onnx
from onnxb import B
import gen_nb201 as nb
import gen_ofa as ofa


def nb_cell(geno, form, C, res, seed):
    b = B(np.random.default_rng(seed))
    x = b.input("input", (1, C, res, res))
    y, _ = nb.cell(b, x, geno, form)
    if y == x:
        return None
    return b.model(["input"], [y])


def mb_block(k, e, se, hs, seed, res=8, cin=8, cout=8, stride=1):
    b = B(np.random.default_rng(seed))
    x = b.input("input", (1, cin, res, res))
    h = b.conv(x, cin * e, 1, bias=True)
    h = ofa.act(b, h, "hs", hs)
    mid = b.C(h)
    h = ofa.act(b, b.conv(h, mid, k, stride, groups=mid, bias=True), "hs", hs)
    if se:
        h = ofa.se(b, h)
    h = b.conv(h, cout, 1, bias=True)
    if stride == 1 and cin == cout:
        h = b.add(h, x)
    return b.model(["input"], [h])


def rand_dag(rng, nops, seed):
    b = B(rng)
    x = b.input("input", (1, int(rng.choice([4, 8])), 8, 8))
    pool = [x]
    extra_outputs = []
    for i in range(nops):
        kind = rng.choice(["conv", "relu", "add", "mul", "concat", "sum", "pool", "addsame", "reshape", "conv_down"])
        a = pool[int(rng.integers(len(pool)))] if rng.random() < 0.5 else pool[-1]
        same = [t for t in pool if b.shape[t] == b.shape[a] and t != a]
        if kind == "conv":
            t = b.conv(a, int(rng.choice([4, 8, 16])), int(rng.choice([1, 3])))
        elif kind == "conv_down":
            t = b.conv(a, int(rng.choice([4, 8])), 3, 2) if b.shape[a][2] > 2 else b.un("Relu", a)
        elif kind == "relu":
            t = b.un(rng.choice(["Relu", "Sigmoid", "HardSwish"]), a)
        elif kind in ("add", "mul") and same:
            o = same[int(rng.integers(len(same)))]
            t = b.add(a, o) if kind == "add" else b.mul(o, a)
        elif kind == "addsame":
            t = b.add(a, a)
        elif kind == "sum" and len(same) >= 2:
            t = b.sum([a] + same[:2])
        elif kind == "concat" and same:
            t = b.concat([a, same[0]])
        elif kind == "pool":
            t = b.maxpool(a)
        elif kind == "reshape":
            n, c, h, w = b.shape[a]
            t = b.op("Flatten", [a], (1, c * h * w), "flatten", axis=1)
            t = b.op("Reshape", [t, b.const("shape", 0, (4,))], (n, c, h, w), "reshape")
            b.inits[-1] = onnx.numpy_helper.from_array(np.array([n, c, h, w], dtype=np.int64), b.inits[-1].name)
        else:
            t = b.un("Relu", a)
        pool.append(t)
        if rng.random() < 0.08:
            extra_outputs.append(t)
    outs = [pool[-1]] + [t for t in extra_outputs if t != pool[-1] and t != x]
    # many dangling tensors: make the model output everything unread (as a multi-head NAS net might)
    read = {i for n in b.nodes for i in n.input}
    if rng.random() < 0.5:
        outs += [t for t in pool[1:] if t not in read and t not in outs]
    return b.model(["input"], outs)


def count_ops(m):
    return len(m.graph.node)


def main(out_dir, seed=3):
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    n = 0
    seen = set()
    for i in range(400):
        g = [nb.OPS[j] for j in rng.integers(0, 5, 6)]
        form = ["mul0", "drop"][i % 2]
        m = nb_cell(g, form, int(rng.choice([4, 8])), 8, i)
        if m is None or count_ops(m) > 14 or count_ops(m) < 2 or (tuple(g), form) in seen:
            continue
        seen.add((tuple(g), form))
        onnx.save(m, os.path.join(out_dir, f"s_nb_{i:03d}_{form}.onnx")); n += 1
    for i, (k, e, se, hs) in enumerate([(k, e, se, hs) for k in (3, 5) for e in (3, 6) for se in (0, 1)
                                        for hs in ("op", "mulsig")]):
        m = mb_block(k, e, se, hs, i, stride=1 + (i % 3 == 0))
        if count_ops(m) <= 14:
            onnx.save(m, os.path.join(out_dir, f"s_mb_{i:02d}_k{k}e{e}se{se}{hs}.onnx")); n += 1
    for i in range(150):
        m = rand_dag(rng, int(rng.integers(4, 15)), i)
        if count_ops(m) <= 14:
            onnx.save(m, os.path.join(out_dir, f"s_rd_{i:03d}.onnx")); n += 1
    print(n, "small models")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "models/small")
