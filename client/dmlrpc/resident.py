"""Resident tensors in the SDK: handles to tensors kept on the server, usable wherever an input array is."""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from dmlrpc._base import Resident
from dmlrpc.codec import DTYPE_BY_DATA_TYPE
from dmlrpc.errors import NotFoundError
from dmlrpc.v1 import tensor_pb2

if TYPE_CHECKING:
    from dmlrpc.aio import AsyncClient
    from dmlrpc.client import Client

__all__ = ["AsyncResidentTensor", "ResidentTensor"]


class _Handle(Resident):
    def __init__(self, handle: str, desc: tensor_pb2.TensorDesc) -> None:
        self.handle = handle
        self.desc = desc

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.desc.buffer.sizes)

    @property
    def dtype(self) -> np.dtype[Any]:
        return DTYPE_BY_DATA_TYPE[self.desc.buffer.data_type]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.handle!r}, shape={self.shape}, dtype={self.dtype})"


class ResidentTensor(_Handle):
    """A tensor kept on the server (in device memory on a GPU server): pass it to ``execute`` in place of an array,
    read it with ``numpy()``, free it with ``release()`` or a ``with`` block. It belongs to the client that made it
    (or to its token), and expires after the server's idle time."""

    def __init__(self, client: Client, handle: str, desc: tensor_pb2.TensorDesc) -> None:
        super().__init__(handle, desc)
        self._client = client

    def numpy(self, *, timeout: float | None = None) -> np.ndarray:
        """Read the tensor back (streamed): an owned array with the tensor's shape and dtype."""
        return self._client.read_tensor(self, timeout=timeout)

    def release(self, *, timeout: float | None = None) -> None:
        """Free it on the server; later use answers NOT_FOUND."""
        self._client.release_tensor(self, timeout=timeout)

    def __enter__(self) -> ResidentTensor:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        with contextlib.suppress(NotFoundError):  # already released or expired
            self.release()


class AsyncResidentTensor(_Handle):
    """``ResidentTensor`` for ``AsyncClient``: ``await t.numpy()``, ``await t.release()``, ``async with``."""

    def __init__(self, client: AsyncClient, handle: str, desc: tensor_pb2.TensorDesc) -> None:
        super().__init__(handle, desc)
        self._client = client

    async def numpy(self, *, timeout: float | None = None) -> np.ndarray:
        return await self._client.read_tensor(self, timeout=timeout)

    async def release(self, *, timeout: float | None = None) -> None:
        await self._client.release_tensor(self, timeout=timeout)

    async def __aenter__(self) -> AsyncResidentTensor:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        with contextlib.suppress(NotFoundError):
            await self.release()
