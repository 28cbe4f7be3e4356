"""Independent brute force of the optimal peak (memory-model.md) over all topological orders.

Exact DP over the executed-op sets (every topological order is a path through them; the
footprint of a step depends only on the set executed before and the op), and for <= 9 ops
also a literal enumeration of every order. Compared with ordo's CLI --json.
"""
import json, os, subprocess, sys
import numpy as np
import onnx
from onnx import shape_inference

ELEM = {1: 4, 10: 2, 16: 2, 3: 1, 2: 1, 9: 1, 6: 4, 7: 8, 11: 8}
UNARY = {"Relu", "Clip", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "LeakyRelu", "Abs", "Neg", "Exp", "Log",
         "Sqrt", "Elu", "Selu", "Softplus", "Erf", "Not", "Floor", "Ceil", "Reciprocal", "Identity", "Gelu", "Mish",
         "Swish", "BitwiseNot"}
BINARY = {"Add", "Mul", "Sub", "Div", "Pow", "Max", "Min", "And", "Or", "Xor", "Equal", "Less", "Greater", "PRelu",
          "BitwiseAnd", "BitwiseOr", "BitwiseXor"}
REINTERPRET = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}


class Problem:
    def __init__(self, path, int8=False, variadic_inplace=True, any_same_size=False):
        m = shape_inference.infer_shapes(onnx.load(path, load_external_data=False))
        g = m.graph
        weights = {t.name for t in g.initializer}
        info = {v.name: v for v in list(g.input) + list(g.output) + list(g.value_info)}
        nodes = list(g.node)
        # constant folding: ops whose inputs are all weights
        changed = True
        folded = set()
        while changed:
            changed = False
            for i, n in enumerate(nodes):
                if i not in folded and all(x in weights or x == "" for x in n.input):
                    folded.add(i); weights.update(n.output); changed = True
        self.nodes = [n for i, n in enumerate(nodes) if i not in folded]
        self.inputs = [v.name for v in g.input if v.name not in weights]
        self.outputs = {v.name for v in g.output}

        def size(t):
            tt = info[t].type.tensor_type
            n = int(np.prod([d.dim_value for d in tt.shape.dim])) if tt.shape.dim else 1
            return n * (1 if int8 else ELEM[tt.elem_type])
        self.size = {}
        self.producer = {}
        self.consumers = {}
        for t in self.inputs:
            self.size[t] = size(t); self.consumers[t] = set()
        for i, n in enumerate(self.nodes):
            for o in n.output:
                if o:
                    self.size[o] = size(o); self.producer[o] = i; self.consumers[o] = set()
        for i, n in enumerate(self.nodes):
            for x in n.input:
                if x in self.consumers:
                    self.consumers[x].add(i)
        self.n = len(self.nodes)
        self.preds = [0] * self.n
        for i, n in enumerate(self.nodes):
            for x in n.input:
                if x in self.producer:
                    self.preds[i] |= 1 << self.producer[x]
        self.act_inputs = [[x for x in n.input if x in self.size] for n in self.nodes]
        self.outs = [[o for o in n.output if o] for n in self.nodes]
        self.inplace_src = []
        for i, n in enumerate(self.nodes):
            src = None
            ok_type = n.op_type in UNARY or n.op_type in BINARY or n.op_type in REINTERPRET or \
                (variadic_inplace and n.op_type in ("Sum", "Mean", "Max", "Min"))
            if ok_type and len(self.outs[i]) == 1 and self.act_inputs[i]:
                cands = self.act_inputs[i]
                if any_same_size:
                    cands = [x for x in cands if self.size[x] == self.size[self.outs[i][0]]]
                    cands = cands[:1]
                else:
                    cands = cands[:1]
                if cands and self.size[cands[0]] == self.size[self.outs[i][0]]:
                    src = cands[0]
            self.inplace_src.append(src)
        self.initial = sum(self.size[t] for t in self.inputs)

    def step(self, done, v):
        """Footprint of executing op v after the set `done`."""
        total = 0
        cur = done | (1 << v)
        for t, s in self.size.items():
            p = self.producer.get(t)
            if p is not None and not (cur >> p) & 1:
                continue  # not yet produced
            if p == v:
                total += s; continue
            if t in self.outputs:
                total += s; continue
            cons = self.consumers[t]
            if not cons:
                continue  # produced earlier, unread: freed at its producer's step
            if all((done >> c) & 1 for c in cons):
                continue  # freed before this step
            total += s
        src = self.inplace_src[v]
        if src is not None and src not in self.outputs and all((cur >> c) & 1 for c in self.consumers[src]):
            total -= self.size[src]
        return total

    def optimum(self):
        full = (1 << self.n) - 1
        best = {0: self.initial}
        frontier = [0]
        for _ in range(self.n):
            nxt = {}
            for S in frontier:
                b = best[S]
                for v in range(self.n):
                    if (S >> v) & 1 or (self.preds[v] & ~S):
                        continue
                    T = S | (1 << v)
                    val = max(b, self.step(S, v))
                    if val < nxt.get(T, 1 << 62):
                        nxt[T] = val
            best.update(nxt)
            frontier = list(nxt)
        return best[full]

    def peak_of(self, order):
        S, peak = 0, self.initial
        for v in order:
            peak = max(peak, self.step(S, v)); S |= 1 << v
        return peak

    def enumerate_all(self):
        best = None
        def rec(S, order, peak):
            nonlocal best
            if best is not None and peak >= best:
                return
            if len(order) == self.n:
                best = peak; return
            for v in range(self.n):
                if not (S >> v) & 1 and not (self.preds[v] & ~S):
                    rec(S | (1 << v), order + [v], max(peak, self.step(S, v)))
        rec(0, [], self.initial)
        return best


ORDO = os.environ.get("ORDO", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../build/client/ordo"))


def ordo(path, extra):
    p = subprocess.run([ORDO, "compile", path, "--json"] + extra, capture_output=True,
                       text=True)
    if p.returncode:
        return {"rc": p.returncode, "err": p.stderr.strip()}
    j = json.loads(p.stdout)
    return {"rc": 0, "peak": int(j["peak_bytes"]), "status": j["status"], "ops": j["ops"],
            "lb": int(j["lower_bound_bytes"]), "schedule": j["schedule"],
            "model_order": {b["name"]: int(b["peak_bytes"]) for b in j["baselines"]}["model_order"]}


def main(d):
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".onnx"))
    stats = {"n": 0, "match": 0, "mismatch": [], "fail": [], "enum_checked": 0}
    for f in files:
        for int8 in (False, True):
            extra = ["--activation-dtype", "int8"] if int8 else []
            r = ordo(f, extra)
            stats["n"] += 1
            if r["rc"]:
                stats["fail"].append((f, int8, r["err"])); continue
            P = Problem(f, int8=int8)
            opt = P.optimum()
            names = [n.name for n in P.nodes]
            mo = P.peak_of(list(range(P.n)))
            sched = [names.index(s) for s in r["schedule"]]
            mine_of_ordo = P.peak_of(sched)
            if P.n <= 9 and not int8:
                e = P.enumerate_all(); stats["enum_checked"] += 1
                assert e == opt, (f, e, opt)
            rec = dict(file=f, int8=int8, ops=(P.n, r["ops"]), opt=opt, ordo=r["peak"], status=r["status"],
                       model_order=(mo, r["model_order"]), ordo_sched_by_me=mine_of_ordo, lb=r["lb"])
            ok = (P.n == r["ops"] and opt == r["peak"] and mo == r["model_order"] and mine_of_ordo == r["peak"]
                  and (r["status"] != "SCHEDULE_STATUS_OPTIMAL" or True))
            if ok:
                stats["match"] += 1
            else:
                # which in-place reading explains it?
                alt = {}
                for vi in (False, True):
                    for anys in (False, True):
                        Q = Problem(f, int8=int8, variadic_inplace=vi, any_same_size=anys)
                        alt[f"variadic={vi},any_same={anys}"] = (Q.optimum(), Q.peak_of(list(range(Q.n))))
                rec["alt"] = alt
                stats["mismatch"].append(rec)
    json.dump(stats, open(os.path.join(d, "brute_results.json"), "w"), indent=1)
    print("runs", stats["n"], "match", stats["match"], "mismatch", len(stats["mismatch"]), "fail",
          len(stats["fail"]), "enumerated", stats["enum_checked"])
    for m in stats["mismatch"][:20]:
        print(json.dumps(m))
    for m in stats["fail"][:20]:
        print(m)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "models/small")
