"""The NumPy-style operator calls of both clients: a ``dmlrpc.ops`` builder's desc and arrays, executed, with its
results shaped as NumPy gives them; no gRPC here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._calls import Call, execute
from dmlrpc.ops.base import _window

__all__ = ["operation"]

T = TypeVar("T")


def operation(built: ops.Call, timeout: float | None, finish: Callable[[list[Any]], T]) -> Call[T]:
    """Execute a builder's call (unary or streamed by size, as ``execute`` decides) and give its results as NumPy
    would (``ops.Call.results``), then as ``finish`` picks them."""
    return execute(built.operator_desc, built.inputs, timeout=timeout).then(
        lambda outputs: finish(built.results(outputs))
    )


def _single(outputs: list[Any]) -> np.ndarray:
    (output,) = outputs
    assert isinstance(output, np.ndarray)
    return output


def _pair(outputs: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    first, second = outputs
    assert isinstance(first, np.ndarray) and isinstance(second, np.ndarray)
    return first, second


def _first(outputs: list[Any]) -> np.ndarray:
    """The first output, where the others are optional outputs the call left unset (MAX_POOLING2's indices)."""
    return _single(outputs[:1])


def _arrays(outputs: list[Any]) -> list[np.ndarray]:
    assert all(isinstance(output, np.ndarray) for output in outputs)
    return outputs


def element_wise(
    name: str,
    *inputs: npt.ArrayLike | None,
    output_dtype: npt.DTypeLike | None = None,
    timeout: float | None = None,
    **attributes: Any,
) -> Call[np.ndarray]:
    """DML_ELEMENT_WISE_<NAME> over NumPy-broadcast inputs: ``element_wise("add", a, b)`` (see
    ``dmlrpc.ops.element_wise``)."""
    return operation(ops.element_wise(name, *inputs, output_dtype=output_dtype, **attributes), timeout, _single)


def activation(
    name: str, *inputs: npt.ArrayLike | None, timeout: float | None = None, **attributes: Any
) -> Call[np.ndarray]:
    """DML_ACTIVATION_<NAME>: ``activation("leaky_relu", x, alpha=0.1)`` (see ``dmlrpc.ops.activation``)."""
    return operation(ops.activation(name, *inputs, **attributes), timeout, _single)


def top_k(
    input: npt.ArrayLike,
    k: int,
    axis: int = -1,
    *,
    direction: ops.Direction = "decreasing",
    index_dtype: npt.DTypeLike = np.uint32,
    version: int | None = None,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray]]:
    """The k largest (``direction="decreasing"``) or smallest elements along ``axis``: (values, indices); DML_TOP_K1,
    or DML_TOP_K with ``version=0`` (see ``dmlrpc.ops.top_k``)."""
    built = ops.top_k(input, k, axis, direction=direction, index_dtype=index_dtype, version=version)
    return operation(built, timeout, _pair)


def scatter_elements(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    axis: int = 0,
    *,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """A copy of ``input`` with ``updates`` written at ``indices`` along ``axis``."""
    return operation(ops.scatter_elements(input, indices, updates, axis), timeout, _single)


def scatter_nd(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    *,
    input_dimension_count: int | None = None,
    indices_dimension_count: int | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """A copy of ``input`` with ``updates`` written at the index tuples of ``indices`` (ONNX ScatterND).

    The arrays may differ in rank as in ONNX (see ``dmlrpc.ops.scatter_nd``); the result has ``input``'s shape.
    """
    return operation(
        ops.scatter_nd(
            input,
            indices,
            updates,
            input_dimension_count=input_dimension_count,
            indices_dimension_count=indices_dimension_count,
        ),
        timeout,
        _single,
    )


def gemm(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    c: npt.ArrayLike | None = None,
    *,
    trans_a: bool = False,
    trans_b: bool = False,
    alpha: float = 1.0,
    beta: float = 1.0,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_GEMM: ``alpha * (a @ b) + beta * c`` over 2-D to 4-D float32/float16 arrays, ``a``/``b`` transposed in
    their last two dimensions where ``trans_a``/``trans_b`` say (see ``dmlrpc.ops.gemm``); NumPy's result shape."""
    return operation(ops.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta), timeout, _single)


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
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_CONVOLUTION of {batch, channels, spatial..} ``input`` with ``filter`` plus ``bias`` per output channel
    (ONNX Conv by default, ConvTranspose with ``direction="backward"``; see ``dmlrpc.ops.convolution``)."""
    return operation(
        ops.convolution(
            input,
            filter,
            bias,
            **_window(strides, start_padding, end_padding, dilations),
            output_padding=output_padding,
            group_count=group_count,
            mode=mode,
            direction=direction,
        ),
        timeout,
        _single,
    )


def matrix_multiply_integer(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    a_zero_point: npt.ArrayLike | None = None,
    b_zero_point: npt.ArrayLike | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_MATRIX_MULTIPLY_INTEGER: ``(a - a_zero_point) @ (b - b_zero_point)`` of int8/uint8 arrays, in int32
    (see ``dmlrpc.ops.matrix_multiply_integer``)."""
    return operation(
        ops.matrix_multiply_integer(a, b, a_zero_point=a_zero_point, b_zero_point=b_zero_point), timeout, _single
    )


def reduce(
    function: str,
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None = None,
    *,
    keepdims: bool = False,
    index_dtype: npt.DTypeLike = np.int64,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_REDUCE: ``function`` ("sum", "mean", "max", "argmax", ...) over ``axes`` (``None``: all), shaped as
    NumPy's with ``keepdims`` (see ``dmlrpc.ops.reduce``)."""
    return operation(ops.reduce(function, input, axes, keepdims=keepdims, index_dtype=index_dtype), timeout, _single)


def cast(input: npt.ArrayLike, dtype: npt.DTypeLike, *, timeout: float | None = None) -> Call[np.ndarray]:
    """DML_CAST: ``input.astype(dtype)`` by DirectML's conversion rules (see ``dmlrpc.ops.cast``)."""
    return operation(ops.cast(input, dtype), timeout, _single)


def gather(
    input: npt.ArrayLike, indices: npt.ArrayLike, axis: int = 0, *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_GATHER: ``np.take(input, indices, axis)`` (see ``dmlrpc.ops.gather``)."""
    return operation(ops.gather(input, indices, axis), timeout, _single)


# Named as NumPy's users expect; below this line the builtin ``slice`` is shadowed in this module.
def gather_elements(
    input: npt.ArrayLike, indices: npt.ArrayLike, axis: int = 0, *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_GATHER_ELEMENTS: ``np.take_along_axis(input, indices, axis)`` (see ``dmlrpc.ops.gather_elements``)."""
    return operation(ops.gather_elements(input, indices, axis), timeout, _single)


def gather_nd(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    batch_dimension_count: int = 0,
    *,
    version: int | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_GATHER_ND(1): the slices of ``input`` at the index tuples of ``indices``, as ONNX GatherND (see
    ``dmlrpc.ops.gather_nd``)."""
    return operation(ops.gather_nd(input, indices, batch_dimension_count, version=version), timeout, _single)


def slice(
    input: npt.ArrayLike,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
    *,
    version: int | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_SLICE1 (SLICE with ``version=0``): a strided window of ``input`` per dimension (see
    ``dmlrpc.ops.slice``)."""
    return operation(ops.slice(input, offsets, sizes, strides, version=version), timeout, _single)


def pad(
    input: npt.ArrayLike,
    start_padding: int | Sequence[int],
    end_padding: int | Sequence[int],
    mode: str = "constant",
    value: float = 0,
    *,
    version: int | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_PADDING1 (PADDING with ``version=0``): ``np.pad`` with a start and end padding per dimension (see
    ``dmlrpc.ops.pad``)."""
    return operation(ops.pad(input, start_padding, end_padding, mode, value, version=version), timeout, _single)


def tile(input: npt.ArrayLike, repetitions: int | Sequence[int], *, timeout: float | None = None) -> Call[np.ndarray]:
    """DML_TILE: ``np.tile(input, repetitions)`` (see ``dmlrpc.ops.tile``)."""
    return operation(ops.tile(input, repetitions), timeout, _single)


def join(inputs: Sequence[npt.ArrayLike], axis: int = 0, *, timeout: float | None = None) -> Call[np.ndarray]:
    """DML_JOIN: ``np.concatenate(inputs, axis)`` for arrays of one dtype (see ``dmlrpc.ops.join``)."""
    return operation(ops.join(inputs, axis), timeout, _single)


def split(
    input: npt.ArrayLike, sizes: int | Sequence[int], axis: int = 0, *, timeout: float | None = None
) -> Call[list[np.ndarray]]:
    """DML_SPLIT: ``input`` cut along ``axis`` into pieces of ``sizes`` (an int: that many equal pieces, as
    ``np.split``); one array per piece (see ``dmlrpc.ops.split``)."""
    return operation(ops.split(input, sizes, axis), timeout, _arrays)


def average_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
    dilations: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_AVERAGE_POOLING (AVERAGE_POOLING1 with ``dilations``) over the spatial dimensions of an (N, C, ...)
    array (see ``dmlrpc.ops.average_pooling``)."""
    return operation(
        ops.average_pooling(
            input,
            window_size,
            **_window(strides, start_padding, end_padding, dilations),
            include_padding=include_padding,
        ),
        timeout,
        _single,
    )


def max_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_MAX_POOLING (MAX_POOLING2 with ``dilations``) over the spatial dimensions of an (N, C, ...) array (see
    ``dmlrpc.ops.max_pooling``)."""
    return operation(
        ops.max_pooling(
            input,
            window_size,
            **_window(strides, start_padding, end_padding, dilations),
        ),
        timeout,
        _first,
    )


def cumsum(
    input: npt.ArrayLike,
    axis: int,
    *,
    reverse: bool = False,
    exclusive: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_CUMULATIVE_SUMMATION: running sums along ``axis``, as ``np.cumsum`` (see ``dmlrpc.ops.cumsum``)."""
    return operation(ops.cumsum(input, axis, reverse=reverse, exclusive=exclusive), timeout, _single)


def cumprod(
    input: npt.ArrayLike,
    axis: int,
    *,
    reverse: bool = False,
    exclusive: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_CUMULATIVE_PRODUCT: running products along ``axis``, as ``np.cumprod`` (see ``dmlrpc.ops.cumprod``)."""
    return operation(ops.cumprod(input, axis, reverse=reverse, exclusive=exclusive), timeout, _single)


def mean_variance_normalization(
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None,
    *,
    scale: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    normalize_variance: bool = True,
    epsilon: float = 1e-5,
    version: int | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_MEAN_VARIANCE_NORMALIZATION2 (or the ``version`` given) over ``axes`` (see
    ``dmlrpc.ops.mean_variance_normalization``)."""
    return operation(
        ops.mean_variance_normalization(
            input,
            axes,
            scale=scale,
            bias=bias,
            normalize_variance=normalize_variance,
            epsilon=epsilon,
            version=version,
        ),
        timeout,
        _single,
    )


def batch_normalization(
    input: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    *,
    epsilon: float = 1e-5,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_BATCH_NORMALIZATION with given statistics (see ``dmlrpc.ops.batch_normalization``)."""
    return operation(ops.batch_normalization(input, mean, variance, scale, bias, epsilon=epsilon), timeout, _single)


def lp_normalization(
    input: npt.ArrayLike, axis: int = -1, *, p: int = 2, epsilon: float = 1e-5, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_LP_NORMALIZATION: ``input`` over its L1/L2 norm along ``axis`` (see ``dmlrpc.ops.lp_normalization``)."""
    return operation(ops.lp_normalization(input, axis, p=p, epsilon=epsilon), timeout, _single)


def one_hot(
    indices: npt.ArrayLike,
    depth: int,
    values: npt.ArrayLike = (0, 1),
    axis: int = -1,
    *,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ONE_HOT: ``values[1]`` at each index along a new ``axis`` of ``depth``, else ``values[0]`` (see
    ``dmlrpc.ops.one_hot``)."""
    return operation(ops.one_hot(indices, depth, values, axis), timeout, _single)


def fill_value_sequence(
    shape: int | Sequence[int],
    start: float,
    delta: float,
    dtype: npt.DTypeLike = np.float32,
    *,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_FILL_VALUE_SEQUENCE: ``start + i * delta`` in row-major order, shaped ``shape`` (see
    ``dmlrpc.ops.fill_value_sequence``)."""
    return operation(ops.fill_value_sequence(shape, start, delta, dtype), timeout, _single)


def value_scale_2d(
    input: npt.ArrayLike, scale: float = 1.0, bias: float | Sequence[float] = 0.0, *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_VALUE_SCALE_2D: ``input * scale + bias[c]`` per channel of an (N, C, H, W) image (see
    ``dmlrpc.ops.value_scale_2d``)."""
    return operation(ops.value_scale_2d(input, scale, bias), timeout, _single)


def upsample_2d(
    input: npt.ArrayLike, scale: int | Sequence[int], mode: str = "nearest", *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_UPSAMPLE_2D: height and width scaled up by whole factors (see ``dmlrpc.ops.upsample_2d``)."""
    return operation(ops.upsample_2d(input, scale, mode), timeout, _single)


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
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_RESAMPLE (1, 2, 3 as the arguments need): ``input`` resized per dimension by ``scales`` (see
    ``dmlrpc.ops.resample``)."""
    return operation(
        ops.resample(
            input,
            scales,
            mode=mode,
            output_shape=output_shape,
            input_pixel_offsets=input_pixel_offsets,
            output_pixel_offsets=output_pixel_offsets,
            rounding=rounding,
            antialiased=antialiased,
        ),
        timeout,
        _single,
    )


def space_to_depth(
    input: npt.ArrayLike, block_size: int, order: str | None = None, *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_SPACE_TO_DEPTH (SPACE_TO_DEPTH1 with an ``order``): blocks of H and W moved into the channels (see
    ``dmlrpc.ops.space_to_depth``)."""
    return operation(ops.space_to_depth(input, block_size, order), timeout, _single)


def depth_to_space(
    input: npt.ArrayLike, block_size: int, order: str | None = None, *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_DEPTH_TO_SPACE (DEPTH_TO_SPACE1 with an ``order``): channels spread into blocks of H and W (see
    ``dmlrpc.ops.depth_to_space``)."""
    return operation(ops.depth_to_space(input, block_size, order), timeout, _single)


def reverse_subsequences(
    input: npt.ArrayLike, sequence_lengths: npt.ArrayLike, axis: int = 0, *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_REVERSE_SUBSEQUENCES: the first ``sequence_lengths`` elements of each sequence along ``axis`` reversed
    (see ``dmlrpc.ops.reverse_subsequences``)."""
    return operation(ops.reverse_subsequences(input, sequence_lengths, axis), timeout, _single)


def fill_value_constant(
    shape: int | Sequence[int], value: float, dtype: npt.DTypeLike = np.float32, *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_FILL_VALUE_CONSTANT: ``np.full(shape, value, dtype)`` (see ``dmlrpc.ops.fill_value_constant``)."""
    return operation(ops.fill_value_constant(shape, value, dtype), timeout, _single)


def diagonal_matrix(
    shape: Sequence[int] | None,
    offset: int = 0,
    value: float = 1,
    dtype: npt.DTypeLike = np.float32,
    *,
    fill_end: int | None = None,
    input: npt.ArrayLike | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_DIAGONAL_MATRIX (DIAGONAL_MATRIX1 as the arguments need): ``value * np.eye(h, w, k=offset)`` per
    trailing matrix (see ``dmlrpc.ops.diagonal_matrix``)."""
    return operation(ops.diagonal_matrix(shape, offset, value, dtype, fill_end=fill_end, input=input), timeout, _single)


def nonzero_coordinates(input: npt.ArrayLike, *, timeout: float | None = None) -> Call[np.ndarray]:
    """DML_NONZERO_COORDINATES: ``np.argwhere(input)`` as uint32 (see ``dmlrpc.ops.nonzero_coordinates``)."""
    columns = np.ndim(input)

    def finish(outputs: list[Any]) -> np.ndarray:
        count, coordinates = _pair(outputs)
        # Rows past the count are unspecified, and a 0-d input's one column is DirectML's, not NumPy's.
        return coordinates[: int(count.reshape(-1)[0]), :columns]

    return operation(ops.nonzero_coordinates(input), timeout, finish)


def lp_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    p: int = 2,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_LP_POOLING (LP_POOLING1 with ``dilations``): the Lp norm of each window (see
    ``dmlrpc.ops.lp_pooling``)."""
    return operation(
        ops.lp_pooling(
            input,
            window_size,
            p=p,
            **_window(strides, start_padding, end_padding, dilations),
        ),
        timeout,
        _single,
    )


def max_pooling_with_indices(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    index_dtype: npt.DTypeLike = np.uint32,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray]]:
    """DML_MAX_POOLING1 (MAX_POOLING2 with ``dilations``): the maxima and their flat indices in the input (see
    ``dmlrpc.ops.max_pooling_with_indices``)."""
    return operation(
        ops.max_pooling_with_indices(
            input,
            window_size,
            **_window(strides, start_padding, end_padding, dilations),
            index_dtype=index_dtype,
        ),
        timeout,
        _pair,
    )


def max_unpooling(
    input: npt.ArrayLike, indices: npt.ArrayLike, output_shape: Sequence[int], *, timeout: float | None = None
) -> Call[np.ndarray]:
    """DML_MAX_UNPOOLING: zeros of ``output_shape`` with ``input`` written at its flat ``indices`` (see
    ``dmlrpc.ops.max_unpooling``)."""
    return operation(ops.max_unpooling(input, indices, output_shape), timeout, _single)


def roi_pooling(
    input: npt.ArrayLike,
    rois: npt.ArrayLike,
    pooled_size: int | Sequence[int],
    spatial_scale: float = 1.0,
    *,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ROI_POOLING: the maximum over each bin of each region of interest (see ``dmlrpc.ops.roi_pooling``)."""
    return operation(ops.roi_pooling(input, rois, pooled_size, spatial_scale), timeout, _single)


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
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_CONVOLUTION_INTEGER: the int32 convolution of int8/uint8 arrays less their zero points (see
    ``dmlrpc.ops.convolution_integer``)."""
    return operation(
        ops.convolution_integer(
            input,
            filter,
            input_zero_point=input_zero_point,
            filter_zero_point=filter_zero_point,
            **_window(strides, start_padding, end_padding, dilations),
            group_count=group_count,
        ),
        timeout,
        _single,
    )


def argmax(
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None = None,
    *,
    keepdims: bool = False,
    select_last_index: bool = False,
    index_dtype: npt.DTypeLike = np.int64,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ARGMAX: ``np.argmax(input, axes)`` (see ``dmlrpc.ops.argmax``)."""
    built = ops.argmax(input, axes, keepdims=keepdims, select_last_index=select_last_index, index_dtype=index_dtype)
    return operation(built, timeout, _single)


def argmin(
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None = None,
    *,
    keepdims: bool = False,
    select_last_index: bool = False,
    index_dtype: npt.DTypeLike = np.int64,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ARGMIN: ``np.argmin(input, axes)`` (see ``dmlrpc.ops.argmin``)."""
    built = ops.argmin(input, axes, keepdims=keepdims, select_last_index=select_last_index, index_dtype=index_dtype)
    return operation(built, timeout, _single)


def local_response_normalization(
    input: npt.ArrayLike,
    local_size: int,
    *,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
    cross_channel: bool = True,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_LOCAL_RESPONSE_NORMALIZATION (ONNX LRN; see ``dmlrpc.ops.local_response_normalization``)."""
    return operation(
        ops.local_response_normalization(
            input, local_size, alpha=alpha, beta=beta, bias=bias, cross_channel=cross_channel
        ),
        timeout,
        _single,
    )


def _present(outputs: list[Any]) -> tuple[np.ndarray, ...]:
    """The outputs that were asked for (an unset optional output comes back as ``None``), in binding order."""
    return tuple(output for output in outputs if output is not None)


def _triple(outputs: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    first, second, third = outputs
    assert all(isinstance(output, np.ndarray) for output in outputs)
    return first, second, third


def _with_optional(outputs: list[Any]) -> tuple[np.ndarray, np.ndarray | None]:
    first, second = outputs
    assert isinstance(first, np.ndarray)
    return first, second


def quantize(
    input: npt.ArrayLike,
    scale: npt.ArrayLike,
    zero_point: npt.ArrayLike | None = None,
    *,
    dtype: npt.DTypeLike | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_QUANTIZE: ``clip(round(input / scale) + zero_point)`` in int8/uint8 (see ``dmlrpc.ops.quantize``)."""
    return operation(ops.quantize(input, scale, zero_point, dtype=dtype), timeout, _single)


def dequantize(
    input: npt.ArrayLike,
    scale: npt.ArrayLike,
    zero_point: npt.ArrayLike | None = None,
    *,
    dtype: npt.DTypeLike | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_DEQUANTIZE: ``(input - zero_point) * scale`` (see ``dmlrpc.ops.dequantize``)."""
    return operation(ops.dequantize(input, scale, zero_point, dtype=dtype), timeout, _single)


def dynamic_quantize_linear(
    input: npt.ArrayLike, *, dtype: npt.DTypeLike = np.uint8, timeout: float | None = None
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_DYNAMIC_QUANTIZE_LINEAR: (output, scale, zero_point) from the input's own range (see
    ``dmlrpc.ops.dynamic_quantize_linear``)."""
    return operation(ops.dynamic_quantize_linear(input, dtype=dtype), timeout, _triple)


def quantized_linear_matrix_multiply(
    a: npt.ArrayLike,
    a_scale: npt.ArrayLike,
    b: npt.ArrayLike,
    b_scale: npt.ArrayLike,
    output_scale: npt.ArrayLike,
    *,
    a_zero_point: npt.ArrayLike | None = None,
    b_zero_point: npt.ArrayLike | None = None,
    output_zero_point: npt.ArrayLike | None = None,
    dtype: npt.DTypeLike | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY: ``quantize(dequantize(a) @ dequantize(b))`` (see
    ``dmlrpc.ops.quantized_linear_matrix_multiply``)."""
    built = ops.quantized_linear_matrix_multiply(
        a,
        a_scale,
        b,
        b_scale,
        output_scale,
        a_zero_point=a_zero_point,
        b_zero_point=b_zero_point,
        output_zero_point=output_zero_point,
        dtype=dtype,
    )
    return operation(built, timeout, _single)


def matrix_multiply_integer_to_float(
    a: npt.ArrayLike,
    a_scale: npt.ArrayLike,
    b: npt.ArrayLike,
    b_scale: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    a_zero_point: npt.ArrayLike | None = None,
    b_zero_point: npt.ArrayLike | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT: ``dequantize(a) @ dequantize(b) + bias`` (see
    ``dmlrpc.ops.matrix_multiply_integer_to_float``)."""
    built = ops.matrix_multiply_integer_to_float(
        a, a_scale, b, b_scale, bias, a_zero_point=a_zero_point, b_zero_point=b_zero_point
    )
    return operation(built, timeout, _single)


def quantized_linear_convolution(
    input: npt.ArrayLike,
    input_scale: npt.ArrayLike,
    filter: npt.ArrayLike,
    filter_scale: npt.ArrayLike,
    output_scale: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    input_zero_point: npt.ArrayLike | None = None,
    filter_zero_point: npt.ArrayLike | None = None,
    output_zero_point: npt.ArrayLike | None = None,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    group_count: int = 1,
    dtype: npt.DTypeLike | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_QUANTIZED_LINEAR_CONVOLUTION: ONNX QLinearConv over (N, C, H, W) (see
    ``dmlrpc.ops.quantized_linear_convolution``)."""
    built = ops.quantized_linear_convolution(
        input,
        input_scale,
        filter,
        filter_scale,
        output_scale,
        bias,
        input_zero_point=input_zero_point,
        filter_zero_point=filter_zero_point,
        output_zero_point=output_zero_point,
        **_window(strides, start_padding, end_padding, dilations),
        group_count=group_count,
        dtype=dtype,
    )
    return operation(built, timeout, _single)


def quantized_linear_average_pooling(
    input: npt.ArrayLike,
    input_scale: npt.ArrayLike,
    output_scale: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    input_zero_point: npt.ArrayLike | None = None,
    output_zero_point: npt.ArrayLike | None = None,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_QUANTIZED_LINEAR_AVERAGE_POOLING: ``quantize(average_pooling(dequantize(input)))`` (see
    ``dmlrpc.ops.quantized_linear_average_pooling``)."""
    built = ops.quantized_linear_average_pooling(
        input,
        input_scale,
        output_scale,
        window_size,
        input_zero_point=input_zero_point,
        output_zero_point=output_zero_point,
        **_window(strides, start_padding, end_padding, dilations),
        include_padding=include_padding,
    )
    return operation(built, timeout, _single)


def rnn(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    direction: Literal["forward", "backward", "bidirectional"] = "forward",
    activations: Sequence[ops.Activation] | None = None,
    outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, ...]]:
    """DML_RNN with ONNX's layouts: the ``outputs`` asked for, in order (see ``dmlrpc.ops.rnn``)."""
    built = ops.rnn(
        input,
        weight,
        recurrence,
        bias,
        hidden_init=hidden_init,
        sequence_lengths=sequence_lengths,
        direction=direction,
        activations=activations,
        outputs=outputs,
    )
    return operation(built, timeout, _present)


def lstm(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    cell_mem_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    peephole: npt.ArrayLike | None = None,
    direction: Literal["forward", "backward", "bidirectional"] = "forward",
    activations: Sequence[ops.Activation] | None = None,
    clip_threshold: float | None = None,
    couple_input_forget: bool = False,
    outputs: Sequence[Literal["sequence", "single", "cell_single"]] = ("sequence", "single", "cell_single"),
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, ...]]:
    """DML_LSTM with ONNX's layouts: the ``outputs`` asked for, in order (see ``dmlrpc.ops.lstm``)."""
    built = ops.lstm(
        input,
        weight,
        recurrence,
        bias,
        hidden_init=hidden_init,
        cell_mem_init=cell_mem_init,
        sequence_lengths=sequence_lengths,
        peephole=peephole,
        direction=direction,
        activations=activations,
        clip_threshold=clip_threshold,
        couple_input_forget=couple_input_forget,
        outputs=outputs,
    )
    return operation(built, timeout, _present)


def gru(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    direction: Literal["forward", "backward", "bidirectional"] = "forward",
    activations: Sequence[ops.Activation] | None = None,
    linear_before_reset: bool = False,
    outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, ...]]:
    """DML_GRU with ONNX's layouts: the ``outputs`` asked for, in order (see ``dmlrpc.ops.gru``)."""
    built = ops.gru(
        input,
        weight,
        recurrence,
        bias,
        hidden_init=hidden_init,
        sequence_lengths=sequence_lengths,
        direction=direction,
        activations=activations,
        linear_before_reset=linear_before_reset,
        outputs=outputs,
    )
    return operation(built, timeout, _present)


def batch_normalization_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike,
    *,
    epsilon: float = 1e-5,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_BATCH_NORMALIZATION_GRAD: (input gradient, scale gradient, bias gradient) (see
    ``dmlrpc.ops.batch_normalization_grad``)."""
    built = ops.batch_normalization_grad(input, input_gradient, mean, variance, scale, epsilon=epsilon)
    return operation(built, timeout, _triple)


def batch_normalization_training_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike,
    *,
    epsilon: float = 1e-5,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_BATCH_NORMALIZATION_TRAINING_GRAD: (input gradient, scale gradient, bias gradient) (see
    ``dmlrpc.ops.batch_normalization_training_grad``)."""
    built = ops.batch_normalization_training_grad(input, input_gradient, mean, variance, scale, epsilon=epsilon)
    return operation(built, timeout, _triple)


def batch_normalization_training(
    input: npt.ArrayLike,
    scale: npt.ArrayLike,
    bias: npt.ArrayLike,
    fused_add: npt.ArrayLike | None = None,
    *,
    epsilon: float = 1e-5,
    fused_activation: ops.Activation | None = None,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_BATCH_NORMALIZATION_TRAINING: (output, mean, variance) with the batch's statistics (see
    ``dmlrpc.ops.batch_normalization_training``)."""
    built = ops.batch_normalization_training(
        input, scale, bias, fused_add, epsilon=epsilon, fused_activation=fused_activation
    )
    return operation(built, timeout, _triple)


def local_response_normalization_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    *,
    cross_channel: bool = True,
    local_size: int = 5,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_LOCAL_RESPONSE_NORMALIZATION_GRAD over (N, C, H, W) (see
    ``dmlrpc.ops.local_response_normalization_grad``)."""
    built = ops.local_response_normalization_grad(
        input, input_gradient, cross_channel=cross_channel, local_size=local_size, alpha=alpha, beta=beta, bias=bias
    )
    return operation(built, timeout, _single)


def adam_optimizer(
    parameters: npt.ArrayLike,
    first_moment: npt.ArrayLike,
    second_moment: npt.ArrayLike,
    gradient: npt.ArrayLike,
    training_step: int | float | npt.ArrayLike,
    *,
    learning_rate: float = 1e-3,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float = 1e-8,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_ADAM_OPTIMIZER: one Adam step, (parameters, first moment, second moment) (see
    ``dmlrpc.ops.adam_optimizer``)."""
    built = ops.adam_optimizer(
        parameters,
        first_moment,
        second_moment,
        gradient,
        training_step,
        learning_rate=learning_rate,
        beta1=beta1,
        beta2=beta2,
        epsilon=epsilon,
    )
    return operation(built, timeout, _triple)


def average_pooling_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_AVERAGE_POOLING_GRAD: the gradient of ``average_pooling`` for an input of ``input_shape`` (see
    ``dmlrpc.ops.average_pooling_grad``)."""
    built = ops.average_pooling_grad(
        input_gradient,
        input_shape,
        window_size,
        strides=strides,
        start_padding=start_padding,
        end_padding=end_padding,
        include_padding=include_padding,
    )
    return operation(built, timeout, _single)


def max_pooling_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_MAX_POOLING_GRAD: each window's gradient to its maximum (see ``dmlrpc.ops.max_pooling_grad``)."""
    built = ops.max_pooling_grad(
        input,
        input_gradient,
        window_size,
        **_window(strides, start_padding, end_padding, dilations),
    )
    return operation(built, timeout, _single)


def resample_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    *,
    mode: Literal["nearest", "linear"] = "nearest",
    scales: float | Sequence[float] | None = None,
    input_pixel_offsets: float | Sequence[float] | None = None,
    output_pixel_offsets: float | Sequence[float] | None = None,
    rounding_direction: Literal["increasing", "decreasing"] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_RESAMPLE_GRAD(1): the gradient of a resample from ``input_shape`` (see ``dmlrpc.ops.resample_grad``)."""
    built = ops.resample_grad(
        input_gradient,
        input_shape,
        mode=mode,
        scales=scales,
        input_pixel_offsets=input_pixel_offsets,
        output_pixel_offsets=output_pixel_offsets,
        rounding_direction=rounding_direction,
    )
    return operation(built, timeout, _single)


def slice_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
    *,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_SLICE_GRAD: zeros of ``input_shape`` with the gradient where the slice read (see
    ``dmlrpc.ops.slice_grad``)."""
    return operation(ops.slice_grad(input_gradient, input_shape, offsets, sizes, strides), timeout, _single)


def fold(
    input: npt.ArrayLike,
    output_size: Sequence[int],
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_FOLD (col2im): columns summed back into an image (see ``dmlrpc.ops.fold``)."""
    built = ops.fold(
        input,
        output_size,
        window_size,
        **_window(strides, start_padding, end_padding, dilations),
    )
    return operation(built, timeout, _single)


def unfold(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_UNFOLD (im2col): every sliding window as a column (see ``dmlrpc.ops.unfold``)."""
    built = ops.unfold(
        input, window_size, strides=strides, dilations=dilations, start_padding=start_padding, end_padding=end_padding
    )
    return operation(built, timeout, _single)


def roi_align(
    input: npt.ArrayLike,
    rois: npt.ArrayLike,
    batch_indices: npt.ArrayLike,
    output_size: Sequence[int],
    *,
    reduction: Literal["average", "max"] = "average",
    mode: Literal["nearest", "linear"] = "linear",
    spatial_scale: float | tuple[float, float] = 1.0,
    input_pixel_offset: float = 0.5,
    output_pixel_offset: float = -0.5,
    out_of_bounds_value: float = 0.0,
    minimum_samples: int = 1,
    maximum_samples: int = 2**32 - 1,
    align_regions_to_corners: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ROI_ALIGN(1): each region of interest resized to ``output_size`` (see ``dmlrpc.ops.roi_align``)."""
    built = ops.roi_align(
        input,
        rois,
        batch_indices,
        output_size,
        reduction=reduction,
        mode=mode,
        spatial_scale=spatial_scale,
        input_pixel_offset=input_pixel_offset,
        output_pixel_offset=output_pixel_offset,
        out_of_bounds_value=out_of_bounds_value,
        minimum_samples=minimum_samples,
        maximum_samples=maximum_samples,
        align_regions_to_corners=align_regions_to_corners,
    )
    return operation(built, timeout, _single)


def random_generator(
    input_state: npt.ArrayLike,
    shape: int | Sequence[int],
    *,
    next_state: bool = True,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray | None]]:
    """DML_RANDOM_GENERATOR: (uint32 values of ``shape``, the next state or ``None``) (see
    ``dmlrpc.ops.random_generator``)."""
    return operation(ops.random_generator(input_state, shape, next_state=next_state), timeout, _with_optional)


def _attention(outputs: list[Any]) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The output alone, or with the present key and value where the call asked for them."""
    if outputs[1] is None:
        return _first(outputs)
    output, key, value = outputs
    assert isinstance(output, np.ndarray) and isinstance(key, np.ndarray) and isinstance(value, np.ndarray)
    return output, key, value


def multihead_attention(
    query: npt.ArrayLike | None = None,
    key: npt.ArrayLike | None = None,
    value: npt.ArrayLike | None = None,
    *,
    head_count: int,
    key_value_head_count: int | None = None,
    stacked_query_key: npt.ArrayLike | None = None,
    stacked_key_value: npt.ArrayLike | None = None,
    stacked_query_key_value: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    mask: npt.ArrayLike | None = None,
    mask_type: ops.MaskType | None = None,
    relative_position_bias: npt.ArrayLike | None = None,
    past_key: npt.ArrayLike | None = None,
    past_value: npt.ArrayLike | None = None,
    scale: float | None = None,
    mask_filter_value: float = -10000.0,
    present: bool = False,
    version: int | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_MULTIHEAD_ATTENTION(1): scaled dot-product attention over ``head_count`` heads, the output (batch,
    sequence, head_count * value head size), or (output, present key, present value) with ``present`` (see
    ``dmlrpc.ops.multihead_attention``)."""
    built = ops.multihead_attention(
        query,
        key,
        value,
        head_count=head_count,
        key_value_head_count=key_value_head_count,
        stacked_query_key=stacked_query_key,
        stacked_key_value=stacked_key_value,
        stacked_query_key_value=stacked_query_key_value,
        bias=bias,
        mask=mask,
        mask_type=mask_type,
        relative_position_bias=relative_position_bias,
        past_key=past_key,
        past_value=past_value,
        scale=scale,
        mask_filter_value=mask_filter_value,
        present=present,
        version=version,
    )
    return operation(built, timeout, _attention)


def roi_align_grad(
    input_gradient: npt.ArrayLike,
    rois: npt.ArrayLike,
    batch_indices: npt.ArrayLike,
    input_shape: Sequence[int] | None = None,
    *,
    input: npt.ArrayLike | None = None,
    reduction: Literal["average", "max"] = "average",
    mode: Literal["nearest", "linear"] = "linear",
    spatial_scale: float | tuple[float, float] = 1.0,
    input_pixel_offset: float = 0.5,
    output_pixel_offset: float = -0.5,
    minimum_samples: int = 1,
    maximum_samples: int = 2**32 - 1,
    align_regions_to_corners: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ROI_ALIGN_GRAD: the gradient of ``roi_align`` with respect to its input (see
    ``dmlrpc.ops.roi_align_grad``)."""
    built = ops.roi_align_grad(
        input_gradient,
        rois,
        batch_indices,
        input_shape,
        input=input,
        reduction=reduction,
        mode=mode,
        spatial_scale=spatial_scale,
        input_pixel_offset=input_pixel_offset,
        output_pixel_offset=output_pixel_offset,
        minimum_samples=minimum_samples,
        maximum_samples=maximum_samples,
        align_regions_to_corners=align_regions_to_corners,
    )
    return operation(built, timeout, _first)
