"""What Client and AsyncClient share: settings to a channel to a transport, and every RPC method, written once as a
descriptor over a pure ``_calls`` function (a blocking method on Client, an awaited one on AsyncClient)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, ClassVar, Generic, ParamSpec, TypeVar, overload

import numpy as np

from dmlrpc import _calls
from dmlrpc._channel import (
    STREAM_THRESHOLD_BYTES,
    TLS,
    KeepAlive,
    LoadBalancing,
    RetryPolicy,
    channel_options,
    open_channel,
    resolve_tls,
)
from dmlrpc._transport import AsyncTransport, Transport
from dmlrpc.errors import ArgumentValueError
from dmlrpc.handles import AsyncCompiledOperator, AsyncResidentTensor, CompiledOperator, ResidentTensor

__all__ = ["BaseClient"]

P = ParamSpec("P")
T = TypeVar("T")
TransportT = TypeVar("TransportT", Transport, AsyncTransport)
_Awaited = Coroutine[Any, Any, T]


class _Bound(Generic[P]):
    """A client method made from a pure call builder: ``client.name(*args)`` is ``transport.invoke(build(*args))``,
    which blocks on a ``Transport`` and is awaited on an ``AsyncTransport``."""

    def __init__(self, build: Callable[P, _calls.Call[Any]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    def _bind(self, client: BaseClient[Any]) -> Callable[..., Any]:
        build, invoke = self._build, client._transport.invoke

        def method(*args: Any, **kwargs: Any) -> Any:
            return invoke(build(*args, **kwargs))

        method.__name__ = method.__qualname__ = self._name
        method.__doc__ = self.__doc__
        # NOTE: kept on the instance, so every later call finds it there and skips this descriptor.
        client.__dict__[self._name] = method
        return method


class Operation(_Bound[P], Generic[P, T]):
    """A method whose results are the same for both clients (arrays, messages, ``None``)."""

    def __init__(self, build: Callable[P, _calls.Call[T]]) -> None:
        super().__init__(build)

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Operation[P, T]: ...
    @overload
    def __get__(self, client: BaseClient[Transport], owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(self, client: BaseClient[AsyncTransport], owner: type[Any]) -> Callable[P, _Awaited[T]]: ...
    def __get__(self, client: BaseClient[Any] | None, owner: type[Any]) -> Any:
        return self if client is None else self._bind(client)


class Executes(_Bound[P]):
    """A method returning outputs, of which kept ones are the client's kind of resident tensor."""

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Executes[P]: ...
    @overload
    def __get__(
        self, client: BaseClient[Transport], owner: type[Any]
    ) -> Callable[P, list[np.ndarray | ResidentTensor | None]]: ...
    @overload
    def __get__(
        self, client: BaseClient[AsyncTransport], owner: type[Any]
    ) -> Callable[P, _Awaited[list[np.ndarray | AsyncResidentTensor | None]]]: ...
    def __get__(self, client: BaseClient[Any] | None, owner: type[Any]) -> Any:
        return self if client is None else self._bind(client)


class Creates(_Bound[P]):
    """A method returning the client's kind of resident tensor."""

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Creates[P]: ...
    @overload
    def __get__(self, client: BaseClient[Transport], owner: type[Any]) -> Callable[P, ResidentTensor]: ...
    @overload
    def __get__(
        self, client: BaseClient[AsyncTransport], owner: type[Any]
    ) -> Callable[P, _Awaited[AsyncResidentTensor]]: ...
    def __get__(self, client: BaseClient[Any] | None, owner: type[Any]) -> Any:
        return self if client is None else self._bind(client)


class Compiles(_Bound[P]):
    """A method returning the client's kind of compiled operator."""

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Compiles[P]: ...
    @overload
    def __get__(self, client: BaseClient[Transport], owner: type[Any]) -> Callable[P, CompiledOperator]: ...
    @overload
    def __get__(
        self, client: BaseClient[AsyncTransport], owner: type[Any]
    ) -> Callable[P, _Awaited[AsyncCompiledOperator]]: ...
    def __get__(self, client: BaseClient[Any] | None, owner: type[Any]) -> Any:
        return self if client is None else self._bind(client)


class BaseClient(Generic[TransportT]):
    """The settings and operations of both clients.

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

    _transport: TransportT
    #: Whether the channel the client opens is a grpc.aio one.
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
        owns_channel = channel is None
        if channel is None:
            if target is None:
                raise ArgumentValueError("target", "Client: give a target address or a channel")
            security = resolve_tls(tls)
            arguments = channel_options(
                retry=retry, keepalive=keepalive, load_balancing=load_balancing, tls=security, extra=options
            )
            channel = open_channel(target, tls=security, options=arguments, asynchronous=self._asynchronous)
        self._transport = self._drive(
            channel,
            owns_channel=owns_channel,
            timeout=timeout,
            token=token,
            stream_threshold_bytes=stream_threshold_bytes,
        )

    def _drive(self, channel: Any, **settings: Any) -> TransportT:
        """This client's transport over ``channel``."""
        raise NotImplementedError

    @property
    def timeout(self) -> float | None:
        """The default deadline in seconds for each call (``None``: no deadline)."""
        return self._transport.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._transport.timeout = value

    @property
    def client_id(self) -> str:
        """The random id that scopes this client's resident tensors on a server without auth."""
        return self._transport.client_id

    @property
    def stream_threshold_bytes(self) -> int:
        """Calls with a buffer larger than this go over ExecuteStream."""
        return self._transport.stream_threshold_bytes

    @stream_threshold_bytes.setter
    def stream_threshold_bytes(self, value: int) -> None:
        self._transport.stream_threshold_bytes = value

    execute = Executes(_calls.execute)
    upload = Creates(_calls.upload)
    allocate = Creates(_calls.allocate)
    read_tensor = Operation(_calls.read_tensor)
    release_tensor = Operation(_calls.release_tensor)
    compile = Compiles(_calls.compile_target)
    get_capabilities = Operation(_calls.get_capabilities)
