"""DML_AVERAGE_POOLING and DML_MAX_POOLING as NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops.base import Call, _input, _per_axis
from dmlrpc.v1 import operators_pb2

__all__ = ["average_pooling", "max_pooling"]


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
