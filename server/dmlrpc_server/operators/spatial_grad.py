"""Gradients of the spatial operators: DML_AVERAGE_POOLING_GRAD, MAX_POOLING_GRAD, RESAMPLE_GRAD(1), SLICE_GRAD."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import onnx

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._graph import F32, I64, Graph, Value
from dmlrpc_server.operators._support import same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require
from dmlrpc_server.operators.movement import slice1_window
from dmlrpc_server.operators.pooling import (
    check_gathers,
    pooling_geometry,
    window_maxima,
    window_tables,
)
from dmlrpc_server.operators.resample import (
    LINEAR,
    Rounding,
    check_interpolation_mode,
    check_same_type_and_rank,
    linear_taps,
    nearest_indices,
    offset_axes,
    rounding_direction,
)

# Every gradient here is the transpose of its forward operator's linear map, which is separable: along each
# dimension the forward reads input position t[j] into output position s[j] with weight w[j] (a pooling window
# element, an interpolation tap, a sliced element), so the gradient adds dy[s[j]] * w[j] into dx[t[j]]. One
# ScatterND per dimension does that with constant (s, t, w) lists no longer than the forward's own tables, the
# dimension moved to the front so that each index addresses a whole slab (the indices stay O(size), never
# O(elements)). ScatterND's 'add' sums where targets coincide (overlapping windows, clamped taps); SLICE_GRAD's
# targets are distinct and it moves elements of any type bit-exactly with reduction 'none'.
#
# DirectML has no ScatterND 'add' (ONNX Runtime places such a node on the CPU, and the session's inputs and outputs
# cross to the host for it). There a dimension whose targets coincide scatters in groups instead, each of distinct
# targets (the first reader of each target, then the second, ...) with 'none', and the groups' results are summed:
# the same sums, and a non-finite gradient still reaches only its own targets (a dense matrix product would spread
# NaN through its zeros).

#: The most groups one dimension's gradient is split into where no scatter may add (DirectML): the most forward
#: outputs that read one input element. Past it (a large upsampling's gradient) the dimension scatters with 'add'.
MAX_SCATTER_GROUPS = 16


def _scatter_axis(
    graph: Graph,
    value: Value,
    sizes: list[int],
    axis: int,
    size: int,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    reduction: str,
    *,
    grouped: bool = False,
) -> Value:
    """``value`` (of ``sizes``) with dimension ``axis`` replaced by one of ``size``: for each (source, target,
    weight) of ``pairs`` element ``target`` receives ``value[source] * weight`` (added, or set with 'none'); the
    others are 0. ``grouped``: add without a scatter that adds (DirectML), in groups of distinct targets where at
    most ``MAX_SCATTER_GROUPS`` are needed. ``sizes`` is updated in place."""
    sources, targets, weights = pairs
    rank = len(sizes)
    perm = [axis, *(d for d in range(rank) if d != axis)]
    rest = [sizes[d] for d in perm[1:]]
    moved = value if axis == 0 else graph.op("Transpose", value, perm=perm)
    zero = onnx.numpy_helper.from_array(np.zeros(1, value.dtype))
    zeros = graph.op("ConstantOfShape", graph.const([size, *rest], I64), dtype=value.dtype, value=zero)
    groups = distinct_target_groups(targets) if grouped and reduction == "add" else None
    if groups is None or len(groups) > MAX_SCATTER_GROUPS:
        groups, group_reduction = [np.arange(len(targets))], reduction
    else:
        group_reduction = "none"
    parts = []
    for group in groups:
        updates = moved
        if not np.array_equal(sources[group], np.arange(sizes[axis])):
            updates = graph.op("Gather", moved, graph.const(sources[group], I64), axis=0)
        if weights is not None:
            updates = graph.op("Mul", updates, graph.const(weights[group].reshape((-1,) + (1,) * len(rest)), F32))
        indices = graph.const(np.asarray(targets[group], np.int64).reshape(-1, 1), I64)
        parts.append(graph.op("ScatterND", zeros, indices, updates, reduction=group_reduction))
    scattered = zeros if not parts else parts[0] if len(parts) == 1 else graph.op("Sum", *parts)
    sizes[axis] = size
    if axis == 0:
        return scattered
    inverse = [perm.index(d) for d in range(rank)]
    return graph.op("Transpose", scattered, perm=inverse)


def distinct_target_groups(targets: np.ndarray) -> list[np.ndarray]:
    """The positions of ``targets`` in groups none of which repeats a target: group ``g`` holds each target's
    ``g``-th occurrence (in order), so there are as many groups as the most frequent target occurs."""
    targets = np.asarray(targets)
    if not len(targets):
        return []
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    run_starts = np.repeat(starts, np.diff(np.r_[starts, len(ordered)]))
    occurrence = np.empty(len(targets), np.int64)
    occurrence[order] = np.arange(len(ordered)) - run_starts
    return [np.flatnonzero(occurrence == g) for g in range(int(occurrence.max()) + 1)]


def _plan(graph: Graph, inputs: tuple[TensorLayout, ...], names: tuple[str, ...], output: TensorLayout) -> Plan:
    """A plan whose feeds are the inputs as they are (``names`` in binding order) and whose output is the model's."""
    return Plan(inputs, (output,), graph.model(), direct_inputs=names, direct_outputs=True)


class AveragePoolingGrad(Operator[operators_pb2.AveragePoolingGradOperatorDesc]):
    """Each incoming gradient spread over its window's in-bounds elements, divided by the forward's divisor.

    The divisor is separable like the window: prod(WindowSize) with IncludePadding, else the in-bounds count of the
    window, the product of each dimension's in-bounds count; so each dimension scatters with weights 1/divisor of
    its own. A window entirely in the padding spreads nothing (the forward refuses it without IncludePadding, its
    average being 0/0; its gradient is well defined: no element receives any of it).
    """

    case: ClassVar[str] = "average_pooling_grad"

    def lower(self, desc: operators_pb2.AveragePoolingGradOperatorDesc, tensors: Tensors) -> Plan:
        dy, dx = tensors["input_gradient_tensor"], tensors["output_gradient_tensor"]
        same_type(tensors, ("output_gradient_tensor",), "input_gradient_tensor")
        strides, window, start, _, dilations = pooling_geometry(
            desc, tensors, "output_gradient_tensor", ["input_gradient_tensor"], has_dilations=False
        )
        check_gathers(dx.sizes, dy.sizes, window, F32.itemsize, tensors)
        windows = window_tables(dx.sizes, dy.sizes, strides, window, start, dilations, tensors, refuse_empty=False)
        graph = Graph()
        value = graph.cast(graph.input("gradient", dy.dtype, dy.sizes), F32)
        sizes = list(dy.sizes)
        for i, table in enumerate(windows):
            outputs, slots = np.nonzero(table.mask)
            divisor = np.full(table.counts.shape, window[i]) if desc.include_padding else table.counts
            weights = (1.0 / divisor[outputs]).astype(np.float32)
            pairs = (outputs, table.table[outputs, slots], weights)
            value = _scatter_axis(
                graph, value, sizes, 2 + i, dx.sizes[2 + i], pairs, "add", grouped=tensors.on_directml
            )
        graph.output(graph.cast(value, dx.dtype), "output", dx.sizes)
        return _plan(graph, (dy,), ("gradient",), dx)


class MaxPoolingGrad(Operator[operators_pb2.MaxPoolingGradOperatorDesc]):
    """Each incoming gradient added at its window's winner: the first maximum of InputTensor in the window (the
    forward's tie rule, the lowest logical index), found as MAX_POOLING2's indices are; one ScatterND over the flat
    input sums the gradients of windows that share a winner."""

    case: ClassVar[str] = "max_pooling_grad"

    def lower(self, desc: operators_pb2.MaxPoolingGradOperatorDesc, tensors: Tensors) -> Plan:
        x, dy, dx = tensors["input_tensor"], tensors["input_gradient_tensor"], tensors["output_gradient_tensor"]
        same_type(tensors, ("input_gradient_tensor",), "input_tensor")
        same_type(tensors, ("output_gradient_tensor",), "input_tensor")
        require(
            list(dx.sizes) == list(x.sizes),
            f"{tensors.field('output_gradient_tensor')}.buffer.sizes",
            f"sizes {list(dx.sizes)} must equal input_tensor's {list(x.sizes)}",
        )
        strides, window, start, _, dilations = pooling_geometry(
            desc, tensors, "input_tensor", ["input_gradient_tensor"], has_dilations=True
        )
        check_gathers(x.sizes, dy.sizes, window, x.dtype.itemsize, tensors)
        # A window entirely in the padding has no winner to take its gradient: refused as the forward refuses it.
        windows = window_tables(x.sizes, dy.sizes, strides, window, start, dilations, tensors, refuse_empty=True)
        graph = Graph()
        source = graph.input("input", x.dtype, x.sizes)
        gradient = graph.input("gradient", dy.dtype, dy.sizes)
        _, winners = window_maxima(graph, source, windows, x.sizes, with_indices=True)
        assert winners is not None
        count, total = math.prod(dy.sizes), math.prod(x.sizes)
        targets = graph.op("Reshape", winners, graph.const([count, 1], I64))
        updates = graph.op("Reshape", graph.cast(gradient, F32), graph.const([count], I64))
        zero = onnx.numpy_helper.from_array(np.zeros(1, np.float32))
        zeros = graph.op("ConstantOfShape", graph.const([total], I64), dtype=F32, value=zero)
        # FLOAT16 sums in FLOAT32 (ONNX Runtime's ScatterND has no FLOAT16 'add'), rounded once at the end.
        summed = graph.op("ScatterND", zeros, targets, updates, reduction="add")
        result = graph.op("Reshape", summed, graph.const(list(dx.sizes), I64))
        graph.output(graph.cast(result, dx.dtype), "output", dx.sizes)
        return _plan(graph, (x, dy), ("input", "gradient"), dx)


class _ResampleGrad(Operator[Any]):
    """The transpose of RESAMPLE1 (RESAMPLE_GRAD) or RESAMPLE2 (RESAMPLE_GRAD1), built from the forward lowering's
    own per-dimension tables (``nearest_indices``, ``linear_taps``): OutputGradientTensor has the forward input's
    sizes and InputGradientTensor the forward output's, so the forward maps dx's sizes onto dy's. Taps of weight 0
    are left out (they carry nothing; left in, an infinite gradient would spread NaN through them)."""

    def rounding(self, desc: Any, tensors: Tensors) -> Rounding:
        return Rounding.NEAREST

    def lower(self, desc: Any, tensors: Tensors) -> Plan:
        dy, dx = tensors["input_gradient_tensor"], tensors["output_gradient_tensor"]
        check_same_type_and_rank(tensors, "input_gradient_tensor", "output_gradient_tensor")
        check_interpolation_mode(desc.interpolation_mode, tensors)
        rounding = self.rounding(desc, tensors)
        axes = offset_axes(desc, tensors, len(dy.sizes))
        linear = desc.interpolation_mode == LINEAR
        graph = Graph()
        value = graph.cast(graph.input("gradient", dy.dtype, dy.sizes), F32)
        sizes = list(dy.sizes)
        for d, axis in enumerate(axes):
            in_size, out_size = dx.sizes[d], dy.sizes[d]
            if linear:
                taps, tap_weights = linear_taps(in_size, out_size, axis, False, tensors.field(f"scales[{d}]"))
                outputs, slots = np.nonzero(tap_weights)
                pairs: tuple[np.ndarray, np.ndarray, np.ndarray | None] = (
                    outputs,
                    taps[outputs, slots],
                    tap_weights[outputs, slots],
                )
                if (
                    in_size == out_size
                    and np.array_equal(pairs[1], outputs)
                    and np.all(tap_weights[outputs, slots] == 1)
                ):
                    continue  # every output reads its own element with weight 1
            else:
                indices = nearest_indices(in_size, out_size, axis, rounding)
                if in_size == out_size and np.array_equal(indices, np.arange(in_size)):
                    continue  # this dimension maps each element onto itself
                pairs = (np.arange(out_size), indices, None)
            value = _scatter_axis(graph, value, sizes, d, in_size, pairs, "add", grouped=tensors.on_directml)
        graph.output(graph.cast(value, dx.dtype), "output", dx.sizes)
        return _plan(graph, (dy,), ("gradient",), dx)


class ResampleGrad(_ResampleGrad):
    case: ClassVar[str] = "resample_grad"


class ResampleGrad1(_ResampleGrad):
    case: ClassVar[str] = "resample_grad1"

    def rounding(self, desc: Any, tensors: Tensors) -> Rounding:
        return rounding_direction(desc.rounding_direction, tensors)


class SliceGrad(Operator[operators_pb2.SliceGradOperatorDesc]):
    """Zeros with the incoming gradient written at the positions SLICE1 reads (its rules: ``slice1_window``, over
    OutputGradientTensor into InputGradientTensor's sizes), one dimension at a time; the strides are never 0, so
    the positions are distinct and every element is copied bit-exactly."""

    case: ClassVar[str] = "slice_grad"

    def lower(self, desc: operators_pb2.SliceGradOperatorDesc, tensors: Tensors) -> Plan:
        dy, dx = tensors["input_gradient_tensor"], tensors["output_gradient_tensor"]
        starts, _, strides = slice1_window(desc, tensors, "output_gradient_tensor", "input_gradient_tensor")
        graph = Graph()
        value = graph.input("gradient", dy.dtype, dy.sizes)
        sizes = list(dy.sizes)
        for d, (start, stride) in enumerate(zip(starts, strides, strict=True)):
            count, size = dy.sizes[d], dx.sizes[d]
            if count == size and start == 0 and stride == 1:
                continue  # the whole dimension, in order
            positions = start + stride * np.arange(count, dtype=np.int64)
            value = _scatter_axis(graph, value, sizes, d, size, (np.arange(count), positions, None), "none")
        graph.output(value, "output", dx.sizes)
        return _plan(graph, (dy,), ("gradient",), dx)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    AveragePoolingGrad(),
    MaxPoolingGrad(),
    ResampleGrad(),
    SliceGrad(),
    ResampleGrad1(),
)
