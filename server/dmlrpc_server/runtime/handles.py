"""Compiled-operator handles: compiled operators and graphs kept between calls, owned by their creator, bounded,
expiring."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import service_pb2, tensor_pb2
from dmlrpc_server.errors import InvalidArgument, NotFound, ResourceExhausted
from dmlrpc_server.runtime.buffers import Buffer
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.process import check_worker, new_handle


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


class HandleStore:
    """Compiled handles by id, each visible only to its owner, within per-owner count and byte quotas and the
    server-wide totals (without auth an owner is a client-chosen id, so only the totals bound what many ids hold);
    idle ones expire. Thread-safe."""

    def __init__(
        self,
        *,
        handles_per_owner: int,
        bytes_per_owner: int,
        idle_seconds: float,
        handles_total: int = 4096,
        bytes_total: int = 4096 << 20,
    ) -> None:
        self.handles_per_owner = handles_per_owner
        self.bytes_per_owner = bytes_per_owner
        self.handles_total = handles_total
        self.bytes_total = bytes_total
        self.idle_seconds = idle_seconds
        self._handles: dict[str, Handle] = {}
        self._lock = threading.Lock()

    def check_room(self, owner: str, nbytes: int) -> None:
        """Refuse (RESOURCE_EXHAUSTED) before compiling when the caller has no room for one more of ``nbytes``."""
        with self._lock:
            self._sweep_locked(time.monotonic())
            self._check_locked(owner, nbytes)

    def _check_locked(self, owner: str, nbytes: int) -> None:
        mine = [h for h in self._handles.values() if h.owner == owner]
        if len(mine) + 1 > self.handles_per_owner:
            raise ResourceExhausted(
                f"compiled operator quota: this caller holds {len(mine)} of {self.handles_per_owner} "
                "(--compiled-operators-per-caller); release some or raise it"
            )
        used = sum(h.nbytes for h in mine)
        if used + nbytes > self.bytes_per_owner:
            raise ResourceExhausted(
                f"compiled operator quota: {used} + {nbytes} bytes (sessions, constants and owned data) is over this "
                "caller's "
                f"{self.bytes_per_owner} (--compiled-bytes-per-caller); release some or raise it"
            )
        if len(self._handles) + 1 > self.handles_total:
            raise ResourceExhausted(
                f"compiled operators: the server holds {len(self._handles)} for all callers, the most "
                f"--compiled-operators-total ({self.handles_total}) allows; release some or raise it to allow more"
            )
        everyone = sum(h.nbytes for h in self._handles.values())
        if everyone + nbytes > self.bytes_total:
            raise ResourceExhausted(
                f"compiled operators: {everyone} + {nbytes} bytes of constant and owned data is over "
                f"--compiled-bytes-total ({self.bytes_total}) for all callers; release some or raise it to allow more"
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
        entry = Handle(new_handle(), owner, compiled, owned, input_descs, output_descs, nbytes, label)
        with self._lock:
            self._check_locked(owner, nbytes)  # again: another compile may have taken the room meanwhile
            self._handles[entry.handle] = entry
        return entry

    def get(self, owner: str, handle: str) -> Handle:
        """The caller's handle, touched; NOT_FOUND for an unknown, released, expired or another caller's handle."""
        now = time.monotonic()
        with self._lock:
            self._sweep_locked(now)
            entry = self._handles.get(handle)
            if entry is None or entry.owner != owner:
                raise _not_found(handle)
            entry.last_used = now
            return entry

    def release(self, owner: str, handle: str) -> None:
        with self._lock:
            entry = self._handles.get(handle)
            if entry is None or entry.owner != owner:
                raise _not_found(handle)
            del self._handles[handle]

    def sweep(self) -> int:
        with self._lock:
            return self._sweep_locked(time.monotonic())

    def _sweep_locked(self, now: float) -> int:
        expired = [h for h, e in self._handles.items() if now - e.last_used > self.idle_seconds]
        for handle in expired:
            del self._handles[handle]
        return len(expired)

    def clear(self) -> None:
        with self._lock:
            self._handles.clear()

    @property
    def held(self) -> int:
        with self._lock:
            return len(self._handles)


def _not_found(handle: str) -> NotFound:
    """NOT_FOUND for a handle unknown here, or FAILED_PRECONDITION (raised) when another worker made it."""
    check_worker(handle, "handle", "compiled operator")
    return NotFound(f"handle: no compiled operator {handle!r} (released, expired or never compiled)")


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
