"""DML_CAST as a NumPy-style builder."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, DTYPE_NAMES, tensor_desc
from dmlrpc.errors import ArgumentTypeError
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call, _array
from dmlrpc.v1 import operators_pb2

__all__ = ["cast"]


@operator(sends=("cast",))
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
