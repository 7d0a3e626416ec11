"""DML_CUMULATIVE_SUMMATION and DML_CUMULATIVE_PRODUCT as NumPy-style builders (cumsum, cumprod)."""

from __future__ import annotations

import numpy.typing as npt
from google.protobuf import message_factory

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call, _axis, _flag, _input, _wrap
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["cumprod", "cumsum"]


#: The data types DML_CUMULATIVE_SUMMATION and DML_CUMULATIVE_PRODUCT take (64-bit integers from feature level 5.0).
_SCAN_TYPES = ("float32", "float16", "int64", "int32", "uint64", "uint32")


@operator(sends=("cumulative_summation",))
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


@operator(sends=("cumulative_product",))
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
