#!/usr/bin/python3
"""The Python client (client/python) against a real ordo-server process.

Starts build/server/ordo-server on a free loopback port with one supervised
worker, compiles the example models (and a native graph) through ordo_client
and re-checks every returned ONNX schedule client-side (onnx_memory_sim: topological order, the
footprint of every step, the peak), runs nas_loop.py as a process and checks
that later candidates hit the part cache, and always stops the server.

Run by ctest (tests/python/CMakeLists.txt sets ORDO_SERVER_BINARY,
ORDO_PYTHON_STUBS and ORDO_SOURCE_DIR), or by hand:
  ORDO_SERVER_BINARY=build/server/ordo-server /usr/bin/python3 \
      tests/python/python_client_test.py
"""

import asyncio
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("ORDO_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
SERVER_BINARY = os.environ.get("ORDO_SERVER_BINARY") or os.path.join(
    SOURCE_DIR, "build", "server", "ordo-server")
CLIENT_DIR = os.path.join(SOURCE_DIR, "client", "python")
EXAMPLES = os.path.join(SOURCE_DIR, "examples", "models")
sys.path[:0] = [HERE, CLIENT_DIR, os.path.join(SOURCE_DIR, "tests", "tflite")]

import grpc  # noqa: E402
import onnx_memory_sim  # noqa: E402
import make_tflite_models  # noqa: E402
import tflite_plan_check  # noqa: E402
from ordo_client import AsyncOrdoClient, OrdoClient, OrdoError, pb, status_name  # noqa: E402

# How long the server may take to print its address (it starts a worker).
STARTUP_TIMEOUT_S = 15
# Deadline of every call: the example models compile in milliseconds.
CALL_TIMEOUT_S = 20


def start_server(log, flags=("--local-workers=1",)):
    """Starts ordo-server on a free port with `flags`, its log (and its
    worker's) going to the file `log`; returns (process, "host:port")."""
    process = subprocess.Popen(
        [SERVER_BINARY, "--listen=127.0.0.1:0", "--metrics-port=0", *flags],
        stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            line = process.stdout.readline()
            if not line:
                log.seek(0)
                raise RuntimeError(f"ordo-server exited with {process.wait()} before "
                                   f"listening; its log:\n{log.read()[-2000:]}")
            if line.startswith("listening on "):
                return process, line.split()[2]
        raise RuntimeError(f"ordo-server printed no address within {STARTUP_TIMEOUT_S} s")
    except BaseException:
        stop_server(process)
        raise


def stop_server(process):
    """SIGTERM (graceful), then SIGKILL if it is still running after 10 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    process.stdout.close()


def assert_valid_schedule(test, model_path, response):
    """Re-simulates `response.schedule` on the model client-side: a
    topological order of all ops whose footprints and peak are the server's."""
    model = onnx_memory_sim.load(model_path)
    simulated = onnx_memory_sim.simulate(model, list(response.schedule))
    test.assertEqual(simulated["peak_bytes"], response.peak_bytes)
    test.assertEqual(simulated["initial_bytes"], response.profile.initial_bytes)
    test.assertEqual(simulated["step_bytes"], list(response.profile.step_bytes))
    test.assertGreaterEqual(response.peak_bytes, response.lower_bound_bytes)


def wide_graph(branches):
    """`branches` chains of two ops between a source and a sink, as JSON of
    ordo.v1.Graph: one part whose exact search runs its whole time limit
    (tests/service/service_harness.h, WideGraph)."""
    tensors = [{"name": "x", "sizeBytes": 16}, {"name": "s", "sizeBytes": 16},
               {"name": "y", "sizeBytes": 8}]
    ops = [{"name": "source", "type": "Conv", "inputs": ["x"], "outputs": ["s"]}]
    ends = []
    for b in range(branches):
        tensors += [{"name": f"a{b}", "sizeBytes": 10 + 7 * b % 23},
                    {"name": f"b{b}", "sizeBytes": 5 + 11 * b % 17}]
        ops += [{"name": f"a{b}", "type": "Conv", "inputs": ["s"], "outputs": [f"a{b}"]},
                {"name": f"b{b}", "type": "Conv", "inputs": [f"a{b}"], "outputs": [f"b{b}"]}]
        ends.append(f"b{b}")
    ops.append({"name": "sink", "type": "Conv", "inputs": ends, "outputs": ["y"]})
    return {"name": "wide", "tensors": tensors, "ops": ops, "inputs": ["x"], "outputs": ["y"]}


class BusyServerTest(unittest.TestCase):
    """One compile at a time (--max-concurrent=1), held by a search that runs
    its whole time limit: the next call is refused "server busy" with the
    pushback trailer, and the client resends after it until it is let in."""

    def test_a_busy_server_is_waited_out(self):
        if not os.access(SERVER_BINARY, os.X_OK):
            raise RuntimeError(f"{SERVER_BINARY} not built: build target ordo-server")
        log = tempfile.TemporaryFile("w+")
        self.addCleanup(log.close)
        server, address = start_server(
            log, ("--local-workers=0", "--max-concurrent=1", "--cache-mb=0"))
        self.addCleanup(stop_server, server)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as wide:
            json.dump(wide_graph(40), wide)
            wide.flush()
            holder = OrdoClient(address, timeout_s=CALL_TIMEOUT_S)
            self.addCleanup(holder.close)
            held = []
            thread = threading.Thread(target=lambda: held.append(
                holder.compile(wide.name, scheduler="dp", time_limit_s=3)))
            start = time.monotonic()
            thread.start()
            tiny = os.path.join(EXAMPLES, "tiny_cell.onnx")
            # Refused at once without retries, once the holder is in; each
            # request with a limit of its own, so none is a cache hit.
            with OrdoClient(address, timeout_s=CALL_TIMEOUT_S, retry=False) as no_retry:
                refused = None
                for attempt in range(100):
                    try:
                        no_retry.compile(tiny, time_limit_s=1 + attempt / 1000)
                    except OrdoError as error:
                        refused = error
                        break
                    time.sleep(0.02)
                # A CompileMany stream: each candidate refused alone.
                failed = list(no_retry.compile_many([tiny] * 3, concurrency=3,
                                                    time_limit_s=1.5))
            self.assertIsNotNone(refused)
            self.assertEqual(refused.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertIn("server busy", refused.message)
            self.assertEqual([r.error.code for r in failed],
                             [grpc.StatusCode.RESOURCE_EXHAUSTED] * 3)
            with OrdoClient(address, timeout_s=CALL_TIMEOUT_S) as client:
                # Resent on the stream after each refusal's retry_after, and
                # let in only when the holder's 3 s search ended.
                waited = time.monotonic()
                single = []
                compile_thread = threading.Thread(target=lambda: single.append(
                    (client.compile(tiny, time_limit_s=2), time.monotonic() - waited)))
                compile_thread.start()
                many = list(client.compile_many([tiny] * 3, concurrency=3, time_limit_s=2.5))
                compile_thread.join()
                self.assertGreater(time.monotonic() - waited, 1)
                self.assertEqual(sorted(r.index for r in many), [0, 1, 2])
                self.assertEqual([r.error for r in many], [None] * 3)
                self.assertTrue(all(r.seconds > 1 for r in many))
                self.assertEqual(len(single), 1)
                self.assertGreater(single[0][0].peak_bytes, 0)
                self.assertGreater(single[0][1], 1)
                # A proposer that waits for each result before it proposes
                # the next candidate (a search driven by its results): the
                # first is refused busy, and its resend must not wait for
                # the proposer, which waits for it.
                results = []
                answered = threading.Event()

                def proposals():
                    for attempt in range(2):
                        answered.clear()
                        yield tiny
                        if not answered.wait(timeout=CALL_TIMEOUT_S):
                            return
                holder_again = threading.Thread(target=lambda: held.append(holder.compile(
                    wide.name, scheduler="dp", time_limit_s=2.5)))
                holder_again.start()
                with OrdoClient(address, timeout_s=1, retry=False) as probe:
                    for attempt in range(100):  # until the holder is in again
                        try:
                            probe.compile(tiny, time_limit_s=3 + attempt / 1000)
                        except OrdoError:
                            break
                        time.sleep(0.02)
                for result in client.compile_many(proposals(), concurrency=2,
                                                  time_limit_s=2.25):
                    results.append(result)
                    answered.set()
                holder_again.join()
                self.assertEqual([r.error for r in results], [None, None])
            thread.join()
            self.assertEqual(len(held), 2)
            self.assertGreaterEqual(time.monotonic() - start, 2)


class PythonClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if not os.access(SERVER_BINARY, os.X_OK):
            raise RuntimeError(f"{SERVER_BINARY} not built: build target ordo-server")
        # The worker logs every part at info level: kept out of the test's
        # output, shown when the server fails to start.
        log = tempfile.TemporaryFile("w+")
        cls.addClassCleanup(log.close)
        cls.server, cls.address = start_server(log)
        # Runs even when a later setUpClass step or a test fails.
        cls.addClassCleanup(stop_server, cls.server)
        cls.client = OrdoClient(cls.address, timeout_s=CALL_TIMEOUT_S)
        # Closed before the server stops: idle connections hold its shutdown.
        cls.addClassCleanup(cls.client.close)

    def test_the_async_client_answers_as_the_sync_one(self):
        paths = [os.path.join(EXAMPLES, name)
                 for name in ("tiny_cell.onnx", "small_resnet.onnx")]

        async def run():
            async with AsyncOrdoClient(self.address, timeout_s=CALL_TIMEOUT_S) as client:
                compiled = await asyncio.gather(
                    *(client.compile(path, time_limit_s=5) for path in paths))
                streamed = [item async for item in client.compile_stream(paths[1])]
                estimated = await client.estimate(paths[1])
                info = await client.info()
                return compiled, streamed, estimated, info

        compiled, streamed, estimated, info = asyncio.run(run())
        for path, response in zip(paths, compiled):
            assert_valid_schedule(self, path, response)
            self.assertEqual(response.peak_bytes,
                             self.client.compile(path, time_limit_s=5).peak_bytes)
        self.assertIsInstance(streamed[-1], pb.CompileResponse)
        self.assertEqual(streamed[-1].peak_bytes, compiled[1].peak_bytes)
        self.assertGreater(len(streamed), 1)
        self.assertEqual(estimated.lower_bound_bytes,
                         self.client.estimate(paths[1]).lower_bound_bytes)
        self.assertIn("best", [s.name for s in info.schedulers])

    def test_info_lists_schedulers(self):
        info = self.client.info()
        self.assertIn("best", [s.name for s in info.schedulers])
        self.assertEqual(info.cache, "memory")
        self.assertEqual(len(info.workers), 1)

    def test_cache_namespaces_keep_entries_apart(self):
        path = os.path.join(EXAMPLES, "small_resnet.onnx")
        self.assertEqual(self.client.info().default_cache_namespace, "")
        with OrdoClient(self.address, timeout_s=CALL_TIMEOUT_S, namespace="py-a") as team_a, \
                OrdoClient(self.address, timeout_s=CALL_TIMEOUT_S, namespace="py-b") as team_b:
            first = team_a.compile(path, time_limit_s=5)
            self.assertFalse(first.stats.response_cached)
            self.assertTrue(team_a.compile(path, time_limit_s=5).stats.response_cached)
            other = team_b.compile(path, time_limit_s=5)
            self.assertFalse(other.stats.response_cached)
            self.assertEqual(other.stats.cache_hits, 0)
            self.assertEqual(other.peak_bytes, first.peak_bytes)
        with OrdoClient(self.address, timeout_s=CALL_TIMEOUT_S, namespace="a b") as bad:
            with self.assertRaises(OrdoError) as caught:
                bad.compile(path, time_limit_s=5)
            self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("cache_namespace", str(caught.exception))

    def test_compile_finds_the_optimum_of_tiny_cell(self):
        path = os.path.join(EXAMPLES, "tiny_cell.onnx")
        response = self.client.compile(path, scheduler="best", time_limit_s=5)
        # scripts/make-example-models: the file's order peaks at 393216,
        # running the narrow branches first gives 360448.
        self.assertEqual(response.peak_bytes, 360448)
        self.assertEqual(status_name(response.status), "optimal")
        baselines = {b.name: b.peak_bytes for b in response.baselines}
        self.assertEqual(baselines["model_order"], 393216)
        self.assertEqual(response.peak_bytes,
                         max([response.profile.initial_bytes, *response.profile.step_bytes]))
        assert_valid_schedule(self, path, response)

    def test_compile_accepts_bytes_and_device(self):
        path = os.path.join(EXAMPLES, "small_resnet.onnx")
        with open(path, "rb") as f:
            data = f.read()
        response = self.client.compile(data, device={"memory_capacity_bytes": 100000},
                                       scheduler="greedy")
        self.assertEqual(response.scheduler, "greedy")
        self.assertTrue(response.HasField("fits"))
        self.assertEqual(response.fits, response.peak_bytes <= 100000)
        assert_valid_schedule(self, path, response)

    def test_compile_places_tensors_in_memory_pools(self):
        path = os.path.join(EXAMPLES, "small_resnet.onnx")
        info = self.client.info()
        presets = {p.name: p for p in info.device_presets}
        self.assertEqual(set(presets), {"stm32h743", "imxrt1170", "esp32s3", "rp2040",
                                        "stm32f746", "nrf5340", "rp2350"})
        self.assertEqual([p.name for p in presets["stm32f746"].pools],
                         ["sram", "sdram"])
        self.assertTrue(presets["stm32f746"].pools[1].off_chip)
        device = {"pools": [{"name": "fast", "capacity_bytes": 65536,
                             "read_bytes_per_second": 4e9},
                            {"name": "slow", "capacity_bytes": 64 << 20,
                             "read_bytes_per_second": 1e8}]}
        response = self.client.compile(path, device=device, time_limit_s=5)
        placement = response.placement
        self.assertTrue(placement.fits)
        self.assertTrue(response.fits)
        self.assertEqual([p.name for p in placement.pools], ["fast", "slow"])
        self.assertAlmostEqual(sum(p.modelled_time_seconds for p in placement.pools),
                               placement.modelled_time_seconds, delta=1e-12)
        self.assertGreaterEqual(placement.modelled_time_seconds,
                                placement.lower_bound_seconds * (1 - 1e-9))
        self.assertEqual({b.name for b in placement.baselines},
                         {"internal_first", "usmp_greedy", "single_pool", "one_arena"})
        self.assertTrue(all(t.pool in ("fast", "slow") for t in response.arena.tensors))
        by_preset = self.client.compile(path, device={"preset": "esp32s3"}, time_limit_s=5)
        self.assertEqual([p.name for p in by_preset.placement.pools],
                         [p.name for p in presets["esp32s3"].pools])
        # The placement effort is a DeviceSpec field too, by its enum name.
        thorough = self.client.compile(
            path, device={"preset": "esp32s3", "placement_effort": "PLACEMENT_EFFORT_THOROUGH"},
            time_limit_s=5)
        self.assertTrue(thorough.placement.fits)
        self.assertLessEqual(thorough.placement.modelled_time_seconds,
                             by_preset.placement.modelled_time_seconds * (1 + 1e-9))
        # The plan as a C header, on request only.
        self.assertEqual(response.plan_header, "")
        header = self.client.compile(path, device=device, time_limit_s=5,
                                     return_plan_header=True).plan_header
        self.assertIn("#define ORDO_POOL_COUNT 2\n", header)
        self.assertIn("static const ordo_tensor_plan_t ordo_tensors[", header)
        with self.assertRaises(OrdoError) as raised:
            self.client.compile(path, device={**device, "pinned_tensors": {"x": "dram"}})
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn('unknown memory pool "dram"', raised.exception.message)

    def test_compile_stream_reports_stages_then_the_result(self):
        path = os.path.join(EXAMPLES, "tiny_cell.onnx")
        messages = list(self.client.compile_stream(path, time_limit_s=5))
        *progress, result = messages
        self.assertEqual(type(result).__name__, "CompileResponse")
        stages = [p.stage for p in progress]
        self.assertTrue(stages, "no progress before the result")
        self.assertEqual(stages, sorted(stages))
        self.assertEqual(result.peak_bytes, 360448)
        assert_valid_schedule(self, path, result)
        self.assertEqual(result.plan_header, "")
        *_, with_header = self.client.compile_stream(path, time_limit_s=5,
                                                     return_plan_header=True)
        self.assertIn("#define ORDO_PEAK_BYTES 360448\n", with_header.plan_header)

    def test_compile_native_graph_from_json_file(self):
        # x -> relu -> h; concat(h, x) -> y. relu cannot overwrite x (cat
        # reads it later), so at cat x, h and y are live: 1024 + 1024 + 2048.
        graph = {
            "name": "chain",
            "tensors": [
                {"name": "x", "dtype": "DATA_TYPE_FLOAT32", "dims": [1, 256],
                 "kind": "TENSOR_KIND_INPUT"},
                {"name": "h", "dtype": "DATA_TYPE_FLOAT32", "dims": [1, 256],
                 "kind": "TENSOR_KIND_ACTIVATION"},
                {"name": "y", "dtype": "DATA_TYPE_FLOAT32", "dims": [1, 512],
                 "kind": "TENSOR_KIND_OUTPUT"}],
            "ops": [
                {"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["h"]},
                {"name": "cat", "type": "Concat", "inputs": ["h", "x"], "outputs": ["y"],
                 "attributes": {"axis": {"i": 1}}}],
            "inputs": ["x"], "outputs": ["y"]}
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(graph, f)
            f.flush()
            response = self.client.compile(f.name)
        self.assertEqual(list(response.schedule), ["relu", "cat"])
        self.assertEqual(response.peak_bytes, 4096)
        self.assertEqual(list(response.profile.step_bytes), [2048, 4096])

    def test_compile_many_answers_each_model_with_its_index(self):
        tiny = os.path.join(EXAMPLES, "tiny_cell.onnx")
        with open(tiny, "rb") as f:
            tiny_bytes = f.read()
        small = os.path.join(EXAMPLES, "small_resnet.onnx")
        models = iter([tiny, b"not an onnx model", tiny_bytes, small])  # read lazily
        results = {r.index: r for r in self.client.compile_many(models, concurrency=2,
                                                                time_limit_s=5)}
        self.assertEqual(sorted(results), [0, 1, 2, 3])
        self.assertIsNone(results[1].response)
        self.assertEqual(results[1].error.code, grpc.StatusCode.INVALID_ARGUMENT)
        for index in (0, 2):
            self.assertIsNone(results[index].error)
            self.assertEqual(results[index].response.peak_bytes, 360448)
            self.assertGreater(results[index].seconds, 0)
        assert_valid_schedule(self, small, results[3].response)

    def test_compile_many_stops_cleanly_when_the_caller_stops(self):
        tiny = os.path.join(EXAMPLES, "tiny_cell.onnx")
        for result in self.client.compile_many([tiny] * 20, concurrency=3):
            self.assertIsNone(result.error)
            break  # cancels the stream
        self.assertEqual(self.client.compile(tiny).peak_bytes, 360448)  # still serving

    def test_estimate_reports_model_order_and_bound(self):
        response = self.client.estimate(os.path.join(EXAMPLES, "tiny_cell.onnx"))
        self.assertEqual(response.ops, 19)
        self.assertEqual(response.model_order_peak_bytes, 393216)
        self.assertLessEqual(response.lower_bound_bytes, 360448)

    def test_estimate_gives_a_verdict_against_a_chips_banks(self):
        path = os.path.join(EXAMPLES, "small_resnet.onnx")
        response = self.client.estimate(path, device={"preset": "stm32h743",
                                                      "activation_dtype": "DATA_TYPE_INT8"})
        self.assertEqual(type(response.fit).Verdict.Name(response.fit.verdict), "VERDICT_FITS")
        self.assertIn("fits the pools", response.fit.pools_reason)

    def test_compile_tflite_returns_it_reordered_with_the_offline_plan(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = make_tflite_models.write_all(tmp, ["nas_cell_3"])[1]  # int8
            response = self.client.compile(path, arena_planner="best",
                                           device={"alignment_bytes": 16},
                                           return_reordered_tflite=True)
        emitted = response.reordered_tflite_model
        self.assertEqual(emitted[4:8], b"TFL3")
        self.assertLess(response.peak_bytes, response.baselines[0].peak_bytes)
        tflite_plan_check.check_plan(emitted, response.arena.arena_bytes)
        planners = [b.planner for b in response.arena_baselines]
        self.assertIn("tflm", planners)

    def test_compile_tflite_with_pools_puts_the_whole_arena_in_one_pool(self):
        # TFLite Micro plans one arena: its offline plan cannot span banks.
        # A small fast bank that holds single tensors but not the arena is
        # left out; the plan is still one valid arena.
        pools = [{"name": "tcm", "capacity_bytes": 2048, "read_bytes_per_second": 4e9},
                 {"name": "sram", "capacity_bytes": 4 << 20, "read_bytes_per_second": 1e9}]
        with tempfile.TemporaryDirectory() as tmp:
            path = make_tflite_models.write_all(tmp, ["nas_cell_3"])[1]  # int8
            response = self.client.compile(path, device={"alignment_bytes": 16, "pools": pools},
                                           return_reordered_tflite=True)
        self.assertTrue(response.placement.fits)
        self.assertTrue(response.device.one_arena)  # in force, though not asked
        self.assertEqual(response.placement.algorithm, 'one arena in "sram"')
        self.assertEqual({t.pool for t in response.arena.tensors}, {"sram"})
        tflite_plan_check.check_plan(response.reordered_tflite_model, response.arena.arena_bytes)

    def test_bad_tflite_names_the_table_and_index(self):
        with self.assertRaises(OrdoError) as raised:
            self.client.compile(b"\x10\x00\x00\x00TFL3" + bytes(8))
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("Verifier", raised.exception.message)

    def test_bad_model_is_invalid_argument(self):
        with self.assertRaises(OrdoError) as raised:
            self.client.compile(b"not an onnx model")
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_unreachable_server_is_unavailable(self):
        with socket.socket() as s:  # A port nobody listens on.
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        for retry in (False, True):
            with OrdoClient(f"127.0.0.1:{port}", timeout_s=10, retry=retry) as client:
                with self.assertRaises(OrdoError) as raised:
                    client.info()
                self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)

    def run_nas_loop(self, *flags):
        """nas_loop.py --json as a process; returns (candidate rows, summary)."""
        command = [sys.executable, os.path.join(CLIENT_DIR, "nas_loop.py"),
                   "--server", self.address, "--json", "--timeout", str(CALL_TIMEOUT_S),
                   *flags]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        # CompileMany answers in the order candidates finish.
        rows = sorted((line for line in lines if line["event"] == "candidate"),
                      key=lambda row: row["index"])
        summary = [line for line in lines if line["event"] == "summary"]
        self.assertEqual(len(summary), 1)
        return rows, summary[0]

    def test_nas_loop_later_candidates_hit_the_cache(self):
        with tempfile.TemporaryDirectory() as save_dir:
            rows, summary = self.run_nas_loop("--candidates", "10", "--seed", "7",
                                              "--no-cache-warm", "--save-dir", save_dir)
            self.assertEqual(len(rows), 10)
            for row in rows:
                self.assertNotEqual(row["status"], "error", row)
                self.assertLessEqual(row["peak_bytes"], row["model_order_peak_bytes"])
                self.assertGreaterEqual(row["peak_bytes"], row["lower_bound_bytes"])
                self.assertEqual(row["hits"] + row["misses"], row["parts"])
            # Cells repeat across candidates, so later ones reuse parts.
            self.assertGreater(sum(row["hits"] for row in rows[1:]), 0)
            self.assertGreater(summary["hit_rate"], 0)
            self.assertEqual(summary["hits"], sum(row["hits"] for row in rows))
            # A NAS candidate's schedule passes the client-side check too.
            path = os.path.join(save_dir, "candidate9.onnx")
            assert_valid_schedule(self, path, self.client.compile(path))

    def test_nas_loop_warm_cache_serves_every_cell(self):
        rows, _ = self.run_nas_loop("--candidates", "3", "--seed", "11")
        for row in rows:
            cells = len(row["cells"].replace("|", ""))
            # Each cell is one part, compiled during the warm-up.
            self.assertGreaterEqual(row["hits"], cells, row)


if __name__ == "__main__":
    unittest.main(verbosity=2)
