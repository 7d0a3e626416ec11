"""AsyncClient: the asyncio SDK over a grpc.aio channel."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any

import grpc
import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._base import CHANNEL_OPTIONS, InputValue, decode_outputs, prepare_execute
from dmlrpc.errors import from_rpc_error
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc

__all__ = ["AsyncClient"]


class AsyncClient:
    """asyncio dmlrpc client (same methods as ``Client``, awaited).

    Args:
        target: server address such as ``"localhost:50051"`` (ignored when ``channel`` is given).
        channel: an existing channel to use; the client does not close a channel it did not create.
        timeout: default deadline in seconds for each call (``None`` = no deadline).
        options: extra channel options for a channel the client creates.

    Every failed call raises a ``dmlrpc.errors.DmlRpcError`` subclass, never a raw ``grpc.RpcError``.
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        channel: grpc.aio.Channel | None = None,
        timeout: float | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        if channel is None:
            if target is None:
                raise ValueError("give a target address or a channel")
            channel = grpc.aio.insecure_channel(target, options=[*CHANNEL_OPTIONS, *options])
            self._owns_channel = True
        else:
            self._owns_channel = False
        self._channel = channel
        self._stub = service_pb2_grpc.DirectMLServiceStub(channel)
        self.timeout = timeout

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel if this client created it."""
        if self._owns_channel:
            await self._channel.close()

    async def execute(
        self,
        operator_desc: operators_pb2.OperatorDesc,
        inputs: Sequence[InputValue],
        *,
        timeout: float | None = None,
    ) -> list[np.ndarray | None]:
        """Run any operator desc.

        Args:
            operator_desc: the DML_OPERATOR_DESC; its tensor descs say how each buffer is laid out.
            inputs: one value per input tensor field in declaration order: an array (encoded per its desc),
                raw buffer ``bytes``, or ``None`` for an unset optional tensor.
            timeout: deadline in seconds for this call (defaults to the client's).

        Returns:
            One read-only array per output tensor field (``None`` for an unset one), shaped and strided as the
            output desc says.
        """
        prepared = prepare_execute(operator_desc, inputs)
        try:
            response = await self._stub.Execute(prepared.request, timeout=self._timeout(timeout))
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return decode_outputs(response, prepared.outputs)

    async def get_capabilities(self, *, timeout: float | None = None) -> service_pb2.GetCapabilitiesResponse:
        """The server's execution provider, device, feature level, limits and per-operator support."""
        try:
            response: service_pb2.GetCapabilitiesResponse = await self._stub.GetCapabilities(
                service_pb2.GetCapabilitiesRequest(), timeout=self._timeout(timeout)
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return response

    async def top_k(
        self,
        input: npt.ArrayLike,
        k: int,
        axis: int = -1,
        *,
        direction: ops.Direction = "decreasing",
        index_dtype: npt.DTypeLike = np.uint32,
        timeout: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The k largest (``direction="decreasing"``) or smallest elements along ``axis``: (values, indices)."""
        call = ops.top_k(input, k, axis, direction=direction, index_dtype=index_dtype)
        values, indices = await self.execute(call.operator_desc, call.inputs, timeout=timeout)
        assert values is not None and indices is not None
        return values, indices

    async def scatter_elements(
        self,
        input: npt.ArrayLike,
        indices: npt.ArrayLike,
        updates: npt.ArrayLike,
        axis: int = 0,
        *,
        timeout: float | None = None,
    ) -> np.ndarray:
        """A copy of ``input`` with ``updates`` written at ``indices`` along ``axis``."""
        call = ops.scatter_elements(input, indices, updates, axis)
        (output,) = await self.execute(call.operator_desc, call.inputs, timeout=timeout)
        assert output is not None
        return output

    async def scatter_nd(
        self,
        input: npt.ArrayLike,
        indices: npt.ArrayLike,
        updates: npt.ArrayLike,
        *,
        input_dimension_count: int | None = None,
        indices_dimension_count: int | None = None,
        timeout: float | None = None,
    ) -> np.ndarray:
        """A copy of ``input`` with ``updates`` written at the index tuples of ``indices`` (ONNX ScatterND).

        The arrays may differ in rank as in ONNX (see ``dmlrpc.ops.scatter_nd``); the result has ``input``'s shape.
        """
        call = ops.scatter_nd(
            input,
            indices,
            updates,
            input_dimension_count=input_dimension_count,
            indices_dimension_count=indices_dimension_count,
        )
        (output,) = await self.execute(call.operator_desc, call.inputs, timeout=timeout)
        assert output is not None
        return output.reshape(np.shape(input))

    def _timeout(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout
