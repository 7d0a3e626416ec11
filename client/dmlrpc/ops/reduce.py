"""DML_REDUCE, DML_ARGMIN and DML_ARGMAX as NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import GraphFace, operator
from dmlrpc.ops.base import Call, _flag, _index_dtype, _input, _reduce_axes, _wrap
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["argmax", "argmin", "reduce"]


#: REDUCE's functions by their DML_REDUCE_FUNCTION names, lower-case, and NumPy's names for two of them.
_REDUCE_FUNCTIONS: dict[str, int] = {
    **{name.removeprefix("REDUCE_FUNCTION_").lower(): value for name, value in operators_pb2.ReduceFunction.items()},
    "mean": operators_pb2.REDUCE_FUNCTION_AVERAGE,
    "prod": operators_pb2.REDUCE_FUNCTION_MULTIPLY,
}


#: The functions DirectML computes in floating point only (no integer type at any feature level).
_FLOAT_ONLY_REDUCE = frozenset({"average", "mean", "l2", "log_sum", "log_sum_exp"})


@operator(sends=("reduce",), graph=GraphFace(fixed={"keepdims": True}))
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


_ARG_INDEX_TYPES = ("int64", "int32", "uint64", "uint32")


@operator(sends=("argmax",), graph=GraphFace(fixed={"keepdims": True}))
def argmax(
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None = None,
    *,
    keepdims: bool = False,
    select_last_index: bool = False,
    index_dtype: npt.DTypeLike = np.int64,
) -> Call:
    """DML_ARGMAX_OPERATOR_DESC: the index of the largest element over ``axes``, as ``np.argmax(input, axis)``
    (over several axes, or ``None`` = all, the row-major index over them flattened, as ``np.argmax`` of the
    flattened input).

    The first largest element where several are equal (AxisDirection INCREASING), the last with
    ``select_last_index`` (DECREASING; ONNX ArgMax's select_last_index). DirectML's rules: the output keeps the
    input's rank with the reduced axes of size 1 (``keepdims``; NumPy's shape by default); the indices are
    int64 (default), int32, uint64 or uint32; the input any integer or float32/float16 type (not FLOAT64 or
    bool), 1 to 8 dimensions. Feature level 3.0 (REDUCE's ARGMAX function is the older form: ``reduce``).

    Raises:
        ArgumentValueError, ArgumentTypeError: axes out of range or repeated, a dtype the operator does not
            take, an index dtype other than the four.
    """
    return _arg("argmax", input, axes, keepdims, select_last_index, index_dtype)


@operator(sends=("argmin",), graph=GraphFace(fixed={"keepdims": True}))
def argmin(
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None = None,
    *,
    keepdims: bool = False,
    select_last_index: bool = False,
    index_dtype: npt.DTypeLike = np.int64,
) -> Call:
    """DML_ARGMIN_OPERATOR_DESC: the index of the smallest element over ``axes``, as ``np.argmin(input, axis)``;
    otherwise as ``argmax``."""
    return _arg("argmin", input, axes, keepdims, select_last_index, index_dtype)


def _arg(
    case: str, input: npt.ArrayLike, axes: object, keepdims: object, last: object, index_dtype: npt.DTypeLike
) -> Call:
    where = case
    data = _input(input, "input", case, where)
    if data.dtype == np.bool_:
        raise ArgumentTypeError(
            "input", f"{where}: input has dtype bool, which DirectML has no data type for; pass x.astype(np.uint8)"
        )
    dtype = _index_dtype(index_dtype, where, _ARG_INDEX_TYPES, f"DML_OPERATOR_{case.upper()}")
    shape = data.shape
    reduced = _reduce_axes(axes, data.ndim, where)
    data = data.reshape(1) if data.ndim == 0 else data
    kept = [1 if d in reduced else size for d, size in enumerate(data.shape)]
    keep = _flag(keepdims, "keepdims", where)
    direction = (
        tensor_pb2.AXIS_DIRECTION_DECREASING
        if _flag(last, "select_last_index", where)
        else (tensor_pb2.AXIS_DIRECTION_INCREASING)
    )
    message = operators_pb2.ArgmaxOperatorDesc if case == "argmax" else operators_pb2.ArgminOperatorDesc
    desc = message(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((dtype, kept)),
        axis_count=len(reduced),
        axes=reduced,
        axis_direction=direction,
    )
    if keep:
        result = tuple(1 if d in reduced else size for d, size in enumerate(shape))
    else:
        result = tuple(size for d, size in enumerate(shape) if d not in reduced)
    return Call(_wrap(case, desc), (data,), (result,))
