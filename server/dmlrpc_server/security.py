"""Transport security and caller authentication: TLS/mTLS credentials and the bearer-token gate."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Collection, Sequence
from typing import Any

import grpc

from dmlrpc_server.handlers import Gate
from dmlrpc_server.interceptors import REQUEST_ID_KEY, _request_id
from dmlrpc_server.settings import ServerSettings

#: Metadata key of the bearer token (gRPC lower-cases metadata keys).
AUTHORIZATION_KEY = "authorization"
#: Metadata key of the client's self-chosen id, which scopes its resident tensors when the server has no auth.
CLIENT_ID_KEY = "dmlrpc-client-id"


def bearer_token(metadata: Sequence[tuple[str, str | bytes]] | None) -> bytes | None:
    """The credential of the call's one ``authorization: Bearer <token>`` header (the scheme in any case, spaces
    around the token ignored), or ``None``: no such header, another scheme, or several ``authorization`` headers.

    The one parse both for checking the token and for naming the caller (``caller_identity``): whatever the headers,
    one verified token is one owner. Several headers are refused rather than choosing one, so that no proxy or
    client can make the check read one header and the owner another.
    """
    found: bytes | None = None
    count = 0
    for key, value in metadata or ():
        if key.lower() == AUTHORIZATION_KEY:
            count += 1
            raw = value.encode() if isinstance(value, str) else value
            scheme, _, credential = raw.strip().partition(b" ")
            found = credential.strip() if scheme.lower() == b"bearer" else None
    return found if count == 1 and found else None


def server_credentials(settings: ServerSettings) -> grpc.ServerCredentials | None:
    """TLS credentials from the settings' PEM files (client certificates required when a client CA is set)."""
    if settings.tls_cert_file is None or settings.tls_key_file is None:
        return None
    key = settings.tls_key_file.read_bytes()
    chain = settings.tls_cert_file.read_bytes()
    client_ca = settings.tls_client_ca_file.read_bytes() if settings.tls_client_ca_file is not None else None
    return grpc.ssl_server_credentials(
        [(key, chain)], root_certificates=client_ca, require_client_auth=client_ca is not None
    )


class TokenAuth(Gate):
    """Lets a call through only with one ``authorization: Bearer <token>`` header naming an accepted token.

    Rejected calls get UNAUTHENTICATED from a handler that never runs the method (and never reads past the
    request headers' check). Services named in ``open_services`` (health probes, reflection) pass freely.
    """

    def __init__(self, tokens: Sequence[bytes], open_services: Collection[str] = ()) -> None:
        if not tokens:
            raise ValueError("token authentication needs at least one token")
        self._tokens = tuple(tokens)
        self._open_prefixes = tuple(f"/{service}/" for service in open_services)

    def accepts(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        """Whether the call metadata carries exactly one bearer token, an accepted one (compared in constant time)."""
        presented = bearer_token(metadata)
        matched = False
        for token in self._tokens:  # compare against every token so timing reveals nothing about which matched
            matched |= hmac.compare_digest(presented or b"", token)
        return matched and bool(presented)

    def admits(self, method: str, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        return method.startswith(self._open_prefixes) or self.accepts(metadata)

    def refusing(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        return _refusing(handler)


async def _refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
    # A refusal carries its request id as every failed call does (the error interceptor passes aborts through).
    request_id = _request_id(context.invocation_metadata())
    await context.abort(
        grpc.StatusCode.UNAUTHENTICATED,
        "missing or invalid bearer token: send one `authorization: Bearer <token>` header with an accepted token",
        ((REQUEST_ID_KEY, request_id),),
    )


def _refusing(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """A handler of the same shape as ``handler`` that answers UNAUTHENTICATED and does nothing else."""
    kwargs = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.request_streaming and handler.response_streaming:

        async def refuse_stream_stream(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await _refuse(None, context)
            yield  # pragma: no cover - makes this an async generator

        return grpc.stream_stream_rpc_method_handler(refuse_stream_stream, **kwargs)
    if handler.response_streaming:

        async def refuse_unary_stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await _refuse(request, context)
            yield  # pragma: no cover - makes this an async generator

        return grpc.unary_stream_rpc_method_handler(refuse_unary_stream, **kwargs)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(_refuse, **kwargs)
    return grpc.unary_unary_rpc_method_handler(_refuse, **kwargs)


def caller_identity(metadata: Any, peer: str, *, authenticated: bool) -> str:
    """Who owns the resident tensors a call creates and may bind.

    With bearer-token auth on: the verified token (hashed; the interceptor let the call in only with exactly one,
    read by the same ``bearer_token``), so every connection presenting it shares the tensors whatever the scheme's
    case or spacing. Without auth: the peer's host plus the client's ``dmlrpc-client-id`` metadata (the SDK sends a
    random one per client object); a caller sending none is scoped to its connection (the peer's host and port).
    Without auth a caller picks its own id, so per-caller quotas only keep honest clients apart; the server-wide
    totals bound everyone together.
    """
    if authenticated:
        token = bearer_token(metadata) or b""
        return "token:" + hashlib.sha256(token).hexdigest()
    values = {key.lower(): value for key, value in (metadata or ())}
    host = peer.rsplit(":", 1)[0] if ":" in peer else peer
    client_id = values.get(CLIENT_ID_KEY)
    if client_id:
        return f"client:{host}|{client_id}"
    return f"peer:{peer}"
