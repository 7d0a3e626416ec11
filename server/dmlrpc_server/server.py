"""build_server(): the gRPC server with its services and interceptors (production and tests use it alike)."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata

import grpc

from dmlrpc.v1 import service_pb2_grpc
from dmlrpc_server.executor import Executor, capabilities
from dmlrpc_server.feature_levels import feature_level_name
from dmlrpc_server.interceptors import ErrorInterceptor
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.providers import choose_provider
from dmlrpc_server.servicer import DirectMLServicer
from dmlrpc_server.settings import ServerSettings

_log = logging.getLogger(__name__)


def server_version() -> str:
    try:
        return metadata.version("dmlrpc")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


@dataclass
class BuiltServer:
    """A configured (not yet started) server, the port it bound and the executor behind it."""

    server: grpc.aio.Server
    port: int
    executor: Executor
    workers: ThreadPoolExecutor

    async def start(self) -> None:
        await self.server.start()

    async def stop(self, grace: float | None) -> None:
        await self.server.stop(grace)
        self.workers.shutdown(wait=False, cancel_futures=True)


def build_server(settings: ServerSettings) -> BuiltServer:
    """Create the server for ``settings`` and bind its port; call inside a running event loop."""
    provider = choose_provider(
        settings.provider, device_id=settings.device_id, intra_op_threads=settings.intra_op_threads
    )
    limits = Limits(
        max_tensor_bytes=settings.max_tensor_bytes,
        max_request_bytes=settings.max_request_bytes,
        max_message_bytes=settings.max_message_bytes,
    )
    executor = Executor(
        provider, feature_level=settings.feature_level, limits=limits, cache_capacity=settings.compile_cache_size
    )
    workers = ThreadPoolExecutor(max_workers=settings.worker_threads, thread_name_prefix="dmlrpc-op")
    server = grpc.aio.server(
        interceptors=[ErrorInterceptor()],
        options=[
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_send_message_length", settings.max_message_bytes),
            # gRPC enables SO_REUSEPORT by default, which lets a second server silently share a busy port.
            ("grpc.so_reuseport", 0),
        ],
    )
    caps = capabilities(executor, server_version=server_version(), max_message_bytes=settings.max_message_bytes)
    service_pb2_grpc.add_DirectMLServiceServicer_to_server(
        DirectMLServicer(executor, caps, workers, settings.inline_bytes), server
    )
    try:
        port = server.add_insecure_port(f"{settings.host}:{settings.port}")
    except RuntimeError as error:
        raise OSError(f"could not bind {settings.host}:{settings.port}: {error}") from None
    if port == 0:
        raise OSError(f"could not bind {settings.host}:{settings.port}")
    _log.info(
        "configured %s on %s, feature level %s",
        provider.name,
        provider.device,
        feature_level_name(settings.feature_level),
    )
    return BuiltServer(server, port, executor, workers)
