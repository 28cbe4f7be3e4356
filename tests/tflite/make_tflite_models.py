#!/usr/bin/python3
"""Writes the TFLite test models: a CNN and DARTS/NASNet-style cells, each
in float32 and int8 (per-tensor quantized), with random real weights.

    /usr/bin/python3 tests/tflite/make_tflite_models.py OUT_DIR [NAME...]

The cells are written breadth first (every branch's first op, then the
second ones, then the sums), as a converter that follows the framework's
definition order does; finishing one branch before starting the next needs
less memory, which is what ordo finds.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tflite_writer as tw  # noqa: E402

ACT_SCALE = 0.05      # every int8 activation: scale 0.05, zero point 0
WEIGHT_SCALE = 0.01   # every int8 weight
SOFTMAX_QUANT = (1.0 / 256, -128)


class Net:
    """Builds one model in float32 or int8 with the same structure."""

    def __init__(self, name, quantized, seed):
        self.m = tw.ModelWriter(name)
        self.quantized = quantized
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def _name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def act(self, stem, shape, quant=None):
        if self.quantized:
            return self.m.tensor(self._name(stem), shape, tw.INT8,
                                 quant=quant or (ACT_SCALE, 0))
        return self.m.tensor(self._name(stem), shape, tw.FLOAT32)

    def weight(self, stem, shape):
        if self.quantized:
            data = self.rng.integers(-127, 128, size=shape, dtype=np.int8)
            return self.m.tensor(self._name(stem), shape, tw.INT8, data,
                                 quant=(WEIGHT_SCALE, 0))
        data = (self.rng.standard_normal(shape) * 0.2).astype(np.float32)
        return self.m.tensor(self._name(stem), shape, tw.FLOAT32, data)

    def bias(self, n):
        if self.quantized:
            data = self.rng.integers(-200, 200, size=[n], dtype=np.int32)
            return self.m.tensor(self._name("bias"), [n], tw.INT32, data,
                                 quant=(ACT_SCALE * WEIGHT_SCALE, 0))
        data = (self.rng.standard_normal([n]) * 0.1).astype(np.float32)
        return self.m.tensor(self._name("bias"), [n], tw.FLOAT32, data)

    def ints(self, stem, values):
        data = np.array(values, dtype=np.int32)
        return self.m.tensor(self._name(stem), list(data.shape), tw.INT32, data)

    # Operators ----------------------------------------------------------
    def conv(self, x, channels, k=1, stride=1, act=tw.NONE):
        n, h, w, c = x.shape
        out = self.act("conv", [n, h // stride, w // stride, channels])
        self.m.op(tw.CONV_2D, [x, self.weight("filter", [channels, k, k, c]), self.bias(channels)],
                  [out], padding=tw.SAME, stride_w=stride, stride_h=stride,
                  fused_activation_function=act)
        return out

    def depthwise(self, x, k=3, act=tw.NONE):
        c = x.shape[3]
        out = self.act("dwconv", x.shape)
        self.m.op(tw.DEPTHWISE_CONV_2D, [x, self.weight("dwfilter", [1, k, k, c]), self.bias(c)],
                  [out], padding=tw.SAME, stride_w=1, stride_h=1, depth_multiplier=1,
                  fused_activation_function=act)
        return out

    def pool(self, code, x, k, stride, padding=tw.SAME):
        n, h, w, c = x.shape
        if padding == tw.SAME:
            oh, ow = -(-h // stride), -(-w // stride)
        else:
            oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
        out = self.act("pool", [n, oh, ow, c])
        self.m.op(code, [x], [out], padding=padding, stride_w=stride, stride_h=stride,
                  filter_width=k, filter_height=k, fused_activation_function=tw.NONE)
        return out

    def unary(self, code, x):
        out = self.act("act", x.shape)
        self.m.op(code, [x], [out])
        return out

    def binary(self, code, a, b):
        out = self.act("sum" if code == tw.ADD else "prod", a.shape)
        self.m.op(code, [a, b], [out], fused_activation_function=tw.NONE)
        return out

    def concat(self, xs):
        shape = list(xs[0].shape)
        shape[3] = sum(x.shape[3] for x in xs)
        out = self.act("concat", shape)
        self.m.op(tw.CONCATENATION, xs, [out], axis=3, fused_activation_function=tw.NONE)
        return out

    def pad(self, x, p):
        n, h, w, c = x.shape
        out = self.act("pad", [n, h + 2 * p, w + 2 * p, c])
        self.m.op(tw.PAD, [x, self.ints("paddings", [[0, 0], [p, p], [p, p], [0, 0]])], [out])
        return out

    def reshape(self, x, shape):
        out = self.act("reshape", shape)
        self.m.op(tw.RESHAPE, [x, self.ints("shape", shape)], [out], new_shape=shape)
        return out

    def fully_connected(self, x, units):
        out = self.act("fc", [x.shape[0], units])
        self.m.op(tw.FULLY_CONNECTED, [x, self.weight("fcw", [units, x.shape[1]]), self.bias(units)],
                  [out], fused_activation_function=tw.NONE)
        return out

    def softmax(self, x):
        out = self.act("softmax", x.shape, quant=SOFTMAX_QUANT)
        self.m.op(tw.SOFTMAX, [x], [out], beta=1.0)
        return out

    def mean(self, x):
        out = self.act("mean", [x.shape[0], x.shape[3]])
        self.m.op(tw.MEAN, [x, self.ints("axes", [1, 2])], [out], keep_dims=False)
        return out

    def split(self, x, parts):
        shape = list(x.shape)
        shape[3] //= parts
        outs = [self.act("split", shape) for _ in range(parts)]
        self.m.op(tw.SPLIT, [self.ints("axis", 3), x], outs, num_splits=parts)
        return outs

    def strided_slice(self, x, end):
        out = self.act("slice", end)
        self.m.op(tw.STRIDED_SLICE, [x, self.ints("begin", [0, 0, 0, 0]), self.ints("end", end),
                                     self.ints("strides", [1, 1, 1, 1])], [out],
                  begin_mask=0, end_mask=0, shrink_axis_mask=0)
        return out

    def resize_nearest(self, x, size):
        out = self.act("resize", [x.shape[0], size, size, x.shape[3]])
        self.m.op(tw.RESIZE_NEAREST_NEIGHBOR, [x, self.ints("size", [size, size])], [out],
                  align_corners=False)
        return out


def cnn(quantized):
    net = Net("cnn", quantized, seed=1)
    x = net.act("input", [1, 16, 16, 3])
    y = net.conv(x, 8, k=3, act=tw.ACT_RELU)
    y = net.unary(tw.RELU6, net.depthwise(y))
    y = net.pool(tw.MAX_POOL_2D, y, 2, 2, tw.VALID)
    y = net.unary(tw.RELU, net.conv(y, 16))
    y = net.pool(tw.AVERAGE_POOL_2D, net.pad(y, 1), 2, 2, tw.VALID)
    y = net.softmax(net.fully_connected(net.reshape(y, [1, 5 * 5 * 16]), 10))
    return net.m.write([x], [y])


def nas_cell(quantized, nodes, channels, seed):
    """A DARTS normal cell: two stem convs, `nodes` nodes that each add two
    branch ops (separable conv = depthwise + pointwise, pooling, conv),
    the concatenation of the nodes, then a head through SPLIT, STRIDED_SLICE,
    RESIZE_NEAREST_NEIGHBOR, MUL, MEAN, FULLY_CONNECTED and SOFTMAX."""
    net = Net(f"nas_cell_{nodes}", quantized, seed)
    x = net.act("input", [1, 16, 16, 8])
    s0 = net.conv(x, channels, act=tw.ACT_RELU)
    s1 = net.conv(x, channels, act=tw.ACT_RELU)
    kinds = ["sep", "max", "avg", "sep", "conv", "max", "sep", "avg", "conv", "sep"]
    firsts = []
    for i in range(2 * nodes):  # breadth first: every branch's first op
        src = s0 if i % 2 == 0 else s1
        kind = kinds[i % len(kinds)]
        if kind == "sep":
            firsts.append(("sep", net.depthwise(src, act=tw.ACT_RELU)))
        elif kind == "max":
            firsts.append(("pool", net.pool(tw.MAX_POOL_2D, src, 3, 1)))
        elif kind == "avg":
            firsts.append(("pool", net.pool(tw.AVERAGE_POOL_2D, src, 3, 1)))
        else:
            firsts.append(("conv", net.conv(src, channels, k=3)))
    seconds = [net.conv(t, channels) if kind == "sep" else t for kind, t in firsts]
    node_outs = [net.binary(tw.ADD if i % 3 else tw.MUL, seconds[2 * i], seconds[2 * i + 1])
                 for i in range(nodes)]
    cat = net.concat(node_outs)
    halves = net.split(cat, 2)
    half = halves[0].shape
    small = net.strided_slice(halves[0], [1, 8, 8, half[3]])
    up = net.resize_nearest(small, 16)
    mixed = net.binary(tw.MUL, up, halves[1])
    y = net.softmax(net.fully_connected(net.mean(mixed), 10))
    return net.m.write([x], [y])


MODELS = {
    "cnn": cnn,
    "nas_cell_3": lambda q: nas_cell(q, 3, 16, seed=2),
    "nas_cell_5": lambda q: nas_cell(q, 5, 24, seed=3),
}


def write_all(out_dir, names=None):
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, build in MODELS.items():
        if names and name not in names:
            continue
        for quantized in (False, True):
            path = os.path.join(out_dir, f"{name}_{'int8' if quantized else 'f32'}.tflite")
            with open(path, "wb") as f:
                f.write(build(quantized))
            paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in write_all(sys.argv[1], sys.argv[2:]):
        print(p)
