#!/usr/bin/python3
"""input_shapes=, dim_params= and batch= of the Python client against a real ordo-server.

Dynamic-batch models are made here with the onnx package (dim 0 of every
graph input, output and value_info becomes "batch", as PyTorch's
dynamic_axes writes it): from examples/models/shape_subgraph.onnx, and from
../shared/models/mobilenet_v2.onnx when that folder exists (the issue-14
check: --batch 1 gives exactly the static export's peak and schedule).

Run by ctest (tests/python/CMakeLists.txt), or by hand like
python_client_test.py.
"""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import grpc  # noqa: E402
import onnx  # noqa: E402
from python_client_test import (CALL_TIMEOUT_S, EXAMPLES, SERVER_BINARY, SOURCE_DIR,  # noqa: E402
                                start_server, stop_server)
from ordo_client import OrdoClient, OrdoError  # noqa: E402

SHARED_MODELS = os.path.join(SOURCE_DIR, "..", "shared", "models")


def dynamic_batch(path):
    """The model at `path` with a symbolic dim 0 named "batch", as bytes."""
    model = onnx.load(path, load_external_data=False)
    graph = model.graph
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        dims = value.type.tensor_type.shape.dim
        if len(dims) > 0:
            dims[0].dim_param = "batch"
    return model.SerializeToString()


class PythonInputShapesTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if not os.access(SERVER_BINARY, os.X_OK):
            raise RuntimeError(f"{SERVER_BINARY} not built: build target ordo-server")
        log = tempfile.TemporaryFile("w+")
        cls.addClassCleanup(log.close)
        cls.server, cls.address = start_server(log)
        cls.addClassCleanup(stop_server, cls.server)
        cls.client = OrdoClient(cls.address, timeout_s=CALL_TIMEOUT_S)
        cls.addClassCleanup(cls.client.close)

    def assert_same_compile(self, got, expected):
        self.assertEqual(got.peak_bytes, expected.peak_bytes)
        self.assertEqual(list(got.schedule), list(expected.schedule))
        self.assertEqual(got.status, expected.status)

    def test_batch_and_input_shapes_compile_a_dynamic_export(self):
        path = os.path.join(EXAMPLES, "shape_subgraph.onnx")
        expected = self.client.compile(path, time_limit_s=5)
        dynamic = dynamic_batch(path)
        with self.assertRaises(OrdoError) as refused:
            self.client.compile(dynamic, time_limit_s=5)
        self.assertEqual(refused.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("--batch 1 (or --input-shape x=1x8x16x16)", refused.exception.message)
        self.assert_same_compile(self.client.compile(dynamic, batch=1, time_limit_s=5), expected)
        self.assert_same_compile(
            self.client.compile(dynamic, input_shapes={"x": (1, 8, 16, 16)}, time_limit_s=5),
            expected)
        four = self.client.compile(dynamic, input_shapes={"x": [4, 8, 16, 16]}, time_limit_s=5)
        self.assertEqual(four.peak_bytes, 4 * expected.peak_bytes)
        streamed = list(self.client.compile_stream(dynamic, batch=1, time_limit_s=5))
        self.assert_same_compile(streamed[-1], expected)
        estimate = self.client.estimate(dynamic, batch=2)
        self.assertEqual(estimate.lower_bound_bytes,
                         2 * self.client.estimate(path).lower_bound_bytes)

    def test_dim_params_set_a_dim_by_its_name(self):
        path = os.path.join(EXAMPLES, "shape_subgraph.onnx")
        dynamic = dynamic_batch(path)
        by_batch = self.client.compile(dynamic, batch=3, time_limit_s=5)
        by_name = self.client.compile(dynamic, dim_params={"batch": 3}, time_limit_s=5)
        self.assert_same_compile(by_name, by_batch)
        self.assertEqual(dict(by_name.options.dim_params), {"batch": 3})
        streamed = list(self.client.compile_stream(dynamic, dim_params={"batch": 3},
                                                   time_limit_s=5))
        self.assert_same_compile(streamed[-1], by_batch)
        self.assertEqual(self.client.estimate(dynamic, dim_params={"batch": 2}).lower_bound_bytes,
                         self.client.estimate(dynamic, batch=2).lower_bound_bytes)
        with self.assertRaises(OrdoError) as refused:
            self.client.compile(dynamic, dim_params={"seq": 8}, time_limit_s=5)
        self.assertEqual(refused.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn('--dim-param seq=8: no graph input has a symbolic dim named "seq"',
                      refused.exception.message)
        self.assertIn("dim_params", refused.exception.message)

    def test_bad_override_names_input_and_dim(self):
        dynamic = dynamic_batch(os.path.join(EXAMPLES, "shape_subgraph.onnx"))
        with self.assertRaises(OrdoError) as error:
            self.client.compile(dynamic, input_shapes={"x": (1, 3, 16, 16)})
        self.assertEqual(error.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn('dim 1 of graph input "x" is static 8', error.exception.message)
        with self.assertRaises(OrdoError) as error:
            self.client.compile(dynamic, input_shapes={"image": (1, 8, 16, 16)})
        self.assertIn('no graph input "image"', error.exception.message)

    def test_dynamic_mobilenet_v2_with_batch_one_is_the_static_export(self):
        path = os.path.join(SHARED_MODELS, "mobilenet_v2.onnx")
        if not os.path.exists(path):
            self.skipTest(f"../shared/models not found ({path})")
        expected = self.client.compile(path, time_limit_s=10)
        got = self.client.compile(dynamic_batch(path), batch=1, time_limit_s=10)
        self.assert_same_compile(got, expected)


if __name__ == "__main__":
    unittest.main()
