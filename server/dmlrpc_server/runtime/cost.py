"""The work a lowered model causes, estimated from its graph before it runs (elements read and written)."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import onnx

_log = logging.getLogger(__name__)

#: Nodes whose work grows with a reduction window beyond the elements they read and write: each output element
#: costs the window's size (a kernel, a matrix row, a pooling window).
_CONVOLUTIONS = frozenset({"Conv", "ConvInteger", "QLinearConv"})
_MATRIX = frozenset({"MatMul", "MatMulInteger", "Gemm", "QLinearMatMul", "Einsum"})
_POOLING = frozenset({"AveragePool", "MaxPool", "LpPool", "MaxRoiPool"})
#: Nodes that run a subgraph a data-dependent number of times: their work cannot be told from the graph.
_UNBOUNDED = frozenset({"Loop", "Scan", "If", "SequenceMap"})


def model_work(model: onnx.ModelProto) -> int:
    """Elements each node of ``model`` reads and writes (intermediates included), plus each reduction window's
    size per output element for convolutions, matrix products and pooling: a cost in element-operations.

    Shapes come from ONNX shape inference over the model's fixed-size inputs. A tensor whose size inference cannot
    tell (a data-dependent shape) counts as the largest tensor the graph has, so an estimate errs high, never low.
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as error:  # pragma: no cover - lowered models are valid; stay safe if inference breaks
        _log.warning("shape inference failed (%s): the model counts as large work", error)
        return 1 << 62
    graph = inferred.graph
    shapes: dict[str, tuple[int, ...] | None] = {}
    for value in (*graph.input, *graph.output, *graph.value_info):
        shapes[value.name] = _shape(value)
    for initializer in graph.initializer:
        shapes[initializer.name] = tuple(initializer.dims)
    known = [math.prod(shape) for shape in shapes.values() if shape is not None]
    largest = max(known, default=1)
    total = 0
    for node in graph.node:
        if node.op_type in _UNBOUNDED:
            return 1 << 62
        inputs = [shapes.get(name) for name in node.input if name]
        outputs = [shapes.get(name) for name in node.output if name]
        sizes = [largest if shape is None else math.prod(shape) for shape in (*inputs, *outputs)]
        total += sum(sizes) + _window_work(node, inputs, outputs)
    return total


def _shape(value: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    dims = tensor.shape.dim
    if any(not dim.HasField("dim_value") for dim in dims):
        return None
    return tuple(dim.dim_value for dim in dims)


def _window_work(
    node: onnx.NodeProto,
    inputs: Sequence[tuple[int, ...] | None],
    outputs: Sequence[tuple[int, ...] | None],
) -> int:
    """Element-operations beyond reading and writing: output elements times the reduction window."""
    output = outputs[0] if outputs else None
    if node.op_type not in (_CONVOLUTIONS | _MATRIX | _POOLING | {"ConvTranspose"}) or output is None:
        return 0
    out = math.prod(output)
    if node.op_type in _CONVOLUTIONS:
        weights = inputs[1] if len(inputs) > 1 and node.op_type != "QLinearConv" else None
        if node.op_type == "QLinearConv" and len(inputs) > 3:
            weights = inputs[3]
        # Each output element sums C_in / group x kernel products: the weight tensor's size per output channel.
        return out * (math.prod(weights[1:]) if weights else 1)
    if node.op_type == "ConvTranspose":
        weights = inputs[1] if len(inputs) > 1 else None
        source = inputs[0]
        if weights is None or source is None:
            return out
        return math.prod(source) * math.prod(weights[1:])
    if node.op_type in _MATRIX:
        first = inputs[0] if inputs else None
        if first is None or not first:
            return out
        transposed = any(a.name == "transA" and a.i for a in node.attribute)
        inner = first[0] if transposed and len(first) >= 2 else first[-1]
        return out * inner
    kernel = next((list(a.ints) for a in node.attribute if a.name == "kernel_shape"), None)
    if kernel is None:
        # Global pooling or ROI pooling: each output reads its whole input window.
        source = inputs[0] if inputs else None
        return math.prod(source) if source else out
    return out * math.prod(kernel)
