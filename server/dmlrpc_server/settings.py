"""The server's settings, one typed object built at start-up and passed explicitly."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from dmlrpc_server.feature_levels import LATEST

MiB = 1 << 20


@dataclass(frozen=True)
class ServerSettings:
    """Everything the server is configured with."""

    #: Address to listen on; use 0.0.0.0 or [::] to accept connections from other hosts.
    host: str = "127.0.0.1"
    #: TCP port; 0 picks a free one (logged at start).
    port: int = 50051
    #: Execution provider: auto (DirectML, else CUDA, else CPU), directml, cuda or cpu.
    provider: str = "auto"
    #: DirectML adapter index or CUDA device index.
    device_id: int = 0
    #: DML_FEATURE_LEVEL whose tensor-support tables the server applies.
    feature_level: int = LATEST
    #: Largest gRPC message received or sent.
    max_message_bytes: int = 512 * MiB
    #: Largest total_tensor_size_in_bytes of any one tensor.
    max_tensor_bytes: int = 512 * MiB
    #: Largest sum of total_tensor_size_in_bytes over one request's inputs and outputs.
    max_request_bytes: int = 1024 * MiB
    #: How many compiled operator descs stay cached (least recently used go first).
    compile_cache_size: int = 1024
    #: ONNX Runtime intra-op threads per session (1 = run on the calling worker thread, no per-session pool).
    intra_op_threads: int = 1
    #: Worker threads that run operators; requests above `inline_bytes` run there instead of the event loop.
    worker_threads: int = field(default_factory=lambda: os.cpu_count() or 2)
    #: Requests up to this many bytes run on the event loop thread (cheaper than a thread hop for tiny ops).
    inline_bytes: int = 64 * 1024
    #: Seconds in-flight calls get to finish on SIGTERM/SIGINT.
    shutdown_grace_seconds: float = 10.0
