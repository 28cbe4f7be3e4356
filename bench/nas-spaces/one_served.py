"""Compiles one ONNX file through a fresh ordo-server (extra flags after it) and prints the
wall time, the peak and each part: one_served.py FILE [--local-workers=2]."""
import socket, subprocess, sys, time
HERE = __import__("os").path.dirname(__import__("os").path.abspath(__file__))
sys.path.insert(0, HERE + "/../../client/python")
from ordo_client import OrdoClient, OrdoError, status_name
f = sys.argv[1]; extra = sys.argv[2:]
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
srv = subprocess.Popen([__import__("os").environ.get("ORDO_SERVER", HERE + "/../../build/server/ordo-server"), f"--listen=127.0.0.1:{port}", "--metrics-port=0"] + extra,
                       stdout=subprocess.DEVNULL, stderr=open("/tmp/one_served_server.log", "w"))
try:
    with OrdoClient(f"127.0.0.1:{port}", timeout_s=600) as c:
        for _ in range(100):
            try: c.info(); break
            except OrdoError: time.sleep(0.1)
        t = time.monotonic(); r = c.compile(open(f, "rb").read())
        print(f"wall {time.monotonic()-t:.2f}s peak {r.peak_bytes} lb {r.lower_bound_bytes} {status_name(r.status)}")
        for p in r.parts:
            print(" part", p.ops, status_name(p.status), p.algorithm, p.time.ToTimedelta().total_seconds(), p.peak_bytes, p.lower_bound_bytes, p.cached)
        print(r.stats)
finally:
    srv.terminate(); srv.wait()
