"""What every operator builder shares: the ``Call`` it returns and the argument checks before any RPC."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, DTYPE_NAMES
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.v1 import operators_pb2

__all__ = ["Call"]


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
    #: What the results need beyond those, where NumPy's answer depends on the data (NONZERO_COORDINATES' rows up
    #: to its count); ``None``: nothing.
    finish: Callable[[list[Any]], list[Any]] | None = None

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
        return results if self.finish is None else self.finish(results)


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
        "gather_elements",
        "gather_nd",
        "gather_nd1",
        "slice1",
        "padding1",
        "join",
        "split",
        "slice",
        "padding",
        "space_to_depth",
        "space_to_depth1",
        "depth_to_space",
        "depth_to_space1",
        "reverse_subsequences",
        "diagonal_matrix",
        "diagonal_matrix1",
        "fill_value_constant",
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


_FLOATS = ("float32", "float16")


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


def _version(value: object, where: str, versions: tuple[int, ...]) -> int:
    """A desc version the caller pinned (DirectML's suffix: 0 for the unsuffixed desc); ``None``: the newest."""
    if value is None:
        return versions[-1]
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value not in versions:
        raise ArgumentValueError(
            "version", f"{where}: version {value!r} is not one of its desc versions", allowed=tuple(map(str, versions))
        )
    return int(value)


def _index_dtype(value: npt.DTypeLike, where: str, allowed: tuple[str, ...], whose: str) -> np.dtype[Any]:
    """``index_dtype`` as NumPy's, one of ``allowed``: the index types of ``whose`` (an operator's name)."""
    try:
        dtype: np.dtype[Any] | None = np.dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or dtype.name not in allowed:
        raise ArgumentTypeError(
            "index_dtype", f"{where}: index_dtype {value!r} is not an index type of {whose}", allowed=allowed
        )
    return dtype


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


#: DirectML's most dimensions for the data-movement operators (DimensionCount 1 to 8, from feature level 3.0).
_MOST_DIMENSIONS = 8


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


def _window(strides: object, start_padding: object, end_padding: object, dilations: object) -> dict[str, Any]:
    """A windowed builder's (pooling, convolution, fold, their gradients) strides, paddings and dilations as the
    keywords that every face of it (NumPy-style call, Graph node) passes on unchanged."""
    return {"strides": strides, "start_padding": start_padding, "end_padding": end_padding, "dilations": dilations}


def _wrap(case: str, message: Any) -> operators_pb2.OperatorDesc:
    operator_desc = operators_pb2.OperatorDesc()
    getattr(operator_desc, case).CopyFrom(message)
    return operator_desc
