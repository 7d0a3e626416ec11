"""Resident tensors: tensors kept on the server's device between calls, owned by their creator, bounded, expiring."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import onnxruntime as ort

from dmlrpc.codec import TensorLayout
from dmlrpc_server.runtime import store
from dmlrpc_server.runtime.process import new_handle
from dmlrpc_server.runtime.providers import Provider
from dmlrpc_server.runtime.store import OwnedStore, Quota, Words
from dmlrpc_server.settings import PROVIDERS


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


class ResidentStore(OwnedStore[Resident]):
    """Resident tensors by handle (an ``OwnedStore``), on ``device``: room is reserved before any allocation."""

    words = Words(flag="resident", noun="tensor", memory="resident tensor memory")

    def __init__(self, quota: Quota, device: Device | None = None) -> None:
        super().__init__(quota)
        self.device = device or Device()

    def reserve(self, owner: str, nbytes: int, count: int = 1) -> Reservation:
        """Claim room for ``count`` tensors of ``nbytes`` in total, or raise RESOURCE_EXHAUSTED naming the quota."""
        claimed = super().reserve(owner, nbytes, count)
        return Reservation(self, owner, claimed.count, claimed.nbytes)

    @property
    def held(self) -> tuple[int, int]:
        """(tensors, bytes) held by everyone."""
        return self.usage()


class Reservation(store.Reservation[Resident]):
    """Room claimed for resident tensors: ``add`` keeps one; leaving the ``with`` block frees what was not used."""

    def add(self, layout: TensorLayout, desc_bytes: bytes, value: np.ndarray | ort.OrtValue) -> Resident:
        return self.keep(Resident(new_handle(), self.owner, layout, desc_bytes, value))


def device_of(provider: Provider) -> Device:
    """Where resident tensors live for a provider: CUDA device memory, else host memory.

    DirectML keeps them on the host for now: OrtValues that ONNX Runtime's Python API allocates on the "dml" device
    broke the DirectML device of the test lane (sessions created afterwards failed to build, then runs failed with
    DXGI_ERROR_DEVICE_REMOVED), so device residency there waits for a real adapter to validate it on.
    """
    kinds = {PROVIDERS["cuda"]: "cuda"}
    device_id = int(provider.options.get("device_id", 0))
    return Device(kinds.get(provider.name, "cpu"), device_id)
