"""Typed builders of operator descs from NumPy arrays, shared by Client and AsyncClient."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from google.protobuf import message_factory

from dmlrpc.codec import packed_strides, tensor_desc
from dmlrpc.schema import tensor_fields
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["Call", "Direction", "activation", "element_wise", "scatter_elements", "scatter_nd", "top_k"]

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
    """An operator desc with its input arrays in binding order (``None`` for an absent optional input)."""

    operator_desc: operators_pb2.OperatorDesc
    inputs: tuple[np.ndarray | None, ...]


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for {rank} dimensions")
    return axis % rank


def _as_tensor(array: npt.ArrayLike) -> np.ndarray:
    data = np.asarray(array)
    return data.reshape(1) if data.ndim == 0 else data


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
        k: how many elements to select, 1 <= k <= input.shape[axis].
        axis: the dimension to select along; negative counts from the end.
        direction: "decreasing" (largest first) or "increasing" (smallest first), or an AxisDirection value.
        index_dtype: np.uint32 or np.uint64 for the returned indices.
    """
    data = _as_tensor(input)
    axis = _axis(axis, data.ndim)
    out_shape = list(data.shape)
    out_shape[axis] = k
    resolved = _DIRECTIONS[direction] if isinstance(direction, str) else direction
    desc = operators_pb2.TopK1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_value_tensor=tensor_desc((data.dtype, out_shape)),
        output_index_tensor=tensor_desc((index_dtype, out_shape)),
        axis=axis,
        k=k,
        axis_direction=resolved,  # type: ignore[arg-type]
    )
    return Call(operators_pb2.OperatorDesc(top_k1=desc), (data,))


def scatter_elements(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    axis: int = 0,
) -> Call:
    """DML_SCATTER_ELEMENTS_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at ``indices`` along
    ``axis`` (as ``numpy.put_along_axis``). All three arrays have the same number of dimensions."""
    data, index_array, update_array = _as_tensor(input), _as_tensor(indices), _as_tensor(updates)
    desc = operators_pb2.ScatterElementsOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        updates_tensor=tensor_desc(update_array.astype(data.dtype, copy=False)),
        output_tensor=tensor_desc(data),
        axis=_axis(axis, data.ndim),
    )
    return Call(operators_pb2.OperatorDesc(scatter_elements=desc), (data, index_array, update_array))


def scatter_nd(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    *,
    input_dimension_count: int | None = None,
    indices_dimension_count: int | None = None,
) -> Call:
    """DML_SCATTER_ND_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at the index tuples in the
    last dimension of ``indices`` (as ONNX ScatterND).

    The arrays may have different ranks, as in ONNX: they are padded with leading 1s to one dimension count
    and the dimension counts default to the arrays' own ranks. Pass the counts explicitly to send arrays that
    already share a dimension count as they are.
    """
    data, index_array, update_array = _as_tensor(input), _as_tensor(indices), _as_tensor(updates)
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
    return Call(operators_pb2.OperatorDesc(scatter_nd=desc), (data, index_array, update_array))


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
    (DirectML's way). The output has the broadcast shape and the first input's data type (UINT8 for the
    comparisons, IS_NAN, IS_INFINITY and BIT_COUNT), unless ``output_dtype`` says otherwise. ``attributes`` are
    the desc's other fields by their proto names; ``scale_bias=(scale, bias)`` and
    ``fused_activation=activation("relu", ...).operator_desc`` are accepted as shown.
    """
    output = None if output_dtype is None else np.dtype(output_dtype)
    if output is None and name.lower() in _BOOLEAN_RESULTS:
        output = np.dtype(np.uint8)
    return _single_output(f"element_wise_{name.lower()}", inputs, output, attributes)


def activation(name: str, *inputs: npt.ArrayLike | None, **attributes: Any) -> Call:
    """DML_ACTIVATION_<NAME>_OPERATOR_DESC: ``activation("leaky_relu", x, alpha=0.1)``,
    ``activation("softmax1", x, axes=[1])`` (``axis_count`` is filled in). With no inputs, the desc is one to
    use as a fused activation (its tensors unset)."""
    return _single_output(f"activation_{name.lower()}", inputs, None, attributes)


def _single_output(
    case: str, inputs: tuple[npt.ArrayLike | None, ...], output: np.dtype[Any] | None, attributes: dict[str, Any]
) -> Call:
    field = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name.get(case)
    if field is None or field.message_type is None:
        raise ValueError(f"no operator desc named {case!r}")
    message = message_factory.GetMessageClass(field.message_type)()
    if "scale_bias" in attributes and isinstance(attributes["scale_bias"], tuple):
        scale, bias = attributes.pop("scale_bias")
        attributes["scale_bias"] = operators_pb2.ScaleBias(scale=scale, bias=bias)
    if "axes" in attributes and "axis_count" not in attributes:
        attributes["axis_count"] = len(attributes["axes"])
    for key, value in attributes.items():
        if key not in message.DESCRIPTOR.fields_by_name:
            raise ValueError(f"{case} has no field {key!r}")
        target = getattr(message, key)
        if hasattr(target, "CopyFrom"):
            target.CopyFrom(value)
        elif hasattr(target, "extend"):
            target.extend(value)
        else:
            setattr(message, key, value)
    fields, (output_field, *_) = tensor_fields(message.DESCRIPTOR)
    arrays = [None if value is None else _as_tensor(value) for value in inputs]
    if not arrays:
        return Call(_wrap(case, message), ())
    if len(arrays) != len(fields):
        names = ", ".join(f.name for f in fields)
        raise ValueError(f"{case} takes {len(fields)} inputs ({names}); got {len(arrays)}")
    present = [a for a in arrays if a is not None]
    shape = np.broadcast_shapes(*(a.shape for a in present))
    bound: list[np.ndarray | None] = []
    for tensor_field, array in zip(fields, arrays, strict=True):
        if array is None:
            bound.append(None)
            continue
        padded = array.reshape((1,) * (len(shape) - array.ndim) + array.shape)
        strides = [
            0 if size == 1 and full != 1 else stride
            for size, full, stride in zip(padded.shape, shape, packed_strides(padded.shape), strict=True)
        ]
        broadcast = any(size == 1 and full != 1 for size, full in zip(padded.shape, shape, strict=True))
        getattr(message, tensor_field.name).CopyFrom(tensor_desc((padded.dtype, shape), strides if broadcast else None))
        bound.append(np.broadcast_to(padded, shape) if broadcast else padded)
    dtype = output if output is not None else present[0].dtype
    getattr(message, output_field.name).CopyFrom(tensor_desc((dtype, shape)))
    return Call(_wrap(case, message), tuple(bound))


def _wrap(case: str, message: Any) -> operators_pb2.OperatorDesc:
    operator_desc = operators_pb2.OperatorDesc()
    getattr(operator_desc, case).CopyFrom(message)
    return operator_desc
