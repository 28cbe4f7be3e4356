"""Two ordo CLIs side by side on the same candidates.

compare_cli.py OLD_ORDO NEW_ORDO DIR [DIR ...]

Compiles every .onnx in the folders (renamed duplicates `dup_*` left out)
with each binary in turn, candidate by candidate so that both see the same
load, at the default options, and prints the candidates whose peak or
status differ or whose wall time differs by more than a second, then the
counts (same peak, lower, higher; optimal with each) and the summed wall
times. Prints the load average before and after."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_cli import load, run  # noqa: E402


def compile_one(ordo, path):
    """(peak or None, status or exit code, wall seconds) of one default compile."""
    r = run(path, "default", ordo)
    if r["rc"] != 0:
        return None, f"exit {r['rc']}", r["wall"]
    return r["peak"], r["status"].replace("SCHEDULE_STATUS_", "").lower(), r["wall"]


def main(old, new, dirs):
    files = sorted(os.path.join(d, f) for d in dirs for f in os.listdir(d)
                   if f.endswith(".onnx") and not f.startswith("dup_"))
    print("load average at start:", load(), flush=True)
    same = lower = higher = optimal_old = optimal_new = 0
    wall_old = wall_new = 0.0
    for f in files:
        a = compile_one(old, f)
        b = compile_one(new, f)
        wall_old += a[2]
        wall_new += b[2]
        optimal_old += a[1] == "optimal"
        optimal_new += b[1] == "optimal"
        if a[0] is not None and b[0] is not None:
            same += a[0] == b[0]
            lower += b[0] < a[0]
            higher += b[0] > a[0]
        if a[:2] != b[:2] or abs(a[2] - b[2]) > 1.0:
            print(f"  {os.path.basename(f)}: old {a[0]} {a[1]} {a[2]:.2f} s, "
                  f"new {b[0]} {b[1]} {b[2]:.2f} s", flush=True)
    print(f"{len(files)} candidates: new peak same {same}, lower {lower}, higher {higher}; "
          f"optimal old {optimal_old}, new {optimal_new}; wall old {wall_old:.1f} s, new {wall_new:.1f} s")
    print("load average at end:", load())


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
