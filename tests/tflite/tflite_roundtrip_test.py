#!/usr/bin/python3
"""Round trip through a real runtime: every generated model runs in Arm NN,
`ordo compile --emit-tflite` reorders it and plans its arena, the emitted
file runs in Arm NN with outputs identical to the original's (bit-exact for
int8, 1e-5 for float32), and its offline plan passes the independent check
(tflite_plan_check.py). Exits 77 (ctest: skipped) without python3-pyarmnn.

    tflite_roundtrip_test.py ORDO_BINARY [--table]

--table prints the docs/tflite.md table instead of only checking.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import armnn_run  # noqa: E402
import make_tflite_models  # noqa: E402
import tflite_plan_check  # noqa: E402


def compile_model(ordo, path, emitted, extra=()):
    """`ordo compile --json`: a CompileResponse in protobuf's JSON mapping."""
    out = subprocess.run([ordo, "compile", path, "--alignment", "16", "--json",
                          "--emit-tflite", emitted, *extra],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def check_io_outside_plan(ordo, path, tmp, inputs, expected, quantized):
    """--io-outside-arena: the model's inputs and outputs get -1 in the plan
    (TFLM places them itself, e.g. in buffers the application owns), the
    rest is still a valid plan, and the file still computes the same."""
    emitted = os.path.join(tmp, "io_" + os.path.basename(path))
    report = compile_model(ordo, path, emitted, ["--io-outside-arena"])
    with open(emitted, "rb") as f:
        data = f.read()
    tflite_plan_check.check_plan(data, int(report["arena"]["arena_bytes"]))
    model = tflite_plan_check.read_model(data)
    offsets = model["plans"][0][1][3:]
    for t in list(model["inputs"]) + list(model["outputs"]):
        assert offsets[t] == -1, f"graph input/output {model['tensors'][t]['name']} planned"
    assert same_outputs(expected, armnn_run.Network(emitted).run(inputs), quantized), \
        "Arm NN outputs differ with --io-outside-arena"


def check_pools_plan(ordo, path, tmp, inputs, expected, quantized):
    """Memory pools: TFLM plans one arena, so --emit-tflite puts the whole
    arena into one bank (the fastest that holds it: the small fast one does
    not), every tensor at its offset in the one-arena plan, and the plan is
    still valid as one arena."""
    emitted = os.path.join(tmp, "pools_" + os.path.basename(path))
    report = compile_model(ordo, path, emitted,
                           ["--pool", "tcm:2KiB:4GB/s", "--pool", "sram:4MiB:1GB/s",
                            "--pool", "psram:8MiB:0.2GB/s"])
    placement = report["placement"]
    assert placement["fits"] and placement["algorithm"] == 'one arena in "sram"', placement
    pools = {t.get("pool") for t in report["arena"]["tensors"]}
    assert pools == {"sram"}, f"tensors in pools {pools}"
    with open(emitted, "rb") as f:
        tflite_plan_check.check_plan(f.read(), int(report["arena"]["arena_bytes"]))
    assert same_outputs(expected, armnn_run.Network(emitted).run(inputs), quantized), \
        "Arm NN outputs differ with memory pools"


def same_outputs(a, b, quantized):
    if quantized:
        return all(np.array_equal(x, y) for x, y in zip(a, b))
    return all(np.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(a, b))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ordo, table = sys.argv[1], "--table" in sys.argv
    if not armnn_run.available():
        print("SKIPPED: python3-pyarmnn is not installed (scripts/install-deps)")
        return 77
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for path in make_tflite_models.write_all(tmp):
            name = os.path.basename(path)
            original = armnn_run.Network(path)  # must load and run before ordo sees it
            inputs = armnn_run.random_inputs(original, seed=7)
            expected = original.run(inputs)
            emitted = os.path.join(tmp, "ordo_" + name)
            report = compile_model(ordo, path, emitted)
            got = armnn_run.Network(emitted).run(inputs)
            if not same_outputs(expected, got, "int8" in name):
                failures.append(f"{name}: Arm NN outputs differ after reordering")
            with open(emitted, "rb") as f:
                try:
                    plan = tflite_plan_check.check_plan(f.read(),
                                                        int(report["arena"]["arena_bytes"]))
                except AssertionError as error:
                    failures.append(f"{name}: offline plan: {error}")
                    continue
            tflm = next(b for b in report["arena_baselines"] if b["planner"] == "tflm")
            model_order = next(b for b in report["baselines"] if b["name"] == "model_order")
            if name.startswith("nas_cell") and \
                    int(report["peak_bytes"]) >= int(model_order["peak_bytes"]):
                failures.append(f"{name}: ordo did not lower the peak of the file order")
            rows.append((name, int(tflm["model_order_arena_bytes"]),
                         int(tflm["schedule_arena_bytes"]), int(report["arena"]["arena_bytes"])))
            if name.startswith("nas_cell"):
                try:
                    check_io_outside_plan(ordo, path, tmp, inputs, expected, "int8" in name)
                except AssertionError as error:
                    failures.append(f"{name}: --io-outside-arena: {error}")
                try:
                    check_pools_plan(ordo, path, tmp, inputs, expected, "int8" in name)
                except AssertionError as error:
                    failures.append(f"{name}: memory pools: {error}")
    if table:
        print("| model | TFLM greedy arena, file order (B) | TFLM greedy, ordo's order (B) "
              "| ordo arena = offline plan (B) | saving vs file order |")
        print("|---|---:|---:|---:|---:|")
        for name, greedy, greedy_ordo, arena in rows:
            print(f"| {name} | {greedy} | {greedy_ordo} | {arena} "
                  f"| {100 * (greedy - arena) / greedy:.1f}% |")
    for f in failures:
        print("FAILED:", f)
    if not failures:
        print(f"ok: {len(rows)} models round-tripped through Arm NN")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
