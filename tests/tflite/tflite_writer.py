"""A small writer of real .tflite files (python3-flatbuffers' Builder).

Field ids follow TensorFlow Lite's schema.fbs (schema version 3); only the
tables and options the test models use are written. Every file carries both
OperatorCode.deprecated_builtin_code (id 0, what pre-2.4 readers such as
Debian's Arm NN read) and builtin_code (id 3).
"""

import flatbuffers
import numpy as np

# TensorType
FLOAT32, INT32, INT8 = 0, 2, 9
# BuiltinOperator
ADD, AVERAGE_POOL_2D, CONCATENATION, CONV_2D, DEPTHWISE_CONV_2D = 0, 1, 2, 3, 4
FULLY_CONNECTED, MAX_POOL_2D, MUL, RELU, RELU6, RESHAPE, SOFTMAX = 9, 17, 18, 19, 21, 22, 25
PAD, MEAN, STRIDED_SLICE, SPLIT, RESIZE_NEAREST_NEIGHBOR = 34, 40, 45, 49, 97
# BuiltinOptions (union type) and the fields each options table has, as
# (slot, kind) in schema order; kinds: b = byte/bool, i = int32, f = float32,
# v = [int] vector.
OPTIONS = {
    CONV_2D: (1, [("padding", 0, "b"), ("stride_w", 1, "i"), ("stride_h", 2, "i"),
                  ("fused_activation_function", 3, "b")]),
    DEPTHWISE_CONV_2D: (2, [("padding", 0, "b"), ("stride_w", 1, "i"), ("stride_h", 2, "i"),
                            ("depth_multiplier", 3, "i"), ("fused_activation_function", 4, "b")]),
    AVERAGE_POOL_2D: (5, [("padding", 0, "b"), ("stride_w", 1, "i"), ("stride_h", 2, "i"),
                          ("filter_width", 3, "i"), ("filter_height", 4, "i"),
                          ("fused_activation_function", 5, "b")]),
    FULLY_CONNECTED: (8, [("fused_activation_function", 0, "b")]),
    SOFTMAX: (9, [("beta", 0, "f")]),
    CONCATENATION: (10, [("axis", 0, "i"), ("fused_activation_function", 1, "b")]),
    ADD: (11, [("fused_activation_function", 0, "b")]),
    RESHAPE: (17, [("new_shape", 0, "v")]),
    MUL: (21, [("fused_activation_function", 0, "b")]),
    PAD: (22, []),
    MEAN: (27, [("keep_dims", 0, "b")]),
    STRIDED_SLICE: (32, [("begin_mask", 0, "i"), ("end_mask", 1, "i"),
                         ("shrink_axis_mask", 4, "i")]),
    SPLIT: (35, [("num_splits", 0, "i")]),
    RESIZE_NEAREST_NEIGHBOR: (74, [("align_corners", 0, "b")]),
}
OPTIONS[MAX_POOL_2D] = (5, OPTIONS[AVERAGE_POOL_2D][1])
SAME, VALID = 0, 1
NONE, ACT_RELU, ACT_RELU6 = 0, 1, 3


class Tensor:
    def __init__(self, index, shape, dtype, quant):
        self.index, self.shape, self.dtype, self.quant = index, list(shape), dtype, quant


class ModelWriter:
    """Tensors and operators in file order; write() returns the bytes."""

    def __init__(self, description):
        self.description = description
        self.tensors = []   # (name, shape, type, buffer index, quant, data)
        self.buffers = [b""]
        self.operators = []  # (code, inputs, outputs, options dict)
        self.codes = []

    def tensor(self, name, shape, dtype=FLOAT32, data=None, quant=None):
        buffer = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(data).tobytes())
            buffer = len(self.buffers) - 1
        self.tensors.append((name, list(shape), dtype, buffer, quant))
        return Tensor(len(self.tensors) - 1, shape, dtype, quant)

    def op(self, code, inputs, outputs, **options):
        if code not in self.codes:
            self.codes.append(code)
        self.operators.append((code, [t.index if t is not None else -1 for t in inputs],
                               [t.index for t in outputs], options))

    def write(self, inputs, outputs):
        b = flatbuffers.Builder(1 << 16)
        buffers = [self._buffer(b, data) for data in self.buffers]
        tensors = [self._tensor(b, *t) for t in self.tensors]
        operators = [self._operator(b, *o) for o in self.operators]
        codes = [self._code(b, c) for c in self.codes]
        fields = [self._offsets(b, tensors), self._ints(b, [t.index for t in inputs]),
                  self._ints(b, [t.index for t in outputs]), self._offsets(b, operators),
                  b.CreateString("main")]
        b.StartObject(5)  # SubGraph: tensors, inputs, outputs, operators, name
        for slot, value in enumerate(fields):
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        subgraph = b.EndObject()
        model_fields = {1: self._offsets(b, codes), 2: self._offsets(b, [subgraph]),
                        3: b.CreateString(self.description), 4: self._offsets(b, buffers)}
        b.StartObject(8)  # Model
        b.PrependUint32Slot(0, 3, 0)
        for slot, value in model_fields.items():
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        b.Finish(b.EndObject(), file_identifier=b"TFL3")
        return bytes(b.Output())

    # Tables -------------------------------------------------------------
    @staticmethod
    def _ints(b, values, kind="i"):
        b.StartVector(4, len(values), 4)
        for v in reversed(values):
            if kind == "f":
                b.PrependFloat32(float(v))
            else:
                b.PrependInt32(int(v))
        return b.EndVector()

    @staticmethod
    def _longs(b, values):
        b.StartVector(8, len(values), 8)
        for v in reversed(values):
            b.PrependInt64(int(v))
        return b.EndVector()

    @staticmethod
    def _offsets(b, offsets):
        b.StartVector(4, len(offsets), 4)
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    @staticmethod
    def _buffer(b, data):
        if not data:
            b.StartObject(3)
            return b.EndObject()
        b.StartVector(1, len(data), 16)  # Buffer.data is force_align 16
        b.head = b.head - len(data)
        b.Bytes[b.head:b.head + len(data)] = data
        vector = b.EndVector()
        b.StartObject(3)
        b.PrependUOffsetTRelativeSlot(0, vector, 0)
        return b.EndObject()

    def _tensor(self, b, name, shape, dtype, buffer, quant):
        q = None
        if quant is not None:
            scale, zero = quant
            scales = self._ints(b, np.atleast_1d(scale), "f")
            zeros = self._longs(b, np.atleast_1d(zero))
            b.StartObject(7)  # QuantizationParameters: scale 2, zero_point 3
            b.PrependUOffsetTRelativeSlot(2, scales, 0)
            b.PrependUOffsetTRelativeSlot(3, zeros, 0)
            q = b.EndObject()
        name_offset = b.CreateString(name)
        shape_offset = self._ints(b, shape)
        b.StartObject(8)
        b.PrependUOffsetTRelativeSlot(0, shape_offset, 0)
        b.PrependInt8Slot(1, dtype, 0)
        b.PrependUint32Slot(2, buffer, 0)
        b.PrependUOffsetTRelativeSlot(3, name_offset, 0)
        if q is not None:
            b.PrependUOffsetTRelativeSlot(4, q, 0)
        return b.EndObject()

    def _options(self, b, code, options):
        union, fields = OPTIONS[code]
        vectors = {name: self._ints(b, options[name]) for name, _, kind in fields
                   if kind == "v" and name in options}
        b.StartObject(max([slot for _, slot, _ in fields], default=-1) + 1)
        for name, slot, kind in fields:
            if name not in options:
                continue
            value = options[name]
            if kind == "b":
                b.PrependInt8Slot(slot, int(value), 0)
            elif kind == "i":
                b.PrependInt32Slot(slot, int(value), 0)
            elif kind == "f":
                b.PrependFloat32Slot(slot, float(value), 0.0)
            else:
                b.PrependUOffsetTRelativeSlot(slot, vectors[name], 0)
        return union, b.EndObject()

    def _operator(self, b, code, inputs, outputs, options):
        union, table = self._options(b, code, options) if code in OPTIONS else (0, None)
        ins, outs = self._ints(b, inputs), self._ints(b, outputs)
        b.StartObject(5)
        b.PrependUint32Slot(0, self.codes.index(code), 0)
        b.PrependUOffsetTRelativeSlot(1, ins, 0)
        b.PrependUOffsetTRelativeSlot(2, outs, 0)
        if table is not None:
            b.PrependUint8Slot(3, union, 0)
            b.PrependUOffsetTRelativeSlot(4, table, 0)
        return b.EndObject()

    @staticmethod
    def _code(b, code):
        b.StartObject(4)
        b.PrependInt8Slot(0, min(code, 127), 0)
        b.PrependInt32Slot(2, 1, 1)
        b.PrependInt32Slot(3, code, 0)
        return b.EndObject()
