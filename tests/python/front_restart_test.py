#!/usr/bin/python3
"""The Python client's retry policy against a real ordo-server that is
killed (SIGKILL) and restarted on the same port while a client loop runs.

The client (client/python/ordo_client.OrdoClient, with its gRPC service
config retry policy) sees UNAVAILABLE only for a short window around the
restart, succeeds again once the new server listens, and never gets a wrong
answer (every peak equals the first one, every schedule is complete).

Run by ctest (tests/python/CMakeLists.txt sets ORDO_SERVER_BINARY,
ORDO_PYTHON_STUBS and ORDO_SOURCE_DIR), or by hand:
  ORDO_SERVER_BINARY=build/server/ordo-server /usr/bin/python3 \
      tests/python/front_restart_test.py
"""

import json
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("ORDO_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
SERVER_BINARY = os.environ.get("ORDO_SERVER_BINARY") or os.path.join(
    SOURCE_DIR, "build", "server", "ordo-server")
CLIENT_DIR = os.path.join(SOURCE_DIR, "client", "python")
TINY_CELL = os.path.join(SOURCE_DIR, "examples", "models", "tiny_cell.onnx")
sys.path[:0] = [CLIENT_DIR]

import grpc  # noqa: E402
import ordo_client  # noqa: E402
from ordo_client import OrdoClient, OrdoError  # noqa: E402

STARTUP_TIMEOUT_S = 15


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port):
    """ordo-server on 127.0.0.1:port, in-process scheduling; returns the
    process once it prints its address."""
    process = subprocess.Popen(
        [SERVER_BINARY, f"--listen=127.0.0.1:{port}", "--metrics-port=0", "--local-workers=0",
         "--log-level=warning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if not selector.select(timeout=deadline - time.monotonic()):
            break
        line = process.stdout.readline()
        if line.startswith("listening on "):
            return process
        if not line:
            break
    process.kill()
    process.wait()
    raise RuntimeError("ordo-server did not start")


def kill(process):
    if process.poll() is None:
        process.kill()
    process.wait()
    process.stdout.close()


class FrontRestartTest(unittest.TestCase):

    def test_the_example_client_uses_the_retry_service_config(self):
        policy = ordo_client.RETRY_SERVICE_CONFIG["methodConfig"][0]
        self.assertEqual(policy["name"], [{"service": "ordo.v1.Compiler"}])
        self.assertEqual(policy["retryPolicy"]["retryableStatusCodes"], ["UNAVAILABLE", "CANCELLED"])
        self.assertGreaterEqual(policy["retryPolicy"]["maxAttempts"], 2)
        # The channel really gets it: capture the options OrdoClient passes.
        seen = {}
        real = grpc.insecure_channel

        def capture(target, options=None, **kwargs):
            seen.update(dict(options or []))
            return real(target, options=options, **kwargs)

        grpc.insecure_channel = capture
        try:
            OrdoClient("127.0.0.1:1").close()
        finally:
            grpc.insecure_channel = real
        self.assertEqual(seen.get("grpc.enable_retries"), 1)
        self.assertEqual(json.loads(seen["grpc.service_config"]),
                         ordo_client.RETRY_SERVICE_CONFIG)

    def test_killed_and_restarted_front_costs_a_short_unavailable_window(self):
        port = free_port()
        server = start_server(port)
        try:
            client = OrdoClient(f"127.0.0.1:{port}", timeout_s=10)
            expected = client.compile(TINY_CELL, time_limit_s=1)
            events = []  # (time, code name, wrong)
            lock = threading.Lock()
            stop = threading.Event()

            def loop():
                while not stop.is_set():
                    try:
                        response = client.compile(TINY_CELL, time_limit_s=1)
                        wrong = (response.peak_bytes != expected.peak_bytes
                                 or len(response.schedule) != expected.ops)
                        code = "OK"
                    except OrdoError as error:
                        code, wrong = error.code.name, False
                        time.sleep(0.1)  # the application's pause after giving up
                    with lock:
                        events.append((time.monotonic(), code, wrong))

            def successes_since(since):
                with lock:
                    return sum(1 for t, code, _ in events if t >= since and code == "OK")

            threads = [threading.Thread(target=loop) for _ in range(2)]
            for thread in threads:
                thread.start()
            try:
                deadline = time.monotonic() + 10
                while successes_since(0) < 10 and time.monotonic() < deadline:
                    time.sleep(0.02)
                killed = time.monotonic()
                kill(server)
                time.sleep(0.5)
                server = start_server(port)
                restarted = time.monotonic()
                deadline = restarted + 15
                while successes_since(restarted) < 10 and time.monotonic() < deadline:
                    time.sleep(0.02)
            finally:
                stop.set()
                for thread in threads:
                    thread.join()
            client.close()
            codes = [code for _, code, _ in events]
            first_ok_after = min((t for t, code, _ in events if t > killed and code == "OK"),
                                 default=None)
            last_failure = max((t for t, code, _ in events if code != "OK"), default=killed)
            print(f"[ front restart ] {codes.count('OK')} ok, {codes.count('UNAVAILABLE')} "
                  f"UNAVAILABLE; first success {first_ok_after - killed:.2f} s after the kill",
                  file=sys.stderr)
            self.assertEqual(sum(1 for _, _, wrong in events if wrong), 0)
            self.assertEqual(set(codes) - {"OK", "UNAVAILABLE"}, set())
            self.assertIsNotNone(first_ok_after)
            self.assertGreaterEqual(successes_since(restarted), 10)
            self.assertLess(first_ok_after - restarted, 10)
            self.assertLess(last_failure, first_ok_after + 1)
        finally:
            kill(server)


if __name__ == "__main__":
    unittest.main()
