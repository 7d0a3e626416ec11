"""DML_AVERAGE_POOLING_GRAD, MAX_POOLING_GRAD, RESAMPLE_GRAD(1) and SLICE_GRAD as NumPy-style builders: the
gradients of the spatial operators, each given the forward input's shape where the gradient cannot tell it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call, _array, _check_float64, _flag, _float_operand, _per_axis, _wrap
from dmlrpc.ops.convolution import _choice
from dmlrpc.ops.pooling import _per_dimension
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["average_pooling_grad", "max_pooling_grad", "resample_grad", "slice_grad"]


def _shape(value: object, argument: str, where: str, ranks: Sequence[int] | None = None) -> tuple[int, ...]:
    """A shape argument: a sequence of sizes, each at least 1, of one of ``ranks`` dimensions if given."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = (value,)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be a sequence of ints; got {value!r}")
    sizes = tuple(_per_axis(list(value), argument, where, len(value), 1))
    if ranks is not None and len(sizes) not in ranks:
        raise ArgumentValueError(
            argument,
            f"{where}: {argument} {sizes} has {len(sizes)} dimensions; it takes "
            + " or ".join(str(rank) for rank in ranks),
            allowed=tuple(str(rank) for rank in ranks),
        )
    return sizes


def window_geometry(
    where: str,
    spatial: Sequence[int],
    window_size: object,
    strides: object,
    dilations: object,
    start_padding: object,
    end_padding: object,
) -> tuple[dict[str, list[int]], list[int]]:
    """The window attributes (one value per spatial dimension; defaults: stride and dilation 1, padding 0) and the
    windows per spatial dimension, ``(size + start + end - dilation * (window - 1) - 1) // stride + 1`` (the pages'
    formula), refusing a window larger than the padded input."""
    count = len(spatial)
    window = _per_dimension("window_size", window_size, count, 1, None, where)
    values = {
        "window_size": window,
        "strides": _per_dimension("strides", strides, count, 1, 1, where),
        "dilations": _per_dimension("dilations", dilations, count, 1, 1, where),
        "start_padding": _per_dimension("start_padding", start_padding, count, 0, 0, where),
        "end_padding": _per_dimension("end_padding", end_padding, count, 0, 0, where),
    }
    blocks = []
    for d, size in enumerate(spatial):
        padded = size + values["start_padding"][d] + values["end_padding"][d]
        extent = values["dilations"][d] * (window[d] - 1) + 1
        if extent > padded:
            raise ArgumentValueError(
                "window_size",
                f"{where}: along spatial dimension {d} the window spans {extent} elements, more than the padded "
                f"size {padded} (size {size})",
            )
        blocks.append((padded - extent) // values["strides"][d] + 1)
    return values, blocks


def _gradient(value: npt.ArrayLike, case: str, where: str, like: np.ndarray | None = None) -> np.ndarray:
    return _float_operand(value, "input_gradient", case, where, like)


def _expect(data: np.ndarray, expected: Sequence[int], argument: str, where: str, what: str) -> None:
    if data.shape != tuple(expected):
        raise ArgumentValueError(argument, f"{where}: {argument} has shape {data.shape}; {what} is {tuple(expected)}")


def _pooling_grad(
    where: str,
    shape: tuple[int, ...],
    dy: np.ndarray,
    window_size: object,
    strides: object,
    start_padding: object,
    end_padding: object,
    dilations: object,
) -> tuple[dict[str, list[int]], tuple[int, ...], tuple[int, ...]]:
    """The window attributes as sent, and the forward input's and the gradient's shapes as sent (a 3-D (N, C, W)
    travels as (N, C, 1, W): DirectML pools 2 or 3 spatial dimensions)."""
    values, blocks = window_geometry(where, shape[2:], window_size, strides, dilations, start_padding, end_padding)
    _expect(dy, (*shape[:2], *blocks), "input_gradient", where, "the pooling's output for that input shape")
    if len(shape) == 3:
        values = {name: [1 if name in ("window_size", "strides", "dilations") else 0, *v] for name, v in values.items()}
        return values, (shape[0], shape[1], 1, shape[2]), (dy.shape[0], dy.shape[1], 1, dy.shape[2])
    return values, shape, dy.shape


@operator(sends=("average_pooling_grad",))
def average_pooling_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
) -> Call:
    """DML_AVERAGE_POOLING_GRAD_OPERATOR_DESC: the gradient of ``average_pooling`` with respect to its input, of
    shape ``input_shape``: each element receives ``input_gradient`` of every window holding it, divided by that
    window's divisor (its in-bounds elements, or the whole window with ``include_padding``).

    DirectML's rules: InputGradientTensor has the forward output's sizes, OutputGradientTensor the forward input's,
    {N, C, [D,] H, W}, one data type, FLOAT32 or FLOAT16. Here ``input_shape`` has 3 to 5 dimensions (a 3-D
    (N, C, W) travels as (N, C, 1, W)) and ``input_gradient`` must have the shape ``average_pooling`` gives it with
    these window arguments.

    Raises:
        ArgumentValueError, ArgumentTypeError: an ``input_shape`` of another rank, window arguments of the wrong
            length or range, an ``input_gradient`` of another shape, a dtype other than float32/float16.
    """
    where = "average_pooling_grad"
    shape = _shape(input_shape, "input_shape", where, (3, 4, 5))
    dy = _gradient(input_gradient, where, where)
    values, sent, dy_sent = _pooling_grad(where, shape, dy, window_size, strides, start_padding, end_padding, None)
    del values["dilations"]
    desc = operators_pb2.AveragePoolingGradOperatorDesc(
        input_gradient_tensor=tensor_desc((dy.dtype, dy_sent)),
        output_gradient_tensor=tensor_desc((dy.dtype, sent)),
        dimension_count=len(values["window_size"]),
        include_padding=_flag(include_padding, "include_padding", where),
        **values,
    )
    return Call(_wrap(where, desc), (dy.reshape(dy_sent),), (shape,))


@operator(sends=("max_pooling_grad",))
def max_pooling_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
) -> Call:
    """DML_MAX_POOLING_GRAD_OPERATOR_DESC: the gradient of max pooling with respect to ``input``: each window's
    ``input_gradient`` goes to the element that is its maximum (the first one, in row-major order, on ties); the
    others get 0.

    DirectML's rules: InputTensor and OutputGradientTensor {N, C, [D,] H, W}, InputGradientTensor the forward
    output's sizes, all of one data type, FLOAT32 or FLOAT16. Here ``input`` has 3 to 5 dimensions (3-D travels as
    (N, C, 1, W)); ``input_gradient`` has the pooling's output shape for these window arguments, whose
    ``dilations`` default to 1. The result has ``input``'s shape.

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``average_pooling_grad``; dtypes that differ.
    """
    where = "max_pooling_grad"
    x = _float_operand(input, "input", where, where)
    if not 3 <= x.ndim <= 5:
        raise ArgumentValueError(
            "input", f"{where}: input has shape {x.shape}; it takes (N, C, W), (N, C, H, W) or (N, C, D, H, W)"
        )
    dy = _gradient(input_gradient, where, where, x)
    values, sent, dy_sent = _pooling_grad(
        where, x.shape, dy, window_size, strides, start_padding, end_padding, dilations
    )
    desc = operators_pb2.MaxPoolingGradOperatorDesc(
        input_tensor=tensor_desc((x.dtype, sent)),
        input_gradient_tensor=tensor_desc((dy.dtype, dy_sent)),
        output_gradient_tensor=tensor_desc((x.dtype, sent)),
        dimension_count=len(values["window_size"]),
        **values,
    )
    return Call(_wrap(where, desc), (x.reshape(sent), dy.reshape(dy_sent)), (x.shape,))


_INTERPOLATION_MODES = {
    "nearest": operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR,
    "linear": operators_pb2.INTERPOLATION_MODE_LINEAR,
}
_ROUNDING_DIRECTIONS = {
    "increasing": tensor_pb2.AXIS_DIRECTION_INCREASING,
    "decreasing": tensor_pb2.AXIS_DIRECTION_DECREASING,
}


def _floats(value: object, argument: str, where: str, count: int, default: float) -> list[float]:
    if value is None:
        return [default] * count
    items = [value] * count if isinstance(value, int | float | np.number) and not isinstance(value, bool) else value
    if isinstance(items, str | bytes) or not isinstance(items, Sequence | np.ndarray):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be a number or {count} numbers; got {value!r}")
    values = list(items)
    if len(values) != count:
        raise ArgumentValueError(
            argument, f"{where}: {argument} has {len(values)} values; the tensors have {count} dimensions"
        )
    result = []
    for i, item in enumerate(values):
        if isinstance(item, bool | np.bool_) or not isinstance(item, int | float | np.number):
            raise ArgumentTypeError(argument, f"{where}: {argument}[{i}] must be a number; got {type(item).__name__}")
        if not np.isfinite(item):
            raise ArgumentValueError(argument, f"{where}: {argument}[{i}] = {item} must be finite")
        result.append(float(item))
    return result


@operator(sends=("resample_grad", "resample_grad1"))
def resample_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    *,
    mode: Literal["nearest", "linear"] = "nearest",
    scales: float | Sequence[float] | None = None,
    input_pixel_offsets: float | Sequence[float] | None = None,
    output_pixel_offsets: float | Sequence[float] | None = None,
    rounding_direction: Literal["increasing", "decreasing"] | None = None,
) -> Call:
    """DML_RESAMPLE_GRAD_OPERATOR_DESC (``rounding_direction`` ``None``) or DML_RESAMPLE_GRAD1_OPERATOR_DESC: the
    gradient of a resample from ``input_shape`` to ``input_gradient``'s shape: every output position adds its
    gradient, times its interpolation weight, to each input element it reads.

    DirectML's rules: both tensors have one dimension count and data type, FLOAT32 or FLOAT16; one scale and one
    pixel offset per dimension. ``scales`` default to the sizes' ratios (``input_gradient.shape[d] /
    input_shape[d]``), the offsets to 0.5 and -0.5 (pixel centres, RESAMPLE's own); nearest neighbour rounds to
    the nearest (RESAMPLE_GRAD) or towards ``rounding_direction`` (RESAMPLE_GRAD1, "increasing": ceiling,
    "decreasing": floor).

    Raises:
        ArgumentValueError, ArgumentTypeError: shapes of different ranks, scales or offsets of the wrong length or
            not finite, scales not positive, an unknown mode or rounding direction, a dtype other than
            float32/float16.
    """
    where = "resample_grad"
    dy = _gradient(input_gradient, "resample_grad", where)
    shape = _shape(input_shape, "input_shape", where, (dy.ndim,))
    count = dy.ndim
    if scales is None:
        factors = [out / size for out, size in zip(dy.shape, shape, strict=True)]
    else:
        factors = _floats(scales, "scales", where, count, 1.0)
    for i, factor in enumerate(factors):
        if factor <= 0:
            raise ArgumentValueError("scales", f"{where}: scales[{i}] = {factor} must be positive")
    attributes: dict[str, Any] = {
        "interpolation_mode": _choice(mode, "mode", where, _INTERPOLATION_MODES),
        "dimension_count": count,
        "scales": factors,
        "input_pixel_offsets": _floats(input_pixel_offsets, "input_pixel_offsets", where, count, 0.5),
        "output_pixel_offsets": _floats(output_pixel_offsets, "output_pixel_offsets", where, count, -0.5),
    }
    tensors: dict[str, Any] = {
        "input_gradient_tensor": tensor_desc(dy),
        "output_gradient_tensor": tensor_desc((dy.dtype, shape)),
    }
    if rounding_direction is None:
        return Call(_wrap("resample_grad", operators_pb2.ResampleGradOperatorDesc(**tensors, **attributes)), (dy,))
    direction: Any = _choice(rounding_direction, "rounding_direction", where, _ROUNDING_DIRECTIONS)
    desc = operators_pb2.ResampleGrad1OperatorDesc(**tensors, **attributes, rounding_direction=direction)
    return Call(_wrap("resample_grad1", desc), (dy,))


@operator(sends=("slice_grad",))
def slice_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Call:
    """DML_SLICE_GRAD_OPERATOR_DESC: the gradient of ``slice(x, offsets, sizes, strides)`` for ``x`` of
    ``input_shape``: zeros with ``input_gradient`` written where the slice read (a negative stride reads its window
    backwards, as SLICE1).

    DirectML's rules: both tensors have one dimension count (1 to 8) and data type (float32, float16 or an
    8-32-bit integer); per dimension a window offset and size inside the input and a non-zero stride;
    InputGradientTensor has the slice's output sizes, ``ceil(size / |stride|)``.

    Raises:
        ArgumentValueError, ArgumentTypeError: arguments of another length than the input's dimensions, a window
            outside the input, a zero stride, an ``input_gradient`` of another shape.
    """
    where = "slice_grad"
    dy = _array(input_gradient, "input_gradient", where)
    _check_float64("slice_grad", "input_gradient", dy, where)
    shape = _shape(input_shape, "input_shape", where)
    rank = len(shape)
    starts = _per_axis(offsets, "offsets", where, rank, 0)
    lengths = _per_axis(sizes, "sizes", where, rank, 1)
    steps = [1] * rank if strides is None else _per_axis(strides, "strides", where, rank, None)
    for d in range(rank):
        if steps[d] == 0:
            raise ArgumentValueError("strides", f"{where}: strides[{d}] is 0; a slice steps at least 1 either way")
        if starts[d] + lengths[d] > shape[d]:
            raise ArgumentValueError(
                "sizes",
                f"{where}: along dimension {d} the window [{starts[d]}, {starts[d] + lengths[d]}) leaves the input "
                f"shape {shape}",
            )
    expected = tuple(-(-length // abs(step)) for length, step in zip(lengths, steps, strict=True))
    _expect(dy, expected, "input_gradient", where, "the slice's output")
    desc = operators_pb2.SliceGradOperatorDesc(
        input_gradient_tensor=tensor_desc(dy),
        output_gradient_tensor=tensor_desc((dy.dtype, shape)),
        dimension_count=rank,
        input_window_offsets=starts,
        input_window_sizes=lengths,
        input_window_strides=steps,
    )
    return Call(_wrap(where, desc), (dy,))
