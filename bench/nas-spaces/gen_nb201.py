"""NAS-Bench-201 candidates: cell = 4 nodes, 6 edges, ops none/skip/conv1x1/conv3x3/avgpool."""
import json, os, sys
import numpy as np
import onnx
from onnxb import B, rename

OPS = ["none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"]
EDGES = [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)]


def relu_conv_bn(b, x, cout, k, stride=1):
    return b.bn(b.conv(b.un("Relu", x), cout, k, stride))


def cell(b, x, geno, form):
    nodes = [x]
    zero = [False]
    for i in (1, 2, 3):
        terms = []
        for e, (dst, src) in enumerate(EDGES):
            if dst != i:
                continue
            op = geno[e]
            s = nodes[src]
            if form in ("drop", "const") and (op == "none" or zero[src]):
                continue
            if op == "none":
                terms.append(b.mul(s, b.const("zero", 0.0)))
            elif op == "skip_connect":
                terms.append(s)
            elif op == "nor_conv_1x1":
                terms.append(relu_conv_bn(b, s, b.C(s), 1))
            elif op == "nor_conv_3x3":
                terms.append(relu_conv_bn(b, s, b.C(s), 3))
            else:
                terms.append(b.avgpool(s))
        if not terms:
            nodes.append(None); zero.append(True)
        else:
            nodes.append(b.add_chain(terms)); zero.append(False)
    out = nodes[3]
    if out is None:
        if form == "const":
            return b.const("cellzero", 0.0, b.shape[x]), True
        out = b.mul(x, b.const("zero", 0.0))  # the exporter's x.mul(0.)
    elif out == x:
        # all paths into node 3 are identities of the input: PyTorch still emits the sum
        pass
    return out, False


def resblock(b, x, cout):
    a = relu_conv_bn(b, x, cout, 3, 2)
    a = relu_conv_bn(b, a, cout, 3, 1)
    d = b.avgpool(x, 2, 2, 0)
    d = b.conv(d, cout, 1)
    return b.add(d, a)


def build(geno, res, classes, form, seed=0, N=5):
    b = B(np.random.default_rng(seed))
    x = b.input("input", (1, 3, res, res))
    h = b.bn(b.conv(x, 16, 3))
    for si, C in enumerate((16, 32, 64)):
        if si:
            h = resblock(b, h, C)
        for _ in range(N):
            h2, is_const = cell(b, h, geno, form)
            if h2 == h:
                # a cell that is the identity: the exporter writes no op; keep the tensor
                pass
            h = h2
    h = b.un("Relu", b.bn(h))
    y = b.head(h, classes)
    return b.model(["input"], [y])


def geno_str(g):
    return "|" + "|".join(f"{g[e]}~{EDGES[e][1]}" for e in range(6)) + "|"


def main(out_dir, count=300, seed=201):
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    forced = [
        ["none"] * 6,
        ["skip_connect"] * 6,
        ["nor_conv_3x3", "nor_conv_3x3", "none", "none", "none", "none"],  # output disconnected
        ["none", "none", "skip_connect", "none", "avg_pool_3x3", "nor_conv_3x3"],  # 1,2 zero: output from zeros
        ["avg_pool_3x3"] * 6,
        ["nor_conv_3x3"] * 6,
        ["nor_conv_1x1"] * 6,
        ["skip_connect", "none", "none", "none", "none", "skip_connect"],  # chain of identities
    ]
    genos = forced + [[OPS[i] for i in rng.integers(0, 5, 6)] for _ in range(count - len(forced))]
    index = []
    for i, g in enumerate(genos):
        form = "mul0" if i % 3 else "drop"
        if i < len(forced):
            form = "mul0"
        for res, classes in ((32, 10), (16, 120)):
            fn = f"nb201_{i:03d}_{res}_{form}.onnx"
            m = build(g, res, classes, form, seed=i)
            onnx.save(m, os.path.join(out_dir, fn))
            index.append({"file": fn, "geno": geno_str(g), "res": res, "form": form})
    # drop-form of the degenerate ones and a const-zero variant (rest of the net folds away)
    for i, g in enumerate(forced[:4]):
        for form in ("drop", "const"):
            fn = f"nb201_deg{i}_32_{form}.onnx"
            onnx.save(build(g, 32, 10, form, seed=i), os.path.join(out_dir, fn))
            index.append({"file": fn, "geno": geno_str(g), "res": 32, "form": form})
    # renamed duplicates
    for i in (9, 20, 57, 133, 250):
        for res in (32, 16):
            src = [e for e in index if e["file"].startswith(f"nb201_{i:03d}_{res}_")][0]
            m = onnx.load(os.path.join(out_dir, src["file"]))
            fn = f"dup_{src['file']}"
            onnx.save(rename(m, f"re{i}"), os.path.join(out_dir, fn))
            index.append({"file": fn, "geno": src["geno"], "res": res, "form": src["form"], "dup_of": src["file"]})
    json.dump(index, open(os.path.join(out_dir, "index.json"), "w"), indent=0)
    print(len(index), "models")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "models/nb201")
