"""Channel set-up shared by both clients: TLS, bearer tokens, retries and load balancing (service config), keepalive."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import grpc

from dmlrpc._calls import (
    DISPATCH,
    EXECUTE,
    EXECUTE_MANY,
    EXECUTE_STREAM,
    GET_CAPABILITIES,
    READ_TENSOR,
    SERVICE_NAME,
)
from dmlrpc.errors import ArgumentValueError

#: Calls with a buffer larger than this go over ExecuteStream by default: past a few MiB, chunks of a stream move
#: several times faster through Python gRPC than one large message.
STREAM_THRESHOLD_BYTES = 8 << 20

#: The methods whose call has no effect beyond its answer: the retry policy also retries their CANCELLED. (Every
#: RPC is safe to retry on UNAVAILABLE, which says the call never reached a server.)
PURE_METHODS = (EXECUTE, EXECUTE_STREAM, EXECUTE_MANY, DISPATCH, READ_TENSOR, GET_CAPABILITIES)


@dataclass(frozen=True)
class RetryPolicy:
    """gRPC's own retries (``retryPolicy`` in the service config), not a loop in the SDK.

    A call is retried only while no response has started, with exponential backoff and jitter applied by gRPC;
    requests larger than gRPC's retry buffer (256 KiB by default) are sent once.
    """

    max_attempts: int = 5
    initial_backoff: float = 0.1
    max_backoff: float = 5.0
    backoff_multiplier: float = 2.0
    retryable_status_codes: tuple[str, ...] = ("UNAVAILABLE",)
    #: Retried as well, for the methods whose call has no effect beyond its answer (``PURE_METHODS``): a server
    #: process that stops while it holds calls it has not started (a recycled worker's handover) cancels them, and
    #: sending such a call again can do no harm. gRPC never retries a call its own caller cancelled.
    pure_retryable_status_codes: tuple[str, ...] = ("CANCELLED",)

    def to_json(self, *, pure: bool = False) -> dict[str, Any]:
        codes = self.retryable_status_codes + (self.pure_retryable_status_codes if pure else ())
        return {
            "maxAttempts": self.max_attempts,
            "initialBackoff": f"{self.initial_backoff}s",
            "maxBackoff": f"{self.max_backoff}s",
            "backoffMultiplier": self.backoff_multiplier,
            "retryableStatusCodes": list(dict.fromkeys(codes)),
        }


@dataclass(frozen=True)
class KeepAlive:
    """HTTP/2 pings that keep idle connections open through proxies and find dead ones."""

    #: Seconds between pings (the server accepts one every 10 s at most).
    time: float = 30.0
    #: Seconds to wait for a ping's answer before the connection is considered dead.
    timeout: float = 10.0
    #: Ping even while no call is running.
    permit_without_calls: bool = True


@dataclass(frozen=True)
class TLS:
    """Transport security: server verification (and a client certificate for mutual TLS).

    Args:
        root_certificates: PEM CA bundle to verify the server; ``None`` uses the system roots.
        certificate_chain: PEM client certificate chain (mutual TLS).
        private_key: PEM private key of ``certificate_chain``.
        server_name: the name to verify in the server certificate when it differs from the target's host.
    """

    root_certificates: bytes | None = None
    certificate_chain: bytes | None = None
    private_key: bytes | None = field(default=None, repr=False)
    server_name: str | None = None

    @classmethod
    def from_files(
        cls,
        ca_file: str | Path | None = None,
        cert_file: str | Path | None = None,
        key_file: str | Path | None = None,
        *,
        server_name: str | None = None,
    ) -> TLS:
        """Read PEM files: a CA bundle, and a client certificate and key for mutual TLS."""

        def read(path: str | Path | None) -> bytes | None:
            return None if path is None else Path(path).read_bytes()

        return cls(read(ca_file), read(cert_file), read(key_file), server_name)

    def credentials(self) -> grpc.ChannelCredentials:
        if (self.certificate_chain is None) != (self.private_key is None):
            raise ArgumentValueError("tls", "TLS: a client certificate needs its private key, and the reverse")
        return grpc.ssl_channel_credentials(self.root_certificates, self.private_key, self.certificate_chain)


LoadBalancing = Literal["round_robin", "pick_first"]


def service_config(retry: RetryPolicy | None, load_balancing: LoadBalancing) -> str:
    """The gRPC service config JSON: the load-balancing policy and the retry policy of the dmlrpc service."""
    config: dict[str, Any] = {"loadBalancingConfig": [{load_balancing: {}}]}
    if retry is not None:
        # gRPC picks a method's own entry over the service's.
        config["methodConfig"] = [
            {"name": [{"service": SERVICE_NAME}], "retryPolicy": retry.to_json()},
            {
                "name": [{"service": SERVICE_NAME, "method": method} for method in PURE_METHODS],
                "retryPolicy": retry.to_json(pure=True),
            },
        ]
    return json.dumps(config)


def channel_options(
    *,
    retry: RetryPolicy | None,
    keepalive: KeepAlive | None,
    load_balancing: LoadBalancing,
    tls: TLS | None,
    extra: Sequence[tuple[str, Any]],
) -> list[tuple[str, Any]]:
    """Channel arguments: no client-side size caps (the server has its own), service config, keepalive."""
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", -1),
        ("grpc.max_send_message_length", -1),
        ("grpc.service_config", service_config(retry, load_balancing)),
        ("grpc.enable_retries", 1 if retry is not None else 0),
    ]
    if retry is not None:
        # NOTE: a connection reset while it opens (a server's worker process being replaced on a shared port drops
        # the connections still queued on its listener) would otherwise fail every retry for gRPC's first
        # reconnect backoff (1 s); the next attempt reconnects within the retries' own backoff instead.
        options.append(("grpc.initial_reconnect_backoff_ms", int(retry.initial_backoff * 1000)))
    if keepalive is not None:
        options += [
            ("grpc.keepalive_time_ms", int(keepalive.time * 1000)),
            ("grpc.keepalive_timeout_ms", int(keepalive.timeout * 1000)),
            ("grpc.keepalive_permit_without_calls", int(keepalive.permit_without_calls)),
            ("grpc.http2.max_pings_without_data", 0),
        ]
    if tls is not None and tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return options + list(extra)


def call_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """Metadata sent with every call: the bearer token, when there is one."""
    return () if token is None else (("authorization", f"Bearer {token}"),)


def resolve_tls(tls: TLS | bool | None) -> TLS | None:
    """``True`` means TLS verified against the system roots; ``False``/``None`` a plaintext channel."""
    if tls is True:
        return TLS()
    return tls or None


def open_channel(
    target: str, *, tls: TLS | None, options: Sequence[tuple[str, Any]], asynchronous: bool
) -> grpc.Channel | grpc.aio.Channel:
    """A blocking or asyncio channel to ``target`` (``host:port``, ``dns:///name:port``, ``ipv4:a:p,b:p``...)."""
    if asynchronous:
        if tls is None:
            return grpc.aio.insecure_channel(target, options=options)
        return grpc.aio.secure_channel(target, tls.credentials(), options=options)
    if tls is None:
        return grpc.insecure_channel(target, options=options)
    return grpc.secure_channel(target, tls.credentials(), options=options)
