"""Runs a .tflite file in Arm NN (Debian's python3-pyarmnn, CpuRef backend).

run(path, inputs) -> list of output arrays; random_inputs(path, seed) makes
inputs of the model's input shapes and types. Arm NN is an independent
TFLite reader: a file it parses and runs is valid TFLite.
"""

import contextlib
import io
import os

import numpy as np


def _armnn():
    # pyarmnn prints a line per parser it lacks (ONNX, TF) on import.
    with contextlib.redirect_stdout(io.StringIO()):
        import pyarmnn
    return pyarmnn


def available():
    try:
        _armnn()
        return True
    except ImportError:
        return False


class Network:
    def __init__(self, path):
        ann = _armnn()
        self.ann = ann
        self.parser = ann.ITfLiteParser()
        network = self.parser.CreateNetworkFromBinaryFile(os.fspath(path))
        self.inputs = [self.parser.GetNetworkInputBindingInfo(0, n)
                       for n in self.parser.GetSubgraphInputTensorNames(0)]
        self.outputs = [self.parser.GetNetworkOutputBindingInfo(0, n)
                        for n in self.parser.GetSubgraphOutputTensorNames(0)]
        self.runtime = ann.IRuntime(ann.CreationOptions())
        optimized, _ = ann.Optimize(network, [ann.BackendId("CpuRef")],
                                    self.runtime.GetDeviceSpec(), ann.OptimizerOptions())
        self.net_id, _ = self.runtime.LoadNetwork(optimized)

    def input_specs(self):
        """(shape, numpy dtype) per input."""
        specs = []
        for _, info in self.inputs:
            shape = [info.GetShape()[i] for i in range(info.GetNumDimensions())]
            dtype = {self.ann.DataType_Float32: np.float32,
                     self.ann.DataType_QAsymmS8: np.int8,
                     self.ann.DataType_QAsymmU8: np.uint8}[info.GetDataType()]
            specs.append((shape, dtype))
        return specs

    def run(self, arrays):
        input_tensors = self.ann.make_input_tensors(self.inputs, arrays)
        output_tensors = self.ann.make_output_tensors(self.outputs)
        self.runtime.EnqueueWorkload(self.net_id, input_tensors, output_tensors)
        return [np.array(a, copy=True) for a in self.ann.workload_tensors_to_ndarray(output_tensors)]


def random_inputs(network, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype in network.input_specs():
        if dtype == np.float32:
            arrays.append(rng.standard_normal(shape).astype(np.float32))
        else:
            info = np.iinfo(dtype)
            arrays.append(rng.integers(info.min, info.max + 1, size=shape, dtype=dtype))
    return arrays
