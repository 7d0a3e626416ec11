"""More NumPy-style operator calls (as ``_operations``): generators, resample, data movement, pooling with indices,
unpooling, integer convolution, arg-reduce, local response normalization and the quantized operators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._calls import Call
from dmlrpc._operations import _pair, _single, _triple, operation
from dmlrpc.ops.base import _window

__all__: list[str] = []


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
