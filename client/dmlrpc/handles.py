"""Handles to what the server keeps: resident tensors and compiled operators, each holding the transport it was
made by (blocking or asyncio), never a client (one given a client takes the client's transport)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from dmlrpc import _calls
from dmlrpc._base import InputValue, Resident, _binding, _input_buffer, _layout, kept_outputs
from dmlrpc.codec import Described, TensorLayout
from dmlrpc.errors import ArgumentValueError, NotFoundError
from dmlrpc.v1 import service_pb2, tensor_pb2

__all__ = ["AsyncCompiledOperator", "AsyncResidentTensor", "CompiledOperator", "ResidentTensor"]

T = TypeVar("T")
_OWNED = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML


class Invoker(Protocol):
    """A blocking transport: sends a call and returns its results."""

    def invoke(self, call: _calls.Call[T]) -> T: ...


class AsyncInvoker(Protocol):
    """An asyncio transport: sends a call and returns its results, awaited."""

    async def invoke(self, call: _calls.Call[T]) -> T: ...


class Driving(Protocol):
    """A blocking client (``Client``): the handle takes its transport."""

    @property
    def _transport(self) -> Invoker: ...


class AsyncDriving(Protocol):
    """An asyncio client (``AsyncClient``): the handle takes its transport."""

    @property
    def _transport(self) -> AsyncInvoker: ...


def _transport_of(owner: object) -> Any:
    """The transport a handle holds: ``owner``'s, when ``owner`` is a client."""
    return getattr(owner, "_transport", owner)


class _Handle(Resident, Described):
    def __init__(self, handle: str, desc: tensor_pb2.TensorDesc) -> None:
        self.handle = handle
        self.desc = desc

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.handle!r}, shape={self.shape}, dtype={self.dtype})"


class ResidentTensor(_Handle):
    """A tensor kept on the server (in device memory on a GPU server): pass it to ``execute`` in place of an array,
    read it with ``numpy()``, free it with ``release()`` or a ``with`` block. It belongs to the client that made it
    (or to its token), and expires after the server's idle time."""

    def __init__(self, transport: Invoker | Driving, handle: str, desc: tensor_pb2.TensorDesc) -> None:
        super().__init__(handle, desc)
        self._transport: Invoker = _transport_of(transport)

    def numpy(self, *, timeout: float | None = None) -> np.ndarray:
        """Read the tensor back (streamed): an owned array with the tensor's shape and dtype."""
        return self._transport.invoke(_calls.read_tensor(self, timeout=timeout))

    def release(self, *, timeout: float | None = None) -> None:
        """Free it on the server; later use answers NOT_FOUND."""
        self._transport.invoke(_calls.release_tensor(self, timeout=timeout))

    def __enter__(self) -> ResidentTensor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(NotFoundError):  # already released or expired
            self.release()


class AsyncResidentTensor(_Handle):
    """``ResidentTensor`` for ``AsyncClient``: ``await t.numpy()``, ``await t.release()``, ``async with``."""

    def __init__(self, transport: AsyncInvoker | AsyncDriving, handle: str, desc: tensor_pb2.TensorDesc) -> None:
        super().__init__(handle, desc)
        self._transport: AsyncInvoker = _transport_of(transport)

    async def numpy(self, *, timeout: float | None = None) -> np.ndarray:
        return await self._transport.invoke(_calls.read_tensor(self, timeout=timeout))

    async def release(self, *, timeout: float | None = None) -> None:
        await self._transport.invoke(_calls.release_tensor(self, timeout=timeout))

    async def __aenter__(self) -> AsyncResidentTensor:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with contextlib.suppress(NotFoundError):
            await self.release()


class _Compiled:
    def __init__(self, compiled: service_pb2.CompiledOperator) -> None:
        self.handle = compiled.handle
        self.input_descs = list(compiled.input_descs)
        self.output_descs = list(compiled.output_descs)
        self._inputs = [_layout(d.buffer, f"input_descs[{i}]") for i, d in enumerate(self.input_descs)]
        self._outputs: list[TensorLayout | None] = [
            _layout(d.buffer, f"output_descs[{i}]") for i, d in enumerate(self.output_descs)
        ]
        self._owned = [bool(d.buffer.flags & _OWNED) for d in self.input_descs]

    def request(self, inputs: Sequence[InputValue], keep: bool | Sequence[int] | None) -> service_pb2.DispatchRequest:
        """The DispatchRequest: one value per input that is not owned (owned inputs were bound at compile time)."""
        wanted = [i for i, owned in enumerate(self._owned) if not owned]
        if len(inputs) != len(wanted):
            raise ArgumentValueError(
                "inputs",
                f"this compiled operator takes {len(wanted)} inputs; got {len(inputs)}",
                allowed=(str(len(wanted)),),
            )
        bindings = [service_pb2.BindingDesc() for _ in self._inputs]
        for index, value in zip(wanted, inputs, strict=True):
            if value is None:
                continue
            if isinstance(value, Resident):
                bindings[index] = _binding(value.handle)
            else:
                data = (
                    value
                    if isinstance(value, bytes)
                    else _input_buffer(
                        value, self.input_descs[index].buffer, f"inputs[{index}]", f"input_descs[{index}]"
                    )
                )
                bindings[index] = _binding(data)
        return service_pb2.DispatchRequest(
            handle=self.handle, inputs=bindings, keep_outputs=kept_outputs(keep, self._outputs)
        )

    def _dispatch(
        self, inputs: Sequence[InputValue], keep: bool | Sequence[int] | None, timeout: float | None
    ) -> _calls.Call[list[Any]]:
        return _calls.dispatch(self.request(inputs, keep), self._outputs, timeout)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.handle!r}, inputs={len(self.input_descs)}, outputs={len(self.output_descs)})"
        )


class CompiledOperator(_Compiled):
    """An operator or graph compiled on the server: call it with one array (or resident tensor) per input; it
    returns one array per output. Release it with ``release()`` or a ``with`` block; it expires when idle."""

    def __init__(self, transport: Invoker | Driving, compiled: service_pb2.CompiledOperator) -> None:
        super().__init__(compiled)
        self._transport: Invoker = _transport_of(transport)

    def __call__(
        self, *inputs: InputValue, keep: bool | Sequence[int] | None = None, timeout: float | None = None
    ) -> list[np.ndarray | ResidentTensor | None]:
        return self._transport.invoke(self._dispatch(inputs, keep, timeout))

    def release(self, *, timeout: float | None = None) -> None:
        self._transport.invoke(_calls.release_compiled(self.handle, timeout))

    def publish(self, model_name: str, *, max_batch_size: int = 0, timeout: float | None = None) -> str:
        """Serve it as the Open Inference Protocol model ``model_name`` on the same server (any OIP client, e.g.
        ``tritonclient``, can then run it) until it is released or expires; the model version ("1")."""
        return self._transport.invoke(_calls.publish_model(self.handle, model_name, max_batch_size, timeout))

    def __enter__(self) -> CompiledOperator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(NotFoundError):
            self.release()


class AsyncCompiledOperator(_Compiled):
    """``CompiledOperator`` for ``AsyncClient``: ``await op(x)``, ``await op.release()``, ``async with``."""

    def __init__(self, transport: AsyncInvoker | AsyncDriving, compiled: service_pb2.CompiledOperator) -> None:
        super().__init__(compiled)
        self._transport: AsyncInvoker = _transport_of(transport)

    async def __call__(
        self, *inputs: InputValue, keep: bool | Sequence[int] | None = None, timeout: float | None = None
    ) -> list[np.ndarray | AsyncResidentTensor | None]:
        return await self._transport.invoke(self._dispatch(inputs, keep, timeout))

    async def release(self, *, timeout: float | None = None) -> None:
        await self._transport.invoke(_calls.release_compiled(self.handle, timeout))

    async def publish(self, model_name: str, *, max_batch_size: int = 0, timeout: float | None = None) -> str:
        """``CompiledOperator.publish``."""
        return await self._transport.invoke(_calls.publish_model(self.handle, model_name, max_batch_size, timeout))

    async def __aenter__(self) -> AsyncCompiledOperator:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with contextlib.suppress(NotFoundError):
            await self.release()
