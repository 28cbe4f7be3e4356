"""Once-for-all MobileNetV3 subnets (depth 2-4/stage, k 3/5/7, expand 3/4/6, SE, h-swish forms)."""
import os, sys
import numpy as np
import onnx
from onnxb import B, write_renamed_duplicates


def make_div(v, d=8):
    nv = max(d, int(v + d / 2) // d * d)
    if nv < 0.9 * v:
        nv += d
    return nv


def act(b, x, kind, hs_form):
    if kind == "relu":
        return b.un("Relu", x)
    if hs_form == "op":
        return b.un("HardSwish", x)
    if hs_form == "mulsig":
        return b.mul(x, b.un("HardSigmoid", x, alpha=1.0 / 6, beta=0.5))
    # relu6(x+3)/6 * x, as older exporters write it
    t = b.add(x, b.const("three", 3.0))
    t = b.op("Clip", [t, b.const("lo", 0.0), b.const("hi", 6.0)], b.shape[t], "clip")
    t = b.op("Div", [t, b.const("six", 6.0)], b.shape[t], "div")
    return b.mul(x, t)


def se(b, x):
    c = b.C(x)
    r = make_div(c // 4)
    s = b.gap(x)
    s = b.conv(s, r, 1, bias=True)
    s = b.un("Relu", s)
    s = b.conv(s, c, 1, bias=True)
    s = b.un("HardSigmoid", s, alpha=1.0 / 6, beta=0.5)
    return b.mul(x, s)


def mbconv(b, x, cout, k, e, stride, a, use_se, hs):
    cin = b.C(x)
    h = x
    if e != 1:
        h = act(b, b.bn(b.conv(h, make_div(cin * e), 1)), a, hs)
    mid = b.C(h)
    h = act(b, b.bn(b.conv(h, mid, k, stride, groups=mid)), a, hs)
    if use_se:
        h = se(b, h)
    h = b.bn(b.conv(h, cout, 1))
    if stride == 1 and cin == cout:
        h = b.add(h, x)
    return h


STAGES = [(24, 2, "relu", False), (40, 2, "relu", True), (80, 2, "hs", False), (112, 1, "hs", True),
          (160, 2, "hs", True)]


def build(cfg, seed, weight_data):
    b = B(np.random.default_rng(seed), weight_data=weight_data)
    hs = cfg["hs"]
    x = b.input("input", (1, 3, cfg["res"], cfg["res"]))
    h = act(b, b.bn(b.conv(x, 16, 3, 2)), "hs", hs)
    h = mbconv(b, h, 16, 3, 1, 1, "relu", False, hs)
    bi = 0
    for si, (c, s, a, use_se) in enumerate(STAGES):
        for d in range(cfg["depth"][si]):
            k, e = cfg["blocks"][bi]; bi += 1
            h = mbconv(b, h, c, k, e, s if d == 0 else 1, a, use_se, hs)
    h = act(b, b.bn(b.conv(h, 960, 1)), "hs", hs)
    h = b.gap(h)
    h = act(b, b.conv(h, 1280, 1, bias=True), "hs", hs)
    n = b.shape[h]
    f = b.op("Flatten", [h], (1, 1280), "flatten", axis=1)
    y = b.op("Gemm", [f, b.w("fc_w", [1000, 1280]), b.w("fc_b", [1000])], (1, 1000), "fc", transB=1)
    return b.model(["input"], [y])


def main(out_dir, count=100, seed=7):
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    index = []
    forms = ["op", "mulsig", "clip"]
    for i in range(count):
        depth = [int(v) for v in rng.integers(2, 5, 5)]
        blocks = [(int(rng.choice([3, 5, 7])), int(rng.choice([3, 4, 6]))) for _ in range(sum(depth))]
        res = int(rng.choice([128, 160, 192, 224])) if i % 2 else int(rng.integers(32, 57)) * 4
        cfg = {"depth": depth, "blocks": blocks, "res": res, "hs": forms[i % 3]}
        fn = f"ofa_{i:03d}_{res}_{cfg['hs']}.onnx"
        m = build(cfg, i, weight_data=(i % 5 == 0))
        onnx.save(m, os.path.join(out_dir, fn))
        index.append({"file": fn, **cfg})
    write_renamed_duplicates(out_dir, index, (3, 10, 42))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "models/ofa")
