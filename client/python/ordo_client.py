"""A small Python client of ordo-server's public API (ordo.v1.Compiler).

    from ordo_client import OrdoClient
    with OrdoClient("localhost:50051", timeout_s=30) as client:
        response = client.compile("examples/models/tiny_cell.onnx")
        print(response.peak_bytes, list(response.schedule))

Methods return the generated response messages (CompileResponse,
EstimateResponse, GetInfoResponse; compile_stream yields CompileProgress
messages, then the CompileResponse). A failed call raises OrdoError, which
carries the gRPC status code and the server's message (INVALID_ARGUMENT for a
bad model names the node or tensor; RESOURCE_EXHAUSTED for limits).

Retry policy (the one every ordo client should use; the C++ client's too,
client/lib/ordo_client.h), for UNAVAILABLE and CANCELLED, in two layers.
Layer 1:
channels are created with `grpc.enable_retries` and this service config
(RETRY_SERVICE_CONFIG):

    {"methodConfig": [{"name": [{"service": "ordo.v1.Compiler"}],
                       "retryPolicy": {"maxAttempts": 4,
                                       "initialBackoff": "0.2s",
                                       "maxBackoff": "2s",
                                       "backoffMultiplier": 2,
                                       "retryableStatusCodes": ["UNAVAILABLE",
                                                                "CANCELLED"]}}]}

- Only UNAVAILABLE and CANCELLED are retried: the server was unreachable,
  restarting or draining, so nothing was computed and resending is safe.
  This client never cancels a call itself; gRPC cancels a call that reaches
  a front in the instant it shuts down (grpc/grpc#41785). Every Compiler
  method is a pure function of its request, so a retry never duplicates an
  effect. INVALID_ARGUMENT (a bad model), RESOURCE_EXHAUSTED over a limit
  (a model too large) and DEADLINE_EXCEEDED are returned at once: resending
  would fail the same way.
- "server busy" (RESOURCE_EXHAUSTED over --max-concurrent) comes with the
  server's pushback trailer, `grpc-retry-pushback-ms` (gRFC A6): a jittered
  100-300 ms. The call is resent after that pause, again and again while
  its deadline allows, so a burst over the limit waits instead of failing.
- At most 4 attempts; the pause before attempt n+1 is random in
  [0, min(2 s, 0.2 s * 2^(n-1))] (gRPC's exponential backoff with full
  jitter), so 4 attempts wait at most 0.2 + 0.4 + 0.8 s.
- Layer 2, the UNAVAILABLE window (`unavailable_window_s`, 10 s from the
  call's start): when layer 1 gives up, the client pauses (0.1 s, doubling
  to 1 s), waits for the channel to connect again (at most until the window
  ends) and resends. So a server restarted within a few seconds (a front
  rolled, a drained front's successor) is never seen by the caller. The
  channel reconnects every 0.1 s to 1 s (not gRPC's 1 s to 120 s).
- All attempts share the call's one deadline (`timeout_s`): retries never
  extend it.
- CompileStream is resent only until the first event arrives; after that
  a failure is returned (gRPC commits a streaming call on its first
  response). CompileMany streams are not resent.

The generated stubs (ordo/v1/*_pb2.py, *_pb2_grpc.py) are built by CMake
(target ordo_python_stubs) into build/client/python; set ORDO_PYTHON_STUBS to
use another folder. Needs Debian's python3-grpcio and python3-protobuf (run
with /usr/bin/python3).
"""

import asyncio
import collections
import datetime
import json
import os
import sys
import threading
import time

import grpc

_HERE = os.path.dirname(os.path.abspath(__file__))
_DEFAULT_STUBS = os.path.join(_HERE, "..", "..", "build", "client", "python")
STUBS_DIR = os.path.abspath(os.environ.get("ORDO_PYTHON_STUBS") or _DEFAULT_STUBS)
if STUBS_DIR not in sys.path:
    sys.path.insert(0, STUBS_DIR)
try:
    from google.protobuf import json_format
    from ordo.v1 import compiler_service_pb2 as pb  # noqa: E402
    from ordo.v1 import compiler_service_pb2_grpc as pb_grpc  # noqa: E402
    from ordo.v1 import device_pb2, graph_pb2, schedule_pb2  # noqa: E402
except ImportError as error:  # The stubs are build outputs, not sources.
    raise ImportError(
        f"ordo's Python stubs are not in {STUBS_DIR} ({error}); build them with "
        "`scripts/build ordo_python_stubs` or set ORDO_PYTHON_STUBS") from error

# The codes both layers of the retry policy resend (module docstring).
RESENT_CODES = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)

# The retry policy of the module docstring, as a gRPC service config.
RETRY_SERVICE_CONFIG = {
    "methodConfig": [{
        "name": [{"service": "ordo.v1.Compiler"}],
        "retryPolicy": {
            "maxAttempts": 4,
            "initialBackoff": "0.2s",
            "maxBackoff": "2s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": [code.name for code in RESENT_CODES],
        },
    }]
}

# The trailer in which a busy server says when to resend (gRFC A6,
# "Pushback"; rpc::kRetryPushbackTrailer): milliseconds, negative = never.
RETRY_PUSHBACK_TRAILER = "grpc-retry-pushback-ms"


def busy_pushback_s(error):
    """The pause in seconds a RESOURCE_EXHAUSTED RpcError asks for in its
    pushback trailer ("server busy"), or None: another code, no trailer (a
    request over a limit, which would fail again), or a negative or
    malformed value (gRFC A6: do not resend)."""
    if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    for key, value in error.trailing_metadata() or ():
        if key == RETRY_PUSHBACK_TRAILER:
            try:
                ms = int(value)
            except ValueError:
                return None
            return ms / 1000 if ms >= 0 else None
    return None


def _event_item(event):
    """What compile_stream yields for a CompileEvent: its CompileProgress or
    its CompileResponse; None for a kind this client does not know."""
    kind = event.WhichOneof("event")
    return getattr(event, kind) if kind in ("progress", "result") else None


class _RetryClock:
    """The retry policy's decisions for one call (module docstring), shared
    by OrdoClient and AsyncOrdoClient: the time left, and after a failed
    attempt the pause before the next one."""

    def __init__(self, timeout_s, unavailable_window_s):
        start = time.monotonic()
        self.deadline = start + timeout_s
        self.window_end = start + min(unavailable_window_s, timeout_s)
        self._pause = 0.1

    def remaining(self):
        return self.deadline - time.monotonic()

    def after(self, error):
        """(pause in seconds, whether to wait for the channel to connect
        first) before resending after `error`, or None: the call is over.
        A busy refusal is resent after its pushback while the deadline
        allows; UNAVAILABLE and CANCELLED within the window, the pause
        doubling from 0.1 s to 1 s."""
        now = time.monotonic()
        pushback = busy_pushback_s(error)
        if pushback is not None:
            return (pushback, False) if now + pushback < self.deadline else None
        if error.code() not in RESENT_CODES or now + self._pause >= self.window_end:
            return None
        pause = self._pause
        self._pause = min(2 * pause, 1.0)
        return pause, True


# Layer 2 of the retry policy (module docstring): how long after its start
# a call failing UNAVAILABLE is still resent.
UNAVAILABLE_WINDOW_S = 10.0

# The longest search budget the service takes (rpc::kMaxTimeLimit).
MAX_TIME_LIMIT_S = 24 * 3600

# The server accepts up to 256 MiB by default (--max-message-mb); gRPC's
# client default of 4 MiB would refuse large models and reordered ONNX.
_MAX_MESSAGE_BYTES = 256 << 20


# One result of OrdoClient.compile_many: `index` is the model's position in
# the input, `response` its CompileResponse (None when it failed), `error` an
# OrdoError (None when it did not), `seconds` the time from sending it to
# its result, as the client saw it.
ManyResult = collections.namedtuple("ManyResult", "index response error seconds")


class OrdoError(Exception):
    """A failed call: `code` is a grpc.StatusCode, `message` the server's."""

    def __init__(self, code, message):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


def _is_tflite(data):
    """True for a TFLite flatbuffer: file identifier "TFL3" at offset 4."""
    return len(data) >= 8 and data[4:8] == b"TFL3"


def _set_model(request, model):
    """Puts `model` into the request's `model` oneof.

    `model` is ONNX or TFLite bytes, an ordo.v1.Graph message, or a path:
    `.json` and `.pb` files hold an ordo.v1.Graph (protobuf JSON / binary),
    `.tflite` files (and any bytes with TFLite's identifier "TFL3" at offset
    4) are TensorFlow Lite, anything else is read as ONNX.
    """
    if isinstance(model, graph_pb2.Graph):
        request.graph.CopyFrom(model)
    elif isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        if _is_tflite(data):
            request.tflite_model = data
        else:
            request.onnx_model = data
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        with open(path, "rb") as f:
            data = f.read()
        if path.endswith(".json"):
            json_format.Parse(data, request.graph)
        elif path.endswith(".pb"):
            request.graph.ParseFromString(data)
        elif path.endswith(".tflite") or _is_tflite(data):
            request.tflite_model = data
        else:
            request.onnx_model = data
    else:
        raise TypeError(f"model must be a path, bytes or ordo.v1.Graph, not {type(model)}")


def _set_input_shapes(options, input_shapes, batch):
    """CompileOptions.input_shapes from {"input": (1, 3, 224, 224)} and
    .batch; the server checks them against the model."""
    for name, dims in (input_shapes or {}).items():
        options.input_shapes[name].dims.extend(int(d) for d in dims)
    options.batch = int(batch or 0)


def _set_dim_params(options, dim_params):
    """CompileOptions.dim_params from {"sequence": 128}: every symbolic
    input dim of that name (the server checks them against the model)."""
    for name, value in (dim_params or {}).items():
        options.dim_params[name] = int(value)


def _device(device):
    """A DeviceSpec from None, a DeviceSpec or a dict of its fields."""
    if device is None:
        return device_pb2.DeviceSpec()
    if isinstance(device, device_pb2.DeviceSpec):
        return device
    return json_format.ParseDict(device, device_pb2.DeviceSpec())


def _read_bytes(path):
    """The contents of `path`, or None when `path` is None."""
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def _read_token(path):
    """The first token of a token file (as the C++ clients read it)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            token = line.strip()
            if token and not token.startswith("#"):
                return token
    raise ValueError(f"auth token file {path!r} holds no token")


class OrdoClient:
    """A connection to one ordo-server.

    `target` is a gRPC target ("host:port", "dns:///name:port"); calls go
    round-robin over every address it resolves to (several fronts behind a
    headless Service, deploy/k8s), so a busy front's resent call may land on
    another. The channel
    is plaintext unless a `tls_*` file is given: then TLS, the server checked
    against `tls_ca_file` (PEM; the system roots when None), with the client
    certificate `tls_cert_file` + `tls_key_file` for servers that require
    mutual TLS. `auth_token` (or the first token of `auth_token_file`, one
    per line, '#' comments skipped) is sent as `authorization: Bearer ...`
    metadata with every call, for servers run with --auth-token-file. `timeout_s` is
    the deadline of each call, retries included. `retry=False` turns the
    retry policy off (tests that want to see UNAVAILABLE at once);
    `unavailable_window_s` is layer 2 of the policy (0: layer 1 only).
    `namespace` is the cache namespace of every request (CompileOptions.
    cache_namespace: at most 64 of A-Z a-z 0-9 . _ -): its cache entries are
    kept apart from other namespaces' on the server (docs/nas.md); None:
    the server's default namespace.

    Thread-safe: gRPC channels and stubs may be shared between threads. Close
    it (or use it as a context manager) to release the channel.
    """

    def __init__(self, target, timeout_s=60.0, retry=True, tls_ca_file=None,
                 tls_cert_file=None, tls_key_file=None, auth_token=None,
                 auth_token_file=None, unavailable_window_s=UNAVAILABLE_WINDOW_S,
                 namespace=None):
        self._connect(grpc, target, timeout_s, retry, tls_ca_file, tls_cert_file, tls_key_file,
                      auth_token, auth_token_file, unavailable_window_s, namespace)

    def _connect(self, channels, target, timeout_s, retry, tls_ca_file, tls_cert_file,
                 tls_key_file, auth_token, auth_token_file, unavailable_window_s, namespace):
        """Sets up the channel (from `channels`: the grpc or the grpc.aio
        module), the stub and the call settings of the class docstring."""
        options = [
            ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
            ("grpc.enable_retries", 1 if retry else 0),
            # Several fronts behind one name (a headless Service) share the
            # calls, and a resent call goes to the next front.
            ("grpc.lb_policy_name", "round_robin"),
        ]
        if retry:
            options += [("grpc.service_config", json.dumps(RETRY_SERVICE_CONFIG)),
                        ("grpc.initial_reconnect_backoff_ms", 100),
                        ("grpc.max_reconnect_backoff_ms", 1000)]
        self.target = target
        self._closed = False
        self.namespace = namespace or ""
        self.timeout_s = timeout_s
        self.retry = retry
        self.unavailable_window_s = unavailable_window_s if retry else 0
        if auth_token_file is not None:
            auth_token = _read_token(auth_token_file)
        self._metadata = (("authorization", f"Bearer {auth_token}"),) if auth_token else ()
        if tls_ca_file or tls_cert_file or tls_key_file:
            if bool(tls_cert_file) != bool(tls_key_file):
                raise ValueError("tls_cert_file and tls_key_file go together")
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_bytes(tls_ca_file),
                private_key=_read_bytes(tls_key_file),
                certificate_chain=_read_bytes(tls_cert_file))
            self._channel = channels.secure_channel(target, credentials, options=options)
        else:
            self._channel = channels.insecure_channel(target, options=options)
        self._stub = pb_grpc.CompilerStub(self._channel)

    def close(self):
        self._closed = True  # calls in flight end CANCELLED, and are not resent
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    @staticmethod
    def _request(kind, model, device, scheduler, time_limit_s, arena_planner, inplace,
                 count_weights, return_reordered_onnx=False, rewrite="",
                 max_latency_overhead=None, beam_width=0, input_shapes=None, batch=0,
                 return_reordered_tflite=False):
        request = kind()
        _set_model(request, model)
        request.device.CopyFrom(_device(device))
        options = request.options
        options.scheduler = scheduler or ""
        options.arena_planner = arena_planner or ""
        if time_limit_s is not None:
            # NaN fails too; past a day (inf too) is a day, as the service
            # and the CLI take it (rpc::kMaxTimeLimit); larger values do not
            # survive the conversion to a Duration.
            if not time_limit_s >= 0:
                raise ValueError(f"time_limit_s: must be a non-negative number of seconds, "
                                 f"got {time_limit_s!r}")
            seconds = min(float(time_limit_s), MAX_TIME_LIMIT_S)
            options.time_limit.FromTimedelta(datetime.timedelta(seconds=seconds))
        if inplace is not None:
            options.inplace = inplace
        options.count_weights = count_weights
        options.return_reordered_onnx = return_reordered_onnx
        _set_input_shapes(options, input_shapes, batch)
        if kind is pb.CompileRequest:
            options.rewrite = rewrite or ""
            if max_latency_overhead is not None:
                options.max_latency_overhead = max_latency_overhead
            options.beam_width = beam_width or 0
            options.return_reordered_tflite = return_reordered_tflite
        return request

    def _build(self, kind, *args, **kwargs):
        """_request() in this client's cache namespace."""
        request = self._request(kind, *args, **kwargs)
        request.options.cache_namespace = self.namespace
        return request

    def _attempts(self):
        """Yields the time left of the call before each attempt. The caller
        tries, and after a failure sends the generator the RpcError when the
        call may be resent (None ends it); the generator pauses as
        _RetryClock says and ends when it says the call is over."""
        clock = _RetryClock(self.timeout_s, self.unavailable_window_s)
        while True:
            error = yield clock.remaining()
            if error is None or self._closed or not self.retry:
                return
            step = clock.after(error)
            if step is None:
                return
            pause, reconnect = step
            time.sleep(pause)
            if reconnect and not self._wait_until_ready(clock.window_end):
                return

    def _wait_until_ready(self, until):
        """Waits until the channel connects (True), or until the monotonic
        time `until` or close() (False). In slices, so a close() from another
        thread ends the wait: the ready future of a closed channel never
        resolves."""
        ready = grpc.channel_ready_future(self._channel)
        try:
            while not self._closed and time.monotonic() < until:
                try:
                    ready.result(timeout=max(min(until - time.monotonic(), 0.25), 0.001))
                    return True
                except grpc.FutureTimeoutError:
                    continue
            return False
        finally:
            ready.cancel()

    def _call(self, method, request):
        attempts = self._attempts()
        remaining = next(attempts)
        while True:
            try:
                return method(request, timeout=remaining, metadata=self._metadata)
            except grpc.RpcError as error:
                try:
                    remaining = attempts.send(error)
                except StopIteration:
                    raise OrdoError(error.code(), error.details()) from None

    def compile(self, model, device=None, scheduler="best", time_limit_s=None,
                arena_planner="", inplace=None, count_weights=False,
                return_reordered_onnx=False, rewrite="", max_latency_overhead=None,
                beam_width=0, input_shapes=None, batch=0, io_outside_arena=False,
                return_reordered_tflite=False, fusion=True, dim_params=None,
                return_plan_header=False):
        """Compiles `model` (path, ONNX or TFLite bytes, or ordo.v1.Graph).

        `device` is a DeviceSpec or a dict of its fields (e.g.
        {"memory_capacity_bytes": 2 << 20, "on_chip_bytes": 262144,
        "macs_per_second": 4e8}); memory pools are DeviceSpec fields too:
        {"pools": [{"name": "dtcm", "capacity_bytes": 131072,
        "read_bytes_per_second": 3.2e9}, ...], "pinned_tensors": {"x":
        "dtcm"}} or {"preset": "stm32h743"} (GetInfo's device_presets), with
        "placement_effort": "PLACEMENT_EFFORT_THOROUGH" for the thorough
        placement (the default is fast), and the response's `placement` says
        where each tensor lives (docs/pools.md). `time_limit_s` is the search budget (server
        default 10 s; more than a day is a day), capped by `timeout_s`. `rewrite` ("none", "identity",
        "partition", "all" or "auto"; ONNX only) rewrites the model first:
        the response then carries `rewritten_onnx_model`, `rewrites` and
        `rewrite`; `max_latency_overhead` bounds partitioning's extra latency
        (server default 0.05); `beam_width` (1..16, 0 = server default 1) is
        how many states the partition search keeps per round.
        `input_shapes` ({"input": (1, 3, 224, 224)}: every dim of a graph
        input) and `batch` (the value of the other inputs' symbolic batch dim:
        the one named like "batch", else dim 0) give a dynamic ONNX export the one shape to compile for;
        `dim_params` ({"sequence": 128}) sets every symbolic input dim of a
        name, in every input that has it.
        `io_outside_arena` leaves graph inputs and outputs out of the peak and
        the arena (their own buffers on the device). `fusion=False` rewrites
        without patch-wise fusion of layer chains (docs/rewriting.md).
        `return_reordered_tflite` (TFLite input) returns the model in
        schedule order with ordo's arena as TFLite Micro's offline plan in
        `reordered_tflite_model` (with pools, TFLM's one arena goes whole
        into one pool: DeviceSpec.one_arena). `return_plan_header` returns the
        plan as a C header in `plan_header` (the CLI's plan.h: a buffer size
        per pool, each tensor's pool and offset, the op order). Returns the
        CompileResponse.
        """
        return self._call(self._stub.Compile, self._compile_request(
            model, device, scheduler, time_limit_s, arena_planner, inplace, count_weights,
            return_reordered_onnx, rewrite, max_latency_overhead, beam_width, input_shapes,
            batch, io_outside_arena, return_reordered_tflite, fusion, dim_params,
            return_plan_header))

    def _compile_request(self, model, device=None, scheduler="best", time_limit_s=None,
                         arena_planner="", inplace=None, count_weights=False,
                         return_reordered_onnx=False, rewrite="", max_latency_overhead=None,
                         beam_width=0, input_shapes=None, batch=0, io_outside_arena=False,
                         return_reordered_tflite=False, fusion=True, dim_params=None,
                         return_plan_header=False):
        """The CompileRequest of compile() (and compile_stream(), which
        takes a subset of the arguments)."""
        request = self._build(pb.CompileRequest, model, device, scheduler, time_limit_s,
                                arena_planner, inplace, count_weights, return_reordered_onnx,
                                rewrite, max_latency_overhead, beam_width, input_shapes, batch,
                                return_reordered_tflite)
        request.options.io_outside_arena = io_outside_arena
        request.options.disable_fusion = not fusion
        request.options.return_plan_header = return_plan_header
        _set_dim_params(request.options, dim_params)
        return request

    def compile_stream(self, model, device=None, scheduler="best", time_limit_s=None,
                       arena_planner="", inplace=None, count_weights=False, rewrite="",
                       max_latency_overhead=None, beam_width=0, input_shapes=None, batch=0,
                       io_outside_arena=False, dim_params=None, return_plan_header=False):
        """Like compile(); yields CompileProgress messages as stages finish,
        then the CompileResponse (always last)."""
        request = self._compile_request(
            model, device, scheduler, time_limit_s, arena_planner, inplace, count_weights,
            rewrite=rewrite, max_latency_overhead=max_latency_overhead, beam_width=beam_width,
            input_shapes=input_shapes, batch=batch, io_outside_arena=io_outside_arena,
            dim_params=dim_params, return_plan_header=return_plan_header)
        delivered = False  # events went to the caller: not resent
        attempts = self._attempts()
        remaining = next(attempts)
        while True:
            try:
                for event in self._stub.CompileStream(request, timeout=remaining,
                                                      metadata=self._metadata):
                    delivered = True
                    if (item := _event_item(event)) is not None:
                        yield item
                return
            except grpc.RpcError as error:
                try:
                    remaining = attempts.send(None if delivered else error)
                except StopIteration:
                    raise OrdoError(error.code(), error.details()) from None

    def compile_many(self, models, concurrency=4, device=None, scheduler="best",
                     time_limit_s=None, arena_planner="", inplace=None, count_weights=False):
        """Compiles every model of the iterable `models` (each as compile()
        takes it) on one CompileMany stream, keeping up to `concurrency` in
        flight; `models` is read lazily, on a thread of its own, so it may
        be a generator that proposes the next candidates, one that waits for
        earlier results too (an exception it raises is raised here once the
        candidates sent have their results). Yields a ManyResult per model in the
        order they finish (not input order). A failed candidate yields its
        OrdoError in the result and the stream goes on; a failed stream
        raises OrdoError. A candidate the server refused as busy (its error
        has `retry_after`) is sent again on the same stream after that
        pause, unless retry=False; `seconds` then counts from its first
        sending. `timeout_s` bounds the whole stream. Stopping the iteration
        early cancels the stream."""
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        slots = threading.Semaphore(concurrency)
        stopped = threading.Event()
        # Guards the state below; notified whenever it changes.
        changed = threading.Condition()
        sent = {}  # index -> (first sending, request): in flight
        resend = []  # (when, index): refused busy, to send again
        fed = []  # (index, model) from the feeder, not sent yet
        feed_end = []  # [exception or None] once `models` is done
        # The feeder reads `models` on its own thread, one model per release
        # of `wanted`: a proposer that waits for results must not hold up
        # the resends those results wait for.
        wanted = threading.Semaphore(0)

        def feed():
            error = None
            try:
                for item in enumerate(models):
                    with changed:
                        fed.append(item)
                        changed.notify_all()
                    while not wanted.acquire(timeout=0.1):
                        if stopped.is_set():
                            return
            except Exception as exception:  # pylint: disable=broad-except
                error = exception  # raised to the caller when the stream ends
            finally:
                with changed:
                    feed_end.append(error)
                    changed.notify_all()

        def next_request():
            """A busy candidate due again, else the feeder's next model (as
            (index, model)); None when all are done or the stream stopped."""
            with changed:
                while not stopped.is_set():
                    if resend and resend[0][0] <= time.monotonic():
                        return sent[resend.pop(0)[1]][1]
                    if fed:
                        wanted.release()
                        return fed.pop(0)
                    if feed_end and (feed_end[0] is not None or (not sent and not resend)):
                        return None
                    due = resend[0][0] - time.monotonic() if resend else 0.1
                    changed.wait(timeout=max(0.0, min(due, 0.1)))
            return None

        def requests():
            while True:
                while not slots.acquire(timeout=0.1):
                    if stopped.is_set():
                        return
                item = next_request()
                if item is None:
                    return
                if isinstance(item, pb.CompileManyRequest):
                    yield item
                    continue
                index, model = item
                request = pb.CompileManyRequest(id=str(index))
                request.request.CopyFrom(self._build(
                    pb.CompileRequest, model, device, scheduler, time_limit_s, arena_planner,
                    inplace, count_weights))
                with changed:
                    sent[index] = (time.monotonic(), request)
                yield request

        feeder = threading.Thread(target=feed, daemon=True, name="ordo-compile-many-feeder")
        feeder.start()
        call = self._stub.CompileMany(requests(), timeout=self.timeout_s,
                                      metadata=self._metadata)
        try:
            for result in call:
                slots.release()
                index = int(result.id)
                if (result.WhichOneof("result") == "error" and self.retry
                        and result.error.HasField("retry_after")):
                    pause = result.error.retry_after.ToTimedelta().total_seconds()
                    with changed:
                        resend.append((time.monotonic() + pause, index))
                        resend.sort()
                        changed.notify_all()
                    continue
                with changed:
                    seconds = time.monotonic() - sent.pop(index)[0]
                    changed.notify_all()
                if result.WhichOneof("result") == "error":
                    error = OrdoError(_GRPC_CODES.get(result.error.code, grpc.StatusCode.UNKNOWN),
                                      result.error.message)
                    yield ManyResult(index, None, error, seconds)
                else:
                    yield ManyResult(index, result.response, None, seconds)
        except grpc.RpcError as error:
            raise OrdoError(error.code(), error.details()) from None
        finally:
            stopped.set()
            call.cancel()
        if feed_end and feed_end[0] is not None:
            raise feed_end[0]

    def estimate(self, model, device=None, scheduler="best", inplace=None,
                 count_weights=False, input_shapes=None, batch=0, dim_params=None):
        """Fast figures without a search: model-order, greedy and cached
        peaks, lower bound, parts and cached parts (`input_shapes`,
        `batch` and `dim_params` as in compile()). Returns the EstimateResponse."""
        return self._call(self._stub.Estimate, self._estimate_request(
            model, device, scheduler, inplace, count_weights, input_shapes, batch, dim_params))

    def _estimate_request(self, model, device=None, scheduler="best", inplace=None,
                          count_weights=False, input_shapes=None, batch=0, dim_params=None):
        """The EstimateRequest of estimate()."""
        request = self._build(pb.EstimateRequest, model, device, scheduler, None, "",
                                inplace, count_weights, input_shapes=input_shapes,
                                batch=batch)
        _set_dim_params(request.options, dim_params)
        return request

    def info(self):
        """The server's schedulers, arena planners, limits, workers, cache."""
        return self._call(self._stub.GetInfo, pb.GetInfoRequest())


class AsyncOrdoClient(OrdoClient):
    """OrdoClient for asyncio code (gRPC's grpc.aio): the same constructor,
    requests, responses, errors and retry policy, with `await
    client.compile(...)`, `await client.estimate(...)`, `await
    client.info()` and `async for item in client.compile_stream(...)`.
    compile_many is OrdoClient's only (a stream driven by a thread).

        async with AsyncOrdoClient("localhost:50051") as client:
            responses = await asyncio.gather(*(client.compile(m) for m in models))

    Create and use it inside one running event loop."""

    def __init__(self, target, timeout_s=60.0, retry=True, tls_ca_file=None,
                 tls_cert_file=None, tls_key_file=None, auth_token=None,
                 auth_token_file=None, unavailable_window_s=UNAVAILABLE_WINDOW_S,
                 namespace=None):
        # pylint: disable=super-init-not-called: the channel is grpc.aio's.
        self._connect(grpc.aio, target, timeout_s, retry, tls_ca_file, tls_cert_file,
                      tls_key_file, auth_token, auth_token_file, unavailable_window_s,
                      namespace)

    async def close(self):
        self._closed = True
        await self._channel.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        await self.close()

    def __enter__(self):
        raise TypeError("AsyncOrdoClient is an async context manager: use `async with`")

    async def _resend_pause(self, clock, error):
        """Sleeps as _RetryClock says before resending after `error`; False
        when the call is over instead."""
        if self._closed or not self.retry:
            return False
        step = clock.after(error)
        if step is None:
            return False
        pause, reconnect = step
        await asyncio.sleep(pause)
        if not reconnect:
            return True
        try:
            await asyncio.wait_for(self._channel.channel_ready(),
                                   max(clock.window_end - time.monotonic(), 0.001))
            return True
        except asyncio.TimeoutError:
            return False

    async def _call(self, method, request):
        clock = _RetryClock(self.timeout_s, self.unavailable_window_s)
        while True:
            try:
                return await method(request, timeout=clock.remaining(),
                                    metadata=self._metadata)
            except grpc.aio.AioRpcError as error:
                if not await self._resend_pause(clock, error):
                    raise OrdoError(error.code(), error.details()) from None

    async def compile(self, *args, **kwargs):
        """OrdoClient.compile(), awaited."""
        return await self._call(self._stub.Compile, self._compile_request(*args, **kwargs))

    async def compile_stream(self, model, device=None, scheduler="best", time_limit_s=None,
                             arena_planner="", inplace=None, count_weights=False, rewrite="",
                             max_latency_overhead=None, beam_width=0, input_shapes=None,
                             batch=0, io_outside_arena=False, dim_params=None,
                             return_plan_header=False):
        """OrdoClient.compile_stream() as an async generator."""
        request = self._compile_request(
            model, device, scheduler, time_limit_s, arena_planner, inplace, count_weights,
            rewrite=rewrite, max_latency_overhead=max_latency_overhead, beam_width=beam_width,
            input_shapes=input_shapes, batch=batch, io_outside_arena=io_outside_arena,
            dim_params=dim_params, return_plan_header=return_plan_header)
        clock = _RetryClock(self.timeout_s, self.unavailable_window_s)
        delivered = False  # events went to the caller: not resent
        while True:
            try:
                async for event in self._stub.CompileStream(
                        request, timeout=clock.remaining(), metadata=self._metadata):
                    delivered = True
                    if (item := _event_item(event)) is not None:
                        yield item
                return
            except grpc.aio.AioRpcError as error:
                if delivered or not await self._resend_pause(clock, error):
                    raise OrdoError(error.code(), error.details()) from None

    async def estimate(self, *args, **kwargs):
        """OrdoClient.estimate(), awaited."""
        return await self._call(self._stub.Estimate, self._estimate_request(*args, **kwargs))

    async def info(self):
        """OrdoClient.info(), awaited."""
        return await self._call(self._stub.GetInfo, pb.GetInfoRequest())

    def compile_many(self, *args, **kwargs):
        raise TypeError("compile_many is OrdoClient's; with asyncio, gather compile() calls")


# grpc.StatusCode members by their numeric value (CompileManyError.code).
_GRPC_CODES = {code.value[0]: code for code in grpc.StatusCode}


def status_name(status):
    """The lower-case name ("optimal", "bounded", "heuristic") of a ScheduleStatus."""
    name = schedule_pb2.ScheduleStatus.Name(status)
    return name[len("SCHEDULE_STATUS_"):].lower()
