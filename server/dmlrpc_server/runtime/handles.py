"""Compiled-operator handles: compiled operators and graphs kept between calls, owned by their creator, bounded,
expiring."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import service_pb2, tensor_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.runtime.buffers import Buffer
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.process import new_handle
from dmlrpc_server.runtime.store import OwnedStore, Words


@dataclass
class Handle:
    """One compiled operator or graph: what runs it, its bound owned inputs and the descs a dispatch binds."""

    handle: str
    owner: str
    compiled: Compiled
    #: Input index -> the owned (initialisation-bound) buffer.
    owned: dict[int, Buffer]
    input_descs: list[tensor_pb2.TensorDesc]
    output_descs: list[tensor_pb2.TensorDesc]
    #: The bytes it holds: owned buffers and constant data.
    nbytes: int
    #: The metrics label of its dispatches: the operator's case, or "graph".
    label: str
    last_used: float = field(default_factory=time.monotonic)

    @functools.cached_property
    def output_desc_bytes(self) -> list[bytes]:
        """The serialized output descs (what kept outputs' ResidentTensors carry), made once."""
        return [desc.SerializeToString() for desc in self.output_descs]

    def bind(self, buffers: Sequence[Buffer | None]) -> list[Buffer | None]:
        """The dispatch's buffers with the owned ones put in place (their dispatch bindings must be unset)."""
        if not self.owned:
            return list(buffers)
        bound = list(buffers)
        for index, data in self.owned.items():
            if index < len(bound):
                if bound[index] is not None:
                    raise InvalidArgument(
                        f"inputs[{index}]",
                        "this input is DML_TENSOR_FLAG_OWNED_BY_DML, bound at compile time: leave it unset",
                    )
                bound[index] = data
        return bound


class HandleStore(OwnedStore[Handle]):
    """Compiled handles by id (an ``OwnedStore``): room is checked before compiling and again when one is kept."""

    words = Words(
        flag="compiled",
        noun="operator",
        bytes_detail=" (sessions, constants and owned data)",
        total_bytes_detail=" of constant and owned data",
        made="compiled",
    )

    def add(
        self,
        owner: str,
        compiled: Compiled,
        owned: dict[int, Buffer],
        input_descs: list[tensor_pb2.TensorDesc],
        output_descs: list[tensor_pb2.TensorDesc],
        nbytes: int,
        label: str,
    ) -> Handle:
        return self.keep(Handle(new_handle(), owner, compiled, owned, input_descs, output_descs, nbytes, label))

    @property
    def held(self) -> int:
        return self.usage()[0]


def owned_buffers(
    bindings: Sequence[service_pb2.BindingDesc], layouts: Sequence[TensorLayout | None], owned: set[int]
) -> dict[int, Buffer]:
    """The owned inputs' buffers from the initialisation bindings (a buffer exactly for each owned input)."""
    if not owned and not any(binding.WhichOneof("binding") for binding in bindings):
        return {}
    if len(bindings) != len(layouts):
        raise InvalidArgument(
            "owned_inputs", f"{len(bindings)} bindings for {len(layouts)} inputs; bind each owned one in order"
        )
    bound: dict[int, Buffer] = {}
    for index, (binding, layout) in enumerate(zip(bindings, layouts, strict=True)):
        kind = binding.WhichOneof("binding")
        if index not in owned:
            if kind is not None:
                raise InvalidArgument(
                    f"owned_inputs[{index}]", "this input is not DML_TENSOR_FLAG_OWNED_BY_DML: leave it unset"
                )
            continue
        if kind != "buffer":
            raise InvalidArgument(
                f"owned_inputs[{index}]", "this input is DML_TENSOR_FLAG_OWNED_BY_DML: bind its buffer here"
            )
        data = binding.buffer.data
        if layout is not None and len(data) < layout.total_bytes:
            raise InvalidArgument(
                f"owned_inputs[{index}].buffer.data",
                f"{len(data)} bytes is shorter than the tensor's total_tensor_size_in_bytes ({layout.total_bytes})",
            )
        bound[index] = data
    return bound
