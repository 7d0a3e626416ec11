"""Client: the blocking SDK over a gRPC channel."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any

import grpc
import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._base import EXECUTE_STREAM, InputValue, StreamedOutputs, decode_outputs, prepare_execute
from dmlrpc._channel import (
    STREAM_THRESHOLD_BYTES,
    TLS,
    KeepAlive,
    LoadBalancing,
    RetryPolicy,
    call_metadata,
    channel_options,
    open_channel,
    resolve_tls,
)
from dmlrpc.errors import from_rpc_error
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc

__all__ = ["Client"]


class Client:
    """Blocking dmlrpc client.

    Args:
        target: server address: ``"localhost:50051"``, ``"dns:///dmlrpc.ns.svc:50051"`` (every address the name
            resolves to, balanced round-robin), ``"ipv4:10.0.0.1:50051,10.0.0.2:50051"``. Ignored with ``channel``.
        channel: an existing channel to use; the client does not close a channel it did not create.
        timeout: default deadline in seconds for each call (``None`` = no deadline).
        tls: ``True`` for TLS verified against the system roots, or a ``dmlrpc.TLS`` (own CA, client certificate
            for mutual TLS); ``None`` for plaintext.
        token: bearer token sent with every call (servers started with --auth-token / --auth-tokens-file).
        retry: gRPC retry policy for UNAVAILABLE (``None`` disables retries).
        keepalive: HTTP/2 keepalive pings (``None`` disables them).
        load_balancing: ``"round_robin"`` over every resolved address, or ``"pick_first"``.
        stream_threshold_bytes: calls with an input or output buffer larger than this go over ExecuteStream
            (chunked, no message size limit, faster for large tensors) instead of unary Execute.
        options: extra channel arguments for a channel the client creates.

    Every failed call raises a ``dmlrpc.errors.DmlRpcError`` subclass, never a raw ``grpc.RpcError``.
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        channel: grpc.Channel | None = None,
        timeout: float | None = None,
        tls: TLS | bool | None = None,
        token: str | None = None,
        retry: RetryPolicy | None = RetryPolicy(),  # noqa: B008 - frozen, so sharing the default is safe
        keepalive: KeepAlive | None = KeepAlive(),  # noqa: B008
        load_balancing: LoadBalancing = "round_robin",
        stream_threshold_bytes: int = STREAM_THRESHOLD_BYTES,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        if channel is None:
            if target is None:
                raise ValueError("give a target address or a channel")
            security = resolve_tls(tls)
            arguments = channel_options(
                retry=retry, keepalive=keepalive, load_balancing=load_balancing, tls=security, extra=options
            )
            channel = open_channel(target, tls=security, options=arguments, asynchronous=False)
            self._owns_channel = True
        else:
            self._owns_channel = False
        self._channel = channel
        self._stub = service_pb2_grpc.DirectMLServiceStub(channel)
        # ExecuteStream moves wire bytes: the chunks are written and read without protobuf copies (dmlrpc._wire).
        self._execute_stream = channel.stream_stream(EXECUTE_STREAM)
        self.timeout = timeout
        self._metadata = call_metadata(token)
        self.stream_threshold_bytes = stream_threshold_bytes

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel if this client created it."""
        if self._owns_channel:
            self._channel.close()

    def execute(
        self,
        operator_desc: operators_pb2.OperatorDesc,
        inputs: Sequence[InputValue],
        *,
        timeout: float | None = None,
        stream: bool | None = None,
    ) -> list[np.ndarray | None]:
        """Run any operator desc.

        Args:
            operator_desc: the DML_OPERATOR_DESC; its tensor descs say how each buffer is laid out.
            inputs: one value per input tensor field in declaration order: an array (encoded per its desc),
                raw buffer ``bytes``, or ``None`` for an unset optional tensor.
            timeout: deadline in seconds for this call (defaults to the client's).
            stream: send over ExecuteStream (``True``), unary Execute (``False``), or decide by size (``None``:
                streamed when an input or output buffer exceeds the client's ``stream_threshold_bytes``).

        Returns:
            One read-only array per output tensor field (``None`` for an unset one), shaped and strided as the
            output desc says.
        """
        prepared = prepare_execute(operator_desc, inputs)
        if stream is None:
            stream = prepared.largest_buffer > self.stream_threshold_bytes
        try:
            if stream:
                outputs = StreamedOutputs(prepared.outputs)
                parts = self._execute_stream(
                    prepared.stream_requests(), timeout=self._timeout(timeout), metadata=self._metadata
                )
                for part in parts:
                    outputs.add(part)
                return outputs.arrays()
            response = self._stub.Execute(prepared.request, timeout=self._timeout(timeout), metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return decode_outputs(response, prepared.outputs)

    def get_capabilities(self, *, timeout: float | None = None) -> service_pb2.GetCapabilitiesResponse:
        """The server's execution provider, device, feature level, limits and per-operator support."""
        try:
            response: service_pb2.GetCapabilitiesResponse = self._stub.GetCapabilities(
                service_pb2.GetCapabilitiesRequest(), timeout=self._timeout(timeout), metadata=self._metadata
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return response

    def top_k(
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
        values, indices = self.execute(call.operator_desc, call.inputs, timeout=timeout)
        assert values is not None and indices is not None
        return values, indices

    def scatter_elements(
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
        (output,) = self.execute(call.operator_desc, call.inputs, timeout=timeout)
        assert output is not None
        return output

    def scatter_nd(
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
        (output,) = self.execute(call.operator_desc, call.inputs, timeout=timeout)
        assert output is not None
        return output.reshape(np.shape(input))

    def _timeout(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout
