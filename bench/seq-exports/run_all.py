#!/usr/bin/python3
"""Compile every export in $MDIR with ordo at two sizes and check tensor sizes
independently: (a) ONNX shape inference on the dynamic model with the inputs made static,
(b) the static re-export at the same size (models/ref) by tensor name."""
import glob, json, os, subprocess, sys, copy
import onnx
from onnx import shape_inference, TensorProto
import numpy as np
import np_onnx
ORDO = os.environ.get("ORDO", "build/client/ordo")
M = os.environ.get("MDIR", "/tmp/seq-exports/models")
SIZES = [tuple(int(v) for v in x.split(",")) for x in os.environ["SIZES"].split(";")] if os.environ.get("SIZES") else [(1, 16, 8000), (4, 128, 16000)]

def dimvals(b, t, s):
    return {"seq": t, "tq": t, "tk": t + 4, "sequence": t, "samples": s, "frames": t, "tgt_len": t, "src_len": t + 7}

def run(cmd, timeout=120):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "TIMEOUT", "", ""

def esize(t):
    return np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t]).itemsize if t != TensorProto.BOOL else 1

def infer_sizes(model, fix=None):
    m = copy.deepcopy(model)
    if fix:
        for i in m.graph.input:
            for d in i.type.tensor_type.shape.dim:
                if d.dim_param:
                    v = fix["batch"] if d.dim_param == "batch" else fix[d.dim_param]
                    d.ClearField("dim_param"); d.dim_value = v
        # drop output dims (dynamic output names like frames_out) so inference decides
        for o in m.graph.output:
            for d in o.type.tensor_type.shape.dim:
                if d.dim_param: d.ClearField("dim_param")
    m = shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
    out = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"): out[vi.name] = None; continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        out[vi.name] = None if None in dims else int(np.prod(dims, dtype=np.int64)) * esize(tt.elem_type)
    return out

def align(n, a=64):
    return (n + a - 1) // a * a  # arena size_bytes are rounded up to alignment_bytes (64)

results = []
only = sys.argv[1:]
for f in sorted(glob.glob(M + "/*_dyn.onnx")):
    if "listaxes" in f: continue
    name = os.path.basename(f)[:-len("_dyn.onnx")]
    if only and not any(o in name for o in only): continue
    base, op = name.rsplit("_op", 1)
    model = onnx.load(f)
    syms = sorted({d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param})
    peaks = []
    for (b, t, s) in SIZES:
        dv = dimvals(b, t, s)
        flags = ["--batch", str(b)] + sum((["--dim-param", f"{k}={dv[k]}"] for k in syms if k != "batch"), [])
        rc, out, err = run([ORDO, "compile", f, *flags, "--json"])
        line = f"{name} b{b} t{t}: rc={rc}"
        if rc != 0:
            line += " ERR " + err.strip().replace("\n", " | ")[:400]
            print(line); peaks.append(None); continue
        j = json.loads(out)
        peak = int(j["peak_bytes"]); peaks.append(peak)
        ordo_sizes = {x["tensor"]: int(x["size_bytes"]) for x in j["arena"]["tensors"]}
        fix = dict(dv, batch=b)
        a = infer_sizes(model, fix)
        ref_f = f"{M}/ref/{base}_op{op}_b{b}_t{t}.onnx"
        r = {}
        if os.path.exists(ref_f):
            refm = onnx.load(ref_f); r = infer_sizes(refm)
            # only trust a name match when the producing node has the same op type (exports number nodes differently)
            prod = lambda mm: {o: n.op_type for n in mm.graph.node for o in n.output}
            pd, pr = prod(model), prod(refm)
            r = {k: v for k, v in r.items() if k in ordo_sizes and (pd.get(k) == pr.get(k))}
        # (c) execute the dynamic model with numpy at this size
        feeds = {}
        for i in model.graph.input:
            if i.name in {x.name for x in model.graph.initializer}: continue
            dims = [fix["batch"] if d.dim_param == "batch" else (fix[d.dim_param] if d.dim_param else d.dim_value) for d in i.type.tensor_type.shape.dim]
            et = i.type.tensor_type.elem_type
            if et == TensorProto.INT64: feeds[i.name] = np.random.randint(0, 400, dims).astype(np.int64) if "mask" not in i.name else np.ones(dims, np.int64)
            elif et == TensorProto.BOOL: feeds[i.name] = np.zeros(dims, bool)
            else: feeds[i.name] = np.random.randn(*dims).astype(np.float32)
        try:
            ex, _env = np_onnx.sizes(model, feeds)
        except Exception as e:
            ex = {}; print("    numpy exec failed:", repr(e)[:200])
        mism, unk = [], []
        for tn, sz in ordo_sizes.items():
            if tn not in ex: unk.append(("exec", tn))
            elif align(ex[tn]) != sz: mism.append(("exec", tn, sz, ex[tn]))
        for tn, sz in ordo_sizes.items():
            for src, d in (("infer", a), ("ref", r)):
                if tn in d:
                    if d[tn] is None: unk.append((src, tn))
                    elif align(d[tn]) != sz: mism.append((src, tn, sz, d[tn]))
        refpeak = None
        if os.path.exists(ref_f):
            rc2, out2, err2 = run([ORDO, "compile", ref_f, "--json"])
            refpeak = int(json.loads(out2)["peak_bytes"]) if rc2 == 0 else f"rc={rc2} {err2.strip()[:200]}"
        line += f" peak={peak} refpeak={refpeak} ops={j['ops']} tensors={len(ordo_sizes)} mism={len(mism)} unknown={len(unk)}"
        print(line)
        for mm in mism[:8]: print("    MISMATCH", mm)
        unverified = [tn for tn in ordo_sizes if a.get(tn) is None and r.get(tn) is None and tn not in ex]
        print(f"    verified {len(ordo_sizes)-len(unverified)}/{len(ordo_sizes)}; unverified: {unverified[:6]}")
        for u in unk[:3]: print("    unknown", u)
        results.append((name, b, t, peak, refpeak, len(mism)))
    if len(peaks) == 2 and None not in peaks:
        print(f"    scale {peaks[1]/peaks[0]:.1f}x")
