"""Minimal numpy ONNX executor (just the ops in these exports) -> actual shapes/bytes of every tensor.
An independent check of ordo's sizes (no onnxruntime on this machine)."""
import numpy as np, onnx, torch
from onnx import numpy_helper, helper
import torch.nn.functional as F

def attrs(n): return {a.name: helper.get_attribute_value(a) for a in n.attribute}

def run(model, feeds):
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update(feeds)
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    for n in model.graph.node:
        a = attrs(n); x = [env[i] if i else None for i in n.input]; t = n.op_type
        if t == "Constant": y = numpy_helper.to_array(a["value"])
        elif t == "Identity": y = x[0]
        elif t == "Shape": y = np.array(x[0].shape, dtype=np.int64)
        elif t == "Gather": y = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif t == "Unsqueeze":
            axes = list(x[1]) if len(x) > 1 else a["axes"]; y = x[0]
            for ax in sorted(int(v) % (y.ndim + len(axes)) for v in axes): y = np.expand_dims(y, ax)
        elif t == "Squeeze":
            axes = (list(x[1]) if len(x) > 1 and x[1] is not None else a.get("axes"))
            y = np.squeeze(x[0], axis=tuple(int(v) for v in axes) if axes is not None else None)
        elif t == "Concat": y = np.concatenate(x, axis=a["axis"])
        elif t == "Reshape":
            sh = [int(v) for v in x[1]]; sh = [x[0].shape[i] if v == 0 else v for i, v in enumerate(sh)]; y = x[0].reshape(sh)
        elif t == "Transpose": y = np.transpose(x[0], a.get("perm"))
        elif t == "Cast": y = x[0].astype(helper.tensor_dtype_to_np_dtype(a["to"]) if hasattr(helper, "tensor_dtype_to_np_dtype") else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]])
        elif t in ("Add", "Sub", "Mul", "Div", "Pow", "Equal", "And", "Or", "Less", "Greater"):
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Pow": np.power, "Equal": np.equal, "And": np.logical_and, "Or": np.logical_or, "Less": np.less, "Greater": np.greater}
            if t == "Div": y = (x[0] // x[1]) if np.issubdtype(x[0].dtype, np.integer) else x[0] / x[1]
            else: y = f[t](x[0], x[1])
            if t not in ("Equal", "And", "Or", "Less", "Greater"): y = y.astype(x[0].dtype)
        elif t == "Where": y = np.where(x[0], x[1], x[2])
        elif t == "Slice":
            starts, ends = x[1], x[2]; axes = x[3] if len(x) > 3 and x[3] is not None else range(len(starts))
            steps = x[4] if len(x) > 4 and x[4] is not None else [1] * len(starts)
            sl = [slice(None)] * x[0].ndim
            for s, e, ax, st in zip(starts, ends, axes, steps):
                sl[int(ax)] = slice(int(max(min(s, 2**62), -2**62)), int(max(min(e, 2**62), -2**62)), int(st))
            y = x[0][tuple(sl)]
        elif t == "Split":
            ax = a.get("axis", 0); sp = x[1] if len(x) > 1 and x[1] is not None else a.get("split")
            if sp is None: sp = [x[0].shape[ax] // len(n.output)] * len(n.output)
            ys = np.split(x[0], np.cumsum(sp)[:-1], axis=ax)
            for o, v in zip(n.output, ys): env[o] = v
            continue
        elif t == "ConstantOfShape":
            v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32); y = np.full([int(s) for s in x[0]], v[0], dtype=v.dtype)
        elif t == "Expand": y = x[0] * np.ones([int(s) for s in x[1]], dtype=x[0].dtype)
        elif t == "Range": y = np.arange(x[0], x[1], x[2]).astype(x[0].dtype)
        elif t == "Trilu":
            k = int(x[1]) if len(x) > 1 and x[1] is not None else 0
            y = np.triu(x[0], k) if a.get("upper", 1) else np.tril(x[0], k)
        elif t == "MatMul": y = np.matmul(x[0], x[1])
        elif t == "Gemm":
            A = x[0].T if a.get("transA", 0) else x[0]; B = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * A @ B + (a.get("beta", 1.0) * x[2] if len(x) > 2 else 0); y = y.astype(np.float32)
        elif t == "Softmax": e = np.exp(x[0] - x[0].max(axis=a.get("axis", -1), keepdims=True)); y = e / e.sum(axis=a.get("axis", -1), keepdims=True)
        elif t == "LogSoftmax": y = torch.log_softmax(torch.from_numpy(x[0]), a.get("axis", -1)).numpy()
        elif t == "Relu": y = np.maximum(x[0], 0)
        elif t == "LeakyRelu": y = np.where(x[0] > 0, x[0], x[0] * a.get("alpha", 0.01)).astype(x[0].dtype)
        elif t in ("Tanh", "Sin", "Cos", "Exp", "Log"): y = getattr(np, t.lower())(x[0])
        elif t == "Pad":
            p = [int(v) for v in x[1]]; r = x[0].ndim
            y = np.pad(x[0], list(zip(p[:r], p[r:])), mode=a.get("mode", b"constant").decode() if isinstance(a.get("mode", b""), bytes) else "constant")
        elif t == "Resize":
            sc = x[2] if len(x) > 2 and x[2] is not None and x[2].size else None
            sz = [int(v) for v in x[3]] if len(x) > 3 and x[3] is not None else [int(np.floor(d * f)) for d, f in zip(x[0].shape, sc)]
            y = F.interpolate(torch.from_numpy(x[0].copy()), size=sz[2:], mode="nearest").numpy()
        elif t == "AveragePool":
            assert not any(a.get("pads", [0, 0]))
            y = F.avg_pool1d(torch.from_numpy(x[0].copy()), a["kernel_shape"][0], a.get("strides", a["kernel_shape"])[0], ceil_mode=bool(a.get("ceil_mode", 0))).numpy()
        elif t == "ConvTranspose":
            p = a.get("pads", [0, 0]); assert p[0] == p[1]
            y = F.conv_transpose1d(torch.from_numpy(x[0].copy()), torch.from_numpy(x[1].copy()), torch.from_numpy(x[2].copy()) if len(x) > 2 else None,
                                   stride=a.get("strides", [1])[0], padding=p[0], output_padding=a.get("output_padding", [0])[0], dilation=a.get("dilations", [1])[0], groups=a.get("group", 1)).numpy()
        elif t == "Sigmoid": y = 1 / (1 + np.exp(-x[0]))
        elif t == "Erf": y = torch.erf(torch.from_numpy(x[0])).numpy()
        elif t == "Sqrt": y = np.sqrt(x[0])
        elif t == "Clip": y = np.clip(x[0], x[1] if len(x) > 1 and x[1] is not None else None, x[2] if len(x) > 2 and x[2] is not None else None)
        elif t in ("ReduceMean", "ReduceSum"):
            axes = a.get("axes") if (t == "ReduceMean" or opset < 13) else (list(x[1]) if len(x) > 1 and x[1] is not None else None)
            f = np.mean if t == "ReduceMean" else np.sum
            y = f(x[0], axis=tuple(int(v) for v in axes) if axes is not None else None, keepdims=bool(a.get("keepdims", 1))).astype(x[0].dtype)
        elif t == "LayerNormalization":
            ax = a.get("axis", -1); m = x[0].mean(axis=ax, keepdims=True); v = x[0].var(axis=ax, keepdims=True)
            y = (x[0] - m) / np.sqrt(v + a.get("epsilon", 1e-5)) * x[1] + (x[2] if len(x) > 2 else 0)
            env[n.output[0]] = y.astype(np.float32); continue
        elif t == "Conv":
            X, W = torch.from_numpy(x[0].copy()), torch.from_numpy(x[1].copy()); b = torch.from_numpy(x[2].copy()) if len(x) > 2 else None
            p = a.get("pads", [0, 0]); assert p[0] == p[1]
            y = F.conv1d(X, W, b, stride=a.get("strides", [1])[0], padding=p[0], dilation=a.get("dilations", [1])[0], groups=a.get("group", 1)).numpy()
        elif t == "MaxPool":
            y = F.max_pool1d(torch.from_numpy(x[0].copy()), a["kernel_shape"][0], a.get("strides", a["kernel_shape"])[0], ceil_mode=bool(a.get("ceil_mode", 0))).numpy()
        elif t == "GlobalAveragePool": y = x[0].mean(axis=tuple(range(2, x[0].ndim)), keepdims=True)
        elif t in ("LSTM", "GRU"):
            h = a["hidden_size"]; d = 2 if a.get("direction", b"forward") in (b"bidirectional", "bidirectional") else 1
            T_, B_ = x[0].shape[0], x[0].shape[1]
            if a.get("layout", 0): B_, T_ = T_, B_
            outs = [np.zeros((T_, d, B_, h), np.float32), np.zeros((d, B_, h), np.float32), np.zeros((d, B_, h), np.float32)]
            for o, v in zip(n.output, outs):
                if o: env[o] = v
            continue
        else: raise NotImplementedError(t)
        env[n.output[0]] = np.asarray(y)
    return env

def sizes(model, feeds):
    env = run(model, feeds)
    return {k: v.nbytes for k, v in env.items()}, env
