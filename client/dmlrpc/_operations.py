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
