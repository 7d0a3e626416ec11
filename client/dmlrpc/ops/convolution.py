"""DML_CONVOLUTION (ONNX Conv and ConvTranspose) and DML_CONVOLUTION_INTEGER (ONNX ConvInteger) as NumPy-style
builders."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call, _array, _count, _float_operand
from dmlrpc.v1 import operators_pb2

__all__ = ["convolution", "convolution_integer"]


#: DML_CONVOLUTION_MODE and DML_CONVOLUTION_DIRECTION by name.
_CONVOLUTION_MODES = {
    "cross_correlation": operators_pb2.CONVOLUTION_MODE_CROSS_CORRELATION,
    "convolution": operators_pb2.CONVOLUTION_MODE_CONVOLUTION,
}


_CONVOLUTION_DIRECTIONS = {
    "forward": operators_pb2.CONVOLUTION_DIRECTION_FORWARD,
    "backward": operators_pb2.CONVOLUTION_DIRECTION_BACKWARD,
}


def _spatial(value: object, argument: str, where: str, count: int, default: int, minimum: int) -> tuple[int, ...]:
    """One value per spatial dimension: ``None`` for ``default`` in each, an int for it in each, or a sequence."""
    if value is None:
        return (default,) * count
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        values: list[object] = [value] * count
    elif isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes):
        values = list(value)
    else:
        raise ArgumentTypeError(
            argument, f"{where}: {argument} must be an int or a sequence of ints; got {type(value).__name__}"
        )
    if len(values) != count:
        raise ArgumentValueError(
            argument,
            f"{where}: {argument} has {len(values)} values; the input has {count} spatial dimensions",
            allowed=(str(count),),
        )
    return tuple(_count(v, argument, where, minimum) for v in values)


def _window(
    strides: object, dilations: object, start_padding: object, end_padding: object, where: str, count: int
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Strides and dilations (default 1, at least 1), start and end padding (default 0) per spatial dimension."""
    return (
        _spatial(strides, "strides", where, count, 1, 1),
        _spatial(dilations, "dilations", where, count, 1, 1),
        _spatial(start_padding, "start_padding", where, count, 0, 0),
        _spatial(end_padding, "end_padding", where, count, 0, 0),
    )


def _choice(value: object, argument: str, where: str, choices: Mapping[str, int]) -> int:
    if not isinstance(value, str):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be a str; got {type(value).__name__}")
    if value not in choices:
        raise ArgumentValueError(
            argument, f"{where}: {argument} {value!r} is unknown", allowed=tuple(repr(c) for c in choices)
        )
    return choices[value]


@operator(sends=("convolution",))
def convolution(
    input: npt.ArrayLike,
    filter: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    output_padding: int | Sequence[int] | None = None,
    group_count: int = 1,
    mode: Literal["cross_correlation", "convolution"] = "cross_correlation",
    direction: Literal["forward", "backward"] = "forward",
) -> Call:
    """DML_CONVOLUTION_OPERATOR_DESC: ``input`` {batch, channels, [depth, [height,]] width} convolved with
    ``filter``, plus ``bias`` per output channel (ONNX Conv with the defaults; ONNX ConvTranspose with
    ``direction="backward"``).

    DirectML's rules: input, filter, bias and output have one data type, FLOAT32 or FLOAT16 (float64 is refused:
    pass float32), and one dimension count, 3 to 5 (1 to 3 spatial dimensions). Forward, the filter is {output
    channels, input channels / group_count, kernel..}; backward (the transposed convolution), {input channels,
    output channels / group_count, kernel..}. ``strides``, ``dilations`` (default 1), ``start_padding``,
    ``end_padding`` and ``output_padding`` (default 0) take one value per spatial dimension, or an int for all;
    padding adds zeros (backward, it crops the full result instead), output padding appends positions at the
    end. ``mode="cross_correlation"`` (the default) applies the filter as it is, as deep-learning convolutions do;
    ``"convolution"`` flips it spatially. ``bias`` is {output channels} or {1, output channels, 1..}. The
    output's spatial sizes are, forward, ``(in + start + end - ((kernel - 1) * dilation + 1)) // stride + 1 +
    output_padding``, backward ``(in - 1) * stride + (kernel - 1) * dilation + 1 - start - end + output_padding``.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count outside 3-5 or unlike the input's, channels that
            do not fit the filter and group_count, a filter larger than the padded input, a per-dimension value of
            the wrong count, a dtype the operator does not take or dtypes that differ.
    """
    where = "convolution"
    data = _float_operand(input, "input", "convolution", where)
    weights = _float_operand(filter, "filter", "convolution", where, data)
    if not 3 <= data.ndim <= 5:
        raise ArgumentValueError(
            "input",
            f"{where}: input has {data.ndim} dimensions; CONVOLUTION takes 3 to 5 (batch, channels, 1 to 3 spatial)",
            allowed=("3", "4", "5"),
        )
    if weights.ndim != data.ndim:
        raise ArgumentValueError(
            "filter",
            f"{where}: filter has {weights.ndim} dimensions and input {data.ndim}: they must have the same count",
            allowed=(str(data.ndim),),
        )
    spatial = data.ndim - 2
    stride, dilation, start, end = _window(strides, dilations, start_padding, end_padding, where, spatial)
    padding = _spatial(output_padding, "output_padding", where, spatial, 0, 0)
    groups = _count(group_count, "group_count", where, 1)
    mode_value = _choice(mode, "mode", where, _CONVOLUTION_MODES)
    direction_value = _choice(direction, "direction", where, _CONVOLUTION_DIRECTIONS)
    backward = direction_value == operators_pb2.CONVOLUTION_DIRECTION_BACKWARD
    channels = data.shape[1]
    if channels % groups:
        raise ArgumentValueError(
            "group_count", f"{where}: the input's channel count {channels} is not divisible by group_count {groups}"
        )
    if backward:
        if weights.shape[0] != channels:
            raise ArgumentValueError(
                "filter",
                f"{where}: filter.shape[0] = {weights.shape[0]} must be the input's channel count {channels} "
                "(backward: {input channels, output channels / group_count, kernel..})",
            )
        output_channels = weights.shape[1] * groups
    else:
        output_channels = weights.shape[0]
        if weights.shape[1] * groups != channels or output_channels % groups:
            raise ArgumentValueError(
                "filter",
                f"{where}: filter of shape {weights.shape} must be {{output channels (a multiple of group_count "
                f"{groups}), input channels / group_count = {channels // groups}, kernel..}}",
            )
    shape = [data.shape[0], output_channels]
    for d in range(spatial):
        extent = (weights.shape[2 + d] - 1) * dilation[d] + 1
        if backward:
            size = (data.shape[2 + d] - 1) * stride[d] + extent - start[d] - end[d] + padding[d]
        else:
            padded = data.shape[2 + d] + start[d] + end[d]
            if padded < extent:
                raise ArgumentValueError(
                    "filter",
                    f"{where}: the dilated filter spans {extent} along spatial dimension {d}, more than the padded "
                    f"input's {padded}",
                )
            size = (padded - extent) // stride[d] + 1 + padding[d]
        if size < 1:
            raise ArgumentValueError(
                "end_padding", f"{where}: the padding leaves no output along spatial dimension {d} ({size})"
            )
        shape.append(size)
    bias_data = None
    if bias is not None:
        bias_data = _float_operand(bias, "bias", "convolution", where, data)
        full = (1, output_channels, *(1,) * spatial)
        if bias_data.shape not in ((output_channels,), full):
            raise ArgumentValueError(
                "bias", f"{where}: bias of shape {bias_data.shape} must be ({output_channels},) or {full}"
            )
        bias_data = bias_data.reshape(full)
    desc = operators_pb2.ConvolutionOperatorDesc(
        input_tensor=tensor_desc(data),
        filter_tensor=tensor_desc(weights),
        output_tensor=tensor_desc((data.dtype, shape)),
        mode=mode_value,  # type: ignore[arg-type]
        direction=direction_value,  # type: ignore[arg-type]
        dimension_count=spatial,
        strides=stride,
        dilations=dilation,
        start_padding=start,
        end_padding=end,
        output_padding=padding,
        group_count=groups,
    )
    if bias_data is not None:
        desc.bias_tensor.CopyFrom(tensor_desc(bias_data))
    return Call(operators_pb2.OperatorDesc(convolution=desc), (data, weights, bias_data))


_INTEGER_TYPES = ("int8", "uint8")


def _integer_operand(value: npt.ArrayLike, argument: str, where: str) -> np.ndarray:
    data = _array(value, argument, where)
    if data.dtype.name not in _INTEGER_TYPES:
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype {data.dtype}; DML_OPERATOR_CONVOLUTION_INTEGER takes int8 and uint8, e.g. "
            f"np.asarray({argument}, np.uint8)",
            allowed=_INTEGER_TYPES,
        )
    return data


@operator(sends=("convolution_integer",))
def convolution_integer(
    input: npt.ArrayLike,
    filter: npt.ArrayLike,
    *,
    input_zero_point: npt.ArrayLike | None = None,
    filter_zero_point: npt.ArrayLike | None = None,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    group_count: int = 1,
) -> Call:
    """DML_CONVOLUTION_INTEGER_OPERATOR_DESC: ``conv(input - input_zero_point, filter - filter_zero_point)`` in
    int32 (ONNX ConvInteger), cross-correlation forward as ``convolution``'s default; padding contributes 0.

    DirectML's rules: input and filter are int8/uint8 {batch, channels, [height,] width} and {output channels,
    input channels / group_count, [kernel height,] kernel width} (3 or 4 dimensions); a zero point has its
    tensor's dtype, one value for the input, one per tensor or per output channel (shape (M,)) for the filter; the
    output is int32. ``strides``, ``dilations`` (default 1), ``start_padding`` and ``end_padding`` (default 0) as
    ``convolution``'s; output sizes ``(in + start + end - ((kernel - 1) * dilation + 1)) // stride + 1``.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than int8/uint8 (or a zero point unlike its
            tensor's), a dimension count other than 3 or 4 or unlike the filter's, channels that do not fit the
            filter and group_count, a filter larger than the padded input, a zero point of the wrong size.
    """
    where = "convolution_integer"
    data = _integer_operand(input, "input", where)
    weights = _integer_operand(filter, "filter", where)
    if not 3 <= data.ndim <= 4 or weights.ndim != data.ndim:
        raise ArgumentValueError(
            "input" if not 3 <= data.ndim <= 4 else "filter",
            f"{where}: input of shape {data.shape} and filter of shape {weights.shape}: both have 3 or 4 dimensions "
            "(batch/output channels, channels, 1 or 2 spatial)",
            allowed=("3", "4"),
        )
    spatial = data.ndim - 2
    stride, dilation, start, end = _window(strides, dilations, start_padding, end_padding, where, spatial)
    groups = _count(group_count, "group_count", where, 1)
    channels, output_channels = data.shape[1], weights.shape[0]
    if channels % groups or weights.shape[1] * groups != channels or output_channels % groups:
        raise ArgumentValueError(
            "filter",
            f"{where}: input of shape {data.shape} and filter of shape {weights.shape} with group_count {groups}: the "
            f"filter is {{output channels (a multiple of group_count), input channels / group_count, kernel..}}",
        )
    shape = [data.shape[0], output_channels]
    for d in range(spatial):
        extent = (weights.shape[2 + d] - 1) * dilation[d] + 1
        padded = data.shape[2 + d] + start[d] + end[d]
        if padded < extent:
            raise ArgumentValueError(
                "filter",
                f"{where}: filter of shape {weights.shape} spans {extent} along spatial dimension {d}, more than the "
                f"padded input's {padded} (input shape {data.shape})",
            )
        shape.append((padded - extent) // stride[d] + 1)
    ones = (1,) * data.ndim
    zero_in = None
    if input_zero_point is not None:
        zero_in = _integer_operand(input_zero_point, "input_zero_point", where)
        if zero_in.size != 1 or zero_in.dtype != data.dtype:
            raise ArgumentValueError(
                "input_zero_point",
                f"{where}: input_zero_point of shape {zero_in.shape} and dtype {zero_in.dtype}: it is one {data.dtype} "
                "value",
            )
        zero_in = zero_in.reshape(ones)
    zero_filter = None
    if filter_zero_point is not None:
        zero_filter = _integer_operand(filter_zero_point, "filter_zero_point", where)
        if zero_filter.size not in (1, output_channels) or zero_filter.dtype != weights.dtype:
            raise ArgumentValueError(
                "filter_zero_point",
                f"{where}: filter_zero_point of shape {zero_filter.shape} and dtype {zero_filter.dtype}: it is one "
                f"{weights.dtype} value or one per output channel ({output_channels})",
            )
        zero_filter = zero_filter.reshape(ones if zero_filter.size == 1 else (1, output_channels, *ones[2:]))
    desc = operators_pb2.ConvolutionIntegerOperatorDesc(
        input_tensor=tensor_desc(data),
        filter_tensor=tensor_desc(weights),
        output_tensor=tensor_desc((np.int32, shape)),
        dimension_count=spatial,
        strides=stride,
        dilations=dilation,
        start_padding=start,
        end_padding=end,
        group_count=groups,
    )
    if zero_in is not None:
        desc.input_zero_point_tensor.CopyFrom(tensor_desc(zero_in))
    if zero_filter is not None:
        desc.filter_zero_point_tensor.CopyFrom(tensor_desc(zero_filter))
    return Call(operators_pb2.OperatorDesc(convolution_integer=desc), (data, zero_in, weights, zero_filter))
