"""What a lowered model costs, estimated from its graph before it runs: work, and the tensors it materialises."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import onnx

from dmlrpc_server.errors import ResourceExhausted
from dmlrpc_server.operators.base import Limits

_log = logging.getLogger(__name__)

#: Nodes whose work grows with a reduction window beyond the elements they read and write: each output element
#: costs the window's size (a kernel, a matrix row, a pooling window).
_CONVOLUTIONS = frozenset({"Conv", "ConvInteger", "QLinearConv"})
_MATRIX = frozenset({"MatMul", "MatMulInteger", "Gemm", "QLinearMatMul", "Einsum"})
_POOLING = frozenset({"AveragePool", "MaxPool", "LpPool", "MaxRoiPool"})
#: Nodes that run a subgraph a data-dependent number of times: their work cannot be told from the graph.
_UNBOUNDED = frozenset({"Loop", "If", "SequenceMap"})
#: A Scan runs its body once per element of its scan axis, which shapes tell: the body's work times that count,
#: plus each run's fixed cost in ONNX Runtime (about a microsecond, measured with a one-element body) as
#: element-operations, so that a tiny body over a long sequence is not mistaken for tiny work.
_ITERATION_WORK = 1024
#: ONNX's recurrent nodes: each step of each direction multiplies its input and its hidden state by the gates'
#: weights, and pays a run's fixed cost as a Scan's body does.
_RECURRENT = frozenset({"RNN", "LSTM", "GRU"})


#: The work of a model whose work cannot be told from its graph (a data-dependent loop, failed inference).
UNBOUNDED_WORK = 1 << 62


@dataclass(frozen=True)
class TensorCost:
    """One tensor a model reads, makes or writes: its name, shape and bytes."""

    name: str
    shape: tuple[int, ...]
    bytes: int


@dataclass(frozen=True)
class ModelCost:
    """What one run of a model costs: element-operations, and the tensors it materialises."""

    #: Elements each node reads and writes plus reduction windows (``model_work``).
    work: int
    #: The model's largest tensor (inputs as the model reads them, initializers, intermediates, outputs).
    largest: TensorCost | None
    #: The most bytes of tensors alive at once while the nodes run in order (``_peak_bytes``).
    peak_bytes: int


def model_cost(model: onnx.ModelProto) -> ModelCost:
    """The work and the tensors of ``model`` (see ``model_work``); shapes come from ONNX shape inference.

    A tensor whose size inference cannot tell (a data-dependent shape) counts as the largest tensor the graph has,
    so an estimate errs high, never low.
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(_without_bulk(model), strict_mode=False, data_prop=True)
    except Exception as error:  # pragma: no cover - lowered models are valid; stay safe if inference breaks
        _log.warning("shape inference failed (%s): the model counts as large work", error)
        return ModelCost(UNBOUNDED_WORK, None, 0)
    graph = inferred.graph
    shapes: dict[str, tuple[int, ...] | None] = {}
    item_bytes: dict[str, int] = {}
    for value in (*graph.input, *graph.output, *graph.value_info):
        shapes[value.name] = _shape(value)
        item_bytes[value.name] = _item_bytes(value.type.tensor_type.elem_type)
    for initializer in graph.initializer:
        shapes[initializer.name] = tuple(initializer.dims)
        item_bytes[initializer.name] = _item_bytes(initializer.data_type)
    tensors = {
        name: TensorCost(name, shape, math.prod(shape) * item_bytes[name])
        for name, shape in shapes.items()
        if shape is not None
    }
    largest_tensor = max(tensors.values(), key=lambda tensor: tensor.bytes, default=None)
    known = [math.prod(shape) for shape in shapes.values() if shape is not None]
    largest = max(known, default=1)
    work = _graph_work(graph, shapes, largest)
    return ModelCost(
        UNBOUNDED_WORK if work is None else work, largest_tensor, _peak_bytes(graph, tensors, largest_tensor)
    )


def _graph_work(graph: onnx.GraphProto, shapes: dict[str, tuple[int, ...] | None], largest: int) -> int | None:
    """The work of ``graph``'s nodes (``None``: unbounded); ``shapes`` holds its values' and any outer values'."""
    work = 0
    for node in graph.node:
        if node.op_type in _UNBOUNDED:
            return None
        inputs = [shapes.get(name) for name in node.input if name]
        outputs = [shapes.get(name) for name in node.output if name]
        sizes = [largest if shape is None else math.prod(shape) for shape in (*inputs, *outputs)]
        work += sum(sizes) + _window_work(node, inputs, outputs)
        if node.op_type == "Scan":
            body = _scan_work(node, shapes, largest)
            if body is None:
                return None
            work += body
        if node.op_type in _RECURRENT:
            steps = _recurrent_work(inputs)
            if steps is None:
                return None
            work += steps
    return work


def _recurrent_work(inputs: Sequence[tuple[int, ...] | None]) -> int | None:
    """An RNN/LSTM/GRU node's steps: X [T, B, I], W [D, G*H, I] and R [D, G*H, H] tell T*D steps of
    B x G*H x (I + H) multiply-adds, each at least ``_ITERATION_WORK``; ``None`` when a shape is unknown."""
    if len(inputs) < 3 or any(shape is None or len(shape) != 3 for shape in inputs[:3]):
        return None
    x, w, r = (shape for shape in inputs[:3] if shape is not None)
    steps, batch, _ = x
    directions, gates_hidden, features = w
    hidden = r[2]
    return steps * directions * max(batch * gates_hidden * (features + hidden), _ITERATION_WORK)


def _scan_work(node: onnx.NodeProto, shapes: dict[str, tuple[int, ...] | None], largest: int) -> int | None:
    """A Scan's body work (its values' shapes from inference; outer values it reads from ``shapes``) times the
    length of its scan axis, each run counting at least ``_ITERATION_WORK``; ``None`` when a length is unknown."""
    attributes = {attribute.name: attribute for attribute in node.attribute}
    body = attributes["body"].g
    scanned = int(attributes["num_scan_inputs"].i)
    axes = list(attributes["scan_input_axes"].ints) if "scan_input_axes" in attributes else [0] * scanned
    first = shapes.get(node.input[len(node.input) - scanned]) if scanned else None
    if first is None:
        return None
    iterations = first[axes[0] % len(first)] if first else 1
    inner = dict(shapes)
    for value in (*body.input, *body.output, *body.value_info):
        inner[value.name] = _shape(value)
    for initializer in body.initializer:
        inner[initializer.name] = tuple(initializer.dims)
    work = _graph_work(body, inner, largest)
    return None if work is None else iterations * max(work, _ITERATION_WORK)


def _peak_bytes(graph: onnx.GraphProto, tensors: dict[str, TensorCost], largest: TensorCost | None) -> int:
    """The most bytes of tensors alive at once when the nodes run in order: the inputs, initializers and outputs
    throughout, each intermediate from the node that makes it to the last node that reads it. A tensor of unknown
    size counts as the largest."""
    unknown = largest.bytes if largest is not None else 0

    def size(name: str) -> int:
        tensor = tensors.get(name)
        return unknown if tensor is None else tensor.bytes

    kept = {value.name for value in (*graph.input, *graph.output)} | {init.name for init in graph.initializer}
    last_use: dict[str, int] = {}
    for index, node in enumerate(graph.node):
        for name in node.input:
            last_use[name] = index
    alive = sum(size(name) for name in kept)
    peak = alive
    for index, node in enumerate(graph.node):
        made = [name for name in node.output if name and name not in kept]
        alive += sum(size(name) for name in made)
        peak = max(peak, alive)
        for name in {*node.input, *made}:
            if name and name not in kept and last_use.get(name, index) <= index:
                alive -= size(name)
    return peak


#: Initializers of more elements than this are passed to shape inference by shape alone: their values do not
#: decide a shape (index tables, weights), and copying them holds the GIL for as long as it takes.
_SHAPE_VALUE_ELEMENTS = 64


def _without_bulk(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its large initializers turned into graph inputs of the same type and shape."""
    graph = model.graph
    bulky = [init for init in graph.initializer if math.prod(init.dims) > _SHAPE_VALUE_ELEMENTS]
    if not bulky:
        return model
    light = onnx.ModelProto()
    light.ir_version = model.ir_version
    light.opset_import.extend(model.opset_import)
    light.functions.extend(model.functions)
    names = {init.name for init in bulky}
    light.graph.node.extend(graph.node)
    light.graph.input.extend(graph.input)
    light.graph.input.extend(
        onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)) for init in bulky
    )
    light.graph.output.extend(graph.output)
    light.graph.value_info.extend(graph.value_info)
    light.graph.initializer.extend(init for init in graph.initializer if init.name not in names)
    return light


def model_work(model: onnx.ModelProto) -> int:
    """Elements each node of ``model`` reads and writes (intermediates included), plus each reduction window's
    size per output element for convolutions, matrix products and pooling: a cost in element-operations."""
    return model_cost(model).work


def check_cost(cost: ModelCost, limits: Limits, field: str) -> None:
    """Refuse (RESOURCE_EXHAUSTED, naming ``field`` and the setting to raise) a model whose one run would do more
    work than ``limits.max_work`` or materialise a tensor, or tensors together, over the size limits.

    The lowering may materialise what the request never sends: a broadcast input read at its logical size, an
    intermediate of a pooling over a broadcast, a constant expanded to its shape. Those count like any tensor.
    """
    if cost.work > limits.max_work:
        raise ResourceExhausted(
            f"{field}: one run is estimated at {cost.work:,} element-operations (elements every node reads and "
            f"writes, times reduction windows), over the work limit of {limits.max_work:,} (--max-work); "
            "split the work into smaller calls or raise --max-work"
        )
    largest = cost.largest
    if largest is not None:
        elements = math.prod(largest.shape)
        if largest.bytes > limits.max_tensor_bytes or elements > limits.max_tensor_elements:
            raise ResourceExhausted(
                f"{field}: running it materialises a tensor of shape {list(largest.shape)} ({largest.bytes:,} "
                f"bytes, {elements:,} elements), over the limit of {limits.max_tensor_bytes:,} bytes "
                f"(--max-tensor-bytes) and {limits.max_tensor_elements:,} elements (--max-tensor-elements) per "
                "tensor; broadcast inputs and intermediates count at their logical size"
            )
    if cost.peak_bytes > limits.max_run_bytes:
        raise ResourceExhausted(
            f"{field}: one run holds up to {cost.peak_bytes:,} bytes of tensors (inputs as the model reads them, "
            f"intermediates and outputs), over the {limits.max_run_bytes:,} bytes all calls together may use "
            "(--call-memory-bytes); split the work into smaller calls or raise --call-memory-bytes"
        )


def _shape(value: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    dims = tensor.shape.dim
    if any(not dim.HasField("dim_value") for dim in dims):
        return None
    return tuple(dim.dim_value for dim in dims)


def _item_bytes(elem_type: int) -> int:
    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize)
    except (KeyError, TypeError, ValueError):  # an undefined or string type: count as the widest scalar
        return 8


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
