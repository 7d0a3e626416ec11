"""The server's settings: one typed object from CLI flags, DMLRPC_* environment variables and a config file."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BeforeValidator, Field, FilePath, SecretStr, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    CliApp,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from dmlrpc.codec import MAX_ELEMENT_COUNT
from dmlrpc_server.feature_levels import LATEST, parse_feature_level
from dmlrpc_server.host import (
    MemoryBudgets,
    MiB,
    available_cpus,
    default_memory_bytes,
    default_tensor_bytes,
    default_workers,
    physical_memory,
)
from dmlrpc_server.settings_cli import ENV_PREFIX, cli_source, describe

#: --provider's names -> ONNX Runtime's execution provider names, in the order `auto` tries them.
PROVIDERS: Final = {
    "directml": "DmlExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "cpu": "CPUExecutionProvider",
}

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


#: The config file the settings being built read (set only while ``load_settings`` builds them).
_CONFIG_FILE: ContextVar[Path | None] = ContextVar("dmlrpc_config_file", default=None)


def _feature_level(value: object) -> object:
    return parse_feature_level(value) if isinstance(value, str) else value


# NOTE: only Linux balances new connections over sockets sharing a port; BSD and macOS SO_REUSEPORT hands them
# all to one socket and Windows has no SO_REUSEPORT at all.
DEFAULT_WORKER_PORTS: Literal["shared", "relayed", "consecutive"] = (
    "shared" if sys.platform.startswith("linux") else "relayed"
)


#: The connection age where one worker is recycled on one port and --max-connection-age-seconds is unset
#: (``ServerSettings.connection_age_seconds``): a recycle's handover waits about this long.
RECYCLED_CONNECTION_AGE_SECONDS = 2.0

#: --max-sessions-per-worker's default with DirectML. NOTE: ONNX Runtime's DirectML provider never gives back a
#: released session's shader-visible descriptor heap (docs/reliability.md); 256 keeps a working set of up to a few
#: hundred distinct descs compiled for good (the compile cache holds 1,024) while bounding what leaks to 256 heaps of
#: 2,048 descriptors on a real adapter; a recycle costs a process start and one warm-up.
DIRECTML_SESSIONS_PER_WORKER = 256

FeatureLevel = Annotated[int, BeforeValidator(_feature_level)]
Port = Annotated[int, Field(ge=0, le=65535)]
Positive = Annotated[int, Field(gt=0)]


class ServerSettings(BaseSettings):
    """Serve DirectML operator descs over gRPC (ONNX Runtime backend).

    Every option can also be set by an environment variable named DMLRPC_ plus the option in upper case with
    underscores (--max-queue-depth 8 is DMLRPC_MAX_QUEUE_DEPTH=8), or as a key of the --config file
    (max_queue_depth = 8). Flags override variables, which override the file.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        frozen=True,
        extra="forbid",
        cli_prog_name="dmlrpc-server",
        cli_kebab_case=True,
        cli_implicit_flags=True,
        cli_hide_none_type=True,
    )

    config: FilePath | None = Field(
        None, description="TOML or JSON file of settings (keys as below, snake_case); flags and env override it."
    )
    host: str = Field("127.0.0.1", description="Address to listen on; 0.0.0.0 or [::] accepts other hosts.")
    port: Port = Field(50051, description="gRPC port; 0 picks a free one (logged at start).")
    workers: Positive | None = Field(
        None,
        description="Server processes (each its own event loop, device session and handles); default: one per "
        "CPU, at most 8, with the CPU provider and --worker-ports shared, else 1.",
    )
    worker_ports: Literal["shared", "relayed", "consecutive"] = Field(
        DEFAULT_WORKER_PORTS,
        description="With --workers over 1 or recycled workers: shared = every worker on --port (SO_REUSEPORT; the "
        "Linux default); relayed = the supervisor listens on --port and relays each connection to a worker's own "
        "loopback port (the default elsewhere: a recycled worker hands over with the port always answered, at the "
        "cost of a hop through the supervisor); consecutive = worker i on --port + i (no hop; clients list every "
        "address, and a recycled worker's port goes unanswered until its replacement listens).",
    )
    max_sessions_per_worker: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Recycle a worker process once it has created this many ONNX Runtime sessions (0 = never): it "
        "finishes its calls and exits, and the supervisor replaces it at once (even with --workers 1), bounding "
        "memory a provider keeps after its sessions are released; handles it held are gone (NOT_FOUND). Default: "
        f"{DIRECTML_SESSIONS_PER_WORKER} with DirectML (whose provider keeps each released session's descriptor "
        "heap), 0 with CPU and CUDA.",
    )
    worker_memory_bytes: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Recycle a worker process once its resident memory, looked at after each new ONNX Runtime "
        "session, passes this many bytes (0 = never), as --max-sessions-per-worker does by count: what a provider "
        "keeps per session varies by operator and device (a DirectML session holds 0.5-1 GB under a software "
        "device). Default: where workers are recycled (--max-sessions-per-worker, DirectML's default), half the "
        "host's physical memory shared among the workers, so that a worker and its replacement fit; else 0.",
    )
    recycle_grace_seconds: float = Field(
        600.0,
        ge=0,
        description="How long a recycled worker's calls in flight (those that waited for a session included) get to "
        "finish beside its replacement before they are cancelled: a recycle is the server's own choice, so it "
        "waits for slow compiles and long runs; --shutdown-grace-seconds bounds a shutdown.",
    )
    provider: Literal["auto", "directml", "cuda", "cpu"] = Field(
        "auto", description="Execution provider; auto = DirectML if present, else CUDA, else CPU."
    )
    device_id: Annotated[int, Field(ge=0)] = Field(
        0, description="DirectML adapter index or CUDA device index (one process serves one device)."
    )
    cpu_fallback: bool = Field(
        True,
        description="Run a desc the provider cannot run in full on the CPU provider (visible in the "
        "dmlrpc-executed-on trailer and metrics); --no-cpu-fallback refuses it (UNIMPLEMENTED) instead.",
    )
    feature_level: FeatureLevel = Field(
        LATEST, description="DML feature level whose rules to apply, e.g. 3.0 or 6.4 (default 6.4 = 0x6400)."
    )
    device_memory_bytes: Positive | None = Field(
        None,
        description="Device memory the CUDA provider's sessions may hold, together: a run whose tensors would not "
        "fit is refused RESOURCE_EXHAUSTED naming this flag, each session's arena is limited to it and grows only "
        "as asked, and cached sessions are evicted to keep their estimated device bytes (a fixed cost each, their "
        "runs' peak tensors and constants) within it. Default: no bound (the compile cache bounds sessions by "
        "count and host bytes only).",
    )
    max_message_bytes: Positive = Field(512 * MiB, description="Largest gRPC message received or sent.")
    max_tensor_bytes: Positive | None = Field(
        None,
        description="Largest total_tensor_size_in_bytes of one tensor. Default: a quarter of a worker's call memory "
        "(an element-wise call over such tensors fits it), at most 512 MiB: 256 MiB on a host of 8 GiB with 2 "
        "workers.",
    )
    max_tensor_elements: Annotated[int, Field(gt=0, le=MAX_ELEMENT_COUNT)] = Field(
        MAX_ELEMENT_COUNT, description="Most elements in one tensor (broadcasts count their logical elements)."
    )
    max_request_bytes: Positive = Field(
        1024 * MiB, description="Largest sum of total_tensor_size_in_bytes over a request's inputs and outputs."
    )
    max_request_elements: Positive = Field(
        1 << 33, description="Most elements over all of a request's inputs and outputs."
    )
    max_work: Positive = Field(
        1 << 36,
        description="Most work one run may cost, in element-operations (elements every node of the lowered model "
        "reads and writes, times reduction windows), estimated from the desc before anything runs.",
    )
    max_concurrent_requests: Positive = Field(64, description="Execute calls running at once; more wait in a queue.")
    max_queue_depth: Annotated[int, Field(ge=0)] = Field(
        256, description="Execute calls waiting for a slot; beyond it calls get RESOURCE_EXHAUSTED."
    )
    max_batch_size: Positive = Field(
        64, description="Most requests of one desc run as one batch (1 = batching off); small requests only."
    )
    max_batch_size_by_operator: dict[str, Positive] = Field(
        default_factory=dict,
        description='Per-operator batch sizes by OperatorDesc case, as JSON: {"scatter_nd": 16}.',
    )
    max_batch_delay_us: Annotated[int, Field(ge=0)] = Field(
        0,
        description="How long a lone request waits for company (0 = none: batches form from requests that arrive "
        "while a run of their desc is under way).",
    )
    batch_work: Positive = Field(
        1 << 18,
        description="Largest work (element-operations of one run, estimated from the desc) of a request that batches.",
    )
    buffer_pool_bytes: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Bytes of free staging and stream buffers one worker process keeps for reuse (0 = no pooling); "
        "default: a sixteenth of --memory-bytes, shared among the workers.",
    )
    tune_malloc: bool = Field(
        True,
        description="On glibc, keep freed memory for reuse up to --heap-retain-bytes (faster large tensors).",
    )
    heap_retain_bytes: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Free heap memory (glibc) one worker process keeps for reuse between calls; more goes back to the "
        "kernel as it is freed, and all of it within about a second once no call runs; default: a sixteenth of "
        "--memory-bytes, shared among the workers.",
    )
    compile_cache_size: Positive = Field(1024, description="Compiled operator descs kept (least recently used go).")
    compile_cache_bytes: Positive | None = Field(
        None,
        description="Estimated bytes of the compiled descs one worker process keeps (each session's model, "
        "initializers and overhead); least recently used go first, and a desc larger than this is compiled for its "
        "call only; default: an eighth of --memory-bytes, shared among the workers.",
    )
    intra_op_threads: Positive = Field(
        1, description="ONNX Runtime threads per session (1 = run on the calling worker, no per-session pool)."
    )
    worker_threads: Positive | None = Field(
        None,
        description="Threads that run operators whose work exceeds --inline-work (default: the CPU count shared "
        "among the worker processes).",
    )
    inline_work: Annotated[int, Field(ge=0)] = Field(
        1 << 16,
        description="Requests whose work (element-operations: elements every node reads and writes, estimated from "
        "the desc) is at most this run on the event loop, where a thread hop costs more; CPU provider only.",
    )
    device_inline_work: Annotated[int, Field(ge=0)] = Field(
        1 << 22,
        description="Resident calls on a GPU whose work is at most this, and whose host data is at most 64 KiB, run on "
        "the event loop (a GPU does it in about 0.1 ms; a thread hop costs more).",
    )
    stream_idle_seconds: float = Field(
        30.0,
        gt=0,
        description="Longest wait for a client's next message on ExecuteStream, CreateTensor and an ExecuteMany "
        "stream with nothing in flight; then the call ends DEADLINE_EXCEEDED (a stalled upload holds no running slot "
        "meanwhile).",
    )
    max_streams_per_connection: Positive = Field(
        100,
        description="Calls one client connection may have running at once; up to four times as many more wait for "
        "one of them to end (a streaming one reads none of its messages meanwhile), beyond that a call gets "
        "RESOURCE_EXHAUSTED. HTTP/2 itself sets no stream limit, so no call is refused with REFUSED_STREAM.",
    )
    stream_items_in_flight: Positive = Field(
        256, description="ExecuteMany items of one stream admitted at once (running, waiting or being written)."
    )
    stream_bytes_in_flight: Positive = Field(
        64 * MiB, description="Request bytes of one ExecuteMany stream's admitted items (one item is always admitted)."
    )
    memory_bytes: Positive | None = Field(
        None,
        description="Memory the server may hold for its callers beyond its baseline, all worker processes together; "
        "the byte budgets default to shares of it: call memory a half, resident tensors, compiled handles and the "
        "compile cache an eighth each, free pooled buffers and free heap a sixteenth each. Default: 4 GiB, or half "
        "the memory this process may use (a container's cgroup limit, else the host's) where that is less.",
    )
    call_memory_bytes: Positive | None = Field(
        None,
        description="Memory all calls in progress in one worker process may add beyond their request messages, "
        "together: what a run makes (intermediates, outputs, broadcast inputs at their logical size; estimated from "
        "the desc) and their responses until the caller has read them. Reserved before a run; one call may use it "
        "all. Default: half of --memory-bytes, shared among the workers.",
    )
    call_memory_wait_seconds: float = Field(
        30.0,
        gt=0,
        description="How long a call waits (within its deadline) for --call-memory-bytes to have room before "
        "RESOURCE_EXHAUSTED.",
    )
    resident_tensors_per_caller: Annotated[int, Field(ge=0)] = Field(
        1024, description="Resident tensors one caller may hold (CreateTensor and kept outputs); 0 disables them."
    )
    resident_bytes_per_caller: Annotated[int, Field(ge=0)] = Field(
        4096 * MiB, description="Bytes of resident tensors one caller may hold."
    )
    resident_bytes_total: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Bytes of resident tensors all callers together may hold (kept outputs included); default: an "
        "eighth of --memory-bytes with the CPU provider; with a GPU provider, where they live in device memory, a "
        "quarter of the host's memory, at most 16 GiB.",
    )
    resident_tensors_total: Annotated[int, Field(ge=0)] = Field(
        16384,
        description="Resident tensors all callers together may hold (without auth a caller is a self-chosen id, so "
        "only the totals bound many ids).",
    )
    resident_idle_seconds: float = Field(
        600.0, gt=0, description="A resident tensor unused this long is released (its handle then NOT_FOUND)."
    )
    compiled_operators_per_caller: Annotated[int, Field(ge=0)] = Field(
        256, description="Compiled operators and graphs one caller may hold (CompileOperator/Graph); 0 disables them."
    )
    compiled_bytes_per_caller: Annotated[int, Field(ge=0)] = Field(
        1024 * MiB,
        description="Bytes one caller's compiled operators may hold: each is charged what it keeps on the server "
        "(its sessions as the compile cache estimates them, constants as materialised, owned data).",
    )
    compiled_operators_total: Annotated[int, Field(ge=0)] = Field(
        4096,
        description="Compiled operators and graphs all callers together may hold (each keeps an ONNX Runtime "
        "session; without auth a caller is a self-chosen id, so only the totals bound many ids).",
    )
    compiled_bytes_total: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Bytes all callers' compiled operators may hold together (their sessions, constants and owned "
        "data, as charged to each caller); default: an eighth of --memory-bytes.",
    )
    compiled_idle_seconds: float = Field(
        600.0, gt=0, description="A compiled operator unused this long is released (its handle then NOT_FOUND)."
    )
    max_graph_nodes: Annotated[int, Field(ge=1)] = Field(64, description="Most nodes of one CompileGraph graph.")
    model_repository: Path | None = Field(
        None,
        description="Serve the models of this Triton-layout repository (<model>/<version>/model.onnx, optional "
        "<model>/config.pbtxt) over the Open Inference Protocol (inference.GRPCInferenceService, same port).",
    )
    model_control_mode: Literal["none", "explicit"] = Field(
        "none",
        description="none: load every repository model at start, refuse load/unload calls; explicit: load the "
        "--load-model ones at start and others by RepositoryModelLoad.",
    )
    load_model: list[str] = Field(
        default_factory=list, description="Models to load at start with --model-control-mode explicit ('*': all)."
    )
    default_max_batch_size: Annotated[int, Field(ge=0)] = Field(
        4, description="max_batch_size given to a model that can batch and whose config does not set one."
    )
    allow_client_shm: bool = Field(
        False,
        description="Serve the system shared memory RPCs (clients name /dev/shm objects the server then reads and "
        "writes); off, they answer UNIMPLEMENTED.",
    )
    reflection: bool = Field(True, description="Serve gRPC server reflection (grpcurl and other generic tools).")
    metrics: bool = Field(True, description="Serve Prometheus metrics over HTTP at /metrics.")
    metrics_host: str | None = Field(None, description="Address of the metrics endpoint (default: --host).")
    metrics_port: Port = Field(9464, description="Port of the metrics endpoint; 0 picks a free one.")
    tls_cert_file: FilePath | None = Field(None, description="PEM certificate chain; with --tls-key-file enables TLS.")
    tls_key_file: FilePath | None = Field(None, description="PEM private key of --tls-cert-file.")
    tls_client_ca_file: FilePath | None = Field(
        None, description="PEM CA bundle; when set, clients must present a certificate it signed (mutual TLS)."
    )
    auth_token: SecretStr | None = Field(
        None, description="Bearer token callers must send (prefer DMLRPC_AUTH_TOKEN or a file: flags are visible)."
    )
    auth_tokens_file: FilePath | None = Field(
        None, description="File of accepted bearer tokens, one per line (several allow rotation)."
    )
    auth_exempt_health: bool = Field(True, description="Let grpc.health.v1 calls through without a token.")
    auth_exempt_reflection: bool = Field(False, description="Let reflection calls through without a token.")
    keepalive_seconds: float = Field(60.0, gt=0, description="Ping idle clients this often to find dead connections.")
    keepalive_min_ping_interval_seconds: float = Field(
        10.0, gt=0, description="Shortest client ping interval accepted; faster pingers get GOAWAY (too_many_pings)."
    )
    max_connection_age_seconds: float | None = Field(
        None, gt=0, description="Close connections older than this so clients rebalance over new replicas."
    )
    shutdown_drain_seconds: float = Field(
        0.0, ge=0, description="On SIGTERM, report NOT_SERVING and keep serving this long before refusing calls."
    )
    shutdown_grace_seconds: float = Field(
        10.0, ge=0, description="On SIGTERM, how long in-flight calls get to finish after new ones are refused."
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Log level; DEBUG logs one line per call."
    )
    log_format: Literal["text", "json"] = Field("text", description="Log lines as text or as JSON objects.")
    tracing: Literal["off", "otlp"] = Field(
        "off",
        description="OpenTelemetry spans of each call and its stages, the caller's W3C traceparent their parent: otlp "
        "exports them over OTLP/gRPC to OTEL_EXPORTER_OTLP_ENDPOINT (default localhost:4317) as OTEL_SERVICE_NAME "
        "(default dmlrpc-server); needs the dmlrpc[tracing] extra.",
    )

    @model_validator(mode="after")
    def _check_pairs(self) -> ServerSettings:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("tls_cert_file and tls_key_file go together: set both or neither")
        if self.tls_client_ca_file is not None and self.tls_cert_file is None:
            raise ValueError("tls_client_ca_file (mutual TLS) needs tls_cert_file and tls_key_file")
        # NOTE: only an explicit --workers can exceed 1 where these checks matter (the default is 1 without shared
        # ports), and reading it here keeps settings from importing ONNX Runtime to resolve the default.
        workers = self.workers or 1
        if workers > 1 or self.max_sessions_per_worker:  # a recycled worker's replacement binds beside it
            if self.worker_ports == "shared" and not hasattr(socket, "SO_REUSEPORT"):
                raise ValueError(
                    "worker_ports shared (several workers on one port) needs SO_REUSEPORT, which this platform "
                    "lacks: use --worker-ports relayed (the supervisor relays --port to the workers) or --workers 1"
                )
            if self.worker_ports == "consecutive" and self.port and self.port + workers - 1 > 65535:
                raise ValueError(f"worker_ports consecutive: ports {self.port} to {self.port + workers - 1} pass 65535")
        if self.tracing != "off" and not _tracing_installed():
            raise ValueError(
                f"--tracing {self.tracing} (DMLRPC_TRACING) needs OpenTelemetry's SDK and OTLP exporter, which are not "
                "installed: pip install 'dmlrpc[tracing]'"
            )
        return self

    def budgets(self, workers: int) -> MemoryBudgets:
        """The byte budgets for a server of ``workers`` processes: each as set, or its share of --memory-bytes."""
        memory = self.memory_bytes or default_memory_bytes()

        def per_worker(value: int | None, fraction: float) -> int:
            return value if value is not None else max(1, int(memory * fraction) // workers)

        if self.resident_bytes_total is not None:
            resident = self.resident_bytes_total
        elif self._gpu_provider():
            resident = min(16384 * MiB, physical_memory() // 4)
        else:
            resident = memory // 8
        call_memory = per_worker(self.call_memory_bytes, 1 / 2)
        return MemoryBudgets(
            memory=memory,
            call_memory=call_memory,
            compile_cache=per_worker(self.compile_cache_bytes, 1 / 8),
            buffer_pool=per_worker(self.buffer_pool_bytes, 1 / 16),
            heap_retain=per_worker(self.heap_retain_bytes, 1 / 16),
            resident_total=resident,
            compiled_total=self.compiled_bytes_total if self.compiled_bytes_total is not None else memory // 8,
            workers=workers,
            max_tensor=self.max_tensor_bytes or default_tensor_bytes(call_memory),
        )

    @property
    def worker_processes(self) -> int:
        """The server processes to run (--workers, or the default for this host and provider)."""
        if self.workers is not None:
            return self.workers
        return default_workers(available_cpus(), gpu=self._gpu_provider(), shared_port=self.worker_ports == "shared")

    @property
    def sessions_per_worker(self) -> int:
        """The ONNX Runtime sessions after which a worker is recycled (0 = never): --max-sessions-per-worker, or
        the default for the provider."""
        if self.max_sessions_per_worker is not None:
            return self.max_sessions_per_worker
        if self.provider == "auto":
            import onnxruntime as ort  # only here: settings are read before the server imports it

            directml = PROVIDERS["directml"] in ort.get_available_providers()
        else:
            directml = self.provider == "directml"
        return DIRECTML_SESSIONS_PER_WORKER if directml else 0

    @property
    def connection_age_seconds(self) -> float | None:
        """The age at which a connection gets GOAWAY: --max-connection-age-seconds, or, where it is unset and one
        worker is recycled on one port (shared or relayed), ``RECYCLED_CONNECTION_AGE_SECONDS``."""
        # NOTE: a recycled worker whose connections age hands them over by that GOAWAY, which cancels no call,
        # rather than by gRPC's stop, which cancels the few it has not yet handed to a handler (docs/reliability.md,
        # "The handover"). With one worker a connection that moves comes back to the same process, its handles
        # still reachable; with several it may reach another worker, so there the age stays the operator's choice.
        if self.max_connection_age_seconds is not None:
            return self.max_connection_age_seconds
        recycled = self.sessions_per_worker or self.worker_memory_budget
        if recycled and self.worker_processes == 1 and self.worker_ports != "consecutive":
            return RECYCLED_CONNECTION_AGE_SECONDS
        return None

    @property
    def worker_memory_budget(self) -> int:
        """Resident bytes past which a worker is recycled (0 = never): --worker-memory-bytes, or the default."""
        if self.worker_memory_bytes is not None:
            return self.worker_memory_bytes
        if not self.sessions_per_worker:
            return 0
        return physical_memory() // (2 * self.worker_processes)

    def _gpu_provider(self) -> bool:
        if self.provider != "auto":
            return self.provider != "cpu"
        import onnxruntime as ort  # only here: settings are read before the server imports it

        return bool({PROVIDERS["directml"], PROVIDERS["cuda"]} & set(ort.get_available_providers()))

    def operator_threads(self, processes: int) -> int:
        """Operator threads of one of ``processes`` server processes: --worker-threads, or the CPUs shared among
        the processes."""
        return self.worker_threads or max(1, (os.cpu_count() or 2) // processes)

    def auth_tokens(self) -> tuple[bytes, ...]:
        """The accepted bearer tokens (read from the token file now, so a rotated file applies on restart)."""
        tokens: list[bytes] = []
        if self.auth_token is not None:
            tokens.append(self.auth_token.get_secret_value().encode())
        if self.auth_tokens_file is not None:
            lines = self.auth_tokens_file.read_text().splitlines()
            tokens.extend(line.strip().encode() for line in lines if line.strip() and not line.startswith("#"))
        return tuple(tokens)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Priority: explicit values (and CLI flags) > DMLRPC_* variables > config file > defaults.
        path = _CONFIG_FILE.get()
        if path is None:
            return init_settings, env_settings
        return init_settings, env_settings, _ConfigFileSource(settings_cls, path)


class _ConfigFileSource(PydanticBaseSettingsSource):
    """Settings from a TOML (``.toml``) or JSON file; unknown keys are refused by the model."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        self.path = path
        self.data = read_config_file(path)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.data)


def read_config_file(path: Path) -> dict[str, Any]:
    """A config file's settings by field name (``max-queue-depth`` and ``max_queue_depth`` alike)."""
    text = path.read_text()
    data: Any = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a config file holds one table/object of settings")
    return {key.replace("-", "_"): value for key, value in data.items()}


def _origin(args: Sequence[str], environ: Mapping[str, str], config: str | None) -> Callable[[str], str | None]:
    """For an error about a setting: the config file's key when its value came from the file (no flag or variable
    overrides it), else None (the error names the flag and the variable)."""
    variables = {name.upper() for name in environ}
    keys = set(read_config_file(Path(config))) if config else set()

    def origin(field: str) -> str | None:
        flag = "--" + field.replace("_", "-")
        flagged = any(arg in (flag, f"--no-{flag[2:]}") or arg.startswith(f"{flag}=") for arg in args)
        if field not in keys or flagged or f"{ENV_PREFIX}{field.upper()}" in variables:
            return None
        return f"{field} (in the config file {config})"

    return origin


#: Every setting at its default (no flags, variables or file read): what a part built without settings of its own
#: (an Executor in a test or a benchmark, a provider chosen by name) takes, so that each default is written once.
DEFAULTS = ServerSettings.model_construct()


def _tracing_installed() -> bool:
    """Whether the dmlrpc[tracing] extra is installed (found, not imported: settings are read before the server)."""
    try:
        return importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc.trace_exporter") is not None
    except ModuleNotFoundError:
        return False


class SettingsError(ValueError):
    """The settings could not be built; the message says which setting is wrong and why."""


def load_settings(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> ServerSettings:
    """Build the settings from flags (``argv``), DMLRPC_* variables and the config file they name.

    ``--help`` and malformed flags exit through argparse (exit code 0 and 2).

    Raises:
        SettingsError: a value is invalid or the config file cannot be read.
    """
    from pydantic import ValidationError

    args = list(argv) if argv is not None else None
    environ = os.environ if environ is None else environ
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(args)
    config = known.config or environ.get(f"{ENV_PREFIX}CONFIG")
    token = _CONFIG_FILE.set(Path(config) if config else None)
    try:
        settings = CliApp.run(
            ServerSettings, cli_args=args if args is not None else None, cli_settings_source=cli_source(ServerSettings)
        )
    except ValidationError as error:
        raise SettingsError(describe(error, _origin(sys.argv[1:] if args is None else args, environ, config))) from None
    except (OSError, ValueError) as error:  # an unreadable or malformed config file
        raise SettingsError(f"config file {config}: {error}") from None
    finally:
        _CONFIG_FILE.reset(token)
    return settings
