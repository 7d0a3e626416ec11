"""DML_AVERAGE_POOLING(1), DML_MAX_POOLING(1/2), DML_LP_POOLING(1), DML_MAX_UNPOOLING and DML_ROI_POOLING as
NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import FIRST, PAIR, GraphFace, operator, pooled_input
from dmlrpc.ops.base import Call, _array, _count, _float_operand, _index_dtype, _input, _per_axis, _scalar
from dmlrpc.v1 import operators_pb2

__all__ = ["average_pooling", "lp_pooling", "max_pooling", "max_pooling_with_indices", "max_unpooling", "roi_pooling"]


@operator(sends=("average_pooling", "average_pooling1"), graph=GraphFace(prepare=pooled_input))
def average_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
    dilations: int | Sequence[int] | None = None,
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
        dilations: the step between a window's elements per spatial dimension, at least 1; default 1. Dilations
            other than 1 send AVERAGE_POOLING1 (feature level 6.2; a window then spans ``(window_size - 1) *
            dilations + 1`` elements), else AVERAGE_POOLING.

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
        "average_pooling",
        input,
        window_size,
        strides,
        start_padding,
        end_padding,
        empty_ok=bool(include_padding),
        dilations=dilations,
    )
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(data),
        "output_tensor": tensor_desc((data.dtype, shape)),
        "include_padding": bool(include_padding),
    }
    if "dilations" in attributes:
        dilated = operators_pb2.AveragePooling1OperatorDesc(**fields, **attributes)
        return Call(operators_pb2.OperatorDesc(average_pooling1=dilated), (data,), (result,))
    desc = operators_pb2.AveragePoolingOperatorDesc(**fields, **attributes)
    return Call(operators_pb2.OperatorDesc(average_pooling=desc), (data,), (result,))


@operator(sends=("max_pooling", "max_pooling2"), result=FIRST, graph=GraphFace(prepare=pooled_input))
def max_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
) -> Call:
    """DML_MAX_POOLING_OPERATOR_DESC: the maximum of each window over the spatial dimensions of an NCHW-style
    ``input`` (N, C, then 1 to 3 spatial dimensions); padding elements never win.

    Windows, strides, padding and the output size are as ``average_pooling``'s. Types: float32/float16, INT8
    and UINT8 from feature level 3.0, every 8-64-bit integer from 5.0; never FLOAT64. ``dilations`` other than 1
    send MAX_POOLING2 (feature level 4.1) without its optional indices output; ``max_pooling_with_indices`` gives
    them.

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``average_pooling`` (a window covering only padding has no
            maximum).
    """
    data, shape, attributes, result = _pooling(
        "max_pooling", input, window_size, strides, start_padding, end_padding, empty_ok=False, dilations=dilations
    )
    if "dilations" in attributes:
        dilated = operators_pb2.MaxPooling2OperatorDesc(
            input_tensor=tensor_desc(data), output_tensor=tensor_desc((data.dtype, shape)), **attributes
        )
        return Call(operators_pb2.OperatorDesc(max_pooling2=dilated), (data,), (result,))
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
    dilations: object = None,
) -> tuple[np.ndarray, list[int], dict[str, Any], tuple[int, ...]]:
    """The input as sent (4-5-D), the output's sizes, the desc's window attributes (``dilations`` among them only
    where one is not 1) and the caller's shape."""
    data = _input(input, "input", where, where)
    floats_only = where in ("average_pooling", "lp_pooling")
    if data.dtype == np.bool_ or (floats_only and data.dtype.kind != "f"):
        raise ArgumentTypeError(
            "input",
            f"{where}: input has dtype {data.dtype}, which DML_OPERATOR_{where.upper()} does not take",
            allowed=("float32", "float16") if floats_only else (),
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
    spread = _per_dimension("dilations", dilations, spatial, 1, 1, where)
    out = list(data.shape[:2])
    for i in range(spatial):
        size = data.shape[2 + i]
        padded = size + start[i] + end[i]
        extent = (window[i] - 1) * spread[i] + 1
        if extent > padded:
            raise ArgumentValueError(
                "window_size",
                f"{where}: window_size[{i}] = {window[i]} (spanning {extent}) is larger than the padded input's "
                f"{padded} along spatial dimension {i} of input shape {data.shape}",
            )
        count = (padded - extent) // steps[i] + 1
        # The first and last windows are the ones that can fall wholly in the padding (DirectML leaves them
        # undefined: the server refuses them).
        if not empty_ok and (extent <= start[i] or (count - 1) * steps[i] - start[i] > size - 1):
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
        spread = [1, *spread]
        out = [out[0], out[1], 1, out[2]]
    attributes: dict[str, Any] = {
        "dimension_count": len(window),
        "strides": steps,
        "window_size": window,
        "start_padding": start,
        "end_padding": end,
    }
    if any(d != 1 for d in spread):
        attributes["dilations"] = spread
    return data, out, attributes, result


def _per_dimension(argument: str, value: object, count: int, least: int, default: int | None, where: str) -> list[int]:
    """``_per_axis`` over spatial dimensions, ``None`` meaning ``default`` in each (where there is one)."""
    if value is None and default is not None:
        return [default] * count
    return _per_axis(value, argument, where, count, least, noun="spatial dimensions")


#: MAX_POOLING1/2's index types.
_INDEX_TYPES = ("uint32", "uint64")


@operator(sends=("max_pooling1", "max_pooling2"), result=PAIR, graph=GraphFace(prepare=pooled_input))
def max_pooling_with_indices(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    index_dtype: npt.DTypeLike = np.uint32,
) -> Call:
    """DML_MAX_POOLING1_OPERATOR_DESC (MAX_POOLING2 with ``dilations``): ``max_pooling``'s maxima and, per output
    element, the flat (row-major) index of its maximum in the whole input tensor (ONNX MaxPool's Indices, as
    ``max_unpooling`` takes them); the first maximum where several are equal.

    DirectML's rules: as ``max_pooling``; the indices are uint32 or uint64 (``index_dtype``) with the output's
    shape. MAX_POOLING1 is feature level 2.1, MAX_POOLING2 (dilations) 4.1.

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``max_pooling``; an index dtype other than uint32/uint64.
    """
    where = "max_pooling_with_indices"
    indices = _index_dtype(index_dtype, where, _INDEX_TYPES, "MAX_POOLING1/2")
    data, shape, attributes, result = _pooling(
        "max_pooling", input, window_size, strides, start_padding, end_padding, empty_ok=False, dilations=dilations
    )
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(data),
        "output_tensor": tensor_desc((data.dtype, shape)),
        "output_indices_tensor": tensor_desc((indices, shape)),
    }
    if "dilations" in attributes:
        dilated = operators_pb2.MaxPooling2OperatorDesc(**fields, **attributes)
        return Call(operators_pb2.OperatorDesc(max_pooling2=dilated), (data,), (result, result))
    desc = operators_pb2.MaxPooling1OperatorDesc(**fields, **attributes)
    return Call(operators_pb2.OperatorDesc(max_pooling1=desc), (data,), (result, result))


@operator(sends=("lp_pooling", "lp_pooling1"), graph=GraphFace(prepare=pooled_input))
def lp_pooling(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    p: int = 2,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
) -> Call:
    """DML_LP_POOLING_OPERATOR_DESC (1): the Lp norm ``sum(|x| ** p) ** (1 / p)`` of each window over the spatial
    dimensions of an NCHW-style ``input`` (ONNX LpPool); padding elements count as 0.

    Windows, strides, padding and the output size are as ``average_pooling``'s; ``dilations`` other than 1 send
    LP_POOLING1 (feature level 6.2), else LP_POOLING. DirectML's rules: P at least 1; float32/float16 only.

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``average_pooling``; a p below 1.
    """
    where = "lp_pooling"
    exponent = _count(p, "p", where, 1)
    data, shape, attributes, result = _pooling(
        where, input, window_size, strides, start_padding, end_padding, empty_ok=True, dilations=dilations
    )
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(data),
        "output_tensor": tensor_desc((data.dtype, shape)),
        "p": exponent,
    }
    if "dilations" in attributes:
        dilated = operators_pb2.LpPooling1OperatorDesc(**fields, **attributes)
        return Call(operators_pb2.OperatorDesc(lp_pooling1=dilated), (data,), (result,))
    desc = operators_pb2.LpPoolingOperatorDesc(**fields, **attributes)
    return Call(operators_pb2.OperatorDesc(lp_pooling=desc), (data,), (result,))


def _distinct_indices(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Distinct in-range stand-ins for the indices: the builder checks their values, which a graph knows only when
    it runs (the server checks them then)."""
    indices = arguments["indices"]
    return {"indices": np.arange(int(np.prod(indices.shape)), dtype=indices.dtype).reshape(indices.shape)}


@operator(sends=("max_unpooling",), graph=GraphFace(prepare=_distinct_indices))
def max_unpooling(input: npt.ArrayLike, indices: npt.ArrayLike, output_shape: Sequence[int]) -> Call:
    """DML_MAX_UNPOOLING_OPERATOR_DESC: zeros of ``output_shape`` with each ``input`` element written at its flat
    (row-major) index ``indices`` into the output (ONNX MaxUnpool; the inverse of ``max_pooling_with_indices``):
    ``out.reshape(-1)[indices.reshape(-1)] = input.reshape(-1)``.

    DirectML's rules: 4 dimensions; ``indices`` uint32/uint64 with the input's shape; the output has the input's
    dtype (not FLOAT64 or bool). Each index is below the output's element count and none repeats (DirectML
    leaves a repeat undefined: the server refuses it).

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count other than 4, indices of another shape or dtype,
            an index out of range or repeated.
    """
    where = case = "max_unpooling"
    data = _input(input, "input", case, where)
    if data.dtype == np.bool_:
        raise ArgumentTypeError(
            "input", f"{where}: input has dtype bool, which DML_OPERATOR_MAX_UNPOOLING does not take"
        )
    positions = _array(indices, "indices", where)
    if positions.dtype.name not in _INDEX_TYPES:
        raise ArgumentTypeError(
            "indices",
            f"{where}: indices has dtype {positions.dtype}; DirectML takes uint32 or uint64",
            allowed=_INDEX_TYPES,
        )
    if data.ndim != 4 or positions.shape != data.shape:
        raise ArgumentValueError(
            "indices" if data.ndim == 4 else "input",
            f"{where}: input of shape {data.shape} and indices of shape {positions.shape}: both are one (N, C, H, W) "
            "shape",
        )
    shape = tuple(_per_axis(output_shape, "output_shape", where, 4, 1))
    total = int(np.prod(shape))
    flat = positions.reshape(-1)
    if flat.size and int(flat.max()) >= total:
        raise ArgumentValueError(
            "indices", f"{where}: index {int(flat.max())} is out of range for output_shape {shape} ({total} elements)"
        )
    if len(np.unique(flat)) != flat.size:
        raise ArgumentValueError("indices", f"{where}: indices repeat a position; each input element has its own")
    desc = operators_pb2.MaxUnpoolingOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(positions),
        output_tensor=tensor_desc((data.dtype, shape)),
    )
    return Call(operators_pb2.OperatorDesc(max_unpooling=desc), (data, positions))


@operator(sends=("roi_pooling",))
def roi_pooling(
    input: npt.ArrayLike, rois: npt.ArrayLike, pooled_size: int | Sequence[int], spatial_scale: float = 1.0
) -> Call:
    """DML_ROI_POOLING_OPERATOR_DESC: the maximum over each of pooled_size (height, width) bins of each region of
    interest of an (N, C, H, W) ``input`` (ONNX MaxRoiPool), giving (regions, C, pooled height, pooled width).

    Each row of ``rois`` is ``(batch index, x1, y1, x2, y2)`` in input coordinates times ``spatial_scale`` (rounded
    half away from zero); bins split the region by integer division as the page gives it; an empty bin is 0.
    DirectML's rules: ``rois`` {regions, 5} of the input's dtype (sent as {1, 1, regions, 5}), float32/float16.

    Raises:
        ArgumentValueError, ArgumentTypeError: an input other than 4-D, rois not (regions, 5), a pooled size below
            1, a negative or non-finite scale, a dtype other than float32/float16 or unlike input's.
    """
    where = case = "roi_pooling"
    data = _float_operand(input, "input", case, where)
    regions = _float_operand(rois, "rois", case, where, like=data)
    if data.ndim != 4:
        raise ArgumentValueError("input", f"{where}: input has shape {data.shape}; ROI_POOLING takes (N, C, H, W)")
    table = regions.reshape(-1, 5) if regions.ndim == 4 and regions.shape[:2] == (1, 1) else regions
    if table.ndim != 2 or table.shape[1] != 5:
        raise ArgumentValueError(
            "rois", f"{where}: rois has shape {regions.shape}; it is (regions, 5): (batch, x1, y1, x2, y2) per row"
        )
    height, width = _per_axis(pooled_size, "pooled_size", where, 2, 1, noun="pooled dimensions (height, width)")
    scale = _scalar(spatial_scale, "spatial_scale", where)
    if not (np.isfinite(scale) and scale >= 0):
        raise ArgumentValueError("spatial_scale", f"{where}: spatial_scale = {scale} must be finite and >= 0")
    wire = table.reshape(1, 1, table.shape[0], 5)
    shape = (table.shape[0], data.shape[1], height, width)
    desc = operators_pb2.RoiPoolingOperatorDesc(
        input_tensor=tensor_desc(data),
        roi_tensor=tensor_desc(wire),
        output_tensor=tensor_desc((data.dtype, shape)),
        spatial_scale=scale,
        pooled_size=operators_pb2.Size2D(width=width, height=height),
    )
    return Call(operators_pb2.OperatorDesc(roi_pooling=desc), (data, wire))
