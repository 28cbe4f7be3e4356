"""Served answers against local ones, several servers side by side.

served_vs_local.py MODELS_DIR LABEL=ORDO_SERVER [LABEL=ORDO_SERVER ...]

Compiles every .onnx in MODELS_DIR with the CLI (`ORDO`, default
build/client/ordo; one process at a time, default options), then through
each server in turn (a fresh ordo-server with --local-workers=2 and no
cache, one CompileMany stream at concurrency CONCURRENCY, default 4, default
options) and prints,
per server, how many answers equal the local peak, are above it (served
worse) or below it, how many are optimal, and the wall time of the stream
and of the slowest answer. Prints the load average before and after. With
OUT=DIR set, writes DIR/LABEL.jsonl: per candidate its local and served
peak, served status, seconds, and when its answer arrived in the stream."""
import os, socket, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../client/python"))
sys.path.insert(0, HERE)
from ordo_client import OrdoClient, OrdoError, status_name  # noqa: E402
from run_cli import ORDO, load, run  # noqa: E402
import json  # noqa: E402

CONCURRENCY = int(os.environ.get("CONCURRENCY", "4"))


def local_peaks(files):
    peaks = {}
    for f in files:
        r = run(f, "default")
        peaks[f] = r["peak"] if r["rc"] == 0 else None
    return peaks


def served(server, files):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    srv = subprocess.Popen([server, f"--listen=127.0.0.1:{port}", "--local-workers=2", "--cache-mb=0",
                            "--metrics-port=0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    answers = {}
    try:
        with OrdoClient(f"127.0.0.1:{port}", timeout_s=3600) as client:
            for _ in range(100):
                try:
                    client.info(); break
                except OrdoError:
                    time.sleep(0.1)
            start = time.monotonic()
            data = [open(f, "rb").read() for f in files]
            for r in client.compile_many(iter(data), concurrency=CONCURRENCY):
                x = r.response if r.error is None else None
                answers[files[r.index]] = (x.peak_bytes if x else None,
                                           status_name(x.status) if x else str(r.error.code), r.seconds,
                                           time.monotonic() - start)
            wall = time.monotonic() - start
    finally:
        srv.terminate(); srv.wait()
    return answers, wall


def main(folder, servers):
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.endswith(".onnx") and not f.startswith("dup_"))
    print("load average at start:", load(), flush=True)
    local = local_peaks(files)
    print(f"{len(files)} models compiled locally", flush=True)
    for label, server in (s.split("=", 1) for s in servers):
        answers, wall = served(server, files)
        if os.environ.get("OUT"):
            with open(os.path.join(os.environ["OUT"], f"{label}.jsonl"), "w") as out:
                for f in files:
                    peak, status, seconds, arrived = answers[f]
                    out.write(json.dumps({"model": os.path.basename(f), "local": local[f], "served": peak,
                                          "status": status, "seconds": round(seconds, 3),
                                          "arrived": round(arrived, 3)}) + "\n")
        equal = worse = better = optimal = 0
        for f in files:
            peak, status = answers[f][:2]
            if peak is None or local[f] is None:
                continue
            if peak != local[f] and os.environ.get("VERBOSE"):
                print(f"  {os.path.basename(f)}: local {local[f]}, served {peak} ({status})")
            equal += peak == local[f]
            worse += peak > local[f]
            better += peak < local[f]
            optimal += status == "optimal"
        slowest = max(a[2] for a in answers.values())
        print(f"{label}: {len(files)} served, equal to local {equal}, worse {worse}, better {better}, "
              f"optimal {optimal}; stream {wall:.1f} s, slowest answer {slowest:.1f} s", flush=True)
    print("load average at end:", load())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
