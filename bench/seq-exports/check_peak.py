#!/usr/bin/python3
"""Independent re-simulation of ordo's schedule with --no-inplace: live activations at each step
(graph inputs live from the start until their last reader; outputs live to the end), raw sizes from
the numpy execution. Compares with ordo's peak_bytes."""
import glob, json, os, subprocess, sys
import numpy as np, onnx
import np_onnx
from onnx import TensorProto
ORDO = os.environ.get("ORDO", "build/client/ordo")
dv0 = {"seq": 16, "tq": 16, "tk": 20, "sequence": 16, "samples": 8000, "frames": 16, "tgt_len": 16, "src_len": 23}
def check(f, b, scale):
    m = onnx.load(f)
    dv = {k: (v * scale if k != "samples" else v * scale) for k, v in dv0.items()}
    syms = sorted({d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param})
    flags = ["--batch", str(b)] + sum((["--dim-param", f"{k}={dv[k]}"] for k in syms if k != "batch"), [])
    p = subprocess.run([ORDO, "compile", f, *flags, "--no-inplace", "--json"], capture_output=True, text=True, timeout=120)
    if p.returncode: return f"rc={p.returncode} {p.stderr[:200]}"
    j = json.loads(p.stdout)
    feeds = {}
    for i in m.graph.input:
        dims = [b if d.dim_param == "batch" else (dv[d.dim_param] if d.dim_param else d.dim_value) for d in i.type.tensor_type.shape.dim]
        et = i.type.tensor_type.elem_type
        feeds[i.name] = (np.ones(dims, np.int64) if et == TensorProto.INT64 else np.zeros(dims, bool) if et == TensorProto.BOOL else np.random.randn(*dims).astype(np.float32))
    sizes, _ = np_onnx.sizes(m, feeds)
    byname = {n.name: n for n in m.graph.node}
    sched = j["schedule"]
    acts = {t["tensor"] for t in j["arena"]["tensors"]}
    outs = {o.name for o in m.graph.output}
    step_of = {}
    last = {}
    for s, nn in enumerate(sched):
        n = byname[nn]
        for i in n.input:
            if i in acts: last[i] = s
        for o in n.output:
            if o in acts: step_of[o] = s
    live_peak = 0
    for s in range(len(sched)):
        live = 0
        for t in acts:
            start = step_of.get(t, -1); end = len(sched) if t in outs else last.get(t, start)
            if start <= s <= end: live += sizes[t]
        live_peak = max(live_peak, live)
    return int(j["peak_bytes"]), live_peak
for f in sorted(glob.glob(os.environ.get("OUT", "/tmp/seq-exports") + "/models*/*_op17_dyn.onnx")):
    if "listaxes" in f: continue
    for b, sc in ((1, 1), (4, 8)):
        r = check(f, b, sc)
        flag = "" if isinstance(r, tuple) and r[0] == r[1] else "   <-- DIFFERS"
        print(os.path.basename(f), b, sc, r, flag)
