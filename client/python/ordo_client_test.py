#!/usr/bin/python3
"""Unit tests of ordo_client's retry policy and error mapping.

The server is an in-process Python gRPC server of ordo.v1.Compiler on a free
loopback port whose GetInfo fails with a scripted sequence of status codes
and counts the attempts it sees, so the counts are exact (no timing). The
client against the real ordo-server is tests/python/python_client_test.py.
"""

import asyncio
import os
import sys
import socket
import threading
import time
import unittest
from concurrent import futures

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402
import ordo_client  # noqa: E402
from ordo_client import OrdoClient, OrdoError, pb, pb_grpc  # noqa: E402


class ScriptedCompiler(pb_grpc.CompilerServicer):
    """GetInfo fails with `codes` in turn, then answers version "scripted".
    An entry may be (code, pushback): the failure then carries that value
    in the grpc-retry-pushback-ms trailer, as a busy ordo-server's does."""

    def __init__(self, codes):
        self.codes = list(codes)
        self.attempts = 0
        self.lock = threading.Lock()

    def GetInfo(self, request, context):
        with self.lock:
            self.attempts += 1
            code = self.codes.pop(0) if self.codes else None
        if isinstance(code, tuple):
            code, pushback = code
            context.set_trailing_metadata(((ordo_client.RETRY_PUSHBACK_TRAILER, pushback),))
        if code is not None:
            context.abort(code, f"scripted {code.name}")
        return pb.GetInfoResponse(version="scripted")


class RetryPolicyTest(unittest.TestCase):

    def start_server(self, codes, port=0):
        """(servicer, its port); the server stops when the test ends."""
        servicer = ScriptedCompiler(codes)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        pb_grpc.add_CompilerServicer_to_server(servicer, server)
        port = server.add_insecure_port(f"127.0.0.1:{port}")
        server.start()
        self.addCleanup(server.stop, None)
        return servicer, port

    def serve(self, codes, retry=True, unavailable_window_s=0):
        """(servicer, a client of it); both stop when the test ends. The
        UNAVAILABLE window is off unless asked for, so counts are layer 1's."""
        servicer, port = self.start_server(codes)
        client = OrdoClient(f"127.0.0.1:{port}", timeout_s=20, retry=retry,
                            unavailable_window_s=unavailable_window_s)
        self.addCleanup(client.close)
        return servicer, client

    def test_unavailable_is_retried(self):
        unavailable = grpc.StatusCode.UNAVAILABLE
        servicer, client = self.serve([unavailable, unavailable])
        self.assertEqual(client.info().version, "scripted")
        self.assertEqual(servicer.attempts, 3)

    def test_a_call_the_server_cancels_is_resent(self):
        # What a front shutting down does to calls arriving in that instant
        # (grpc/grpc#41785): too rare around a real SIGTERM to test there.
        cancelled = grpc.StatusCode.CANCELLED
        servicer, client = self.serve([cancelled])
        self.assertEqual(client.info().version, "scripted")
        self.assertEqual(servicer.attempts, 2)
        servicer, client = self.serve([cancelled] * 6, unavailable_window_s=10)
        self.assertEqual(client.info().version, "scripted")
        self.assertEqual(servicer.attempts, 7)

    def test_at_most_four_attempts(self):
        servicer, client = self.serve([grpc.StatusCode.UNAVAILABLE] * 10)
        with self.assertRaises(OrdoError) as raised:
            client.info()
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(raised.exception.message, "scripted UNAVAILABLE")
        self.assertEqual(servicer.attempts, 4)

    def test_the_window_resends_after_layer_one_gives_up(self):
        servicer, client = self.serve([grpc.StatusCode.UNAVAILABLE] * 6,
                                      unavailable_window_s=10)
        self.assertEqual(client.info().version, "scripted")
        self.assertEqual(servicer.attempts, 7)

    def test_the_window_ends(self):
        # Layer 1 waits at most 1.4 s, so a 3 s window resends at least once.
        servicer, client = self.serve([grpc.StatusCode.UNAVAILABLE] * 1000,
                                      unavailable_window_s=3)
        start = time.monotonic()
        with self.assertRaises(OrdoError) as raised:
            client.info()
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertGreater(servicer.attempts, 4)
        self.assertLess(time.monotonic() - start, 8)

    def test_a_server_that_starts_late_is_waited_for(self):
        # What a front restart looks like to a client: connection refused
        # for a few seconds, then the server listens on the same port.
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        client = OrdoClient(f"127.0.0.1:{port}", timeout_s=20)
        self.addCleanup(client.close)
        started = []
        timer = threading.Timer(
            3, lambda: started.append(self.start_server([], port=port)))
        timer.start()
        self.addCleanup(timer.cancel)
        self.assertEqual(client.info().version, "scripted")
        self.assertTrue(started)

    def test_other_codes_are_not_retried(self):
        for code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED,
                     grpc.StatusCode.INTERNAL):
            servicer, client = self.serve([code], unavailable_window_s=10)
            with self.assertRaises(OrdoError) as raised:
                client.info()
            self.assertEqual(raised.exception.code, code)
            self.assertEqual(servicer.attempts, 1)

    def test_a_busy_server_is_called_again_when_it_says(self):
        busy = (grpc.StatusCode.RESOURCE_EXHAUSTED, "150")
        servicer, client = self.serve([busy] * 3)
        start = time.monotonic()
        self.assertEqual(client.info().version, "scripted")
        self.assertEqual(servicer.attempts, 4)
        self.assertGreaterEqual(time.monotonic() - start, 0.45)

    def test_a_pushback_that_says_no_or_is_malformed_is_not_followed(self):
        # gRFC A6: a negative or non-integer pushback means "do not resend".
        for pushback in ("-1", "soon", ""):
            servicer, client = self.serve([(grpc.StatusCode.RESOURCE_EXHAUSTED, pushback)])
            with self.assertRaises(OrdoError) as raised:
                client.info()
            self.assertEqual(raised.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertEqual(servicer.attempts, 1, pushback)

    def test_a_pushback_past_the_deadline_ends_the_call_at_once(self):
        servicer, port = self.start_server([(grpc.StatusCode.RESOURCE_EXHAUSTED, "5000")])
        client = OrdoClient(f"127.0.0.1:{port}", timeout_s=1)
        self.addCleanup(client.close)
        start = time.monotonic()
        with self.assertRaises(OrdoError) as raised:
            client.info()
        self.assertEqual(raised.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertEqual(servicer.attempts, 1)
        self.assertLess(time.monotonic() - start, 0.9)

    def test_a_busy_server_is_not_called_again_without_retries(self):
        servicer, client = self.serve([(grpc.StatusCode.RESOURCE_EXHAUSTED, "100")],
                                      retry=False)
        with self.assertRaises(OrdoError):
            client.info()
        self.assertEqual(servicer.attempts, 1)

    def test_the_async_client_follows_the_same_policy(self):
        # Busy refusals after their pushback, UNAVAILABLE in the window;
        # -1 and other codes not resent.
        busy = (grpc.StatusCode.RESOURCE_EXHAUSTED, "100")
        for codes, attempts, answered in (
                ([busy, grpc.StatusCode.UNAVAILABLE, busy], 4, True),
                ([grpc.StatusCode.UNAVAILABLE] * 6, 7, True),
                ([(grpc.StatusCode.RESOURCE_EXHAUSTED, "-1")], 1, False),
                ([grpc.StatusCode.INVALID_ARGUMENT], 1, False)):
            servicer, port = self.start_server(codes)

            async def info():
                async with ordo_client.AsyncOrdoClient(f"127.0.0.1:{port}",
                                                       timeout_s=20) as client:
                    return await client.info()
            if answered:
                self.assertEqual(asyncio.run(info()).version, "scripted")
            else:
                with self.assertRaises(OrdoError) as raised:
                    asyncio.run(info())
                self.assertEqual(raised.exception.code, codes[0][0]
                                 if isinstance(codes[0], tuple) else codes[0])
            self.assertEqual(servicer.attempts, attempts, codes)

    def test_retry_can_be_turned_off(self):
        servicer, client = self.serve([grpc.StatusCode.UNAVAILABLE], retry=False)
        with self.assertRaises(OrdoError):
            client.info()
        self.assertEqual(servicer.attempts, 1)

    def test_policy_is_the_documented_one(self):
        policy = ordo_client.RETRY_SERVICE_CONFIG["methodConfig"][0]["retryPolicy"]
        self.assertEqual(policy["maxAttempts"], 4)
        self.assertEqual(policy["retryableStatusCodes"], ["UNAVAILABLE", "CANCELLED"])
        self.assertIn('"maxAttempts": 4', ordo_client.__doc__)


class RequestTest(unittest.TestCase):

    def test_model_forms(self):
        request = pb.CompileRequest()
        ordo_client._set_model(request, b"\x08\x07")
        self.assertEqual(request.WhichOneof("model"), "onnx_model")
        ordo_client._set_model(request, b"\x1c\x00\x00\x00TFL3\x00\x00")
        self.assertEqual(request.WhichOneof("model"), "tflite_model")
        graph = ordo_client.graph_pb2.Graph()
        ordo_client._set_model(request, graph)
        self.assertEqual(request.WhichOneof("model"), "graph")
        with self.assertRaises(TypeError):
            ordo_client._set_model(request, 42)

    def test_options(self):
        request = OrdoClient._request(pb.CompileRequest, b"", {"memory_capacity_bytes": 1024},
                                      "greedy", 2.5, "", False, True)
        self.assertEqual(request.device.memory_capacity_bytes, 1024)
        self.assertEqual(request.options.scheduler, "greedy")
        self.assertEqual(request.options.time_limit.ToMilliseconds(), 2500)
        self.assertFalse(request.options.inplace)
        self.assertTrue(request.options.HasField("inplace"))
        self.assertTrue(request.options.count_weights)
        unset = OrdoClient._request(pb.CompileRequest, b"", None, "", None, "", None, False)
        self.assertFalse(unset.options.HasField("time_limit"))
        self.assertFalse(unset.options.HasField("inplace"))
        self.assertEqual(unset.options.rewrite, "")
        self.assertFalse(unset.options.HasField("max_latency_overhead"))
        self.assertEqual(unset.options.beam_width, 0)

    def test_time_limits(self):
        def limit(seconds):
            return OrdoClient._request(pb.CompileRequest, b"", None, "", seconds, "", None,
                                       False).options.time_limit.ToSeconds()
        # Past a day (inf too) is a day, as the service takes it; once an
        # OverflowError from the Duration conversion.
        for seconds in (1e20, float("inf"), 2 * 24 * 3600):
            self.assertEqual(limit(seconds), 24 * 3600)
        self.assertEqual(limit(0), 0)
        for bad in (-1, float("nan")):
            with self.assertRaisesRegex(ValueError, "time_limit_s"):
                limit(bad)

    def test_rewrite_options(self):
        request = OrdoClient._request(pb.CompileRequest, b"", {"macs_per_second": 4e8},
                                      "", None, "", None, False, False, "identity", 0.0)
        self.assertEqual(request.options.rewrite, "identity")
        self.assertTrue(request.options.HasField("max_latency_overhead"))
        self.assertEqual(request.options.max_latency_overhead, 0.0)
        self.assertEqual(request.device.macs_per_second, 4e8)
        wide = OrdoClient._request(pb.CompileRequest, b"", None, "", None, "", None, False,
                                   False, "partition", None, 4)
        self.assertEqual(wide.options.beam_width, 4)


class RecordingCompiler(pb_grpc.CompilerServicer):
    """Compile answers an empty response and keeps the requests it saw."""

    def __init__(self):
        self.requests = []

    def Compile(self, request, context):
        self.requests.append(request)
        return pb.CompileResponse()


class CompileOptionsOnTheWireTest(unittest.TestCase):

    def test_fusion_is_on_unless_turned_off(self):
        servicer = RecordingCompiler()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
        pb_grpc.add_CompilerServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.addCleanup(server.stop, None)
        client = OrdoClient(f"127.0.0.1:{port}", timeout_s=20)
        self.addCleanup(client.close)
        client.compile(b"\x08\x07", rewrite="partition")
        client.compile(b"\x08\x07", rewrite="partition", fusion=False)
        self.assertEqual([r.options.disable_fusion for r in servicer.requests], [False, True])
        self.assertEqual(servicer.requests[1].options.rewrite, "partition")


if __name__ == "__main__":
    unittest.main(verbosity=2)
