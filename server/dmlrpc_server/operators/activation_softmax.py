"""DML_ACTIVATION_SOFTMAX, LOG_SOFTMAX and HARDMAX (and their 1 versions): activations over rows or axes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc_server.operators._elementwise import Context, ElementWise, define
from dmlrpc_server.operators._graph import (
    F32_ONLY,
    FLOATS,
    DType,
    Graph,
    Value,
    widened,
)
from dmlrpc_server.operators.base import require


def _check_effective_rank(desc: Any, c: Context) -> None:
    """SOFTMAX, LOG_SOFTMAX and HARDMAX work on rows: at most 2 dimensions after the leading 1s."""
    assert c.tensors is not None
    sizes = list(c.tensors["input_tensor"].sizes)
    while len(sizes) > 1 and sizes[0] == 1:
        sizes.pop(0)
    require(
        len(sizes) <= 2,
        f"{c.field('input_tensor')}.buffer.sizes",
        f"has {len(sizes)} dimensions after its leading 1s; this operator takes at most 2 (rows of the last "
        "dimension; use the *1 variant for other axes)",
    )


def _last_axis(op_type: str, supported: frozenset[DType] = FLOATS) -> Any:
    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        return g.kernel(op_type, supported, xs[0], axis=-1)

    return function


def _log_softmax(g: Graph, x: Value) -> Value:
    """LogSoftmax over the last axis as (x - max) - log(sum(exp(x - max))): exact for large inputs. ONNX Runtime's
    CUDA kernel subtracts max + log(sum(...)) from x, and at inputs near 10^4 that sum rounds in FLOAT32 (2.4e-4 off
    ONNX's test_logsoftmax_large_number); x - max is exact where the inputs are close. FLOAT16 computes in FLOAT32."""
    original = x.dtype
    wide = g.cast(x, widened(original, FLOATS))
    shifted = g.op("Sub", wide, g.op("ReduceMax", wide, axes=[-1], keepdims=1))
    total = g.op("ReduceSum", g.op("Exp", shifted), g.const([-1], np.int64), keepdims=1)
    return g.cast(g.op("Sub", shifted, g.op("Log", total)), original)


def _last_axis_log_softmax(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    return _log_softmax(g, xs[0])


def _check_axes(desc: Any, c: Context) -> None:
    assert c.tensors is not None
    rank = len(c.tensors["input_tensor"].sizes)
    axes = list(desc.axes)
    require(desc.axis_count == len(axes), c.field("axis_count"), f"{desc.axis_count} != len(axes) = {len(axes)}")
    require(len(axes) >= 1, c.field("axes"), "at least one axis is required")
    for index, axis in enumerate(axes):
        require(axis < rank, f"{c.field('axes')}[{index}]", f"axis {axis} is not less than the dimension count {rank}")
    require(len(set(axes)) == len(axes), c.field("axes"), f"axes {axes} repeat a dimension")


def _over_axes(op_type: str, supported: frozenset[DType] = FLOATS) -> Any:
    """``op_type`` over several axes at once: they are moved last, flattened into one, and moved back."""

    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        assert c.tensors is not None
        x = xs[0]
        sizes = list(c.tensors["input_tensor"].sizes)
        axes = sorted(c.desc.axes)
        kept = [d for d in range(len(sizes)) if d not in axes]
        order = kept + axes
        moved = g.op("Transpose", x, perm=order)
        flat_shape = [sizes[d] for d in kept] + [int(np.prod([sizes[d] for d in axes]))]
        flat = g.op("Reshape", moved, g.const(flat_shape, np.int64))
        result = _log_softmax(g, flat) if op_type == "LogSoftmax" else g.kernel(op_type, supported, flat, axis=-1)
        unflat = g.op("Reshape", result, g.const([sizes[d] for d in order], np.int64))
        return g.op("Transpose", unflat, perm=[order.index(d) for d in range(len(sizes))])

    return function


#: The activations over axes (``activation.ACTIVATIONS`` includes them).
ACTIVATIONS_OVER_AXES: tuple[ElementWise, ...] = (
    define("ACTIVATION_HARDMAX", _last_axis("Hardmax", F32_ONLY), check=_check_effective_rank),
    define("ACTIVATION_LOG_SOFTMAX", _last_axis_log_softmax, check=_check_effective_rank),
    define("ACTIVATION_SOFTMAX", _last_axis("Softmax"), check=_check_effective_rank),
    define("ACTIVATION_SOFTMAX1", _over_axes("Softmax"), check=_check_axes, batching=None),
    define("ACTIVATION_LOG_SOFTMAX1", _over_axes("LogSoftmax"), check=_check_axes, batching=None),
    define("ACTIVATION_HARDMAX1", _over_axes("Hardmax", F32_ONLY), check=_check_axes, batching=None),
)
