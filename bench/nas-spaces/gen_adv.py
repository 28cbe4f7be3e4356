"""Adversarial candidates: wide fan-out/fan-in, long skips, Concat-heavy 8-node cells, odd graph I/O."""
import json, os, sys
import numpy as np
import onnx
from onnx import helper
from onnxb import B, rename


def fan(width, agg, res=28, C=32, seed=0):
    b = B(np.random.default_rng(seed))
    x = b.input("input", (1, 3, res, res))
    h = b.un("Relu", b.bn(b.conv(x, C, 3)))
    for layer in range(2):
        br = [b.un("Relu", b.bn(b.conv(h, C if agg != "concat" else 8, 1 + 2 * (i % 2)))) for i in range(width)]
        if agg == "sum":
            h = b.sum(br)
        elif agg == "add":
            h = b.add_chain(br)
        else:
            h = b.conv(b.concat(br), C, 1)
    return b.model(["input"], [b.head(h, 10)])


def long_skip(seed=0, res=64):
    b = B(np.random.default_rng(seed))
    x = b.input("input", (1, 3, res, res))
    stem = b.un("Relu", b.bn(b.conv(x, 32, 3)))
    h = stem
    skips = []
    for s, C in enumerate((32, 64, 128)):
        for _ in range(4):
            h = b.add(h, b.bn(b.conv(b.un("Relu", h), C, 3)))
        skips.append(h)
        if s < 2:
            h = b.bn(b.conv(h, C * 2, 3, 2))
    # skips from every stage (and the stem, full resolution) to the end
    far = b.avgpool(stem, 4, 4, 0)
    far = b.conv(far, 128, 1)
    mid = b.conv(b.avgpool(skips[0], 4, 4, 0), 128, 1)
    h = b.add(b.add(h, far), mid)
    # a raw input skip: GAP of the input concatenated at the head
    g = b.concat([b.gap(h), b.gap(x)])
    f = b.op("Flatten", [g], (1, 131), "flatten", axis=1)
    y = b.op("Gemm", [f, b.w("fc", [10, 131]), b.w("fcb", [10])], (1, 10), "fc", transB=1)
    return b.model(["input"], [y])


def darts8(seed=0, res=32, C=16, cells=8, nodes=8):
    rng = np.random.default_rng(seed)
    b = B(rng)
    x = b.input("input", (1, 3, res, res))
    s0 = s1 = b.bn(b.conv(x, 3 * C, 3))
    red_prev = False
    for ci in range(cells):
        red = ci in (cells // 3, 2 * cells // 3)
        if red:
            C *= 2
        p0 = s0
        if red_prev:  # factorized reduce
            a = b.conv(b.un("Relu", s0), C // 2, 1, 2)
            c = b.conv(b.un("Relu", s0), C // 2, 1, 2)
            p0 = b.bn(b.concat([a, c]))
        else:
            p0 = b.bn(b.conv(b.un("Relu", s0), C, 1))
        p1 = b.bn(b.conv(b.un("Relu", s1), C, 1))
        states = [p0, p1]
        for n in range(nodes):
            terms = []
            for j in rng.choice(len(states), size=2, replace=False):
                s = states[int(j)]
                stride = 2 if red and j < 2 else 1
                op = rng.choice(["sep3", "sep5", "dil3", "max", "avg", "skip"])
                if op == "skip":
                    t = s if stride == 1 else b.bn(b.conv(b.un("Relu", s), C, 1, 2))
                elif op == "max":
                    t = b.maxpool(s, 3, stride, 1)
                elif op == "avg":
                    t = b.avgpool(s, 3, stride, 1)
                elif op == "dil3":
                    t = b.bn(b.conv(b.conv(b.un("Relu", s), C, 3, stride, groups=C, dilation=2), C, 1))
                else:
                    k = 3 if op == "sep3" else 5
                    t = b.bn(b.conv(b.conv(b.un("Relu", s), C, k, stride, groups=C), C, 1))
                    t = b.bn(b.conv(b.conv(b.un("Relu", t), C, k, 1, groups=C), C, 1))
                terms.append(t)
            states.append(b.add(terms[0], terms[1]))
        s0, s1 = s1, b.concat(states[2:])
        red_prev = red
    return b.model(["input"], [b.head(s1, 10)])


def odd_io(seed=0):
    """x*x, Add(x,x), Split with an unused output, a dead branch, an intermediate graph output."""
    b = B(np.random.default_rng(seed))
    x = b.input("input", (1, 16, 32, 32))
    sq = b.mul(x, x)
    a = b.add(sq, sq)
    h = b.un("Relu", b.conv(a, 32, 3))
    s1, s2 = "split_a", "split_b"
    b.nodes.append(helper.make_node("Split", [h, b.const("splits", 0, (2,)).replace("", "")], [s1, s2], name="split",
                                    axis=1))
    b.inits[-1] = onnx.numpy_helper.from_array(np.array([16, 16], dtype=np.int64), b.inits[-1].name)
    b.shape[s1] = b.shape[s2] = (1, 16, 32, 32)
    dead = b.conv(s2, 64, 3)           # dead: nobody reads it
    aux = b.un("Relu", b.conv(s1, 16, 3))   # an auxiliary output, also read further
    y = b.head(b.add(aux, s1), 10)
    return b.model(["input"], [y, aux])


def reorder(model, seed):
    """Same network, nodes written in another topological order."""
    m = onnx.ModelProto(); m.CopyFrom(model)
    rng = np.random.default_rng(seed)
    nodes = list(m.graph.node)
    produced = {o: i for i, n in enumerate(nodes) for o in n.output}
    preds = [{produced[t] for t in n.input if t in produced} for n in nodes]
    done, order = set(), []
    while len(order) < len(nodes):
        ready = [i for i in range(len(nodes)) if i not in done and preds[i] <= done]
        i = int(rng.choice(ready)); done.add(i); order.append(i)
    del m.graph.node[:]
    m.graph.node.extend([nodes[i] for i in order])
    return m


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    models = {}
    for w in (16, 48, 128):
        for agg in ("sum", "add", "concat"):
            models[f"fan_{w}_{agg}"] = fan(w, agg)
    models["fan_256_sum_r14"] = fan(256, "sum", res=14)
    for s in range(3):
        models[f"longskip_{s}"] = long_skip(s, res=64 if s < 2 else 112)
    for s in range(6):
        models[f"darts8_{s}"] = darts8(s, res=32 if s < 4 else 64)
    models["odd_io"] = odd_io()
    for k in ("darts8_0", "longskip_0", "fan_48_concat"):
        models[f"dup_renamed_{k}"] = rename(models[k], "r")
        models[f"dup_reordered_{k}"] = reorder(models[k], 5)
        models[f"dup_reordered_renamed_{k}"] = rename(reorder(models[k], 6), "rr")
    index = []
    for k, m in models.items():
        onnx.save(m, os.path.join(out_dir, k + ".onnx"))
        e = {"file": k + ".onnx"}
        if k.startswith("dup_"):
            e["dup_of"] = k.split("_", 2)[2].replace("renamed_", "") + ".onnx"
        index.append(e)
    json.dump(index, open(os.path.join(out_dir, "index.json"), "w"))
    print(len(index), "models")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "models/adv")
