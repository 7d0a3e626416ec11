"""Resident tensors: tensors kept on the server's device between calls, owned by their creator, bounded, expiring."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import onnxruntime as ort

from dmlrpc.codec import TensorLayout
from dmlrpc_server.errors import NotFound, ResourceExhausted
from dmlrpc_server.runtime.process import check_worker, new_handle


@dataclass(frozen=True)
class Device:
    """Where resident tensors live: host memory (CPU provider) or the GPU provider's device memory (OrtValues)."""

    #: ONNX Runtime's OrtValue device name: "cpu", "cuda" or "dml".
    kind: str = "cpu"
    device_id: int = 0

    @property
    def on_host(self) -> bool:
        return self.kind == "cpu"

    def upload(self, array: np.ndarray) -> np.ndarray | ort.OrtValue:
        contiguous = np.ascontiguousarray(array)
        if self.on_host:
            return contiguous
        return ort.OrtValue.ortvalue_from_numpy(contiguous, self.kind, self.device_id)

    def download(self, value: np.ndarray | ort.OrtValue) -> np.ndarray:
        return value if isinstance(value, np.ndarray) else value.numpy()


@dataclass
class Resident:
    """One resident tensor: its logical array (host ndarray or device OrtValue), packed, with its desc."""

    handle: str
    owner: str
    layout: TensorLayout
    desc_bytes: bytes
    value: np.ndarray | ort.OrtValue
    last_used: float = field(default_factory=time.monotonic)

    @property
    def nbytes(self) -> int:
        return self.layout.packed_bytes

    def matches(self, layout: TensorLayout) -> bool:
        """Whether it can be bound where ``layout`` is declared (same data type and sizes)."""
        return self.layout.dtype == layout.dtype and tuple(self.layout.sizes) == tuple(layout.sizes)


class ResidentStore:
    """Resident tensors by handle, each visible only to its owner, within per-owner and total quotas.

    Quotas are checked by ``reserve`` before any allocation; an idle tensor expires after ``idle_seconds`` (swept
    on every access and by the server's periodic sweep). Thread-safe: calls run on the event loop and on workers.
    """

    def __init__(
        self,
        *,
        tensors_per_owner: int,
        bytes_per_owner: int,
        bytes_total: int,
        idle_seconds: float,
        tensors_total: int = 16384,
        device: Device | None = None,
    ) -> None:
        self.tensors_per_owner = tensors_per_owner
        self.bytes_per_owner = bytes_per_owner
        self.bytes_total = bytes_total
        self.tensors_total = tensors_total
        self.idle_seconds = idle_seconds
        self.device = device or Device()
        self._tensors: dict[str, Resident] = {}
        self._reserved: dict[str, tuple[int, int]] = {}  # owner -> (tensors, bytes) reserved, not yet added
        self._lock = threading.Lock()

    # -- accounting ---------------------------------------------------------------------------------------------

    def _usage(self, owner: str) -> tuple[int, int]:
        count = total = 0
        for tensor in self._tensors.values():
            if tensor.owner == owner:
                count += 1
                total += tensor.nbytes
        reserved_count, reserved_bytes = self._reserved.get(owner, (0, 0))
        return count + reserved_count, total + reserved_bytes

    def _all_bytes(self) -> int:
        return sum(t.nbytes for t in self._tensors.values()) + sum(b for _, b in self._reserved.values())

    def reserve(self, owner: str, nbytes: int, count: int = 1) -> Reservation:
        """Claim room for ``count`` tensors of ``nbytes`` in total, or raise RESOURCE_EXHAUSTED naming the quota."""
        with self._lock:
            self._sweep_locked(time.monotonic())
            tensors, used = self._usage(owner)
            if tensors + count > self.tensors_per_owner:
                raise ResourceExhausted(
                    f"resident tensor quota: this caller holds {tensors} of {self.tensors_per_owner} "
                    "(--resident-tensors-per-caller); release some or raise it"
                )
            if used + nbytes > self.bytes_per_owner:
                raise ResourceExhausted(
                    f"resident tensor quota: {used} + {nbytes} bytes is over this caller's {self.bytes_per_owner} "
                    "(--resident-bytes-per-caller); release some or raise it"
                )
            everyone = self._all_bytes()
            if everyone + nbytes > self.bytes_total:
                raise ResourceExhausted(
                    f"resident tensor memory: {everyone} + {nbytes} bytes is over --resident-bytes-total "
                    f"({self.bytes_total}) for all callers; release some or raise it to allow more"
                )
            held = len(self._tensors) + sum(c for c, _ in self._reserved.values())
            if held + count > self.tensors_total:
                raise ResourceExhausted(
                    f"resident tensors: the server holds {held} for all callers, the most --resident-tensors-total "
                    f"({self.tensors_total}) allows; release some or raise it to allow more"
                )
            reserved_count, reserved_bytes = self._reserved.get(owner, (0, 0))
            self._reserved[owner] = (reserved_count + count, reserved_bytes + nbytes)
        return Reservation(self, owner, count, nbytes)

    def _unreserve(self, owner: str, count: int, nbytes: int) -> None:
        with self._lock:
            reserved_count, reserved_bytes = self._reserved.get(owner, (0, 0))
            remaining = (reserved_count - count, reserved_bytes - nbytes)
            if remaining == (0, 0):
                self._reserved.pop(owner, None)
            else:
                self._reserved[owner] = remaining

    # -- tensors ------------------------------------------------------------------------------------------------

    def _add(self, owner: str, layout: TensorLayout, desc_bytes: bytes, value: np.ndarray | ort.OrtValue) -> Resident:
        handle = new_handle()
        tensor = Resident(handle, owner, layout, desc_bytes, value)
        with self._lock:
            self._tensors[handle] = tensor
        return tensor

    def get(self, owner: str, handle: str, path: str = "handle") -> Resident:
        """The caller's tensor, touched; NOT_FOUND for an unknown, released, expired or another caller's handle."""
        now = time.monotonic()
        with self._lock:
            self._sweep_locked(now)
            tensor = self._tensors.get(handle)
            if tensor is None or tensor.owner != owner:
                # The same answer for another caller's handle: existence is not disclosed.
                raise _not_found(handle, path)
            tensor.last_used = now
            return tensor

    def release(self, owner: str, handle: str) -> None:
        with self._lock:
            tensor = self._tensors.get(handle)
            if tensor is None or tensor.owner != owner:
                raise _not_found(handle, "handle")
            del self._tensors[handle]

    def sweep(self) -> int:
        """Release every tensor idle for longer than ``idle_seconds``; returns how many."""
        with self._lock:
            return self._sweep_locked(time.monotonic())

    def _sweep_locked(self, now: float) -> int:
        expired = [h for h, t in self._tensors.items() if now - t.last_used > self.idle_seconds]
        for handle in expired:
            del self._tensors[handle]
        return len(expired)

    def clear(self) -> None:
        with self._lock:
            self._tensors.clear()

    @property
    def held(self) -> tuple[int, int]:
        """(tensors, bytes) held by everyone."""
        with self._lock:
            return len(self._tensors), sum(t.nbytes for t in self._tensors.values())

    def __iter__(self) -> Iterator[Resident]:
        with self._lock:
            return iter(list(self._tensors.values()))


def _not_found(handle: str, path: str) -> NotFound:
    """NOT_FOUND for a handle unknown here, or FAILED_PRECONDITION (raised) when another worker made it."""
    check_worker(handle, path, "resident tensor")
    return NotFound(f"{path}: no resident tensor {handle!r} (released, expired or never created)")


@dataclass
class Reservation:
    """Room claimed in a store: ``add`` turns it into tensors; leaving the ``with`` block frees what was not used."""

    store: ResidentStore
    owner: str
    count: int
    nbytes: int

    def add(self, layout: TensorLayout, desc_bytes: bytes, value: np.ndarray | ort.OrtValue) -> Resident:
        nbytes = layout.packed_bytes
        tensor = self.store._add(self.owner, layout, desc_bytes, value)
        self.store._unreserve(self.owner, 1, nbytes)
        self.count -= 1
        self.nbytes -= nbytes
        return tensor

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.count or self.nbytes:
            self.store._unreserve(self.owner, self.count, self.nbytes)
            self.count = self.nbytes = 0
