"""Stage 3 on the wire: a unary request's bindings as the bytes of each input, checked against the plan."""

from __future__ import annotations

from collections.abc import Sequence

from dmlrpc.v1 import service_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators.base import Plan
from dmlrpc_server.runtime.buffers import Buffer


def unary_buffers(bindings: Sequence[service_pb2.BindingDesc], plan: Plan) -> list[Buffer | None]:
    """The bytes of each unary binding (``None`` for an unset one), tensor arrays expanded in place (``plan.inputs``
    order); checks each is a buffer binding, or a buffer-array binding of the array's length for an array field."""
    buffers: list[Buffer | None] = []
    if not plan.input_arrays:
        for index, binding in enumerate(bindings):
            kind = binding.WhichOneof("binding")
            if kind is None:
                buffers.append(None)
            elif kind != "buffer":
                raise InvalidArgument(f"inputs[{index}]", "a buffer binding is required for this tensor")
            else:
                buffers.append(binding.buffer.data)  # NOTE: upb copies a bytes field on every access: read it once
        return buffers
    if len(bindings) != len(plan.input_arrays):
        raise InvalidArgument(
            "inputs",
            f"{len(bindings)} bindings for {len(plan.input_arrays)} input tensor fields; bind each in order (a "
            "tensor-array field takes one buffer_array)",
        )
    for index, (binding, count) in enumerate(zip(bindings, plan.input_arrays, strict=True)):
        kind = binding.WhichOneof("binding")
        if count is None:
            if kind not in (None, "buffer"):
                raise InvalidArgument(f"inputs[{index}]", "a buffer binding is required for this tensor")
            buffers.append(None if kind is None else binding.buffer.data)
            continue
        if kind != "buffer_array":
            raise InvalidArgument(
                f"inputs[{index}]", f"a tensor-array field takes a buffer_array binding of {count} buffers"
            )
        array = binding.buffer_array
        parts = list(array.bindings)
        if array.binding_count != len(parts):
            raise InvalidArgument(
                f"inputs[{index}].buffer_array.binding_count",
                f"{array.binding_count} differs from the {len(parts)} bindings given",
            )
        if len(parts) != count:
            raise InvalidArgument(
                f"inputs[{index}].buffer_array.bindings", f"{len(parts)} buffers for the array's {count} tensor descs"
            )
        for position, part in enumerate(parts):
            data = part.data
            layout = plan.inputs[len(buffers)]
            if layout is not None and len(data) < layout.total_bytes:
                raise InvalidArgument(
                    f"inputs[{index}].buffer_array.bindings[{position}].data",
                    f"{len(data)} bytes is shorter than the tensor's total_tensor_size_in_bytes ({layout.total_bytes})",
                )
            buffers.append(data)
    return buffers
