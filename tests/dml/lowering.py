"""What the server's own lowering puts in a TOP_K1 graph, read on the Linux side from the same code."""

from __future__ import annotations

import math

import numpy as np
import onnx

from dmlrpc import ops
from dmlrpc.v1 import operators_pb2
from tests.directml_lowering import directml_plan
from tests.ops.test_generators import fill_sequence_desc

_64_BIT = {onnx.TensorProto.INT64, onnx.TensorProto.UINT64}


def run_failing_desc() -> operators_pb2.OperatorDesc:
    """An INT64 FILL_VALUE_SEQUENCE: its Range counts up to a fed limit, so the DirectML provider compiles the nodes
    after it when they first run, and on the lane's device (no 64-bit integer operations) that first run fails
    while the session built (tests/dml/test_run_fallback.py)."""
    return fill_sequence_desc(np.int64, (1, 1, 1, 3), 3, 2)


def _directml_graph(operator_desc: operators_pb2.OperatorDesc) -> onnx.GraphProto:
    """The server's DirectML lowering of a desc, its shapes inferred."""
    return onnx.shape_inference.infer_shapes(directml_plan(operator_desc).model).graph


def top_k_casts_64_bit(dtype: type = np.float32) -> bool:
    """Whether the TOP_K1 graph for ``dtype`` holds a Cast from or to a 64-bit integer type.

    DirectML compiles such a Cast only with 64-bit shader support (shader model 6); the lane's device (vkd3d,
    shader model 5.1) fails the session with E_FAIL, so TOP_K cannot run there while the lowering emits one.
    """
    call = ops.top_k(np.zeros((2, 4), dtype), 2)
    graph = _directml_graph(call.operator_desc)
    types = {v.name: v.type.tensor_type.elem_type for v in (*graph.input, *graph.output, *graph.value_info)}
    types |= {t.name: t.data_type for t in graph.initializer}
    return any(
        node.op_type == "Cast" and {types.get(node.input[0]), types.get(node.output[0])} & _64_BIT
        for node in graph.node
    )


#: The TOP_K lowering of this checkout cannot run on the lane's DirectML device.
TOP_K_BLOCKED = top_k_casts_64_bit()
TOP_K_BLOCKED_REASON = (
    "the server lowers TOP_K(1) with Cast nodes on 64-bit integers (the index output, UINT32 widening); DirectML "
    "needs shader model 6 to compile those and the lane's device has 5.1, so session creation fails (E_FAIL, "
    "INTERNAL). See docs/directml-notes.md, 'Answers from the real DirectML provider'."
)


#: ONNX nodes whose FLOAT32/FLOAT16 form over two tensors of a multiple of 4 elements this device cannot build
#: (DirectML's vectorised shader, refused by vkd3d-shader: docs/directml-notes.md, "Float ADD over 4k elements").
_VECTORISED_BINARY = {"Add", "Sub", "Mul", "Div"}
_FLOATS = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16}


def fallback_cause(operator_desc: operators_pb2.OperatorDesc) -> str:
    """Why the lane's device could not build a desc's session, read from the server's DirectML lowering: a node
    the provider has no kernel for, a unidirectional LSTM with a bias, 64-bit integer values it computes (shader
    model 5.1), a float ADD/SUB/MUL/DIV/Sum of tensors of a multiple of 4 elements (vkd3d's translator), else
    ``"other"``."""
    graph = _directml_graph(operator_desc)
    if any(node.op_type == "Scan" or _adds(node) for node in graph.node):
        return "a node DirectML has no kernel for (Scan, ScatterND 'add'): left to the CPU provider"
    if any(_unidirectional_lstm_with_bias(node) for node in graph.node):
        return "a unidirectional LSTM with a bias: DirectML creates it, this device fails to compile it"
    shapes: dict[str, tuple[int, list[int]]] = {
        v.name: (v.type.tensor_type.elem_type, [d.dim_value for d in v.type.tensor_type.shape.dim])
        for v in (*graph.input, *graph.output, *graph.value_info)
    }
    # A 64-bit value the device computes (a node's output, a fed input), not a constant operand such as a shape or
    # axes, which the provider reads on the host.
    computed = {name for node in graph.node for name in node.output} | {v.name for v in graph.input}
    if any(shapes[name][0] in _64_BIT for name in computed if name in shapes):
        return "64-bit integers computed on the device"
    if any(shapes[name][0] == onnx.TensorProto.DOUBLE for name in computed if name in shapes):
        return "FLOAT64 computed on the device"
    shapes |= {t.name: (t.data_type, list(t.dims)) for t in graph.initializer}
    for node in graph.node:
        # Sum adds its inputs pairwise, with the same shader.
        if not ((node.op_type in _VECTORISED_BINARY and len(node.input) == 2) or node.op_type == "Sum"):
            continue
        operands = [shapes.get(name) for name in node.input]
        sizes = [math.prod(operand[1]) for operand in operands if operand is not None and operand[0] in _FLOATS]
        if len(sizes) == len(node.input) >= 2 and all(size > 1 and size % 4 == 0 for size in sizes):
            return "a float binary operation over 4k elements"
    return "other"


def _unidirectional_lstm_with_bias(node: onnx.NodeProto) -> bool:
    direction = next((a.s for a in node.attribute if a.name == "direction"), b"forward")
    return node.op_type == "LSTM" and direction != b"bidirectional" and len(node.input) > 3 and bool(node.input[3])


def _adds(node: onnx.NodeProto) -> bool:
    return node.op_type == "ScatterND" and any(a.name == "reduction" and a.s == b"add" for a in node.attribute)


def uses_64_bit_values(operator_desc: operators_pb2.OperatorDesc) -> bool:
    """Whether the server's DirectML lowering of a desc holds any INT64, UINT64 or FLOAT64 value: the lane's device
    (shader model 5.1, no 64-bit integer or double-precision operations) cannot compile them, so such sessions fall
    back to the host there (integer SCALE_BIAS, SHRINK and POW compute in FLOAT64: docs/directml-notes.md)."""
    graph = _directml_graph(operator_desc)
    types = {v.type.tensor_type.elem_type for v in (*graph.input, *graph.output, *graph.value_info)}
    types |= {t.data_type for t in graph.initializer}
    return bool(types & (_64_BIT | {onnx.TensorProto.DOUBLE}))
