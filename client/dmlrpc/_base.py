"""The transport-free half of both clients: requests from descs and arrays, arrays from responses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import TensorLayout, decode, encode
from dmlrpc.schema import desc_case, tensor_fields
from dmlrpc.v1 import operators_pb2, service_pb2

#: Binding input: an array (laid out per its tensor desc), raw buffer bytes, or None for an absent tensor.
InputValue = npt.ArrayLike | bytes | None


@dataclass(frozen=True)
class PreparedCall:
    request: service_pb2.ExecuteRequest
    outputs: tuple[TensorLayout | None, ...]


def prepare_execute(operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[InputValue]) -> PreparedCall:
    """Encode ``inputs`` per the desc's input tensor descs and note how to decode its outputs."""
    case = desc_case(operator_desc)
    desc = getattr(operator_desc, case)
    input_fields, output_fields = tensor_fields(desc.DESCRIPTOR)
    if len(inputs) != len(input_fields):
        names = ", ".join(f.name for f in input_fields)
        raise ValueError(f"{case} takes {len(input_fields)} inputs ({names}); got {len(inputs)}")
    bindings = []
    for field, value in zip(input_fields, inputs, strict=True):
        if value is None or not desc.HasField(field.name):
            if value is not None:
                raise ValueError(f"{case}.{field.name} is unset, so its input must be None")
            bindings.append(service_pb2.BindingDesc())
            continue
        tensor = getattr(desc, field.name)
        data = value if isinstance(value, bytes) else encode(value, _layout(tensor.buffer, f"{case}.{field.name}"))
        bindings.append(service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=data)))
    outputs = tuple(
        _layout(getattr(desc, f.name).buffer, f"{case}.{f.name}") if desc.HasField(f.name) else None
        for f in output_fields
    )
    return PreparedCall(service_pb2.ExecuteRequest(operator_desc=operator_desc, inputs=bindings), outputs)


def _layout(buffer: object, name: str) -> TensorLayout:
    try:
        return TensorLayout.of(buffer)  # type: ignore[arg-type]
    except KeyError:
        raise TypeError(f"{name} has a data type NumPy cannot hold; pass its buffer as bytes") from None


def decode_outputs(
    response: service_pb2.ExecuteResponse, layouts: Sequence[TensorLayout | None]
) -> list[np.ndarray | None]:
    """Read-only arrays viewing the response's output buffers (no copy), ``None`` for absent outputs."""
    results: list[np.ndarray | None] = []
    for binding, layout in zip(response.outputs, layouts, strict=False):
        if layout is None or binding.WhichOneof("binding") != "buffer":
            results.append(None)
            continue
        results.append(decode(binding.buffer.data, layout))
    return results
