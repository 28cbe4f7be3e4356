"""An independent reader and checker of a .tflite file's offline arena plan.

Reads the file with python3-flatbuffers' raw Table access (not ordo's code),
derives every tensor's live interval from the operators' file order, and
checks TFLite Micro's "OfflineMemoryAllocation" metadata against it.
"""

import struct

from flatbuffers import table as fb_table
from flatbuffers import number_types as N

ELEMENT_BITS = {0: 32, 1: 16, 2: 32, 3: 8, 4: 64, 6: 8, 7: 16, 9: 8, 10: 64, 12: 64,
                15: 32, 16: 16, 17: 4, 18: 16, 19: 2, 20: 4}


class Reader:
    def __init__(self, data):
        self.data = bytearray(data)

    def root(self):
        return fb_table.Table(self.data, struct.unpack_from("<I", self.data, 0)[0])

    def field(self, t, slot):
        return t.Offset(4 + 2 * slot)

    def scalar(self, t, slot, flags, default=0):
        o = self.field(t, slot)
        return t.Get(flags, o + t.Pos) if o else default

    def tables(self, t, slot):
        o = self.field(t, slot)
        if not o:
            return []
        start, n = t.Vector(o), t.VectorLen(o)
        return [fb_table.Table(self.data, t.Indirect(start + 4 * i)) for i in range(n)]

    def ints(self, t, slot):
        o = self.field(t, slot)
        if not o:
            return []
        start, n = t.Vector(o), t.VectorLen(o)
        return list(struct.unpack_from(f"<{n}i", self.data, start))

    def string(self, t, slot):
        o = self.field(t, slot)
        return t.String(o + t.Pos).decode() if o else ""

    def bytes_(self, t, slot):
        o = self.field(t, slot)
        if not o:
            return 0, b""
        start, n = t.Vector(o), t.VectorLen(o)
        return start, bytes(self.data[start:start + n])


def read_model(data):
    r = Reader(data)
    model = r.root()
    subgraphs = r.tables(model, 2)
    buffers = r.tables(model, 4)
    main = subgraphs[0]
    tensors = []
    for t in r.tables(main, 0):
        buffer = r.scalar(t, 2, N.Uint32Flags)
        has_data = buffer > 0 and len(r.bytes_(buffers[buffer], 0)[1]) > 0
        bits = ELEMENT_BITS[r.scalar(t, 1, N.Int8Flags)]
        if not has_data:
            bits = max(bits, 8)  # TFLM's TfLiteTypeSizeOf: an INT4 activation takes a byte
        for d in r.ints(t, 0):
            bits *= d
        tensors.append({"name": r.string(t, 3), "bytes": (bits + 7) // 8, "weight": has_data,
                        "variable": bool(r.scalar(t, 5, N.BoolFlags))})
    operators = [(r.ints(op, 1), r.ints(op, 2)) for op in r.tables(main, 3)]
    plans = []
    for m in r.tables(model, 6):
        if r.string(m, 0) == "OfflineMemoryAllocation":
            start, raw = r.bytes_(buffers[r.scalar(m, 1, N.Uint32Flags)], 0)
            plans.append((start, list(struct.unpack_from(f"<{len(raw) // 4}i", raw))))
    total = sum(len(r.tables(s, 0)) for s in subgraphs)
    return {"tensors": tensors, "operators": operators, "inputs": r.ints(main, 1),
            "outputs": r.ints(main, 2), "plans": plans, "total_tensors": total}


def lifetimes(model):
    """{tensor: [first, last]} by the spec's rules on the file's operator order."""
    steps = len(model["operators"])
    life = {}
    for t in model["inputs"]:
        life[t] = [-1, -1]
    for k, (ins, outs) in enumerate(model["operators"]):
        for t in ins:
            if t >= 0 and not model["tensors"][t]["weight"]:
                life.setdefault(t, [-1, k])[1] = k
        for t in outs:
            life[t] = [k, k]
    for t in model["outputs"]:  # an output no operator writes lives throughout
        life.setdefault(t, [-1, -1])[1] = steps - 1
    return life


def check_plan(data, reported_arena_bytes, alignment=16):
    """Raises AssertionError naming the broken rule; returns the plan's arena."""
    model = read_model(data)
    assert len(model["plans"]) == 1, f"{len(model['plans'])} OfflineMemoryAllocation entries"
    start, plan = model["plans"][0]
    assert start % 4 == 0, "plan buffer not 4-byte aligned"
    assert plan[0] == 0 and plan[1] == 0, f"version/subgraph {plan[:2]}"
    assert plan[2] == model["total_tensors"] == len(plan) - 3, "tensor count"
    offsets = plan[3:]
    life = lifetimes(model)
    placed = []
    for t, info in enumerate(model["tensors"]):
        offset = offsets[t]
        if info["weight"] or info["variable"]:
            assert offset == -1, f"tensor {info['name']}: weight/variable planned at {offset}"
            continue
        if offset == -1:
            continue
        assert offset % alignment == 0, f"tensor {info['name']}: offset {offset} not aligned"
        if t not in life:
            # No operator uses it: TFLM allocates it anyway (lifetime
            # overlapping all), so ordo puts it at 0, where it is never touched.
            assert offset == 0, f"tensor {info['name']}: never used, planned at {offset}"
            continue
        placed.append((t, offset, info["bytes"], *life[t]))
    # An operator may write its output over an input whose last use it is.
    inplace = set()
    for k, (ins, outs) in enumerate(model["operators"]):
        for i in ins:
            for o in outs:
                inplace.add((i, o, k))
    for a in range(len(placed)):
        for b in range(a + 1, len(placed)):
            ta, oa, sa, fa, la = placed[a]
            tb, ob, sb, fb, lb = placed[b]
            if la < fb or lb < fa or oa + sa <= ob or ob + sb <= oa:
                continue
            shared = oa == ob and ((ta, tb, la) in inplace and la == fb or
                                   (tb, ta, lb) in inplace and lb == fa)
            assert shared, (f"tensors {model['tensors'][ta]['name']} and "
                            f"{model['tensors'][tb]['name']} are live together and overlap")
    arena = max((o + s for _, o, s, _, _ in placed), default=0)
    assert arena <= reported_arena_bytes, f"plan needs {arena} > reported {reported_arena_bytes}"
    return arena
