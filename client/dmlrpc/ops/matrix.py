"""DML_GEMM and DML_MATRIX_MULTIPLY_INTEGER as NumPy-style builders."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import packed_strides, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import GraphFace, operator
from dmlrpc.ops.base import Call, _array, _flag, _float_operand, _is_python_scalar, _scalar
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["gemm", "matrix_multiply_integer"]


_MATRIX_TRANSFORMS = {False: operators_pb2.MATRIX_TRANSFORM_NONE, True: operators_pb2.MATRIX_TRANSFORM_TRANSPOSE}


def _broadcast(array: np.ndarray, sizes: tuple[int, ...]) -> tuple[tensor_pb2.TensorDesc, np.ndarray]:
    """The desc of ``array`` padded with leading 1s to ``sizes``' dimension count and broadcast to ``sizes`` through
    zero strides (DirectML's broadcasting: the data is sent once), with the array to bind."""
    padded = array.reshape((1,) * (len(sizes) - array.ndim) + array.shape)
    stretched = [size == 1 and full != 1 for size, full in zip(padded.shape, sizes, strict=True)]
    if not any(stretched):
        return tensor_desc(padded), padded
    strides = [0 if s else stride for s, stride in zip(stretched, packed_strides(padded.shape), strict=True)]
    return tensor_desc((padded.dtype, sizes), strides), np.broadcast_to(padded, sizes)


def _broadcast_onto(
    value: np.ndarray, argument: str, where: str, shape: tuple[int, ...], onto: str, sizes: tuple[int, ...]
) -> tuple[tensor_pb2.TensorDesc, np.ndarray]:
    """``value`` broadcast to ``shape`` (``onto`` names it) by NumPy's rule, adding no dimension ``shape`` lacks,
    then sent at ``sizes`` as ``_broadcast`` sends it."""
    try:
        fits = value.ndim <= len(shape) and np.broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ArgumentValueError(
            argument, f"{where}: {argument} of shape {value.shape} does not broadcast to {onto} {shape}"
        )
    return _broadcast(value, sizes)


@operator(sends=("gemm",), graph=GraphFace(trace=lambda **arguments: _gemm(**arguments, where="Graph.gemm", rank=None)))
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
        c_desc, c_bound = _broadcast_onto(c_data, "c", where, shape, "the result's shape", wire)
        desc.c_tensor.CopyFrom(c_desc)
    return Call(operators_pb2.OperatorDesc(gemm=desc), (a_bound, b_bound, c_bound), (shape,))


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


@operator(
    sends=("matrix_multiply_integer",),
    graph=GraphFace(
        trace=lambda **arguments: _matrix_multiply_integer(
            **arguments, where="Graph.matrix_multiply_integer", rank=None
        )
    ),
)
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
