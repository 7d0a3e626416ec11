"""The argument checks the quantized builders share: integer operands and dtypes, scales and zero points per
tensor, row or channel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops.base import Call, _array, _is_python_scalar, _wrap
from dmlrpc.ops.matrix import _batch_shape, _broadcast_onto
from dmlrpc.v1 import operators_pb2

_BYTES = ("int8", "uint8")
_INTEGERS = ("int32", "int16", "int8", "uint32", "uint16", "uint8")


def _integer(
    value: object, argument: str, where: str, allowed: Sequence[str], like: np.ndarray | None = None
) -> np.ndarray:
    """An integer array of one of ``allowed`` dtypes (a zero point: its tensor's dtype; a Python scalar takes it)."""
    data = _array(value, argument, where, like.dtype if like is not None and _is_python_scalar(value) else None)
    names = tuple(allowed) if like is None else (like.dtype.name,)
    if data.dtype.name not in names:
        what = f"{like.dtype}, its tensor's" if like is not None else ", ".join(names)
        raise ArgumentTypeError(argument, f"{where}: {argument} has dtype {data.dtype}; it takes {what}", allowed=names)
    return data


def _dtype(value: npt.DTypeLike, argument: str, where: str, allowed: Sequence[str]) -> np.dtype[Any]:
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise ArgumentTypeError(
            argument, f"{where}: {argument} {value!r} is not a dtype", allowed=tuple(allowed)
        ) from None
    if dtype.name not in allowed or dtype not in DATA_TYPE_BY_DTYPE:
        raise ArgumentTypeError(argument, f"{where}: {argument} is {dtype}", allowed=tuple(allowed))
    return dtype


def _elementwise_parameter(value: np.ndarray, argument: str, where: str, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """A scale or zero point broadcast to the input's shape by NumPy's rule (sent once, through zero strides)."""
    return _broadcast_onto(value, argument, where, shape, "input's shape", shape)


def _quantization(
    case: str,
    x: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray | None,
    output: np.dtype[Any],
) -> Call:
    shape = x.shape or (1,)
    data = x.reshape(shape)
    descs, arrays = [], []
    for argument, value in (("scale", scale), ("zero_point", zero_point)):
        if value is not None:
            desc, bound = _elementwise_parameter(value, argument, case, shape)
            descs.append(desc)
            arrays.append(bound)
    message: Any = operators_pb2.QuantizeOperatorDesc if case == "quantize" else operators_pb2.DequantizeOperatorDesc
    desc = message(
        input_tensor=tensor_desc(data),
        quantization_type=operators_pb2.QUANTIZATION_TYPE_SCALE
        if zero_point is None
        else operators_pb2.QUANTIZATION_TYPE_SCALE_ZERO_POINT,
        quantization_tensor_count=len(descs),
        quantization_tensors=descs,
        output_tensor=tensor_desc((output, shape)),
    )
    return Call(_wrap(case, desc), (data, arrays), (x.shape,))


def _per(value: object, argument: str, where: str, count: int, per: str, rank: int, check: Any) -> np.ndarray | None:
    """A per-tensor, per-row (``per="row"``: {1.., count, 1}) or per-column ({1.., 1, count}) parameter: a scalar or
    ``count`` values, ``check`` giving its dtype."""
    if value is None:
        return None
    data: np.ndarray = check(value)
    flat = data.reshape(-1)
    if flat.size not in (1, count):
        raise ArgumentValueError(
            argument, f"{where}: {argument} has shape {data.shape}; it takes one value or {count} (one per {per})"
        )
    shape = (flat.size, 1) if per == "row" else (1, flat.size)
    return flat.reshape((1,) * (rank - 2) + shape)


def _matrices(
    where: str, a: npt.ArrayLike, b: npt.ArrayLike, allowed: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], tuple[int, ...]]:
    """Two integer matrices of 2 to 4 dimensions (batch dimensions broadcast as ``np.matmul``'s): the arrays, the
    result's NumPy shape and its 4-D shape as sent."""
    a_data, b_data = _integer(a, "a", where, allowed), _integer(b, "b", where, allowed)
    for argument, data in (("a", a_data), ("b", b_data)):
        if not 2 <= data.ndim <= 4:
            raise ArgumentValueError(
                argument,
                f"{where}: {argument} has shape {data.shape}; it takes 2 to 4 dimensions ([batch,] rows, columns)",
            )
    if a_data.shape[-1] != b_data.shape[-2]:
        raise ArgumentValueError(
            "b", f"{where}: a has shape {a_data.shape} and b {b_data.shape}: a's columns must equal b's rows"
        )
    shape = (*_batch_shape(a_data, b_data, where), a_data.shape[-2], b_data.shape[-1])
    return a_data, b_data, shape, (1,) * (4 - len(shape)) + shape


def _scale_check(where: str, argument: str, floats: Sequence[str]) -> Any:
    def check(value: object) -> np.ndarray:
        dtype = np.dtype(np.float32) if _is_python_scalar(value) else None
        data = _array(value, argument, where, dtype)
        if data.dtype.name not in floats:
            raise ArgumentTypeError(argument, f"{where}: {argument} has dtype {data.dtype}", allowed=tuple(floats))
        return data

    return check


def _zero_check(where: str, argument: str, like: np.ndarray) -> Any:
    return lambda value: _integer(value, argument, where, (), like)


def _per_tensor(value: object, argument: str, where: str, check: Any, rank: int) -> np.ndarray | None:
    if value is None:
        return None
    data: np.ndarray = check(value)
    if data.size != 1:
        raise ArgumentValueError(argument, f"{where}: {argument} has shape {data.shape}; it takes one value")
    return data.reshape((1,) * rank)


def _per_channel(value: object, argument: str, where: str, check: Any, channels: int, rank: int) -> np.ndarray | None:
    """One value, or one per channel ({1, C, 1..} of ``rank`` dimensions)."""
    if value is None:
        return None
    data: np.ndarray = check(value)
    if data.size not in (1, channels):
        raise ArgumentValueError(
            argument, f"{where}: {argument} has shape {data.shape}; it takes one value or {channels} (one per channel)"
        )
    return data.reshape((1, data.size) + (1,) * (rank - 2)) if data.size > 1 else data.reshape((1,) * rank)
