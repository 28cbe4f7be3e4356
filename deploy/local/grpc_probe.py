"""Minimal gRPC calls to ordo processes without generated Python stubs.

Why hand-encoded protobuf: Debian 12 has python3-grpcio but not grpcio-tools
or grpcio-health-checking, and the calls the deployment checks need are tiny
(an empty HealthCheckRequest; a CompileRequest holding only `onnx_model`).
Used by scripts/cluster-up and tests/deploy; run with /usr/bin/python3.
"""

import grpc

# grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING
_SERVING = 1


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data, pos):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def decode_fields(data):
    """Top-level fields of a protobuf message: {number: [value, ...]}.

    Varints come back as ints, length-delimited fields as bytes (decode
    nested messages by calling this again)."""
    fields = {}
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, pos = _read_varint(data, pos)
        elif wire_type == 2:
            length, pos = _read_varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire_type == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire_type == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        fields.setdefault(number, []).append(value)
    return fields


def _unary(address, method, request, timeout):
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(method, request_serializer=None,
                                   response_deserializer=None)
        return call(request, timeout=timeout)


def health_status(address, service="", timeout=2.0):
    """The grpc.health.v1 status number (1 = SERVING), or None when the call fails."""
    request = b""
    if service:
        encoded = service.encode()
        request = b"\x0a" + _varint(len(encoded)) + encoded
    try:
        response = _unary(address, "/grpc.health.v1.Health/Check", request, timeout)
    except grpc.RpcError:
        return None
    return decode_fields(response).get(1, [0])[0]


def is_serving(address, service="", timeout=2.0):
    return health_status(address, service, timeout) == _SERVING


def compile_onnx(address, onnx_bytes, timeout=60.0):
    """Calls ordo.v1.Compiler/Compile with the model; returns a dict of the
    response fields the deployment checks use (grpc.RpcError on failure)."""
    request = b"\x0a" + _varint(len(onnx_bytes)) + onnx_bytes  # onnx_model = 1
    response = decode_fields(
        _unary(address, "/ordo.v1.Compiler/Compile", request, timeout))
    stats = decode_fields(response.get(16, [b""])[0])
    return {
        "ops": response.get(2, [0])[0],
        "peak_bytes": response.get(5, [0])[0],
        "parts": stats.get(3, [0])[0],
        "cache_hits": stats.get(4, [0])[0],
        "cache_misses": stats.get(5, [0])[0],
        "cache_errors": stats.get(6, [0])[0],
        "workers_used": stats.get(7, [0])[0],
    }
