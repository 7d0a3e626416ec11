"""Compiled operators and graphs in the SDK: compile once, call many times with new arrays."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from dmlrpc._base import InputValue, Resident, _binding, _input_buffer, _layout, decode_outputs, kept_outputs
from dmlrpc.codec import TensorLayout
from dmlrpc.errors import ArgumentValueError, NotFoundError
from dmlrpc.graph import Graph
from dmlrpc.schema import desc_case, tensor_fields
from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2, tensor_pb2

if TYPE_CHECKING:
    from dmlrpc.aio import AsyncClient
    from dmlrpc.client import Client
    from dmlrpc.resident import AsyncResidentTensor, ResidentTensor

__all__ = ["AsyncCompiledOperator", "CompiledOperator"]

_OWNED = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML


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

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.handle!r}, inputs={len(self.input_descs)}, outputs={len(self.output_descs)})"
        )


class CompiledOperator(_Compiled):
    """An operator or graph compiled on the server: call it with one array (or resident tensor) per input; it
    returns one array per output. Release it with ``release()`` or a ``with`` block; it expires when idle."""

    def __init__(self, client: Client, compiled: service_pb2.CompiledOperator) -> None:
        super().__init__(compiled)
        self._client = client

    def __call__(
        self, *inputs: InputValue, keep: bool | Sequence[int] | None = None, timeout: float | None = None
    ) -> list[np.ndarray | ResidentTensor | None]:
        request = self.request(inputs, keep)
        response = self._client._dispatch(request, timeout)
        return _results(response, self._outputs, self._client)

    def release(self, *, timeout: float | None = None) -> None:
        self._client._release_compiled(self.handle, timeout)

    def __enter__(self) -> CompiledOperator:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        with contextlib.suppress(NotFoundError):
            self.release()


class AsyncCompiledOperator(_Compiled):
    """``CompiledOperator`` for ``AsyncClient``: ``await op(x)``, ``await op.release()``, ``async with``."""

    def __init__(self, client: AsyncClient, compiled: service_pb2.CompiledOperator) -> None:
        super().__init__(compiled)
        self._client = client

    async def __call__(
        self, *inputs: InputValue, keep: bool | Sequence[int] | None = None, timeout: float | None = None
    ) -> list[np.ndarray | AsyncResidentTensor | None]:
        request = self.request(inputs, keep)
        response = await self._client._dispatch(request, timeout)
        return _results(response, self._outputs, self._client)

    async def release(self, *, timeout: float | None = None) -> None:
        await self._client._release_compiled(self.handle, timeout)

    async def __aenter__(self) -> AsyncCompiledOperator:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        with contextlib.suppress(NotFoundError):
            await self.release()


def _results(response: service_pb2.ExecuteResponse, layouts: Sequence[TensorLayout | None], client: Any) -> list[Any]:
    decoded = decode_outputs(response, layouts)
    return [
        client._resident(binding.resident.handle, binding.resident.desc)
        if binding.WhichOneof("binding") == "resident"
        else output
        for binding, output in zip(response.outputs, decoded, strict=False)
    ]


def compile_operator_request(
    operator_desc: operators_pb2.OperatorDesc, owned: Sequence[npt.ArrayLike | None] | None
) -> service_pb2.CompileOperatorRequest:
    """The CompileOperatorRequest: the owned inputs' arrays encoded per their descs."""
    case = desc_case(operator_desc)
    desc = getattr(operator_desc, case)
    fields, _ = tensor_fields(desc.DESCRIPTOR)
    descs = [getattr(desc, f.name) if desc.HasField(f.name) else None for f in fields if not f.array]
    return service_pb2.CompileOperatorRequest(operator_desc=operator_desc, owned_inputs=_owned(descs, owned))


def compile_graph_request(
    graph: Graph | graph_pb2.GraphDesc, owned: Sequence[npt.ArrayLike | None] | None
) -> service_pb2.CompileGraphRequest:
    """The CompileGraphRequest (owned graph inputs need the node descs: pass them through ``owned`` only with a
    GraphDesc whose input edges you know; a ``Graph``'s inputs are never owned)."""
    graph_desc = graph.desc() if isinstance(graph, Graph) else graph
    if owned:
        raise ArgumentValueError("owned", "owned graph inputs: send a CompileGraphRequest with owned_inputs yourself")
    return service_pb2.CompileGraphRequest(graph_desc=graph_desc)


def _owned(
    descs: Sequence[tensor_pb2.TensorDesc | None], owned: Sequence[npt.ArrayLike | None] | None
) -> list[service_pb2.BindingDesc]:
    if not owned:
        return []
    if len(owned) != len(descs):
        raise ArgumentValueError(
            "owned", f"owned takes one entry per input ({len(descs)}); got {len(owned)}", allowed=(str(len(descs)),)
        )
    bindings = []
    for index, (tensor, value) in enumerate(zip(descs, owned, strict=True)):
        if value is None or tensor is None:
            bindings.append(service_pb2.BindingDesc())
            continue
        bindings.append(_binding(_input_buffer(value, tensor.buffer, f"owned[{index}]", f"inputs[{index}]")))
    return bindings
