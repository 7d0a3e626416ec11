"""What Client and AsyncClient share: the channel they open, the stubs, call metadata, deadlines, the path choice."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, ClassVar

from dmlrpc._base import (
    CREATE_TENSOR,
    EXECUTE_MANY,
    EXECUTE_STREAM,
    READ_TENSOR,
    InputValue,
    PreparedCall,
    prepare_execute,
)
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
from dmlrpc.errors import ArgumentValueError
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc

#: Call metadata naming this client (scopes its resident tensors where the server has no auth).
CLIENT_ID_KEY = "dmlrpc-client-id"


class ClientCore:
    """The transport set-up of both clients.

    Args:
        target: server address: ``"localhost:50051"``, ``"dns:///dmlrpc.ns.svc:50051"`` (every address the name
            resolves to, balanced round-robin), ``"ipv4:10.0.0.1:50051,10.0.0.2:50051"``. Ignored with ``channel``.
        channel: an existing channel to use (blocking for Client, grpc.aio for AsyncClient); the client does not
            close a channel it did not create.
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
    """

    _asynchronous: ClassVar[bool] = False

    def __init__(
        self,
        target: str | None = None,
        *,
        channel: Any = None,
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
                raise ArgumentValueError("target", "Client: give a target address or a channel")
            security = resolve_tls(tls)
            arguments = channel_options(
                retry=retry, keepalive=keepalive, load_balancing=load_balancing, tls=security, extra=options
            )
            channel = open_channel(target, tls=security, options=arguments, asynchronous=self._asynchronous)
            self._owns_channel = True
        else:
            self._owns_channel = False
        self._channel = channel
        self._stub = service_pb2_grpc.DirectMLServiceStub(channel)
        # ExecuteStream moves wire bytes: the chunks are written and read without protobuf copies (dmlrpc._wire).
        self._execute_stream: Any = channel.stream_stream(EXECUTE_STREAM)
        self._create_tensor: Any = channel.stream_unary(
            CREATE_TENSOR, response_deserializer=service_pb2.ResidentTensor.FromString
        )
        self._read_tensor: Any = channel.unary_stream(
            READ_TENSOR, request_serializer=service_pb2.ReadTensorRequest.SerializeToString
        )
        self._execute_many: Any = channel.stream_stream(
            EXECUTE_MANY, response_deserializer=service_pb2.ExecuteManyResponse.FromString
        )
        #: ExecuteMany's default window: the server's Limits.max_stream_items_in_flight, asked for once.
        self._window: int | None = None
        self.timeout = timeout
        # The random client id scopes this client's resident tensors on a server without auth (see the protocol).
        self.client_id = uuid.uuid4().hex
        self._metadata = (*call_metadata(token), (CLIENT_ID_KEY, self.client_id))
        self.stream_threshold_bytes = stream_threshold_bytes

    def _timeout(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout

    def _prepare(
        self,
        operator_desc: operators_pb2.OperatorDesc,
        inputs: Sequence[InputValue],
        stream: bool | None,
        keep: bool | Sequence[int] | None = None,
        execution_flags: int = 0,
    ) -> tuple[PreparedCall, bool]:
        """The encoded call, and whether it goes over ExecuteStream (never with resident tensors)."""
        prepared = prepare_execute(operator_desc, inputs, keep, execution_flags)
        if prepared.resident:
            if stream:
                raise ArgumentValueError(
                    "stream", "resident tensors travel over Execute, not ExecuteStream: leave stream unset"
                )
            return prepared, False
        if stream is None:
            stream = prepared.largest_buffer > self.stream_threshold_bytes
        return prepared, stream


__all__ = ["ClientCore"]
