"""DML_CONVOLUTION and DML_CONVOLUTION_INTEGER_OPERATOR_DESC: forward and backward convolutions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import onnx

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._elementwise import Context
from dmlrpc_server.operators._graph import F32, I32, I64, U8, Graph, Value
from dmlrpc_server.operators._support import reshaping_feeder
from dmlrpc_server.operators.activation import apply_fused, check_fused
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

_INT64_MIN = -(2**63)


@dataclass(frozen=True)
class Geometry:
    """The validated attributes of a convolution desc."""

    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    start: tuple[int, ...]
    end: tuple[int, ...]
    output_padding: tuple[int, ...]
    groups: int
    output_channels: int


def _same(tensors: Tensors, names: Sequence[str], first: str, *, types: bool, ranks: bool) -> None:
    reference = tensors.layouts[first]
    if reference is None:
        return
    for name in names:
        layout = tensors.layouts[name]
        if layout is None:
            continue
        require(
            not types or layout.data_type == reference.data_type,
            f"{tensors.field(name)}.buffer.data_type",
            f"must equal {first}'s data type",
        )
        require(
            not ranks or len(layout.sizes) == len(reference.sizes),
            f"{tensors.field(name)}.buffer.sizes",
            f"must have {first}'s dimension count {len(reference.sizes)}",
        )


def _geometry(desc: Any, tensors: Tensors, *, backward: bool, has_output_padding: bool) -> Geometry:
    """DirectML's shared convolution rules: array counts, attribute ranges, channel groups and the sizes the
    output must have."""
    source, weights, output = tensors["input_tensor"], tensors["filter_tensor"], tensors["output_tensor"]
    rank = len(source.sizes)
    spatial = rank - 2
    require(
        desc.dimension_count == spatial,
        tensors.field("dimension_count"),
        f"{desc.dimension_count} must be the number of spatial dimensions: {spatial} for {rank}-D tensors",
    )
    arrays = ["strides", "dilations", "start_padding", "end_padding"] + (
        ["output_padding"] if has_output_padding else []
    )
    for name in arrays:
        count = len(getattr(desc, name))
        require(count == spatial, tensors.field(name), f"{count} values; dimension_count is {spatial}")
    for name in ("strides", "dilations"):
        for index, value in enumerate(getattr(desc, name)):
            require(value >= 1, f"{tensors.field(name)}[{index}]", f"{value} must be at least 1")
    groups = desc.group_count
    require(groups >= 1, tensors.field("group_count"), f"{groups} must be at least 1")
    channels = source.sizes[1]
    require(
        channels % groups == 0,
        tensors.field("group_count"),
        f"input channel count {channels} is not divisible by group_count {groups}",
    )
    filter_sizes = f"{tensors.field('filter_tensor')}.buffer.sizes"
    if backward:
        # The filter of the backward direction is the forward one's: {input channels, output channels / groups,
        # ..} (as ONNX ConvTranspose's weights).
        require(
            weights.sizes[0] == channels,
            filter_sizes,
            f"sizes[0] = {weights.sizes[0]} must equal the input channel count {channels} (backward direction)",
        )
        output_channels = weights.sizes[1] * groups
    else:
        output_channels = weights.sizes[0]
        require(
            weights.sizes[1] * groups == channels,
            filter_sizes,
            f"sizes[1] = {weights.sizes[1]} must be the input channel count / group_count = {channels // groups}",
        )
        require(
            output_channels % groups == 0,
            filter_sizes,
            f"sizes[0] = {output_channels} (output channels) is not divisible by group_count {groups}",
        )
    strides, dilations = tuple(desc.strides), tuple(desc.dilations)
    start, end = tuple(desc.start_padding), tuple(desc.end_padding)
    padding = tuple(desc.output_padding) if has_output_padding else (0,) * spatial
    expected = [source.sizes[0], output_channels]
    for d in range(spatial):
        extent = (weights.sizes[2 + d] - 1) * dilations[d] + 1
        if backward:
            size = (source.sizes[2 + d] - 1) * strides[d] + extent - start[d] - end[d] + padding[d]
        else:
            padded = source.sizes[2 + d] + start[d] + end[d]
            require(
                padded >= extent,
                filter_sizes,
                f"the dilated filter spans {extent} along spatial dimension {d}, more than the padded input's {padded}",
            )
            size = (padded - extent) // strides[d] + 1 + padding[d]
        require(
            size >= 1,
            tensors.field("end_padding" if backward else "start_padding"),
            f"the padding leaves no output along spatial dimension {d} ({size})",
        )
        expected.append(size)
    require(
        list(output.sizes) == expected,
        f"{tensors.field('output_tensor')}.buffer.sizes",
        f"sizes {list(output.sizes)} must be {expected} (batch, output channels, spatial sizes from the input, "
        "filter, strides, dilations and paddings)",
    )
    return Geometry(strides, dilations, start, end, padding, groups, output_channels)


def _flip(graph: Graph, value: Value, spatial: int) -> Value:
    """The filter reversed along every spatial dimension (a negative-step Slice)."""
    axes = list(range(2, 2 + spatial))
    return graph.op(
        "Slice",
        value,
        graph.const([-1] * spatial, I64),
        graph.const([_INT64_MIN] * spatial, I64),
        graph.const(axes, I64),
        graph.const([-1] * spatial, I64),
    )


def _pad_end(graph: Graph, value: Value, ends: Sequence[int]) -> Value:
    """Zeros appended at the end of each spatial dimension."""
    if not any(ends):
        return value
    pads = [0] * (2 + len(ends)) + [0, 0, *ends]
    return graph.op("Pad", value, graph.const(pads, I64))


def _unsigned(graph: Graph, value: Value) -> Value:
    """An INT8 value shifted by 128 into UINT8 (UINT8 as it is)."""
    if value.dtype == U8:
        return value
    return graph.cast(graph.op("Add", graph.cast(value, I32), graph.const(128, I32)), U8)


class Convolution(Operator[operators_pb2.ConvolutionOperatorDesc]):
    case: ClassVar[str] = "convolution"

    def lower(self, desc: operators_pb2.ConvolutionOperatorDesc, tensors: Tensors) -> Plan:
        _same(tensors, ("filter_tensor", "bias_tensor", "output_tensor"), "input_tensor", types=True, ranks=True)
        require(
            desc.mode in operators_pb2.ConvolutionMode.values(),
            tensors.field("mode"),
            f"{desc.mode} is not a DML_CONVOLUTION_MODE (0 = CONVOLUTION, 1 = CROSS_CORRELATION)",
        )
        require(
            desc.direction in operators_pb2.ConvolutionDirection.values(),
            tensors.field("direction"),
            f"{desc.direction} is not a DML_CONVOLUTION_DIRECTION (0 = FORWARD, 1 = BACKWARD)",
        )
        backward = desc.direction == operators_pb2.CONVOLUTION_DIRECTION_BACKWARD
        geometry = _geometry(desc, tensors, backward=backward, has_output_padding=True)
        source, weights, output = tensors["input_tensor"], tensors["filter_tensor"], tensors["output_tensor"]
        rank = len(source.sizes)
        spatial = rank - 2
        bias = tensors.layouts["bias_tensor"]
        if bias is not None:
            expected = [1, geometry.output_channels, *([1] * spatial)]
            require(
                list(bias.sizes) == expected,
                f"{tensors.field('bias_tensor')}.buffer.sizes",
                f"sizes {list(bias.sizes)} must be {{1, output channels, 1..}} = {expected}",
            )
        context = Context(desc, tensors, output.dtype, tensors.feature_level, tensors.path)
        check_fused(desc, context)

        # FLOAT16 computes in FLOAT32. Mode CONVOLUTION is CROSS_CORRELATION with the filter reversed spatially,
        # in both directions: CROSS_CORRELATION + BACKWARD is ONNX ConvTranspose (the gradient of ONNX Conv).
        graph = Graph()
        x = graph.cast(graph.input("input", source.dtype, source.sizes), F32)
        w = graph.cast(graph.input("filter", weights.dtype, weights.sizes), F32)
        if desc.mode == operators_pb2.CONVOLUTION_MODE_CONVOLUTION:
            w = _flip(graph, w, spatial)
        attrs: dict[str, Any] = {
            "strides": list(geometry.strides),
            "dilations": list(geometry.dilations),
            "group": geometry.groups,
        }
        if backward:
            # Start/end padding are the forward convolution's: they crop the full transposed result of length
            # F = (in - 1) * stride + (kernel - 1) * dilation + 1; output padding appends positions at the end (whose
            # values are whatever contributions the end crop had removed, zeros past F). ConvTranspose crops
            # through its pads (no full-size intermediate) with end pads max(end - output padding, 0); output
            # padding beyond the end padding is appended as zeros, which needs no output_padding attribute (ONNX
            # limits it to less than the stride; DirectML documents no such limit).
            full = [
                (source.sizes[2 + d] - 1) * geometry.strides[d] + (weights.sizes[2 + d] - 1) * geometry.dilations[d] + 1
                for d in range(spatial)
            ]
            if any(geometry.start[d] >= full[d] for d in range(spatial)):
                # The start crop removes every position with a contribution: the result is all zeros.
                zero = onnx.helper.make_tensor("zero", onnx.TensorProto.FLOAT, [1], [0.0])
                shape = graph.const(list(output.sizes), I64)
                y = graph.op("ConstantOfShape", shape, dtype=F32, value=zero)
            else:
                kept = [max(geometry.end[d] - geometry.output_padding[d], 0) for d in range(spatial)]
                y = graph.op("ConvTranspose", x, w, pads=[*geometry.start, *kept], **attrs)
                y = _pad_end(graph, y, [max(geometry.output_padding[d] - geometry.end[d], 0) for d in range(spatial)])
        else:
            y = graph.op("Conv", x, w, pads=[*geometry.start, *geometry.end], **attrs)
            # Forward output padding: zeros appended to the convolution's result (before the bias and activation).
            y = _pad_end(graph, y, geometry.output_padding)
        if bias is not None:
            y = graph.op("Add", y, graph.cast(graph.input("bias", bias.dtype, bias.sizes), F32))
        result = apply_fused(graph, y, context)
        graph.output(graph.cast(result, output.dtype), "output", output.sizes)
        feeds = ("input", "filter", "bias")

        layouts = (source, weights, bias)
        direct = tuple(name if layout is not None else None for name, layout in zip(feeds, layouts, strict=True))
        return Plan(layouts, (output,), graph.model(), direct_inputs=direct, direct_outputs=True)


def integer_convolution(graph: Graph, tensors: Tensors, geometry: Geometry) -> tuple[Value, tuple[int, ...]]:
    """conv(Input - InputZeroPoint, Filter - FilterZeroPoint) in INT32 over graph inputs "input", "input_zero",
    "filter" and "filter_zero" (the zero points reshaped to the returned filter zero point shape, or to a scalar for
    the input's), after checking the zero points' sizes: what CONVOLUTION_INTEGER computes and the quantized
    convolution accumulates."""
    source, weights = tensors["input_tensor"], tensors["filter_tensor"]
    rank = len(source.sizes)
    input_zero = tensors.layouts["input_zero_point_tensor"]
    if input_zero is not None:
        require(
            all(size == 1 for size in input_zero.sizes),
            f"{tensors.field('input_zero_point_tensor')}.buffer.sizes",
            f"sizes {list(input_zero.sizes)} must be all 1 (one zero point for the tensor)",
        )
    filter_zero = tensors.layouts["filter_zero_point_tensor"]
    channels = geometry.output_channels
    per_channel = False
    if filter_zero is not None:
        sizes = list(filter_zero.sizes)
        # {1, OutputChannelCount, 1, 1} per channel with fewer dimensions allowed from 4.0: {1, M[, 1[, 1]]},
        # or {M} in one dimension.
        channel_axis = 0 if len(sizes) == 1 else 1
        others = sizes[:channel_axis] + sizes[channel_axis + 1 :]
        require(
            all(size == 1 for size in others) and sizes[channel_axis] in (1, channels),
            f"{tensors.field('filter_zero_point_tensor')}.buffer.sizes",
            f"sizes {sizes} must be all 1 (per tensor) or {{1, {channels}, 1, 1}} (per output channel)",
        )
        per_channel = sizes[channel_axis] != 1

    # ONNX ConvInteger pads with the input zero point, so padding contributes nothing, as the page's
    # conv(Input - InputZeroPoint, ..) means. ONNX Runtime's CPU kernel is exact only for UINT8 x UINT8 (with an
    # INT8 operand its AVX2 path saturates pairs of products to INT16): an INT8 tensor and its zero point are
    # shifted by 128 into UINT8, which leaves every difference unchanged. The kernel takes one filter zero point
    # per tensor: per channel, conv(X - zx, W - zw[c]) = conv(X - zx, W) - zw[c] * conv(X - zx, ones). The
    # INT32 accumulation wraps modulo 2**32 on overflow.
    x = _unsigned(graph, graph.input("input", source.dtype, source.sizes))
    w = _unsigned(graph, graph.input("filter", weights.dtype, weights.sizes))
    zx = _unsigned(
        graph,
        graph.input("input_zero", source.dtype, ()) if input_zero is not None else graph.const(0, source.dtype),
    )
    attrs: dict[str, Any] = {
        "strides": list(geometry.strides),
        "dilations": list(geometry.dilations),
        "group": geometry.groups,
        "pads": [*geometry.start, *geometry.end],
    }
    per_tensor = filter_zero is not None and not per_channel
    zw = graph.input("filter_zero", weights.dtype, ()) if per_tensor else graph.const(0, weights.dtype)
    y = graph.op("ConvInteger", x, w, zx, _unsigned(graph, zw), dtype=I32, **attrs)
    zero_shape = (1, channels, *([1] * (rank - 2)))
    if per_channel:
        one = onnx.helper.make_tensor("one", onnx.TensorProto.UINT8, [1], [1])
        ones = graph.op("ConstantOfShape", graph.const(list(weights.sizes), I64), dtype=U8, value=one)
        window = graph.op("ConvInteger", x, ones, zx, dtype=I32, **attrs)
        zw_channels = graph.cast(graph.input("filter_zero", weights.dtype, zero_shape), I32)
        y = graph.op("Sub", y, graph.op("Mul", window, zw_channels))
    return y, zero_shape if per_channel else ()


class ConvolutionInteger(Operator[operators_pb2.ConvolutionIntegerOperatorDesc]):
    case: ClassVar[str] = "convolution_integer"

    def lower(self, desc: operators_pb2.ConvolutionIntegerOperatorDesc, tensors: Tensors) -> Plan:
        _same(tensors, ("filter_tensor", "output_tensor"), "input_tensor", types=False, ranks=True)
        _same(tensors, ("input_zero_point_tensor",), "input_tensor", types=True, ranks=False)
        _same(tensors, ("filter_zero_point_tensor",), "filter_tensor", types=True, ranks=False)
        _same(tensors, ("filter_zero_point_tensor",), "input_zero_point_tensor", types=False, ranks=True)
        # The page says DimensionCount must be 2, yet its 4.0 table takes 3-D tensors (one spatial dimension):
        # the table wins, DimensionCount is the tensors' spatial dimension count (1 or 2).
        geometry = _geometry(desc, tensors, backward=False, has_output_padding=False)
        output = tensors["output_tensor"]
        graph = Graph()
        y, filter_zero_shape = integer_convolution(graph, tensors, geometry)
        graph.output(y, "output", output.sizes)
        # The zero points are fed reshaped to broadcast; input and filter may stay where they are.
        prepare = reshaping_feeder(
            ("input", "input_zero", "filter", "filter_zero"), (None, (), None, filter_zero_shape)
        )
        direct = ("input", None, "filter", None)
        layouts = tuple(tensors.layouts[f.name] for f in self.inputs)
        return Plan(layouts, (output,), graph.model(), prepare, direct_inputs=direct, direct_outputs=True)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Convolution(), ConvolutionInteger())
