"""A client-side re-check of a schedule against ../shared/spec/memory-model.md.

An independent, deliberately plain re-implementation (in Python, straight
from the spec, sharing no code with core/memory/simulator.cc), so that the
Python client test checks the server's schedule and peak with something that
did not produce them.

Covers the default rules: tensor sizes from ONNX shape inference and dtypes;
initializers, Constant outputs and the outputs of ops whose inputs are all
weights are weights (not counted, not scheduled); graph inputs live before
step 0; an output lives from its producer's step to the end of its last
consumer's step (graph outputs to the end); in-place for element-wise and
reinterpreting ops over their first non-weight input of the same byte size
when that input's last use is this step. Not covered: Shape/Size folding,
count_weights, activation dtype overrides (the tests do not use them).
"""

import onnx
from onnx import TensorProto, shape_inference

ELEMENT_BYTES = {
    TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2, TensorProto.BFLOAT16: 2,
    TensorProto.INT8: 1, TensorProto.UINT8: 1, TensorProto.BOOL: 1,
    TensorProto.INT16: 2, TensorProto.UINT16: 2, TensorProto.INT32: 4,
    TensorProto.UINT32: 4, TensorProto.INT64: 8, TensorProto.UINT64: 8,
    TensorProto.DOUBLE: 8,
}

# The spec's element-wise and reinterpreting ops (the subset the example and
# NAS models use, plus their common relatives).
INPLACE_OP_TYPES = {
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Relu", "LeakyRelu",
    "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Clip", "Add", "Sub", "Mul", "Div",
    "Sum", "Max", "Min",
}


class ScheduleError(Exception):
    """The schedule is not a topological order of the model's ops."""


def _tensor_bytes(value_info):
    tensor_type = value_info.type.tensor_type
    count = 1
    for dim in tensor_type.shape.dim:
        if not dim.HasField("dim_value") or dim.dim_value <= 0:
            raise ValueError(f'tensor "{value_info.name}": dims not static')
        count *= dim.dim_value
    return count * ELEMENT_BYTES[tensor_type.elem_type]


def simulate(model, schedule):
    """Peak of `schedule` (op names in order) on `model` (onnx.ModelProto).

    Returns {"peak_bytes", "initial_bytes", "step_bytes"}; raises
    ScheduleError when the schedule is not a topological order of exactly
    the model's (non-folded) ops.
    """
    graph = shape_inference.infer_shapes(model).graph
    sizes = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        if info.type.tensor_type.HasField("shape"):
            sizes[info.name] = _tensor_bytes(info)

    weights = {t.name for t in graph.initializer}
    ops = []
    for node in graph.node:  # ONNX files list nodes topologically.
        inputs = [t for t in node.input if t]
        if node.op_type == "Constant" or all(t in weights for t in inputs):
            weights.update(node.output)
        else:
            ops.append(node)
    by_name = {node.name: node for node in ops}
    if sorted(schedule) != sorted(by_name):
        raise ScheduleError("schedule is not a permutation of the model's ops")

    graph_inputs = [i.name for i in graph.input if i.name not in weights]
    graph_outputs = {o.name for o in graph.output}
    # Distinct activation inputs per op, in positional order.
    op_inputs = {}
    remaining = {}
    for node in ops:
        distinct = []
        for t in node.input:
            if t and t not in weights and t not in distinct:
                distinct.append(t)
        op_inputs[node.name] = distinct
        for t in distinct:
            remaining[t] = remaining.get(t, 0) + 1

    initial = sum(sizes[t] for t in graph_inputs)
    live = {t for t in graph_inputs if remaining.get(t, 0) > 0 or t in graph_outputs}
    current = sum(sizes[t] for t in live)
    available = set(graph_inputs)
    peak, step_bytes = initial, []
    for name in schedule:
        node = by_name[name]
        inputs = op_inputs[name]
        missing = [t for t in inputs if t not in available]
        if missing:
            raise ScheduleError(f'op "{name}" runs before its input "{missing[0]}" exists')
        outputs = [t for t in node.output if t]
        footprint = current + sum(sizes[t] for t in outputs)
        if node.op_type in INPLACE_OP_TYPES and len(outputs) == 1:
            first = next((t for t in node.input if t and t not in weights), None)
            if (first is not None and sizes[first] == sizes[outputs[0]]
                    and remaining[first] == 1 and first not in graph_outputs):
                footprint -= sizes[first]
        for t in outputs:
            available.add(t)
            if remaining.get(t, 0) > 0 or t in graph_outputs:
                current += sizes[t]
        for t in inputs:
            remaining[t] -= 1
            if remaining[t] == 0 and t not in graph_outputs:
                current -= sizes[t]
        step_bytes.append(footprint)
        peak = max(peak, footprint)
    return {"peak_bytes": peak, "initial_bytes": initial, "step_bytes": step_bytes}


def load(path):
    """The model at `path`, without external weight data (not needed)."""
    return onnx.load(path, load_external_data=False)
