"""Run every candidate through the CLI under three option sets; one JSON line per run."""
import json, os, subprocess, sys, time
ORDO = os.environ.get("ORDO", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../build/client/ordo"))
CONFIGS = {"default": [], "int8": ["--activation-dtype", "int8"], "tl2": ["--time-limit", "2"]}


def load():
    """The load average over 1, 5 and 15 minutes, as printed beside a measurement."""
    return " ".join(open("/proc/loadavg").read().split()[:3])


def run(path, cfg, ordo=ORDO):
    t0 = time.monotonic()
    p = subprocess.run([ordo, "compile", path, "--json"] + CONFIGS[cfg], capture_output=True, text=True)
    wall = time.monotonic() - t0
    rec = {"file": path, "cfg": cfg, "rc": p.returncode, "wall": wall, "stderr": p.stderr[-2000:]}
    if p.returncode == 0:
        j = json.loads(p.stdout)
        rec.update(peak=int(j["peak_bytes"]), lb=int(j["lower_bound_bytes"]), status=j["status"], ops=j["ops"],
                   algorithm=j.get("algorithm"), time=float(j["stats"]["time"].rstrip("s")),
                   baselines={b["name"]: int(b["peak_bytes"]) for b in j["baselines"]},
                   schedule_hash=hash(tuple(j["schedule"])), parts=len(j.get("parts", [])))
    return rec


def main(out, dirs):
    files = []
    for d in dirs:
        files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".onnx"))
    with open(out, "a") as fh:
        for f in files:
            for cfg in CONFIGS:
                fh.write(json.dumps(run(f, cfg)) + "\n"); fh.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
