"""DML_VALUE_SCALE_2D, DML_UPSAMPLE_2D and DML_RESAMPLE(1/2/3) as NumPy-style builders."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from google.protobuf.message import Message

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call, _flag, _float_operand, _input, _per_axis, _scalar, _wrap
from dmlrpc.ops.convolution import _choice
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["resample", "upsample_2d", "value_scale_2d"]


#: DML_INTERPOLATION_MODE by name.
_INTERPOLATION_MODES = {
    "nearest": operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR,
    "linear": operators_pb2.INTERPOLATION_MODE_LINEAR,
}


#: RESAMPLE2/3's RoundingDirection by what it does to a nearest neighbour's input coordinate.
_ROUNDINGS = {"floor": tensor_pb2.AXIS_DIRECTION_DECREASING, "ceil": tensor_pb2.AXIS_DIRECTION_INCREASING}


#: The types RESAMPLE(1/2/3) take (INT8/UINT8 from feature level 4.0 (RESAMPLE2/3) or 6.2 (RESAMPLE, RESAMPLE1)).
_RESAMPLE_TYPES = ("float32", "float16", "int8", "uint8")


@operator(sends=("value_scale_2d",))
def value_scale_2d(input: npt.ArrayLike, scale: float = 1.0, bias: float | Sequence[float] = 0.0) -> Call:
    """DML_VALUE_SCALE_2D_OPERATOR_DESC: ``input * scale + bias[c]`` per channel ``c`` of an (N, C, H, W) image
    (DirectML's pre-processing step, e.g. pixel values to [-1, 1]).

    DirectML's rules: 4 dimensions, C (ChannelCount) 1 or 3, one bias per channel; the output has the input's
    shape and dtype, float32/float16 only (FLOAT16 computes in FLOAT32 and rounds once).

    Args:
        input: an (N, C, H, W) float32/float16 array with C 1 or 3.
        scale: multiplies every element.
        bias: added per channel; a number: the same for every channel.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count other than 4, C other than 1 or 3, a bias count
            other than C, a dtype other than float32/float16.
    """
    where = case = "value_scale_2d"
    data = _float_operand(input, "input", case, where)
    if data.ndim != 4:
        raise ArgumentValueError(
            "input", f"{where}: input has shape {data.shape}; VALUE_SCALE_2D takes (N, C, H, W)", allowed=("4",)
        )
    channels = data.shape[1]
    if channels not in (1, 3):
        raise ArgumentValueError(
            "input",
            f"{where}: input has shape {data.shape}: {channels} channels; ChannelCount is 1 or 3",
            allowed=("1", "3"),
        )
    biases = [bias] * channels if not isinstance(bias, Sequence | np.ndarray) else list(bias)
    if len(biases) != channels:
        raise ArgumentValueError(
            "bias", f"{where}: bias has {len(biases)} values; input of shape {data.shape} has {channels} channels"
        )
    desc = operators_pb2.ValueScale2dOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc(data),
        scale=_scalar(scale, "scale", where),
        channel_count=channels,
        bias=[_scalar(b, "bias", where) for b in biases],
    )
    return Call(_wrap(case, desc), (data,))


@operator(sends=("upsample_2d",))
def upsample_2d(input: npt.ArrayLike, scale: int | Sequence[int], mode: str = "nearest") -> Call:
    """DML_UPSAMPLE_2D_OPERATOR_DESC: the last two dimensions (height, width) of ``input`` scaled up by whole
    factors, each element repeated (``mode="nearest"``: ``x.repeat(sh, -2).repeat(sw, -1)``) or interpolated
    (``"linear"``: pixel centres map onto pixel centres, the edges clamp).

    DirectML's rules: 4 or 5 dimensions (N, C, [D,] H, W), float32/float16; the output has the input's dtype and
    sizes with H * scale_height and W * scale_width.

    Args:
        input: the array to upsample.
        scale: (height, width) factors, each at least 1; an int: the same for both.
        mode: "nearest" or "linear" (DML_INTERPOLATION_MODE).

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count other than 4 or 5, a factor below 1, an unknown
            mode, a dtype other than float32/float16.
    """
    where = case = "upsample_2d"
    data = _float_operand(input, "input", case, where)
    if data.ndim not in (4, 5):
        raise ArgumentValueError(
            "input",
            f"{where}: input has shape {data.shape}; UPSAMPLE_2D takes (N, C, H, W) or (N, C, D, H, W)",
            allowed=("4", "5"),
        )
    height, width = _per_axis(scale, "scale", where, 2, 1, noun="scaled dimensions (height, width)")
    mode_value = _choice(mode, "mode", where, _INTERPOLATION_MODES)
    shape = (*data.shape[:-2], data.shape[-2] * height, data.shape[-1] * width)
    desc = operators_pb2.Upsample2dOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, shape)),
        scale_size=operators_pb2.Size2D(width=width, height=height),
        interpolation_mode=mode_value,  # type: ignore[arg-type]
    )
    return Call(_wrap(case, desc), (data,))


@operator(sends=("resample", "resample1", "resample2", "resample3"))
def resample(
    input: npt.ArrayLike,
    scales: float | Sequence[float],
    *,
    mode: str = "nearest",
    output_shape: Sequence[int] | None = None,
    input_pixel_offsets: float | Sequence[float] | None = None,
    output_pixel_offsets: float | Sequence[float] | None = None,
    rounding: str | None = None,
    antialiased: bool = False,
) -> Call:
    """DML_RESAMPLE_OPERATOR_DESC (1, 2, 3): ``input`` resized per dimension by ``scales`` (ONNX Resize), by
    nearest neighbour or (multi)linear interpolation.

    An output position ``o`` along a dimension reads input coordinate ``(o - output_pixel_offset) / scale -
    input_pixel_offset`` (defaults 0.5 and -0.5: pixel centres onto pixel centres, ONNX's "half_pixel"); the edges
    clamp. Nearest neighbour rounds half up, or with ``rounding`` "floor"/"ceil" (RESAMPLE2's RoundingDirection);
    ``antialiased`` linear downscaling widens the filter to cover every input element (RESAMPLE3).

    The desc sent is the oldest that expresses the call (the lowest feature level): RESAMPLE, RESAMPLE1 with pixel
    offsets, RESAMPLE2 with ``rounding``, RESAMPLE3 with ``antialiased``. DirectML's rules: input and output have
    one dtype (float32/float16; INT8/UINT8 from feature level 4.0 to 6.2 depending on the version) and dimension
    count (1 to 4: every dimension has a scale, e.g. ``(1, 1, 2, 2)`` for an (N, C, H, W) image); scales are
    finite and positive, offsets finite. DirectML does not derive the output size: ``output_shape`` defaults to
    ``floor(size * scale)`` per dimension (at least 1), as ONNX Resize computes it.

    Raises:
        ArgumentValueError, ArgumentTypeError: a scale or offset count other than the input's dimension count, a
            scale that is not positive and finite, an unknown mode or rounding, a dtype the operator does not take.
    """
    where = "resample"
    data = _input(input, "input", "resample", where)
    if data.dtype.name not in _RESAMPLE_TYPES:
        raise ArgumentTypeError(
            "input",
            f"{where}: input has dtype {data.dtype}, which DML_OPERATOR_RESAMPLE does not take",
            allowed=_RESAMPLE_TYPES,
        )
    if not 1 <= data.ndim <= 4:
        raise ArgumentValueError(
            "input",
            f"{where}: input has shape {data.shape}; RESAMPLE takes 1 to 4 dimensions",
            allowed=("1", "2", "3", "4"),
        )
    rank = data.ndim
    factors = _floats(scales, "scales", where, rank, data.shape)
    for i, factor in enumerate(factors):
        if not (math.isfinite(factor) and factor > 0):
            raise ArgumentValueError("scales", f"{where}: scales[{i}] = {factor} must be finite and positive")
    offsets = input_pixel_offsets is not None or output_pixel_offsets is not None
    inputs = _floats(
        0.5 if input_pixel_offsets is None else input_pixel_offsets, "input_pixel_offsets", where, rank, data.shape
    )
    outputs = _floats(
        -0.5 if output_pixel_offsets is None else output_pixel_offsets, "output_pixel_offsets", where, rank, data.shape
    )
    for argument, values in (("input_pixel_offsets", inputs), ("output_pixel_offsets", outputs)):
        for i, value in enumerate(values):
            if not math.isfinite(value):
                raise ArgumentValueError(argument, f"{where}: {argument}[{i}] = {value} must be finite")
    mode_value = _choice(mode, "mode", where, _INTERPOLATION_MODES)
    direction = None if rounding is None else _choice(rounding, "rounding", where, _ROUNDINGS)
    smooth = _flag(antialiased, "antialiased", where)
    if output_shape is None:
        shape = tuple(
            max(1, math.floor(size * float(np.float32(f)))) for size, f in zip(data.shape, factors, strict=True)
        )
    else:
        shape = tuple(_per_axis(output_shape, "output_shape", where, rank, 1))
    output = tensor_desc((data.dtype, shape))
    common: dict[str, Any] = {
        "input_tensor": tensor_desc(data),
        "output_tensor": output,
        "interpolation_mode": mode_value,
    }
    message: Message
    if not (offsets or direction is not None or smooth):
        case = "resample"
        message = operators_pb2.ResampleOperatorDesc(scale_count=rank, scales=factors, **common)
    else:
        window: dict[str, Any] = {
            "dimension_count": rank,
            "scales": factors,
            "input_pixel_offsets": inputs,
            "output_pixel_offsets": outputs,
        }
        if direction is None and not smooth:
            case = "resample1"
            message = operators_pb2.Resample1OperatorDesc(**common, **window)
        else:
            rounded: dict[str, Any] = {"rounding_direction": _ROUNDINGS["floor"] if direction is None else direction}
            if not smooth:
                case = "resample2"
                message = operators_pb2.Resample2OperatorDesc(**common, **window, **rounded)
            else:
                case = "resample3"
                message = operators_pb2.Resample3OperatorDesc(**common, **window, **rounded, antialiased=True)
    return Call(_wrap(case, message), (data,))


def _floats(value: object, argument: str, where: str, count: int, shape: tuple[int, ...]) -> list[float]:
    """One float per dimension of an input of ``shape`` (a number: the same for all)."""
    if isinstance(value, bool | str | bytes):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be a number or {count} numbers; got {value!r}")
    items = list(value) if isinstance(value, Sequence | np.ndarray) else [value] * count
    if len(items) != count:
        raise ArgumentValueError(
            argument, f"{where}: {argument} has {len(items)} values; input of shape {shape} has {count} dimensions"
        )
    return [_scalar(item, argument, where) for item in items]
