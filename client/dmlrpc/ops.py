"""Typed builders of operator descs from NumPy arrays, shared by Client and AsyncClient."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from google.protobuf import message_factory

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, DTYPE_NAMES, packed_strides, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.schema import tensor_fields
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = [
    "Call",
    "Direction",
    "activation",
    "average_pooling",
    "batch_normalization",
    "cast",
    "convolution",
    "cumprod",
    "cumsum",
    "element_wise",
    "fill_value_sequence",
    "gather",
    "gemm",
    "join",
    "lp_normalization",
    "matrix_multiply_integer",
    "max_pooling",
    "mean_variance_normalization",
    "one_hot",
    "pad",
    "reduce",
    "scatter_elements",
    "scatter_nd",
    "slice",
    "split",
    "tile",
    "top_k",
]

#: Top-k direction: "decreasing"/"largest", "increasing"/"smallest", or a DML_AXIS_DIRECTION value.
Direction = Literal["decreasing", "increasing", "largest", "smallest"] | int

_DIRECTIONS = {
    "decreasing": tensor_pb2.AXIS_DIRECTION_DECREASING,
    "largest": tensor_pb2.AXIS_DIRECTION_DECREASING,
    "increasing": tensor_pb2.AXIS_DIRECTION_INCREASING,
    "smallest": tensor_pb2.AXIS_DIRECTION_INCREASING,
}


@dataclass(frozen=True)
class Call:
    """An operator desc with its input arrays in binding order (``None`` for an absent optional input, a list for
    a tensor-array field such as JOIN's ``input_tensors``)."""

    operator_desc: operators_pb2.OperatorDesc
    inputs: tuple[np.ndarray | list[np.ndarray] | None, ...]
    #: Per output, the shape NumPy would give the caller (a 0-d result travels as a {1} tensor: DirectML has no
    #: 0-d tensors); empty or ``None``: the desc's sizes.
    output_shapes: tuple[tuple[int, ...] | None, ...] = ()
    #: Per output, the dtype NumPy would give the caller (bool travels as UINT8); empty or ``None``: the desc's.
    output_dtypes: tuple[np.dtype[Any] | None, ...] = ()

    def results(self, outputs: Sequence[Any]) -> list[Any]:
        """The outputs of executing this call reshaped and viewed as NumPy would return them (no copies); values
        that are not arrays (resident tensors, ``None``) pass through."""
        results = list(outputs)
        for i, output in enumerate(results):
            if not isinstance(output, np.ndarray):
                continue
            shape = self.output_shapes[i] if i < len(self.output_shapes) else None
            dtype = self.output_dtypes[i] if i < len(self.output_dtypes) else None
            if dtype is not None and output.dtype != dtype:
                output = output.view(dtype)
            if shape is not None and output.shape != shape:
                output = output.reshape(shape)
            results[i] = output
        return results


#: The operator descs built here that take FLOAT64 at some feature level (DirectML's tensor-support tables, as the
#: server applies them: tests/test_client_errors.py holds the two together); every other one refuses it at all
#: levels, so the SDK says so before sending.
_FLOAT64_CASES = frozenset(
    {
        "element_wise_identity",
        "element_wise_if",
        "element_wise_bit_and",
        "element_wise_bit_or",
        "element_wise_bit_xor",
        "element_wise_bit_not",
        "element_wise_bit_count",
        "scatter_elements",
        "scatter_nd",
        "cast",
        "one_hot",
        "gather",
        "slice1",
        "padding1",
        "join",
        "split",
    }
)
#: Element-wise operators that read UINT8 0/1 as booleans, so that NumPy bool arrays mean the same to them as to
#: NumPy. Every other operator would do arithmetic on the 0/1 (True + True = 2, where NumPy's is True).
_BOOLEAN_INPUTS = frozenset(
    {
        "logical_and",
        "logical_or",
        "logical_xor",
        "logical_not",
        "logical_equals",
        "logical_greater_than",
        "logical_less_than",
        "logical_greater_than_or_equal",
        "logical_less_than_or_equal",
    }
)
#: Of those, the ones whose output is the first input's type, so that bool inputs give a bool result as in NumPy.
_BOOLEAN_SAME_TYPE = frozenset({"logical_and", "logical_or", "logical_xor", "logical_not"})


def _axis(axis: object, rank: int, where: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise ArgumentTypeError("axis", f"{where}: axis must be an int; got {type(axis).__name__}")
    if not -rank <= axis < rank:
        raise ArgumentValueError(
            "axis", f"{where}: axis {axis} is out of range for {rank} dimensions: {-rank} <= axis < {rank}"
        )
    return int(axis) % rank


def _is_python_scalar(value: object) -> bool:
    return isinstance(value, bool | int | float) and not isinstance(value, np.generic)


def _array(value: object, argument: str, where: str, dtype: np.dtype[Any] | None = None) -> np.ndarray:
    """``value`` as an array of a dtype the codec sends, as NumPy converts it (``dtype``: for a Python scalar,
    the dtype NumPy's promotion gives it beside the other inputs)."""
    try:
        data = np.asarray(value, dtype=dtype)
    except OverflowError as error:  # a Python int that does not fit the other inputs' integer dtype
        raise ArgumentValueError(argument, f"{where}: {argument}: {error}") from None
    except (TypeError, ValueError) as error:  # ragged lists, strings, objects NumPy cannot make an array of
        raise ArgumentTypeError(argument, f"{where}: {argument} is not an array NumPy can convert: {error}") from None
    if data.dtype not in DATA_TYPE_BY_DTYPE:
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype {data.dtype}, which DirectML has no data type for",
            allowed=DTYPE_NAMES,
        )
    return data


def _check_float64(case: str, argument: str, data: np.ndarray, where: str) -> None:
    if data.dtype.kind == "f" and data.dtype.itemsize == 8 and case not in _FLOAT64_CASES:
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype float64 (what NumPy makes of Python floats and lists of them), which "
            f"DML_OPERATOR_{case.upper()} does not take in DirectML; pass a float32 array, e.g. "
            f"np.asarray(x, np.float32)",
            # The logical operators take no floating type at all; the server's answer names theirs.
            allowed=() if case.removeprefix("element_wise_") in _BOOLEAN_SAME_TYPE else ("float32", "float16"),
        )


def _input(value: npt.ArrayLike, argument: str, case: str, where: str) -> np.ndarray:
    data = _array(value, argument, where)
    _check_float64(case, argument, data, where)
    return data


def top_k(
    input: npt.ArrayLike,
    k: int,
    axis: int = -1,
    *,
    direction: Direction = "decreasing",
    index_dtype: npt.DTypeLike = np.uint32,
) -> Call:
    """DML_TOP_K1_OPERATOR_DESC: the k largest (decreasing) or smallest (increasing) elements along ``axis``.

    Args:
        input: the array to select from (1 to 8 dimensions).
        k: how many elements to select, 1 <= k <= input.shape[axis] (the server checks the upper bound).
        axis: the dimension to select along; negative counts from the end.
        direction: "decreasing" (largest first) or "increasing" (smallest first), or an AxisDirection value.
        index_dtype: np.uint32 or np.uint64 for the returned indices.

    Raises:
        ArgumentValueError, ArgumentTypeError: an argument the SDK cannot send (named, with its allowed values).
    """
    where = "top_k"
    data = _input(input, "input", "top_k1", where)
    if data.ndim == 0:
        # NumPy has no axis in a 0-d array to select along either (np.sort raises AxisError).
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to select along")
    axis = _axis(axis, data.ndim, where)
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ArgumentTypeError("k", f"{where}: k must be an int; got {type(k).__name__}")
    if k < 1:
        raise ArgumentValueError("k", f"{where}: k = {k} must be at least 1")
    out_shape = list(data.shape)
    out_shape[axis] = int(k)
    desc = operators_pb2.TopK1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_value_tensor=tensor_desc((data.dtype, out_shape)),
        output_index_tensor=tensor_desc((_index_dtype(index_dtype, where), out_shape)),
        axis=axis,
        k=int(k),
        axis_direction=_direction(direction, where),  # type: ignore[arg-type]
    )
    return Call(operators_pb2.OperatorDesc(top_k1=desc), (data,))


def _direction(direction: object, where: str) -> int:
    if isinstance(direction, str):
        if direction not in _DIRECTIONS:
            raise ArgumentValueError(
                "direction",
                f"{where}: direction {direction!r} is not a top-k direction",
                allowed=(*(repr(name) for name in _DIRECTIONS), "an AxisDirection int"),
            )
        return _DIRECTIONS[direction]
    if isinstance(direction, bool) or not isinstance(direction, int | np.integer):
        raise ArgumentTypeError(
            "direction", f"{where}: direction must be a str or an AxisDirection int; got {type(direction).__name__}"
        )
    # An int goes into the desc as it is (the way to send any DML_AXIS_DIRECTION): the server names bad ones.
    return int(direction)


def _index_dtype(index_dtype: npt.DTypeLike, where: str) -> np.dtype[Any]:
    try:
        dtype = np.dtype(index_dtype)
    except TypeError:
        raise ArgumentTypeError(
            "index_dtype", f"{where}: index_dtype {index_dtype!r} is not a NumPy dtype", allowed=("uint32", "uint64")
        ) from None
    # Other DirectML types go into the desc as asked; the server refuses them, naming UINT32 and UINT64.
    return dtype


def scatter_elements(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    axis: int = 0,
) -> Call:
    """DML_SCATTER_ELEMENTS_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at ``indices`` along
    ``axis`` (as ``numpy.put_along_axis``). All three arrays have the same number of dimensions; ``updates`` is
    cast to ``input``'s dtype, as NumPy does."""
    where = "scatter_elements"
    data = _input(input, "input", "scatter_elements", where)
    index_array, update_array = _array(indices, "indices", where), _array(updates, "updates", where)
    shape = data.shape
    data, index_array, update_array = (a.reshape(1) if a.ndim == 0 else a for a in (data, index_array, update_array))
    desc = operators_pb2.ScatterElementsOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        updates_tensor=tensor_desc(update_array.astype(data.dtype, copy=False)),
        output_tensor=tensor_desc(data),
        axis=_axis(axis, data.ndim, where),
    )
    return Call(operators_pb2.OperatorDesc(scatter_elements=desc), (data, index_array, update_array), (shape,))


def scatter_nd(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    *,
    input_dimension_count: int | None = None,
    indices_dimension_count: int | None = None,
) -> Call:
    """DML_SCATTER_ND_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at the index tuples in the
    last dimension of ``indices`` (as ONNX ScatterND); ``updates`` is cast to ``input``'s dtype.

    The arrays may have different ranks, as in ONNX: they are padded with leading 1s to one dimension count
    and the dimension counts default to the arrays' own ranks. Pass the counts explicitly to send arrays that
    already share a dimension count as they are. The result has ``input``'s shape.
    """
    where = "scatter_nd"
    data = _input(input, "input", "scatter_nd", where)
    index_array, update_array = _array(indices, "indices", where), _array(updates, "updates", where)
    shape = data.shape
    data, index_array, update_array = (a.reshape(1) if a.ndim == 0 else a for a in (data, index_array, update_array))
    rank = max(data.ndim, index_array.ndim, update_array.ndim)
    input_count = input_dimension_count if input_dimension_count is not None else data.ndim
    indices_count = indices_dimension_count if indices_dimension_count is not None else index_array.ndim
    data, index_array, update_array = (
        a.reshape((1,) * (rank - a.ndim) + a.shape) for a in (data, index_array, update_array)
    )
    desc = operators_pb2.ScatterNdOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        updates_tensor=tensor_desc((data.dtype, update_array.shape)),
        output_tensor=tensor_desc(data),
        input_dimension_count=input_count,
        indices_dimension_count=indices_count,
    )
    return Call(operators_pb2.OperatorDesc(scatter_nd=desc), (data, index_array, update_array), (shape,))


_FLOATS = ("float32", "float16")
_MATRIX_TRANSFORMS = {False: operators_pb2.MATRIX_TRANSFORM_NONE, True: operators_pb2.MATRIX_TRANSFORM_TRANSPOSE}
#: DML_CONVOLUTION_MODE and DML_CONVOLUTION_DIRECTION by name.
_CONVOLUTION_MODES = {
    "cross_correlation": operators_pb2.CONVOLUTION_MODE_CROSS_CORRELATION,
    "convolution": operators_pb2.CONVOLUTION_MODE_CONVOLUTION,
}
_CONVOLUTION_DIRECTIONS = {
    "forward": operators_pb2.CONVOLUTION_DIRECTION_FORWARD,
    "backward": operators_pb2.CONVOLUTION_DIRECTION_BACKWARD,
}


def _float_operand(
    value: npt.ArrayLike, argument: str, case: str, where: str, like: np.ndarray | None = None
) -> np.ndarray:
    """``value`` as a FLOAT32 or FLOAT16 array (a Python scalar in ``like``'s dtype), of ``like``'s dtype if given:
    the operators that take only these give every tensor one data type."""
    if like is not None and _is_python_scalar(value):
        return _array(value, argument, where, like.dtype)
    data = _input(value, argument, case, where)  # float64 is refused with a hint
    if data.dtype.name not in _FLOATS:
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype {data.dtype}; DML_OPERATOR_{case.upper()} takes float32 and float16 only",
            allowed=_FLOATS,
        )
    if like is not None and data.dtype != like.dtype:
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype {data.dtype} and the first operand {like.dtype}: DirectML takes one data "
            f"type for all of DML_OPERATOR_{case.upper()}'s tensors; cast one, e.g. np.asarray({argument}, "
            f"np.{like.dtype})",
            allowed=(like.dtype.name,),
        )
    return data


def _flag(value: object, argument: str, where: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be a bool; got {type(value).__name__}")
    return bool(value)


def _scalar(value: object, argument: str, where: str) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be a number; got {type(value).__name__}")
    return float(value)


def _count(value: object, argument: str, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be an int; got {type(value).__name__}")
    if value < minimum:
        raise ArgumentValueError(argument, f"{where}: {argument} = {value} must be at least {minimum}")
    return int(value)


def _broadcast(array: np.ndarray, sizes: tuple[int, ...]) -> tuple[tensor_pb2.TensorDesc, np.ndarray]:
    """The desc of ``array`` padded with leading 1s to ``sizes``' dimension count and broadcast to ``sizes`` through
    zero strides (DirectML's broadcasting: the data is sent once), with the array to bind."""
    padded = array.reshape((1,) * (len(sizes) - array.ndim) + array.shape)
    stretched = [size == 1 and full != 1 for size, full in zip(padded.shape, sizes, strict=True)]
    if not any(stretched):
        return tensor_desc(padded), padded
    strides = [0 if s else stride for s, stride in zip(stretched, packed_strides(padded.shape), strict=True)]
    return tensor_desc((padded.dtype, sizes), strides), np.broadcast_to(padded, sizes)


def gemm(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    c: npt.ArrayLike | None = None,
    *,
    trans_a: bool = False,
    trans_b: bool = False,
    alpha: float = 1.0,
    beta: float = 1.0,
) -> Call:
    """DML_GEMM_OPERATOR_DESC: ``alpha * (a @ b) + beta * c``, with ``a`` and ``b`` transposed in their last two
    dimensions where ``trans_a``/``trans_b`` say (as ``np.matmul`` on ``np.swapaxes(a, -1, -2)``).

    DirectML's rules: A is {[batch, channel,] M, K} (K, M transposed), B {.., K, N} (N, K transposed), C and the
    output {.., M, N}; every tensor has one data type, FLOAT32 or FLOAT16 (float64 is refused: pass float32), and one
    dimension count. Beta is ignored without C. Here ``a`` and ``b`` have 2 to 4 dimensions whose leading (batch)
    dimensions broadcast as in ``np.matmul``, and ``c`` broadcasts to the result as in NumPy (a Python scalar
    takes ``a``'s dtype); they are sent 4-D, padded with leading 1s and broadcast through zero strides (no copies),
    and the result has NumPy's shape: ``a``'s and ``b``'s broadcast batch dimensions, then M, N.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count outside 2-4, inner dimensions (K) that differ,
            batch dimensions or a ``c`` that do not broadcast, a dtype GEMM does not take or dtypes that differ.
    """
    return _gemm(a, b, c, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta, where="gemm", rank=4)


def _batch_shape(a: np.ndarray, b: np.ndarray, where: str) -> tuple[int, ...]:
    """The broadcast batch dimensions (all but the last two) of two matrix operands, as ``np.matmul``'s."""
    try:
        return tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ArgumentValueError(
            "b",
            f"{where}: the batch dimensions of a {a.shape[:-2]} and b {b.shape[:-2]} do not broadcast "
            "(np.matmul's rule)",
        ) from None


def _gemm(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    c: npt.ArrayLike | None,
    *,
    trans_a: bool,
    trans_b: bool,
    alpha: float,
    beta: float,
    where: str,
    rank: int | None,
) -> Call:
    """``gemm`` with its tensors sent ``rank``-D (``None``: the result's own dimension count)."""
    a_data = _float_operand(a, "a", "gemm", where)
    b_data = _float_operand(b, "b", "gemm", where, a_data)
    for argument, data in (("a", a_data), ("b", b_data)):
        if not 2 <= data.ndim <= 4:
            raise ArgumentValueError(
                argument,
                f"{where}: {argument} has {data.ndim} dimensions; GEMM takes 2 to 4 ([batch, channel,] rows, columns)",
                allowed=("2", "3", "4"),
            )
    transpose_a, transpose_b = _flag(trans_a, "trans_a", where), _flag(trans_b, "trans_b", where)
    m, k = a_data.shape[-1:-3:-1] if transpose_a else a_data.shape[-2:]
    k_b, n = b_data.shape[-1:-3:-1] if transpose_b else b_data.shape[-2:]
    if k != k_b:
        raise ArgumentValueError(
            "b",
            f"{where}: the inner dimension K of b (shape {b_data.shape}, trans_b={transpose_b}) is {k_b} and of a "
            f"(shape {a_data.shape}, trans_a={transpose_a}) {k}: they must be equal",
        )
    batch = _batch_shape(a_data, b_data, where)
    shape = (*batch, m, n)
    wire = (1,) * ((rank or len(shape)) - len(shape)) + shape
    a_desc, a_bound = _broadcast(a_data, (*wire[:-2], *a_data.shape[-2:]))
    b_desc, b_bound = _broadcast(b_data, (*wire[:-2], *b_data.shape[-2:]))
    desc = operators_pb2.GemmOperatorDesc(
        a_tensor=a_desc,
        b_tensor=b_desc,
        output_tensor=tensor_desc((a_data.dtype, wire)),
        trans_a=_MATRIX_TRANSFORMS[transpose_a],
        trans_b=_MATRIX_TRANSFORMS[transpose_b],
        alpha=_scalar(alpha, "alpha", where),
        beta=_scalar(beta, "beta", where),
    )
    c_bound = None
    if c is not None:
        c_data = _float_operand(c, "c", "gemm", where, a_data)
        try:
            fits = c_data.ndim <= len(shape) and np.broadcast_shapes(c_data.shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ArgumentValueError(
                "c", f"{where}: c of shape {c_data.shape} does not broadcast to the result's shape {shape}"
            )
        c_desc, c_bound = _broadcast(c_data, wire)
        desc.c_tensor.CopyFrom(c_desc)
    return Call(operators_pb2.OperatorDesc(gemm=desc), (a_bound, b_bound, c_bound), (shape,))


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


def _choice(value: object, argument: str, where: str, choices: Mapping[str, int]) -> int:
    if not isinstance(value, str):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be a str; got {type(value).__name__}")
    if value not in choices:
        raise ArgumentValueError(
            argument, f"{where}: {argument} {value!r} is unknown", allowed=tuple(repr(c) for c in choices)
        )
    return choices[value]


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
    stride = _spatial(strides, "strides", where, spatial, 1, 1)
    dilation = _spatial(dilations, "dilations", where, spatial, 1, 1)
    start = _spatial(start_padding, "start_padding", where, spatial, 0, 0)
    end = _spatial(end_padding, "end_padding", where, spatial, 0, 0)
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


_INTEGERS = ("int8", "uint8")


def _integer_operand(value: object, argument: str, where: str, like: np.ndarray | None = None) -> np.ndarray:
    """``value`` as an INT8 or UINT8 array (a Python scalar in ``like``'s dtype, of which it must be if given)."""
    data = _array(value, argument, where, like.dtype if like is not None and _is_python_scalar(value) else None)
    if data.dtype.name not in _INTEGERS or (like is not None and data.dtype != like.dtype):
        allowed = _INTEGERS if like is None else (like.dtype.name,)
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype {data.dtype}; DML_OPERATOR_MATRIX_MULTIPLY_INTEGER takes "
            + ("int8 and uint8" if like is None else f"a zero point of its tensor's dtype, {like.dtype}"),
            allowed=allowed,
        )
    return data


def _zero_point(
    value: object, argument: str, where: str, like: np.ndarray, count: int, per: str, sizes: tuple[int, ...]
) -> np.ndarray | None:
    """A zero point as a {1.., c, 1} (per row) or {1.., 1, c} (per column) array of ``sizes``' dimension count."""
    if value is None:
        return None
    data = _integer_operand(value, argument, where, like)
    core = data.shape
    while len(core) > 2 and core[0] == 1:  # leading 1s, as DirectML's {[1], [1], ..} sizes have them
        core = core[1:]
    accepted = {(), (1,), (1, 1), (count,)} | ({(count, 1)} if per == "row" else {(1, count)})
    if core not in accepted:
        shapes = f"({count}, 1)" if per == "row" else f"(1, {count})"
        raise ArgumentValueError(
            argument,
            f"{where}: {argument} of shape {data.shape} must be a scalar (per tensor), ({count},) or {shapes} (one per "
            f"{per})",
        )
    flat = data.reshape(-1)
    shape = (len(flat), 1) if per == "row" else (1, len(flat))
    return flat.reshape((1,) * (len(sizes) - 2) + shape)


def matrix_multiply_integer(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    a_zero_point: npt.ArrayLike | None = None,
    b_zero_point: npt.ArrayLike | None = None,
) -> Call:
    """DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC: ``(a - a_zero_point) @ (b - b_zero_point)`` in INT32.

    DirectML's rules: A is {[batch, channel,] M, K} and B {.., K, N}, INT8 or UINT8 each (they may differ), the
    output {.., M, N} INT32 (accumulated in INT32: it wraps on overflow); each zero point has its tensor's data type
    and is one value (per tensor) or one per row of A / per column of B. Here ``a`` and ``b`` have 2 to 4
    dimensions whose batch dimensions broadcast as in ``np.matmul`` (sent 4-D, through zero strides); a zero point
    is a scalar, or M values (shape (M,) or (M, 1)) for A, N values (shape (N,) or (1, N)) for B. The result has
    NumPy's shape.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count outside 2-4, inner dimensions that differ, batch
            dimensions that do not broadcast, a dtype other than int8/uint8 or a zero point unlike its tensor.
    """
    return _matrix_multiply_integer(
        a, b, a_zero_point=a_zero_point, b_zero_point=b_zero_point, where="matrix_multiply_integer", rank=4
    )


def _matrix_multiply_integer(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    a_zero_point: npt.ArrayLike | None,
    b_zero_point: npt.ArrayLike | None,
    where: str,
    rank: int | None,
) -> Call:
    a_data, b_data = _integer_operand(a, "a", where), _integer_operand(b, "b", where)
    for argument, data in (("a", a_data), ("b", b_data)):
        if not 2 <= data.ndim <= 4:
            raise ArgumentValueError(
                argument,
                f"{where}: {argument} has {data.ndim} dimensions; it takes 2 to 4 ([batch, channel,] rows, columns)",
                allowed=("2", "3", "4"),
            )
    (m, k), (k_b, n) = a_data.shape[-2:], b_data.shape[-2:]
    if k != k_b:
        raise ArgumentValueError(
            "b", f"{where}: the inner dimension K of b (shape {b_data.shape}) is {k_b} and of a {k}: they must be equal"
        )
    batch = _batch_shape(a_data, b_data, where)
    shape = (*batch, m, n)
    wire = (1,) * ((rank or len(shape)) - len(shape)) + shape
    a_desc, a_bound = _broadcast(a_data, (*wire[:-2], m, k))
    b_desc, b_bound = _broadcast(b_data, (*wire[:-2], k, n))
    a_zero = _zero_point(a_zero_point, "a_zero_point", where, a_data, m, "row", wire)
    b_zero = _zero_point(b_zero_point, "b_zero_point", where, b_data, n, "column", wire)
    desc = operators_pb2.MatrixMultiplyIntegerOperatorDesc(
        a_tensor=a_desc, b_tensor=b_desc, output_tensor=tensor_desc((np.int32, wire))
    )
    if a_zero is not None:
        desc.a_zero_point_tensor.CopyFrom(tensor_desc(a_zero))
    if b_zero is not None:
        desc.b_zero_point_tensor.CopyFrom(tensor_desc(b_zero))
    return Call(operators_pb2.OperatorDesc(matrix_multiply_integer=desc), (a_bound, a_zero, b_bound, b_zero), (shape,))


#: Element-wise operators whose output is a 0/1 boolean (UINT8 unless ``output_dtype`` says UINT32).
_BOOLEAN_RESULTS = frozenset(
    {
        "logical_equals",
        "logical_greater_than",
        "logical_less_than",
        "logical_greater_than_or_equal",
        "logical_less_than_or_equal",
        "is_nan",
        "is_infinity",
        "bit_count",
    }
)


def element_wise(
    name: str, *inputs: npt.ArrayLike | None, output_dtype: npt.DTypeLike | None = None, **attributes: Any
) -> Call:
    """DML_ELEMENT_WISE_<NAME>_OPERATOR_DESC over NumPy-broadcast inputs: ``element_wise("add", a, b)``.

    Inputs broadcast as in NumPy: each is sent once and described with stride 0 along its broadcast dimensions
    (DirectML's way). The output has the broadcast shape (0-d when every input is) and the first input's data type
    (IF: its values'; UINT8 for the comparisons, IS_NAN, IS_INFINITY and BIT_COUNT), unless ``output_dtype`` says
    otherwise.
    ``attributes`` are the desc's other fields by their proto names; ``scale_bias=(scale, bias)`` and
    ``fused_activation=activation("relu", ...).operator_desc`` are accepted as shown.

    Data types follow NumPy where DirectML has the type, and are refused before sending where it has not:

    - arrays keep their dtype; a Python list becomes what NumPy makes of it (floats: float64), and a Python
      scalar takes the dtype NumPy's promotion gives it beside the other inputs (``add(x32, 1.5)`` sends 1.5 as
      float32). FLOAT64 is refused, with a hint, by every operator but IDENTITY, IF and the BIT_* ones, as
      DirectML has it nowhere else: pass float32 arrays.
    - DirectML has no BOOL: bool arrays travel as UINT8 0/1 to the logical operators (LOGICAL_AND, _OR, _XOR,
      _NOT give bool back, the comparisons UINT8) and as IF's condition, and are refused elsewhere, where 0/1
      arithmetic would differ from NumPy's bool arithmetic (True + True is 2 in UINT8).

    Raises:
        ArgumentValueError, ArgumentTypeError: an unknown name or attribute, a wrong input count, shapes that do
            not broadcast, a dtype the operator cannot take (each names the argument and its allowed values).
    """
    lowered = _operator_name(name, "element_wise", _ELEMENT_WISE_NAMES)
    where = f"element_wise({lowered!r})"
    output = None
    if output_dtype is not None:
        try:
            output = np.dtype(output_dtype)
        except TypeError:
            raise ArgumentTypeError(
                "output_dtype", f"{where}: output_dtype {output_dtype!r} is not a NumPy dtype", allowed=DTYPE_NAMES
            ) from None
        if output not in DATA_TYPE_BY_DTYPE:
            raise ArgumentTypeError(
                "output_dtype", f"{where}: output_dtype {output} has no DirectML data type", allowed=DTYPE_NAMES
            )
    if output is None and lowered in _BOOLEAN_RESULTS:
        output = np.dtype(np.uint8)
    return _single_output(f"element_wise_{lowered}", where, inputs, output, attributes)


def activation(name: str, *inputs: npt.ArrayLike | None, **attributes: Any) -> Call:
    """DML_ACTIVATION_<NAME>_OPERATOR_DESC: ``activation("leaky_relu", x, alpha=0.1)``,
    ``activation("softmax1", x, axes=[1])`` (``axis_count`` is filled in). With no inputs, the desc is one to
    use as a fused activation (its tensors unset). Inputs convert as ``element_wise``'s do; no activation takes
    FLOAT64 or bool.

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``element_wise``.
    """
    lowered = _operator_name(name, "activation", _ACTIVATION_NAMES)
    return _single_output(f"activation_{lowered}", f"activation({lowered!r})", inputs, None, attributes)


#: REDUCE's functions by their DML_REDUCE_FUNCTION names, lower-case, and NumPy's names for two of them.
_REDUCE_FUNCTIONS: dict[str, int] = {
    **{name.removeprefix("REDUCE_FUNCTION_").lower(): value for name, value in operators_pb2.ReduceFunction.items()},
    "mean": operators_pb2.REDUCE_FUNCTION_AVERAGE,
    "prod": operators_pb2.REDUCE_FUNCTION_MULTIPLY,
}
#: The functions DirectML computes in floating point only (no integer type at any feature level).
_FLOAT_ONLY_REDUCE = frozenset({"average", "mean", "l2", "log_sum", "log_sum_exp"})


def reduce(
    function: str,
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None = None,
    *,
    keepdims: bool = False,
    index_dtype: npt.DTypeLike = np.int64,
) -> Call:
    """DML_REDUCE_OPERATOR_DESC: ``function`` over ``axes`` of ``input``, as ``np.sum(input, axis=axes)``.

    Functions (DML_REDUCE_FUNCTION, lower-case): ``sum``, ``average`` (alias ``mean``), ``max``, ``min``,
    ``multiply`` (alias ``prod``), ``l1`` = sum(|x|), ``l2`` = sqrt(sum(x^2)), ``sum_square`` = sum(x^2),
    ``log_sum`` = log(sum(x)), ``log_sum_exp`` = log(sum(exp(x))), ``argmax`` and ``argmin`` (the first extreme;
    over several axes, its row-major index over them, flattened).

    DirectML's rules: the output keeps the input's rank with the reduced axes of size 1; its data type is the
    input's (integers wrap, as DirectML's arithmetic does: NumPy's ``sum`` widens small integers, this does
    not), except ARGMAX/ARGMIN, whose indices are ``index_dtype`` (int64 as NumPy's; int32, uint32, uint64 too).
    AVERAGE, L2, LOG_SUM and LOG_SUM_EXP take float32/float16 only; the others integers too, per feature level
    (MIN, MAX, ARGMIN, ARGMAX every integer type from 5.0 / 4.1; SUM, MULTIPLY, L1, SUM_SQUARE 32/64-bit ones).
    No function takes FLOAT64 or bool.

    Args:
        function: the reduce function's name.
        input: the array to reduce (1 to 8 dimensions; a 0-d one travels as one element).
        axes: an axis or axes to reduce, negative counting from the end, unique; ``None`` (default): all of them.
        keepdims: keep the reduced axes as size 1 (DirectML's output shape); ``False`` (default, as NumPy)
            removes them, so that reducing every axis gives a 0-d array.
        index_dtype: ARGMAX/ARGMIN's index type; ignored by the other functions.

    Raises:
        ArgumentValueError, ArgumentTypeError: an unknown function, axes out of range or repeated, a dtype no
            feature level takes for the function (each names the argument and its allowed values).
    """
    if not isinstance(function, str):
        raise ArgumentTypeError("function", f"reduce: function must be a str; got {type(function).__name__}")
    name = function.lower()
    if name not in _REDUCE_FUNCTIONS:
        raise ArgumentValueError(
            "function", f"reduce: no reduce function named {function!r}", allowed=tuple(_REDUCE_FUNCTIONS)
        )
    where = f"reduce({name!r})"
    data = _input(input, "input", "reduce", where)
    if data.dtype == np.bool_:
        raise ArgumentTypeError(
            "input",
            f"{where}: input has dtype bool, which DirectML has no data type for (it would reduce UINT8 0/1); pass "
            f"a uint8 or int32 array, e.g. x.astype(np.int32) to count Trues with 'sum'",
        )
    if name in _FLOAT_ONLY_REDUCE and data.dtype.kind != "f":
        raise ArgumentTypeError(
            "input",
            f"{where}: input has dtype {data.dtype}; DML_REDUCE_FUNCTION_{name.upper()} takes floating types only: "
            f"pass a float32 array, e.g. x.astype(np.float32)",
            allowed=("float32", "float16"),
        )
    if not isinstance(keepdims, bool | np.bool_):
        raise ArgumentTypeError("keepdims", f"{where}: keepdims must be a bool; got {type(keepdims).__name__}")
    shape = data.shape
    reduced = _reduce_axes(axes, data.ndim, where)
    data = data.reshape(1) if data.ndim == 0 else data
    kept = [1 if d in reduced else size for d, size in enumerate(data.shape)]
    function_value = _REDUCE_FUNCTIONS[name]
    arg = function_value in (operators_pb2.REDUCE_FUNCTION_ARGMAX, operators_pb2.REDUCE_FUNCTION_ARGMIN)
    dtype = data.dtype
    if arg:
        try:
            dtype = np.dtype(index_dtype)
        except TypeError:
            raise ArgumentTypeError(
                "index_dtype",
                f"{where}: index_dtype {index_dtype!r} is not a NumPy dtype",
                allowed=("int64", "int32", "uint64", "uint32"),
            ) from None
        # Other DirectML types go into the desc as asked; the server refuses them, naming the index types.
    desc = operators_pb2.ReduceOperatorDesc(
        function=function_value,  # type: ignore[arg-type]
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((dtype, kept)),
        axis_count=len(reduced),
        axes=reduced,
    )
    if keepdims:
        result = tuple(1 if d in reduced else size for d, size in enumerate(shape))
    else:
        result = tuple(size for d, size in enumerate(shape) if d not in reduced)
    return Call(operators_pb2.OperatorDesc(reduce=desc), (data,), (result,))


def _reduce_axes(axes: object, rank: int, where: str) -> list[int]:
    """The reduced axes, ascending and non-negative; ``None``: all (a 0-d input's one element)."""
    if axes is None:
        return list(range(max(rank, 1)))
    items = [axes] if isinstance(axes, int | np.integer) else axes
    if isinstance(axes, bool) or not isinstance(items, Sequence | np.ndarray):
        raise ArgumentTypeError("axes", f"{where}: axes must be an int, a sequence of ints or None; got {axes!r}")
    result: list[int] = []
    for axis in items:
        if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
            raise ArgumentTypeError("axes", f"{where}: axes must be ints; got {type(axis).__name__}")
        if not -rank <= axis < rank:
            raise ArgumentValueError(
                "axes", f"{where}: axis {axis} is out of range for {rank} dimensions: {-rank} <= axis < {rank}"
            )
        result.append(int(axis) % rank)
    if not result:
        raise ArgumentValueError("axes", f"{where}: axes is empty; DirectML reduces at least one axis")
    if len(set(result)) != len(result):
        raise ArgumentValueError("axes", f"{where}: axes {list(items)} repeat an axis")
    return sorted(result)


def cast(input: npt.ArrayLike, dtype: npt.DTypeLike) -> Call:
    """DML_CAST_OPERATOR_DESC: ``input`` converted to ``dtype``, as ``input.astype(dtype)``; the shape is kept.

    Any DirectML type to any other (FLOAT64 from feature level 4.1, 32/64-bit integers from 3.0). Where NumPy
    leaves a conversion undefined, this server's rules hold: float to integer truncates toward zero and saturates
    at the type's limits (NaN gives 0); integer to integer wraps (the low bits, as NumPy); to a float rounds to
    nearest even. Bool input converts as 0/1; bool is refused as ``dtype`` (DirectML would write UINT8 values,
    not NumPy's ``x != 0``: use ``element_wise("logical_not", ...)`` or a comparison instead).

    Raises:
        ArgumentTypeError: a ``dtype`` DirectML has no data type for, or bool.
    """
    where = "cast"
    data = _array(input, "input", where)
    try:
        target = np.dtype(dtype)
    except TypeError:
        raise ArgumentTypeError(
            "dtype", f"{where}: dtype {dtype!r} is not a NumPy dtype", allowed=DTYPE_NAMES
        ) from None
    names = tuple(name for name in DTYPE_NAMES if name != "bool")
    if target not in DATA_TYPE_BY_DTYPE or target == np.bool_:
        raise ArgumentTypeError(
            "dtype", f"{where}: dtype {target} is not a DirectML data type to cast to", allowed=names
        )
    shape = data.shape
    data = data.reshape(1) if data.ndim == 0 else data
    desc = operators_pb2.CastOperatorDesc(
        input_tensor=tensor_desc(data), output_tensor=tensor_desc((target, data.shape))
    )
    return Call(operators_pb2.OperatorDesc(cast=desc), (data,), (shape,))


#: DirectML's most dimensions for the data-movement operators (DimensionCount 1 to 8, from feature level 3.0).
_MOST_DIMENSIONS = 8
#: DML_PADDING_MODE by name: NumPy's ``np.pad`` modes ("reflect" is DirectML's REFLECTION).
_PADDING_MODES = {
    "constant": operators_pb2.PADDING_MODE_CONSTANT,
    "edge": operators_pb2.PADDING_MODE_EDGE,
    "reflect": operators_pb2.PADDING_MODE_REFLECTION,
    "symmetric": operators_pb2.PADDING_MODE_SYMMETRIC,
    "wrap": operators_pb2.PADDING_MODE_WRAP,
}
#: The DML_SCALAR_UNION member holding each dtype (FLOAT16's travels as float32; bool as UINT8).
_SCALAR_MEMBERS = {
    "bool": "uint8",
    "int8": "int8",
    "uint8": "uint8",
    "int16": "int16",
    "uint16": "uint16",
    "int32": "int32",
    "uint32": "uint32",
    "int64": "int64",
    "uint64": "uint64",
    "float16": "float32",
    "float32": "float32",
    "float64": "float64",
}


def _padded(array: np.ndarray, rank: int) -> np.ndarray:
    """``array`` viewed with leading 1s up to ``rank`` dimensions (DirectML right-aligns sizes)."""
    return array.reshape((1,) * (rank - array.ndim) + array.shape)


def _fits(rank: int, argument: str, where: str) -> None:
    if rank > _MOST_DIMENSIONS:
        raise ArgumentValueError(
            argument, f"{where}: the tensors need {rank} dimensions; DirectML takes at most {_MOST_DIMENSIONS}"
        )


def _per_axis(
    value: object, argument: str, where: str, count: int, least: int | None, *, noun: str = "dimensions"
) -> list[int]:
    """One int per dimension of the input (an int: the same for all), each at least ``least``."""
    items = [value] * count if isinstance(value, int | np.integer) and not isinstance(value, bool) else value
    if isinstance(items, bool | str | bytes) or not isinstance(items, Sequence | np.ndarray):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be an int or {count} ints; got {value!r}")
    values = list(items)
    if len(values) != count:
        raise ArgumentValueError(
            argument, f"{where}: {argument} has {len(values)} values; the input has {count} {noun}"
        )
    for i, item in enumerate(values):
        if isinstance(item, bool | np.bool_) or not isinstance(item, int | np.integer):
            raise ArgumentTypeError(argument, f"{where}: {argument}[{i}] must be an int; got {type(item).__name__}")
        if least is not None and item < least:
            raise ArgumentValueError(argument, f"{where}: {argument}[{i}] = {item} must be at least {least}")
    return [int(item) for item in values]


def gather(input: npt.ArrayLike, indices: npt.ArrayLike, axis: int = 0) -> Call:
    """DML_GATHER_OPERATOR_DESC: the elements of ``input`` at ``indices`` along ``axis``, as
    ``np.take(input, indices, axis)``: the result's shape is ``input.shape[:axis] + indices.shape +
    input.shape[axis + 1:]``.

    DirectML's rules: input, indices and output have one dimension count (1 to 8), the output is typed as the
    input (any DirectML type: FLOAT64 and 64-bit integers from feature level 4.1), the indices are INT32, INT64,
    UINT32 or UINT64 and IndexDimensions of their last dimensions are meaningful; an index outside
    ``[-input.shape[axis], input.shape[axis])`` is refused (negative ones count from the end, as NumPy). The
    tensors are sent padded with leading 1s to the dimension count the result needs, and the result comes back in
    NumPy's shape.

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, indices that are not integers,
            or a result of more than 8 dimensions.
    """
    return _gather(input, indices, axis, where="gather", padded=True)


def _gather(input: npt.ArrayLike, indices: npt.ArrayLike, axis: int, *, where: str, padded: bool) -> Call:
    """GATHER's desc; ``padded``: the tensors are padded with leading 1s to the dimension count the result needs
    (eager calls), else sent as they are (graph edges): then ``input`` and ``indices`` have one dimension count,
    the indices' leading 1s are not meaningful (IndexDimensions counts the rest, at least 1) and the output has
    that dimension count too."""
    data = _input(input, "input", "gather", where)
    index_array = _array(indices, "indices", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to gather along")
    axis = _axis(axis, data.ndim, where)
    if index_array.dtype.kind not in "iu":
        raise ArgumentTypeError(
            "indices",
            f"{where}: indices have dtype {index_array.dtype}; DirectML's gather takes integer indices",
            allowed=("int32", "int64", "uint32", "uint64"),
        )
    if padded:
        index_dimensions = index_array.ndim
        rank = max(data.ndim, index_array.ndim, data.ndim + index_array.ndim - 1, 1)
        _fits(rank, "indices", where)
    else:
        rank = data.ndim
        if index_array.ndim != rank:
            raise ArgumentValueError(
                "indices",
                f"{where}: indices have {index_array.ndim} dimensions and input {rank}; DirectML's gather takes one "
                "dimension count (pad the indices with leading 1s)",
            )
        leading = next((i for i, size in enumerate(index_array.shape) if size != 1), rank - 1)
        index_dimensions = rank - min(leading, rank - 1)
    shape = data.shape[:axis] + index_array.shape[index_array.ndim - index_dimensions :] + data.shape[axis + 1 :]
    excess = len(shape) - rank
    if any(size != 1 for size in shape[: max(excess, 0)]):
        raise ArgumentValueError(
            "indices",
            f"{where}: the result {shape} has more than the tensors' {rank} dimensions (pad input with leading 1s)",
        )
    lead = rank - data.ndim
    data, index_array = _padded(data, rank), _padded(index_array, rank)
    desc = operators_pb2.GatherOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        output_tensor=tensor_desc((data.dtype, (1,) * max(-excess, 0) + shape[max(excess, 0) :])),
        axis=axis + lead,
        index_dimensions=index_dimensions,
    )
    # Bool travels as UINT8 and comes back bool, as NumPy moves it.
    shapes = (shape,) if padded else (None,)
    return Call(operators_pb2.OperatorDesc(gather=desc), (data, index_array), shapes, (data.dtype,))


# Named as NumPy's users expect; below this line the builtin ``slice`` is shadowed in this module (use
# ``builtins.slice`` there).
def slice(
    input: npt.ArrayLike,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Call:
    """DML_SLICE1_OPERATOR_DESC: per dimension, a window of ``sizes[i]`` elements starting at ``offsets[i]``,
    stepped by ``strides[i]`` (default 1).

    A positive stride takes ``x[offset : offset + size : stride]``; a negative one walks the same window
    backward from its last element, ``x[offset + size - 1 : offset - 1 : stride]`` (so ``strides=-1`` over the
    whole of a dimension is ``np.flip``). Each output dimension has ``1 + (size - 1) // abs(stride)`` elements.
    DirectML's rules: one offset, size and stride per input dimension (1 to 8 dimensions); offsets and sizes are
    non-negative, the window is not empty and lies inside the input (``offset + size <= input.shape[i]``), a
    stride is not 0. The output has the input's dtype (any DirectML type: FLOAT64 and 64-bit integers from
    feature level 4.1).

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, a count of offsets, sizes or strides other than the
            input's dimension count, a window outside the input or empty, a zero stride.
    """
    where = "slice"
    data = _input(input, "input", "slice1", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to slice")
    _fits(data.ndim, "input", where)
    starts = _per_axis(offsets, "offsets", where, data.ndim, 0)
    windows = _per_axis(sizes, "sizes", where, data.ndim, 1)
    steps = [1] * data.ndim if strides is None else _per_axis(strides, "strides", where, data.ndim, None)
    for i, (offset, size, bound) in enumerate(zip(starts, windows, data.shape, strict=True)):
        if offset + size > bound:
            raise ArgumentValueError(
                "sizes",
                f"{where}: the window [{offset}, {offset + size}) does not fit dimension {i} of the input "
                f"(size {bound})",
            )
    if 0 in steps:
        raise ArgumentValueError("strides", f"{where}: strides[{steps.index(0)}] is 0; a stride must not be 0")
    shape = tuple(1 + (size - 1) // abs(step) for size, step in zip(windows, steps, strict=True))
    desc = operators_pb2.Slice1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, shape)),
        dimension_count=data.ndim,
        input_window_offsets=starts,
        input_window_sizes=windows,
        input_window_strides=steps,
    )
    return Call(operators_pb2.OperatorDesc(slice1=desc), (data,), (), (data.dtype,))


def pad(
    input: npt.ArrayLike,
    start_padding: int | Sequence[int],
    end_padding: int | Sequence[int],
    mode: str = "constant",
    value: float = 0,
) -> Call:
    """DML_PADDING1_OPERATOR_DESC: ``input`` with ``start_padding[i]`` elements before and ``end_padding[i]``
    after each dimension, as ``np.pad(input, list(zip(start_padding, end_padding)), mode)``.

    Modes (NumPy's names): "constant" (``value``, cast to the input's dtype as ``np.pad``'s constant_values),
    "edge" (the edge element repeated), "reflect" (mirrored without repeating the edge: DirectML's REFLECTION),
    "symmetric" (mirrored repeating it; feature level 3.0) and "wrap" (periodic; feature level 6.4). Padding
    wider than the input folds again, as NumPy's. DirectML's rules: input and output have one dtype (any DirectML
    type) and dimension count, one start and one end padding per dimension (an int: the same for all).

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, a padding count other than the input's dimension
            count, a negative padding, an unknown mode, a ``value`` that does not fit the input's dtype.
    """
    where = "pad"
    data = _input(input, "input", "padding1", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it has no dimension to pad")
    _fits(data.ndim, "input", where)
    starts = _per_axis(start_padding, "start_padding", where, data.ndim, 0)
    ends = _per_axis(end_padding, "end_padding", where, data.ndim, 0)
    if not isinstance(mode, str) or mode not in _PADDING_MODES:
        raise ArgumentValueError(
            "mode", f"{where}: mode {mode!r} is not a padding mode", allowed=tuple(repr(m) for m in _PADDING_MODES)
        )
    if not _is_python_scalar(value) and not isinstance(value, np.generic):
        raise ArgumentTypeError("value", f"{where}: value must be a number; got {type(value).__name__}")
    fill = _array(value, "value", where, data.dtype)
    member = _SCALAR_MEMBERS[data.dtype.name]
    scalar = fill.astype(np.float32 if data.dtype == np.float16 else np.uint8 if data.dtype == np.bool_ else fill.dtype)
    out_shape = tuple(n + s + e for n, s, e in zip(data.shape, starts, ends, strict=True))
    desc = operators_pb2.Padding1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, out_shape)),
        padding_mode=_PADDING_MODES[mode],
        padding_value_data_type=DATA_TYPE_BY_DTYPE[data.dtype],  # type: ignore[arg-type]
        padding_value=operators_pb2.ScalarUnion(**{member: scalar.item()}),
        dimension_count=data.ndim,
        start_padding=starts,
        end_padding=ends,
    )
    return Call(operators_pb2.OperatorDesc(padding1=desc), (data,), (), (data.dtype,))


def tile(input: npt.ArrayLike, repetitions: int | Sequence[int]) -> Call:
    """DML_TILE_OPERATOR_DESC: ``input`` repeated ``repetitions[i]`` times along each dimension, as
    ``np.tile(input, repetitions)``.

    As NumPy: with fewer repetitions than the input has dimensions, 1s are prepended to them; with more, the
    input is promoted with leading 1s. DirectML's rules: one repeat per dimension (1 to 8), each greater than 0
    (NumPy's 0 is refused: DirectML has no empty tensors); input and output have one dtype, one of FLOAT32,
    FLOAT16, 8/16/32-bit integers, and 64-bit integers from feature level 5.0 (not FLOAT64).

    Raises:
        ArgumentValueError, ArgumentTypeError: a repetition below 1, more than 8 dimensions, float64 input.
    """
    where = "tile"
    data = _input(input, "input", "tile", where)
    if isinstance(repetitions, int | np.integer) and not isinstance(repetitions, bool):
        repetitions = [int(repetitions)]
    if isinstance(repetitions, bool | str | bytes) or not isinstance(repetitions, Sequence | np.ndarray):
        raise ArgumentTypeError(
            "repetitions", f"{where}: repetitions must be an int or a sequence of ints; got {repetitions!r}"
        )
    rank = max(data.ndim, len(repetitions), 1)
    _fits(rank, "repetitions", where)
    repeats = _per_axis([1] * (rank - len(repetitions)) + list(repetitions), "repetitions", where, rank, 1)
    data = _padded(data, rank)
    shape = tuple(n * r for n, r in zip(data.shape, repeats, strict=True))
    desc = operators_pb2.TileOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, shape)),
        repeats_count=rank,
        repeats=repeats,
    )
    return Call(operators_pb2.OperatorDesc(tile=desc), (data,), (), (data.dtype,))


def join(inputs: Sequence[npt.ArrayLike], axis: int = 0) -> Call:
    """DML_JOIN_OPERATOR_DESC: ``inputs`` joined along ``axis``, as ``np.concatenate(inputs, axis)``.

    DirectML's rules: the inputs and the output have one data type (no promotion: cast first where NumPy would
    promote; any DirectML type, FLOAT64 and 64-bit integers from feature level 4.1) and one dimension count (1 to
    8 from feature level 4.1, 4 or 5 before: sent as given, the server names the rule), sizes equal in every
    dimension but ``axis``, and the output's size along ``axis`` is their sum. (A graph node takes no tensor
    arrays, so there is no ``Graph.join``.)

    Raises:
        ArgumentValueError, ArgumentTypeError: no inputs, a 0-d input, dimension counts, dtypes or off-axis sizes
            that differ, an axis out of range.
    """
    where = "join"
    if isinstance(inputs, np.ndarray | str | bytes) or not isinstance(inputs, Sequence):
        raise ArgumentTypeError("inputs", f"{where}: inputs must be a list of arrays; got {type(inputs).__name__}")
    if not inputs:
        raise ArgumentValueError("inputs", f"{where}: inputs is empty; join needs at least one array")
    pieces = [_input(value, f"inputs[{i}]", "join", where) for i, value in enumerate(inputs)]
    first = pieces[0]
    if first.ndim == 0:
        raise ArgumentValueError("inputs", f"{where}: inputs[0] is 0-d; arrays to join need at least 1 dimension")
    _fits(first.ndim, "inputs", where)
    axis = _axis(axis, first.ndim, where)
    for i, piece in enumerate(pieces[1:], 1):
        if piece.dtype != first.dtype:
            raise ArgumentTypeError(
                f"inputs[{i}]",
                f"{where}: inputs[{i}] has dtype {piece.dtype} and inputs[0] {first.dtype}: DirectML joins one data "
                f"type; cast first, e.g. np.asarray(x, np.{first.dtype})",
                allowed=(first.dtype.name,),
            )
        if piece.ndim != first.ndim or any(d != axis and size != first.shape[d] for d, size in enumerate(piece.shape)):
            raise ArgumentValueError(
                f"inputs[{i}]",
                f"{where}: inputs[{i}] has shape {piece.shape} and inputs[0] {first.shape}: they must have one "
                f"dimension count and equal sizes in every dimension but axis {axis}",
            )
    shape = list(first.shape)
    shape[axis] = sum(piece.shape[axis] for piece in pieces)
    desc = operators_pb2.JoinOperatorDesc(
        input_count=len(pieces),
        input_tensors=[tensor_desc(piece) for piece in pieces],
        output_tensor=tensor_desc((first.dtype, shape)),
        axis=axis,
    )
    return Call(operators_pb2.OperatorDesc(join=desc), (pieces,), (), (first.dtype,))


def split(input: npt.ArrayLike, sizes: int | Sequence[int], axis: int = 0) -> Call:
    """DML_SPLIT_OPERATOR_DESC: ``input`` cut along ``axis`` into pieces of ``sizes[i]`` elements, in order (an
    int ``n``: ``n`` equal pieces, as ``np.split(input, n, axis)``); one output per piece.

    DirectML's rules: every piece has the input's data type (any DirectML type, FLOAT64 and 64-bit integers from
    feature level 4.1) and dimension count (1 to 8) and its sizes but along ``axis``; the sizes are at least 1
    (DirectML has no empty tensors) and sum to ``input.shape[axis]``. (A graph node takes no tensor arrays, so
    there is no ``Graph.split``.)

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, a size below 1, sizes that do
            not sum to the axis' size, an ``n`` that does not divide it.
    """
    where = "split"
    data = _input(input, "input", "split", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to split")
    _fits(data.ndim, "input", where)
    axis = _axis(axis, data.ndim, where)
    total = data.shape[axis]
    if isinstance(sizes, int | np.integer) and not isinstance(sizes, bool):
        count = _count(sizes, "sizes", where, 1)
        if total % count:
            raise ArgumentValueError(
                "sizes", f"{where}: {count} equal pieces do not divide axis {axis} of size {total}"
            )
        pieces = [total // count] * count
    else:
        if isinstance(sizes, bool | str | bytes) or not isinstance(sizes, Sequence | np.ndarray):
            raise ArgumentTypeError("sizes", f"{where}: sizes must be an int or a list of ints; got {sizes!r}")
        pieces = _per_axis(sizes, "sizes", where, len(sizes), 1)
        if not pieces or sum(pieces) != total:
            raise ArgumentValueError(
                "sizes", f"{where}: sizes {pieces} sum to {sum(pieces)}; axis {axis} of the input has {total}"
            )
    shapes = [data.shape[:axis] + (size,) + data.shape[axis + 1 :] for size in pieces]
    desc = operators_pb2.SplitOperatorDesc(
        input_tensor=tensor_desc(data),
        output_count=len(pieces),
        output_tensors=[tensor_desc((data.dtype, shape)) for shape in shapes],
        axis=axis,
    )
    return Call(operators_pb2.OperatorDesc(split=desc), (data,), (), (data.dtype,) * len(pieces))


def average_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
) -> Call:
    """DML_AVERAGE_POOLING_OPERATOR_DESC: the mean of each window over the spatial dimensions of an NCHW-style
    ``input`` (N, C, then 1 to 3 spatial dimensions).

    Each output element averages ``window_size`` input elements (along each spatial dimension, starting at
    ``o * strides - start_padding``); padding elements count as zeros in the divisor only when
    ``include_padding``, else the divisor is the number of in-bounds elements. The output's spatial sizes are
    ``(size + start_padding + end_padding - window_size) // strides + 1`` (DirectML's formula). float32/float16
    only.

    Args:
        input: an (N, C, W), (N, C, H, W) or (N, C, D, H, W) array (DirectML takes 4 or 5 dimensions: a 3-D one
            travels as (N, C, 1, W) and its result comes back 3-D).
        window_size: the window's size per spatial dimension, each at least 1; an int: the same for all.
        strides: the step between windows per spatial dimension, at least 1; default 1 (as ONNX).
        start_padding, end_padding: implicit padding before/after each spatial dimension; default 0.
        include_padding: count padding elements in the divisor.

    Raises:
        ArgumentValueError, ArgumentTypeError: a rank other than 3-5, a window, stride or padding of the wrong
            length or range, a window larger than the padded input, a window that covers only padding (its
            average is undefined unless ``include_padding``), a dtype other than float32/float16.
    """
    if not isinstance(include_padding, bool | np.bool_):
        raise ArgumentTypeError(
            "include_padding", f"average_pooling: include_padding must be a bool; got {type(include_padding).__name__}"
        )
    data, shape, attributes, result = _pooling(
        "average_pooling", input, window_size, strides, start_padding, end_padding, empty_ok=bool(include_padding)
    )
    desc = operators_pb2.AveragePoolingOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, shape)),
        include_padding=bool(include_padding),
        **attributes,
    )
    return Call(operators_pb2.OperatorDesc(average_pooling=desc), (data,), (result,))


def max_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
) -> Call:
    """DML_MAX_POOLING_OPERATOR_DESC: the maximum of each window over the spatial dimensions of an NCHW-style
    ``input`` (N, C, then 1 to 3 spatial dimensions); padding elements never win.

    Windows, strides, padding and the output size are as ``average_pooling``'s. Types: float32/float16, INT8
    and UINT8 from feature level 3.0, every 8-64-bit integer from 5.0; never FLOAT64.

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``average_pooling`` (a window covering only padding has no
            maximum).
    """
    data, shape, attributes, result = _pooling(
        "max_pooling", input, window_size, strides, start_padding, end_padding, empty_ok=False
    )
    desc = operators_pb2.MaxPoolingOperatorDesc(
        input_tensor=tensor_desc(data), output_tensor=tensor_desc((data.dtype, shape)), **attributes
    )
    return Call(operators_pb2.OperatorDesc(max_pooling=desc), (data,), (result,))


def _pooling(
    where: str,
    input: npt.ArrayLike,
    window_size: object,
    strides: object,
    start_padding: object,
    end_padding: object,
    *,
    empty_ok: bool,
) -> tuple[np.ndarray, list[int], dict[str, Any], tuple[int, ...]]:
    """The input as sent (4-5-D), the output's sizes, the desc's window attributes and the caller's shape."""
    data = _input(input, "input", where, where)
    if data.dtype == np.bool_ or (where == "average_pooling" and data.dtype.kind != "f"):
        raise ArgumentTypeError(
            "input",
            f"{where}: input has dtype {data.dtype}, which DML_OPERATOR_{where.upper()} does not take",
            allowed=("float32", "float16") if where == "average_pooling" else (),
        )
    if not 3 <= data.ndim <= 5:
        raise ArgumentValueError(
            "input",
            f"{where}: input has {data.ndim} dimensions; pooling takes (N, C, W), (N, C, H, W) or (N, C, D, H, W)",
            allowed=("3", "4", "5"),
        )
    spatial = data.ndim - 2
    window = _per_dimension("window_size", window_size, spatial, 1, None, where)
    steps = _per_dimension("strides", strides, spatial, 1, 1, where)
    start = _per_dimension("start_padding", start_padding, spatial, 0, 0, where)
    end = _per_dimension("end_padding", end_padding, spatial, 0, 0, where)
    out = list(data.shape[:2])
    for i in range(spatial):
        size = data.shape[2 + i]
        padded = size + start[i] + end[i]
        if window[i] > padded:
            raise ArgumentValueError(
                "window_size",
                f"{where}: window_size[{i}] = {window[i]} is larger than the padded input's {padded} along spatial "
                f"dimension {i}",
            )
        count = (padded - window[i]) // steps[i] + 1
        # The first and last windows are the ones that can fall wholly in the padding (DirectML leaves them
        # undefined: the server refuses them).
        if not empty_ok and (window[i] <= start[i] or (count - 1) * steps[i] - start[i] > size - 1):
            argument = "start_padding" if window[i] <= start[i] else "end_padding"
            raise ArgumentValueError(
                argument,
                f"{where}: along spatial dimension {i} a window covers only padding (start_padding {start[i]}, "
                f"end_padding {end[i]}, window_size {window[i]}, size {size}); its result is undefined",
            )
        out.append(count)
    result = tuple(out)
    if spatial == 1:  # DirectML pools 2 or 3 spatial dimensions: W travels as (1, W)
        data = data.reshape(data.shape[0], data.shape[1], 1, data.shape[2])
        window, steps, start, end = [1, *window], [1, *steps], [0, *start], [0, *end]
        out = [out[0], out[1], 1, out[2]]
    attributes = {
        "dimension_count": len(window),
        "strides": steps,
        "window_size": window,
        "start_padding": start,
        "end_padding": end,
    }
    return data, out, attributes, result


def _per_dimension(argument: str, value: object, count: int, least: int, default: int | None, where: str) -> list[int]:
    """``_per_axis`` over spatial dimensions, ``None`` meaning ``default`` in each (where there is one)."""
    if value is None and default is not None:
        return [default] * count
    return _per_axis(value, argument, where, count, least, noun="spatial dimensions")


#: The data types DML_CUMULATIVE_SUMMATION and DML_CUMULATIVE_PRODUCT take (64-bit integers from feature level 5.0).
_SCAN_TYPES = ("float32", "float16", "int64", "int32", "uint64", "uint32")


def cumsum(input: npt.ArrayLike, axis: int, *, reverse: bool = False, exclusive: bool = False) -> Call:
    """DML_CUMULATIVE_SUMMATION_OPERATOR_DESC: running sums along ``axis``, as ``np.cumsum(input, axis)``.

    DirectML's rules: the output has the input's data type and sizes (integers wrap, as DirectML's arithmetic
    does: NumPy's ``cumsum`` widens small integers, this does not). With ``reverse`` (DML_AXIS_DIRECTION_DECREASING)
    each element sums itself and those after it; with ``exclusive`` (HasExclusiveSum) an element's own value is
    left out, so the first (last, reversed) is 0. Types: float32, float16, int32, uint32; int64 and uint64 from
    feature level 5.0; never FLOAT64, bool or 8/16-bit integers. 1 to 8 dimensions (4 below feature level 4.0).

    Args:
        input: the array to sum (at least 1 dimension).
        axis: the dimension to sum along; negative counts from the end. Required: DirectML has no flattened scan.
        reverse: sum from the end of the axis.
        exclusive: leave each element's own value out of its sum.

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, a dtype DirectML does not scan.
    """
    return _scan("cumsum", "cumulative_summation", "has_exclusive_sum", input, axis, reverse, exclusive)


def cumprod(input: npt.ArrayLike, axis: int, *, reverse: bool = False, exclusive: bool = False) -> Call:
    """DML_CUMULATIVE_PRODUCT_OPERATOR_DESC: running products along ``axis``, as ``np.cumprod(input, axis)``.

    As ``cumsum``, with products (HasExclusiveProduct: an exclusive product starts at 1). Feature level 3.1;
    the types and ranks are ``cumsum``'s.

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, a dtype DirectML does not scan.
    """
    return _scan("cumprod", "cumulative_product", "has_exclusive_product", input, axis, reverse, exclusive)


def _scan(
    where: str, case: str, exclusive_field: str, input: npt.ArrayLike, axis: int, reverse: object, exclusive: object
) -> Call:
    data = _input(input, "input", case, where)
    if data.dtype.name not in _SCAN_TYPES:
        raise ArgumentTypeError(
            "input",
            f"{where}: input has dtype {data.dtype}, which DML_OPERATOR_{case.upper()} does not take; cast it, e.g. "
            f"x.astype(np.int32)",
            allowed=_SCAN_TYPES,
        )
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to scan along")
    attributes = {
        "input_tensor": tensor_desc(data),
        "output_tensor": tensor_desc(data),
        "axis": _axis(axis, data.ndim, where),
        "axis_direction": tensor_pb2.AXIS_DIRECTION_DECREASING
        if _flag(reverse, "reverse", where)
        else tensor_pb2.AXIS_DIRECTION_INCREASING,
        exclusive_field: _flag(exclusive, "exclusive", where),
    }
    descriptor = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name[case].message_type
    assert descriptor is not None  # both cases are desc messages
    message = message_factory.GetMessageClass(descriptor)(**attributes)
    return Call(_wrap(case, message), (data,))


def _parameter(value: npt.ArrayLike, argument: str, case: str, where: str, data: np.ndarray) -> np.ndarray:
    """A normalization's parameter tensor in ``data``'s dtype, padded with leading 1s to its rank; each dimension 1
    (DirectML broadcasts it) or ``data``'s size: NumPy's broadcasting that leaves ``data``'s shape as it is."""
    array = _float_operand(value, argument, case, where, like=data)
    if array.ndim > data.ndim or any(
        size not in (1, full) for size, full in zip(array.shape[::-1], data.shape[::-1], strict=False)
    ):
        raise ArgumentValueError(
            argument,
            f"{where}: {argument} has shape {array.shape}, which does not broadcast to input's {data.shape} "
            f"(NumPy's rule, trailing dimensions aligned; each size 1 or input's)",
        )
    return array.reshape((1,) * (data.ndim - array.ndim) + array.shape)


def mean_variance_normalization(
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None,
    *,
    scale: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    normalize_variance: bool = True,
    epsilon: float = 1e-5,
) -> Call:
    """DML_MEAN_VARIANCE_NORMALIZATION2_OPERATOR_DESC: ``scale * (x - mean) / sqrt(var + epsilon) + bias``, the mean
    and (population) variance taken over ``axes``, as ``(x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes,
    keepdims=True) + epsilon)`` (ONNX MeanVarianceNormalization / LayerNormalization).

    DirectML's rules: the output has the input's dtype and shape; float32/float16 only (FLOAT16 computes in
    FLOAT32); 1 to 8 dimensions (a 0-d input travels as one element). ``scale`` and ``bias`` are optional (an
    absent scale acts as 1, bias as 0) and have the input's dtype; they broadcast to the input by NumPy's rule and
    travel padded with leading 1s to its rank, each dimension 1 or the input's size. Without
    ``normalize_variance`` (UseVariance FALSE) the result is only centred and ``epsilon`` is unused. Feature
    level 6.3 (UseMean is always TRUE here).

    Args:
        input: the array to normalise.
        axes: an axis or axes to take the statistics over, negative counting from the end, unique; ``None``: all.
        scale, bias: optional arrays broadcasting to ``input``.
        normalize_variance: divide by the standard deviation.
        epsilon: added to the variance, a finite number >= 0.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than float32/float16 (or differing from input's),
            axes out of range or repeated, a scale or bias that does not broadcast to input, a bad epsilon.
    """
    where, case = "mean_variance_normalization", "mean_variance_normalization2"
    data = _float_operand(input, "input", case, where)
    shape = data.shape
    data = data.reshape(1) if data.ndim == 0 else data
    reduced = _reduce_axes(axes, data.ndim, where)
    scale_data = None if scale is None else _parameter(scale, "scale", case, where, data)
    bias_data = None if bias is None else _parameter(bias, "bias", case, where, data)
    desc = operators_pb2.MeanVarianceNormalization2OperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc(data),
        axis_count=len(reduced),
        axes=reduced,
        use_mean=True,
        use_variance=_flag(normalize_variance, "normalize_variance", where),
        epsilon=_epsilon(epsilon, where),
    )
    if scale_data is not None:
        desc.scale_tensor.CopyFrom(tensor_desc(scale_data))
    if bias_data is not None:
        desc.bias_tensor.CopyFrom(tensor_desc(bias_data))
    return Call(_wrap(case, desc), (data, scale_data, bias_data), (shape,))


def _epsilon(value: object, where: str) -> float:
    epsilon = _scalar(value, "epsilon", where)
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ArgumentValueError("epsilon", f"{where}: epsilon = {epsilon} must be a finite number >= 0")
    return epsilon


def batch_normalization(
    input: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    *,
    epsilon: float = 1e-5,
) -> Call:
    """DML_BATCH_NORMALIZATION_OPERATOR_DESC (inference): ``scale * (input - mean) / sqrt(variance + epsilon) +
    bias`` with the statistics given.

    DirectML's rules: every tensor has the input's dtype (float32/float16 only) and dimension count (1 to 8 from
    feature level 3.1, 4 before); each dimension of mean, variance, scale and bias is 1 (broadcast) or the input's.
    The arrays broadcast by NumPy's rule (trailing dimensions aligned) and travel padded with leading 1s: for
    per-channel statistics of an (N, C, H, W) input pass shape (C, 1, 1). DirectML requires Scale and Bias: an
    absent ``scale`` is sent as a {1, ..} tensor of 1s and ``bias`` of 0s. Spatial is sent TRUE (deprecated from
    feature level 4.0).

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than float32/float16 (or differing from input's), a
            parameter that does not broadcast to input, a bad epsilon.
    """
    where = case = "batch_normalization"
    data = _float_operand(input, "input", case, where)
    shape = data.shape
    data = data.reshape(1) if data.ndim == 0 else data
    ones = (1,) * data.ndim
    parameters = [
        _parameter(value, argument, case, where, data)
        if value is not None
        else np.full(ones, 1 if argument == "scale" else 0, data.dtype)
        for argument, value in (("mean", mean), ("variance", variance), ("scale", scale), ("bias", bias))
    ]
    mean_data, variance_data, scale_data, bias_data = parameters
    desc = operators_pb2.BatchNormalizationOperatorDesc(
        input_tensor=tensor_desc(data),
        mean_tensor=tensor_desc(mean_data),
        variance_tensor=tensor_desc(variance_data),
        scale_tensor=tensor_desc(scale_data),
        bias_tensor=tensor_desc(bias_data),
        output_tensor=tensor_desc(data),
        spatial=True,
        epsilon=_epsilon(epsilon, where),
    )
    return Call(_wrap(case, desc), (data, *parameters), (shape,))


def lp_normalization(input: npt.ArrayLike, axis: int = -1, *, p: int = 2, epsilon: float = 1e-5) -> Call:
    """DML_LP_NORMALIZATION_OPERATOR_DESC: ``input`` divided by its L1 or L2 norm along ``axis``, as
    ``x / np.maximum(np.linalg.norm(x, ord=p, axis=axis, keepdims=True), epsilon)`` (ONNX LpNormalization).

    DirectML's rules: the output has the input's dtype and shape; float32/float16 only; 1 to 8 dimensions from
    feature level 3.1 (4 before; a 0-d input travels as one element); one axis; P is 1 or 2. The page leaves how
    Epsilon enters open: this server divides by max(norm, epsilon), so a slice of norm 0 gives 0, not NaN.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than float32/float16, an axis out of range, a p
            other than 1 or 2, a bad epsilon.
    """
    where = case = "lp_normalization"
    data = _float_operand(input, "input", case, where)
    shape = data.shape
    data = data.reshape(1) if data.ndim == 0 else data
    if isinstance(p, bool) or not isinstance(p, int | np.integer):
        raise ArgumentTypeError("p", f"{where}: p must be an int; got {type(p).__name__}", allowed=("1", "2"))
    if p not in (1, 2):
        raise ArgumentValueError("p", f"{where}: p = {p}; DirectML takes the L1 or L2 norm", allowed=("1", "2"))
    desc = operators_pb2.LpNormalizationOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc(data),
        axis=_axis(axis, data.ndim, where),
        epsilon=_epsilon(epsilon, where),
        p=int(p),
    )
    return Call(_wrap(case, desc), (data,), (shape,))


_INDEX_TYPES = ("int64", "int32", "uint64", "uint32")


def one_hot(indices: npt.ArrayLike, depth: int, values: npt.ArrayLike = (0, 1), axis: int = -1) -> Call:
    """DML_ONE_HOT_OPERATOR_DESC: ``values[1]`` where the position along the new ``axis`` equals the index, else
    ``values[0]``, as ONNX OneHot: ``np.where(np.expand_dims(indices, axis) == positions, values[1], values[0])``
    with ``depth`` positions.

    DirectML's rules: the output has ``values``' dtype (int64 for the default ``(0, 1)``; every DirectML type from
    feature level 4.1, FLOAT64 included) and the indices' shape with ``depth`` inserted at ``axis``; indices are
    int32, int64, uint32 or uint64, a negative one counting from the end (``-1``: the last position); an index
    out of range after that gives a sequence of ``values[0]`` only. The tensors travel with one dimension count:
    the indices with size 1 at ``axis``, ``values`` as {1, .., 2}.

    Args:
        indices: the hot position of each output sequence (0-d or more, at most 7 dimensions).
        depth: the new axis's size, at least 1.
        values: (off value, on value).
        axis: where the new axis goes, ``-(indices.ndim + 1) <= axis <= indices.ndim``; default last.

    Raises:
        ArgumentValueError, ArgumentTypeError: an index dtype DirectML does not take, a depth below 1, values not
            two elements, an axis out of range.
    """
    where = case = "one_hot"
    index_array = _array(indices, "indices", where)
    if index_array.dtype.name not in _INDEX_TYPES:
        raise ArgumentTypeError(
            "indices",
            f"{where}: indices has dtype {index_array.dtype}; DML_OPERATOR_ONE_HOT takes integer indices of 32 or 64 "
            f"bits, e.g. np.asarray(indices, np.int64)",
            allowed=_INDEX_TYPES,
        )
    count = _count(depth, "depth", where, 1)
    value_array = _input(values, "values", case, where)
    if value_array.size != 2:
        raise ArgumentValueError(
            "values", f"{where}: values has {value_array.size} elements; it is (off value, on value)", allowed=("2",)
        )
    boolean = value_array.dtype == np.bool_
    if boolean:
        value_array = value_array.astype(np.uint8)  # bool travels as UINT8 and comes back as bool
    rank = index_array.ndim + 1
    position = _axis(axis, rank, where)
    out_shape = list(index_array.shape)
    out_shape.insert(position, count)
    wire_indices = np.expand_dims(index_array, position)
    wire_values = value_array.reshape((1,) * (rank - 1) + (2,))
    desc = operators_pb2.OneHotOperatorDesc(
        indices_tensor=tensor_desc(wire_indices),
        values_tensor=tensor_desc(wire_values),
        output_tensor=tensor_desc((wire_values.dtype, out_shape)),
        axis=position,
    )
    dtype = np.dtype(np.bool_) if boolean else None
    return Call(_wrap(case, desc), (wire_indices, wire_values), (tuple(out_shape),), (dtype,))


#: The types DML_FILL_VALUE_SEQUENCE fills (64-bit integers from feature level 5.0; never FLOAT64).
_SEQUENCE_TYPES = ("float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8")


def fill_value_sequence(
    shape: int | Sequence[int], start: float, delta: float, dtype: npt.DTypeLike = np.float32
) -> Call:
    """DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC: ``start + i * delta`` at row-major element ``i`` of an array of
    ``shape``, as ``(start + delta * np.arange(n)).astype(dtype).reshape(shape)`` (``np.arange(start, stop,
    delta)`` for a 1-D one).

    DirectML's rules: no inputs; ValueDataType (``dtype``) types both scalars and the output. float32, float16,
    32-bit and 8/16-bit integers; 64-bit integers from feature level 5.0; never FLOAT64 or bool. Floats compute
    in float32 as ``float32(i) * delta + start`` (float16 rounded once at the end); integers wrap in two's
    complement (a negative ``delta`` counts an unsigned type down, as the page's UINT8 example). ``start`` must
    be a value of ``dtype``; an integer ``delta`` may also be negative down to ``-(2**bits - 1)``. 1 to 8
    dimensions (a 0-d shape travels as {1}).

    Raises:
        ArgumentValueError, ArgumentTypeError: a shape that is not ints >= 1, a dtype the operator does not
            fill, a float ``start``/``delta`` for an integer dtype, a value out of the type's range.
    """
    where = case = "fill_value_sequence"
    items = [shape] if isinstance(shape, int | np.integer) else shape
    if isinstance(shape, bool) or not isinstance(items, Sequence | np.ndarray):
        raise ArgumentTypeError("shape", f"{where}: shape must be an int or a sequence of ints; got {shape!r}")
    sizes = tuple(_count(size, "shape", where, 1) for size in items)
    try:
        target = np.dtype(dtype)
    except TypeError:
        raise ArgumentTypeError(
            "dtype", f"{where}: dtype {dtype!r} is not a NumPy dtype", allowed=_SEQUENCE_TYPES
        ) from None
    if target.name not in _SEQUENCE_TYPES:
        raise ArgumentTypeError(
            "dtype",
            f"{where}: dtype {target} is not one DML_OPERATOR_FILL_VALUE_SEQUENCE fills",
            allowed=_SEQUENCE_TYPES,
        )
    scalars = [
        _sequence_scalar(value, argument, target, where) for argument, value in (("start", start), ("delta", delta))
    ]
    desc = operators_pb2.FillValueSequenceOperatorDesc(
        output_tensor=tensor_desc((target, sizes or (1,))),
        value_data_type=DATA_TYPE_BY_DTYPE[target],  # type: ignore[arg-type]
        value_start=scalars[0],
        value_delta=scalars[1],
    )
    return Call(_wrap(case, desc), (), (sizes,))


def _sequence_scalar(value: object, argument: str, dtype: np.dtype[Any], where: str) -> operators_pb2.ScalarUnion:
    """``value`` in the DML_SCALAR_UNION member for ``dtype`` (FLOAT16 travels in the FLOAT32 member)."""
    if dtype.kind == "f":
        return operators_pb2.ScalarUnion(float32=_scalar(value, argument, where))
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ArgumentTypeError(
            argument, f"{where}: {argument} must be an int for dtype {dtype}; got {type(value).__name__}"
        )
    info = np.iinfo(dtype)
    number = int(value)
    low = -int(info.max) if argument == "delta" and dtype.kind == "u" else int(info.min)
    if not low <= number <= int(info.max):
        raise ArgumentValueError(
            argument, f"{where}: {argument} = {number} is out of range for {dtype}: {low}..{info.max}"
        )
    if dtype.kind == "u":
        number %= 1 << (8 * dtype.itemsize)  # a negative delta wraps: adding it counts down
    member = f"{'uint' if dtype.kind == 'u' else 'int'}{8 * dtype.itemsize}"
    scalar = operators_pb2.ScalarUnion()
    setattr(scalar, member, number)
    return scalar


def _operator_names(prefix: str) -> tuple[str, ...]:
    return tuple(
        sorted(
            f.name.removeprefix(prefix)
            for f in operators_pb2.OperatorDesc.DESCRIPTOR.fields
            if f.name.startswith(prefix) and f.message_type is not None
        )
    )


_ELEMENT_WISE_NAMES = _operator_names("element_wise_")
_ACTIVATION_NAMES = _operator_names("activation_")


def _operator_name(name: object, function: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(name, str):
        raise ArgumentTypeError("name", f"{function}: name must be a str; got {type(name).__name__}")
    lowered = name.lower()
    if lowered not in allowed:
        raise ArgumentValueError("name", f"{function}: no operator named {name!r}", allowed=allowed)
    return lowered


def _single_output(
    case: str,
    where: str,
    inputs: tuple[npt.ArrayLike | None, ...],
    output: np.dtype[Any] | None,
    attributes: dict[str, Any],
) -> Call:
    descriptor = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name[case].message_type
    assert descriptor is not None  # every OperatorDesc case is a desc message (the names were checked)
    message = message_factory.GetMessageClass(descriptor)()
    fields, (output_field, *_) = tensor_fields(message.DESCRIPTOR)
    _set_attributes(message, where, {f.name for f in fields} | {output_field.name}, attributes)
    if not inputs:
        return Call(_wrap(case, message), ())
    if len(inputs) != len(fields):
        names = ", ".join(f.name for f in fields)
        raise ArgumentValueError(
            "inputs", f"{where} takes {len(fields)} inputs ({names}); got {len(inputs)}", allowed=(str(len(fields)),)
        )
    arrays = _convert_inputs(case, where, inputs)
    present = [a for a in arrays if a is not None]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in present))
    except ValueError:
        shapes = " and ".join(str(a.shape) for a in present)
        raise ArgumentValueError(
            "inputs", f"{where}: inputs of shapes {shapes} do not broadcast to one shape (NumPy's rule)"
        ) from None
    wire = shape or (1,)  # DirectML has no 0-d tensors: a 0-d result travels as a {1} tensor
    bound: list[np.ndarray | None] = []
    for tensor_field, array in zip(fields, arrays, strict=True):
        if array is None:
            bound.append(None)
            continue
        padded = array.reshape((1,) * (len(wire) - array.ndim) + array.shape)
        strides = [
            0 if size == 1 and full != 1 else stride
            for size, full, stride in zip(padded.shape, wire, packed_strides(padded.shape), strict=True)
        ]
        broadcast = any(size == 1 and full != 1 for size, full in zip(padded.shape, wire, strict=True))
        getattr(message, tensor_field.name).CopyFrom(tensor_desc((padded.dtype, wire), strides if broadcast else None))
        bound.append(np.broadcast_to(padded, wire) if broadcast else padded)
    # IF's output has its values' type (A and B), not its condition's.
    first = arrays[1] if case == "element_wise_if" and arrays[1] is not None else present[0]
    dtype = output if output is not None else first.dtype
    getattr(message, output_field.name).CopyFrom(tensor_desc((dtype, wire)))
    # bool travels as UINT8 and comes back as UINT8 unless told: the logical operators return the inputs' type.
    result_dtype = dtype if dtype == np.bool_ else None
    return Call(_wrap(case, message), tuple(bound), (shape,), (result_dtype,))


def _set_attributes(message: Any, where: str, tensors: set[str], attributes: dict[str, Any]) -> None:
    if "scale_bias" in attributes and isinstance(attributes["scale_bias"], tuple):
        scale, bias = attributes.pop("scale_bias")
        attributes["scale_bias"] = operators_pb2.ScaleBias(scale=scale, bias=bias)
    if "axes" in attributes and "axis_count" not in attributes:
        attributes["axis_count"] = len(attributes["axes"])
    names = tuple(f.name for f in message.DESCRIPTOR.fields if f.name not in tensors)
    for key, value in attributes.items():
        if key not in names:
            has = "" if names else " (it has none)"
            raise ArgumentValueError(key, f"{where} has no attribute {key!r}{has}", allowed=names)
        target = getattr(message, key)
        try:
            if hasattr(target, "CopyFrom"):
                target.CopyFrom(value)
            elif hasattr(target, "extend"):
                target.extend(value)
            else:
                setattr(message, key, value)
        except TypeError as error:
            raise ArgumentTypeError(key, f"{where}: attribute {key}={value!r}: {error}") from None
        except ValueError as error:  # a number the field cannot hold (a negative count, an enum out of range)
            raise ArgumentValueError(key, f"{where}: attribute {key}={value!r}: {error}") from None


def _convert_inputs(case: str, where: str, inputs: tuple[npt.ArrayLike | None, ...]) -> list[np.ndarray | None]:
    """The inputs as arrays, as NumPy converts operands: arrays and lists first, then each Python scalar in the
    dtype NumPy's promotion gives it beside them (a weak scalar: ``x32 + 1.5`` stays float32)."""
    arrays: list[np.ndarray | None] = [
        None if value is None or _is_python_scalar(value) else _array(value, f"inputs[{i}]", where)
        for i, value in enumerate(inputs)
    ]
    dtypes = [a.dtype for a in arrays if a is not None]
    for i, value in enumerate(inputs):
        if value is not None and arrays[i] is None:
            dtype = np.result_type(*dtypes, value) if dtypes else None
            arrays[i] = _array(value, f"inputs[{i}]", where, dtype)
    operator = case.removeprefix("element_wise_")
    for i, array in enumerate(arrays):
        if array is None:
            continue
        _check_float64(case, f"inputs[{i}]", array, where)
        if array.dtype == np.bool_ and operator not in _BOOLEAN_INPUTS and not (operator == "if" and i == 0):
            raise ArgumentTypeError(
                f"inputs[{i}]",
                f"{where}: inputs[{i}] has dtype bool, which DirectML has no data type for: "
                f"DML_OPERATOR_{case.upper()} would read it as UINT8 0/1 and compute on numbers (True + True = 2), "
                f"not as NumPy does on bool; pass a uint8 array to compute on 0/1, or use a logical operator",
                allowed=tuple(f"element_wise({name!r})" for name in sorted(_BOOLEAN_INPUTS)),
            )
    return arrays


def _wrap(case: str, message: Any) -> operators_pb2.OperatorDesc:
    operator_desc = operators_pb2.OperatorDesc()
    getattr(operator_desc, case).CopyFrom(message)
    return operator_desc
