"""Small ONNX builder for probe candidates (shapes tracked by hand)."""
import json
import os

import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper


class B:
    def __init__(self, rng, prefix="", weight_data=True):
        self.nodes, self.inits = [], []
        self.n = 0
        self.rng = rng
        self.prefix = prefix
        self.shape = {}
        self.weight_data = weight_data

    def name(self, base):
        self.n += 1
        return f"{self.prefix}{base}_{self.n}"

    def w(self, base, dims, scale=0.05):
        nm = self.name(base)
        if self.weight_data:
            arr = (self.rng.standard_normal(dims) * scale).astype(np.float32)
            self.inits.append(numpy_helper.from_array(arr, nm))
        else:
            t = TensorProto(name=nm, data_type=TensorProto.FLOAT, dims=dims)
            t.data_location = TensorProto.EXTERNAL
            e = t.external_data.add()
            e.key, e.value = "location", "weights-not-shipped.bin"
            self.inits.append(t)
        return nm

    def const(self, base, value, dims=()):
        nm = self.name(base)
        arr = np.full(dims, value, dtype=np.float32)
        self.inits.append(numpy_helper.from_array(arr, nm))
        self.shape[nm] = tuple(dims)
        return nm

    def op(self, typ, inputs, shape, base=None, **attrs):
        out = self.name(base or typ.lower())
        self.nodes.append(helper.make_node(typ, inputs, [out], name=out + "_n", **attrs))
        self.shape[out] = tuple(shape)
        return out

    def C(self, x):
        return self.shape[x][1]

    def HW(self, x):
        return self.shape[x][2], self.shape[x][3]

    def conv(self, x, cout, k, stride=1, groups=1, bias=False, dilation=1):
        n, cin, h, wd = self.shape[x]
        pad = (k // 2) * dilation
        ho = (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1
        wo = (wd + 2 * pad - dilation * (k - 1) - 1) // stride + 1
        ins = [x, self.w("conv_w", [cout, cin // groups, k, k])]
        if bias:
            ins.append(self.w("conv_b", [cout]))
        return self.op("Conv", ins, (n, cout, ho, wo), "conv", kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=groups, dilations=[dilation, dilation])

    def bn(self, x):
        c = self.C(x)
        sc = self.const("bn_s", 1.0, (c,)); bb = self.const("bn_b", 0.0, (c,))
        m = self.const("bn_m", 0.0, (c,)); v = self.const("bn_v", 1.0, (c,))
        return self.op("BatchNormalization", [x, sc, bb, m, v], self.shape[x], "bn", epsilon=1e-5)

    def un(self, typ, x, **a):
        return self.op(typ, [x], self.shape[x], typ.lower(), **a)

    def add(self, a, b):
        return self.op("Add", [a, b], self.shape[a], "add")

    def mul(self, a, b, shape=None):
        return self.op("Mul", [a, b], shape or self.shape[a], "mul")

    def sum(self, xs):
        if len(xs) == 1:
            return xs[0]
        return self.op("Sum", xs, self.shape[xs[0]], "sum")

    def add_chain(self, xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = self.add(acc, x)
        return acc

    def avgpool(self, x, k=3, stride=1, pad=1, include_pad=0):
        n, c, h, w = self.shape[x]
        ho = (h + 2 * pad - k) // stride + 1
        wo = (w + 2 * pad - k) // stride + 1
        return self.op("AveragePool", [x], (n, c, ho, wo), "avgpool", kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, count_include_pad=include_pad)

    def maxpool(self, x, k=3, stride=1, pad=1):
        n, c, h, w = self.shape[x]
        ho = (h + 2 * pad - k) // stride + 1
        wo = (w + 2 * pad - k) // stride + 1
        return self.op("MaxPool", [x], (n, c, ho, wo), "maxpool", kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4)

    def gap(self, x):
        n, c, h, w = self.shape[x]
        return self.op("GlobalAveragePool", [x], (n, c, 1, 1), "gap")

    def concat(self, xs):
        n, _, h, w = self.shape[xs[0]]
        c = sum(self.C(x) for x in xs)
        return self.op("Concat", xs, (n, c, h, w), "concat", axis=1)

    def head(self, x, classes):
        g = self.gap(x)
        n, c = self.shape[g][:2]
        f = self.op("Flatten", [g], (n, c), "flatten", axis=1)
        return self.op("Gemm", [f, self.w("fc_w", [classes, c]), self.w("fc_b", [classes])], (n, classes), "fc",
                       transB=1)

    def model(self, inputs, outputs, graph_name="main_graph", opset=17):
        g = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info(i, TensorProto.FLOAT, list(self.shape[i])) for i in inputs],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(self.shape[o])) for o in outputs],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="probe-nas")
        m.ir_version = 8
        return m

    def input(self, name, shape):
        self.shape[name] = tuple(shape)
        return name


def rename(model, tag):
    """Rename every tensor, node and the graph (a re-export by another tool)."""
    m = onnx.ModelProto(); m.CopyFrom(model)
    g = m.graph
    mapping = {}
    def nm(x):
        if x == "":
            return x
        if x not in mapping:
            mapping[x] = f"{tag}/t{len(mapping)}"
        return mapping[x]
    for v in list(g.input) + list(g.output) + list(g.value_info):
        v.name = nm(v.name)
    for t in g.initializer:
        t.name = nm(t.name)
    for i, node in enumerate(g.node):
        for k in range(len(node.input)):
            node.input[k] = nm(node.input[k])
        for k in range(len(node.output)):
            node.output[k] = nm(node.output[k])
        node.name = f"{tag}::node{i}"
    g.name = f"renamed_{tag}"
    return m


def write_renamed_duplicates(out_dir, index, picks):
    """Adds a renamed copy of each picked model (same network, other names)
    to out_dir and to index, and writes index.json."""
    for i in picks:
        src = index[i]
        m = onnx.load(os.path.join(out_dir, src["file"]), load_external_data=False)
        fn = "dup_" + src["file"]
        onnx.save(rename(m, f"re{i}"), os.path.join(out_dir, fn))
        index.append({"file": fn, "dup_of": src["file"]})
    json.dump(index, open(os.path.join(out_dir, "index.json"), "w"))
    print(len(index), "models")
