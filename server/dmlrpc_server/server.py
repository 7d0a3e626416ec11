"""build_server(): the gRPC server with its services, their wrappers, health, reflection and metrics."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health, health_pb2
from prometheus_client import Gauge

from dmlrpc.v1 import service_pb2
from dmlrpc.wire import CHUNK_BYTES
from dmlrpc_server.binding import Binding
from dmlrpc_server.capabilities import capabilities
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.connections import ConnectionLimitInterceptor
from dmlrpc_server.feature_levels import feature_level_name
from dmlrpc_server.handlers import HandlerWrapper, ServedMethods, method_handlers
from dmlrpc_server.interceptors import ErrorInterceptor
from dmlrpc_server.listeners import steer_to_newest, stop_listening
from dmlrpc_server.many import StreamLimits
from dmlrpc_server.metrics import Metrics
from dmlrpc_server.oip import protocol as oip_protocol
from dmlrpc_server.oip.metrics import ModelCollector
from dmlrpc_server.oip.repository import Repository
from dmlrpc_server.oip.servicer import InferenceServicer
from dmlrpc_server.oip.servicer import handlers as oip_handlers
from dmlrpc_server.oip.shm import SharedMemory
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.reflection import REFLECTION_NAMES, reflection_handlers
from dmlrpc_server.runtime.admission import Admission, ByteBudget
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.compiler import warm_up
from dmlrpc_server.runtime.handles import HandleStore
from dmlrpc_server.runtime.memory import Heap
from dmlrpc_server.runtime.process import worker_count, worker_index
from dmlrpc_server.runtime.providers import Provider, choose_provider
from dmlrpc_server.runtime.resident import ResidentStore, device_of
from dmlrpc_server.runtime.store import Quota
from dmlrpc_server.scheduler import Scheduler
from dmlrpc_server.security import TokenAuth, server_credentials
from dmlrpc_server.service import Service
from dmlrpc_server.servicer import DirectMLServicer, handlers
from dmlrpc_server.settings import ServerSettings

if TYPE_CHECKING:  # the dmlrpc[tracing] extra: imported only where tracing is on
    from opentelemetry.sdk.trace.export import SpanExporter

    from dmlrpc_server.tracing import Tracing

_log = logging.getLogger(__name__)

SERVICE_NAME = service_pb2.DESCRIPTOR.services_by_name["DirectMLService"].full_name
_HEALTH = health_pb2.DESCRIPTOR.services_by_name["Health"]
#: The names the health service answers for: "" is the whole server (what Kubernetes' gRPC probe asks by default).
HEALTH_NAMES = ("", SERVICE_NAME)
#: The names of the threads that run operators start with this.
OPERATOR_THREAD_PREFIX = "dmlrpc-op"
#: How long a stopping server answers new calls UNAVAILABLE after in-flight ones finished, before closing.
_REFUSE_SECONDS = 0.25
#: How often the free heap is looked at (a trim, when due, runs off the event loop).
HEAP_SWEEP_SECONDS = 1.0
#: gRPC spreads each connection's --max-connection-age-seconds by up to this fraction either way.
_AGE_JITTER = 0.1
#: What a handover waits beyond its connections' last GOAWAY: the calls sent before their clients saw it reach a
#: handler (gRPC's stop cancels those it has received and not yet handed to one).
_HANDOVER_SETTLE_SECONDS = 0.5


def server_version() -> str:
    try:
        return metadata.version("dmlrpc")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


@dataclass
class BuiltServer:
    """A configured server and its parts: the bound port, health, metrics and the Execute path."""

    server: grpc.aio.Server
    port: int
    settings: ServerSettings
    service: Service
    health: health.aio.HealthServicer
    metrics: Metrics | None
    workers: ThreadPoolExecutor
    metrics_port: int | None = None
    heap: Heap | None = None
    #: The Open Inference Protocol front door (served beside DirectMLService on the same port).
    inference: InferenceServicer | None = None
    #: The per-connection call limit (--max-streams-per-connection).
    connections: ConnectionLimitInterceptor | None = None
    #: Spans of calls and their stages (--tracing); None when off.
    tracing: Tracing | None = None
    #: Every method's handler as the server serves it (wrapped), by path.
    methods: ServedMethods | None = None
    _sweeper: asyncio.Task[None] | None = None
    _trimmer: asyncio.Task[None] | None = None
    _warmed: bool = False

    @property
    def catalog(self) -> Catalog:
        return self.service.catalog

    @property
    def resident(self) -> ResidentStore:
        return self.service.binding.resident

    async def start(self, *, ready: bool = True, warm_first: bool = False) -> None:
        """Listen (health NOT_SERVING), then, with ``ready``, warm the provider up and report SERVING.

        With ``warm_first`` the provider warms up before the port listens, which then answers SERVING at once: what
        a worker's replacement does, so that no caller reaching it through the shared port sees it NOT_SERVING.
        """
        if warm_first:
            await self._warm_up()
        status = health_pb2.HealthCheckResponse.SERVING if warm_first else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in HEALTH_NAMES:
            await self.health.set(name, status)
        await self.server.start()
        if worker_index() is not None and self.settings.worker_ports == "shared":
            steer_to_newest(self.port, worker_count())
        if self.metrics is not None:
            host = self.settings.metrics_host or self.settings.host
            try:
                self.metrics_port = await self.metrics.serve(host, self.settings.metrics_port)
            except OSError:
                # Stopped here, on the running loop: left to the collector, gRPC's server would try to stop
                # itself after the loop has closed and print a traceback beside the real error.
                await self.server.stop(None)
                self.workers.shutdown(wait=False, cancel_futures=True)
                raise
        self._sweeper = asyncio.create_task(self._sweep_resident())
        if self.heap is not None and self.heap.available:
            self._trimmer = asyncio.create_task(self._trim_heap(self.heap))
        if ready:
            await self.ready()

    async def _sweep_resident(self) -> None:
        """Release idle resident tensors now and then, so that memory comes back without further calls."""
        store = self.resident
        handles = self.service.handles
        while True:
            await asyncio.sleep(min(30.0, store.idle_seconds / 2, handles.idle_seconds / 2))
            if expired := store.sweep():
                _log.info("released %d idle resident tensor(s)", expired)
            if expired := handles.sweep():
                _log.info("released %d idle compiled operator(s)", expired)
            if self.inference is not None and (gone := self.inference.repository.sweep_published()):
                _log.info("unpublished %d model(s) whose compiled handles are gone", gone)

    async def _trim_heap(self, heap: Heap) -> None:
        """Give free heap memory beyond --heap-retain-bytes back to the kernel once no call runs.

        NOTE: not under load: glibc counts trimmed pages as free still, so a trim cannot tell whether it would give
        anything back, and calls in flight would fault back in each page it took. While calls run, glibc's own trim
        threshold (the same bound) gives back what is freed at the top of each heap.
        """
        admission = self.service.scheduler.admission
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(HEAP_SWEEP_SECONDS)
            if admission.running or admission.waiting or not heap.trim_due():
                continue
            await loop.run_in_executor(self.workers, heap.trim)

    async def ready(self) -> None:
        """Initialise and warm up the execution provider (unless done already), then report SERVING."""
        await self._warm_up()
        for name in HEALTH_NAMES:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.inference is not None:
            self.inference.serving = True

    async def _warm_up(self) -> None:
        if self._warmed:
            return
        provider = self.catalog.provider
        seconds = await asyncio.get_running_loop().run_in_executor(self.workers, warm_up, provider)
        self._warmed = True
        _log.info("%s warmed up in %.0f ms", provider.name, seconds * 1e3)

    async def stop(self, grace: float | None, *, drain: float = 0.0, handoff: bool = False) -> None:
        """Report NOT_SERVING, keep serving ``drain`` seconds, refuse new calls, give in-flight ones ``grace``.

        A ``handoff`` (a recycled worker whose replacement already listens beside it on the shared port) hands its
        connections over instead (``_hand_over``): health stays SERVING, since the server as a whole serves.
        """
        if handoff:
            await self._hand_over(grace)
        else:
            await self._shut_down(grace, drain)
        self._close_parts()

    async def _shut_down(self, grace: float | None, drain: float) -> None:
        """NOT_SERVING, ``drain`` seconds of serving on, then refuse new calls while in-flight ones finish."""
        await self.health.enter_graceful_shutdown()
        if self.inference is not None:
            self.inference.serving = False
        if drain > 0:
            await asyncio.sleep(drain)
        started = time.monotonic()
        if not await self.service.scheduler.drain(grace):
            self._warn_cancelling(grace)
        remaining = None if grace is None else max(0.0, grace - (time.monotonic() - started))
        if remaining:
            # NOTE: gRPC's stop cancels calls that arrive as it closes (CANCELLED, which clients cannot tell from
            # a call cut off mid-way); refusing them with UNAVAILABLE a moment longer sends most clients elsewhere.
            await asyncio.sleep(min(_REFUSE_SECONDS, remaining))
            remaining = max(0.0, remaining - _REFUSE_SECONDS)
        await self.server.stop(remaining)

    async def _hand_over(self, grace: float | None) -> None:
        """Move every client to a live worker, and serve every call in flight.

        NOTE: gRPC's stop closes the listener (the kernel then gives new connections to the workers still
        listening, the replacement among them) and sends GOAWAY on every connection, so that clients open a new one
        for their next calls; a call sent after the final GOAWAY never reaches this process (gRPC retries it
        transparently). But the stop also cancels (CANCELLED, which no client retries) the calls it has received
        and not yet handed to a handler, and those that arrive before their client has seen the GOAWAY: a few at
        each handover under a steady load. With --max-connection-age-seconds on a shared port (Linux) or behind the
        relay nothing is cancelled: the process first leaves the port (``listeners.stop_listening``; the relay
        routes new connections to the replacement already), then waits for its connections to reach their age,
        whose GOAWAY (sent without stopping) serves every call that crosses it, and stops only then, with no
        connection left that brings new calls. Refusing calls while the connections stay open, as a drain does,
        would bring each retry back here until the client's attempts ran out.
        """
        scheduler = self.service.scheduler
        age = self.settings.connection_age_seconds
        waited = 0.0
        ports = self.settings.worker_ports
        if age is not None and (ports == "relayed" or (ports == "shared" and stop_listening(self.port))):
            # NOTE: the calls that wait for a session go on waiting, and the ones that need one and reach this
            # process on its connections before their GOAWAY join them: they make theirs once gRPC has stopped, so
            # that what this process makes beyond its sessions stays one per call in flight at the stop. The wait
            # is within the grace period, which bounds the whole stop (the supervisor kills a process that
            # outstays it); with an age beyond it, the calls left on the youngest connections may be cancelled.
            waited = age * (1 + _AGE_JITTER) + _HANDOVER_SETTLE_SECONDS
            if grace is not None:
                waited = min(waited, grace)
            await asyncio.sleep(waited)
        remaining = None if grace is None else grace - waited
        stopping = asyncio.ensure_future(self.server.stop(remaining))
        # NOTE: the stop's first step (grpc_server_shutdown_and_notify: listener closed, GOAWAY sent) runs before
        # this coroutine resumes; only then, with no new call coming, may the waiting calls make sessions.
        await asyncio.sleep(0)
        scheduler.hand_over()
        if not await scheduler.settle(remaining):
            self._warn_cancelling(grace)
        await stopping

    def _warn_cancelling(self, grace: float | None) -> None:
        """Log what the end of the grace period cancels."""
        admission = self.service.scheduler.admission
        _log.warning(
            "cancelling %d call(s) still running and %d waiting after the %.1f s grace period (and every open "
            "stream); their ONNX Runtime runs are told to stop",
            admission.running,
            admission.waiting,
            grace or 0.0,
        )

    def _close_parts(self) -> None:
        """Stop the background tasks and release what the server held, once gRPC has stopped."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._trimmer is not None:
            self._trimmer.cancel()
        self.resident.clear()
        self.workers.shutdown(wait=False, cancel_futures=True)
        if self.metrics is not None:
            self.metrics.close()
        if self.tracing is not None:
            self.tracing.shutdown()  # the spans still buffered are exported before the process exits

    def running_operators(self, wait: float = 0.1) -> int:
        """After ``stop``: the operator threads still running a job ``wait`` seconds on (idle ones have exited).

        NOTE: ``RunOptions.terminate`` stops a run only between ONNX Runtime nodes, so one long node runs on after
        its call was cancelled; and the interpreter joins every ThreadPoolExecutor thread at exit. A process that
        must exit within its grace period leaves these behind (``os._exit``) instead of waiting for them.
        """
        threads = [t for t in threading.enumerate() if t.name.startswith(OPERATOR_THREAD_PREFIX)]
        deadline = time.monotonic() + wait
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return sum(thread.is_alive() for thread in threads)


def _share(total: int) -> int:
    """This worker's share of a server-wide total: the workers hold their callers' state apart, so each gets an
    even share and together they stay within the total."""
    return total // worker_count()


def server_options(settings: ServerSettings) -> list[tuple[str, int]]:
    """The gRPC server's channel arguments for ``settings``."""
    # NOTE: any supervisor's worker shares the port: with --max-sessions-per-worker even --workers 1 runs under one,
    # and a recycled worker's replacement listens beside it.
    shared_port = worker_index() is not None and settings.worker_ports == "shared"
    options: list[tuple[str, int]] = [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        # gRPC enables SO_REUSEPORT by default, which lets a second server silently share a busy port; only the
        # workers of one supervisor share theirs (the supervisor checked that nothing else holds it).
        ("grpc.so_reuseport", 1 if shared_port else 0),
        ("grpc.keepalive_time_ms", int(settings.keepalive_seconds * 1000)),
        ("grpc.keepalive_timeout_ms", 20_000),
        # Accept the SDK's keepalive pings (every 30 s by default), idle or not, instead of answering with GOAWAY.
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", int(settings.keepalive_min_ping_interval_seconds * 1000)),
        ("grpc.http2.max_pings_without_data", 0),
    ]
    age = settings.connection_age_seconds
    if age is not None:
        options.append(("grpc.max_connection_age_ms", int(age * 1000)))
        # NOTE: not where workers are recycled: there a call may wait on its connection, past its age, for the
        # worker's replacement (Scheduler.room_for_session), and the handover's stop bounds what runs on.
        if not (settings.sessions_per_worker or settings.worker_memory_budget):
            options.append(("grpc.max_connection_age_grace_ms", int(settings.shutdown_grace_seconds * 1000)))
    return options


def build_server(settings: ServerSettings, *, span_exporter: SpanExporter | None = None) -> BuiltServer:
    """Create the server for ``settings`` and bind its port; call inside a running event loop. ``span_exporter``
    traces every call to it (each span as it ends) whatever --tracing says (tests, embedding).

    Raises:
        ProviderUnavailableError: the requested execution provider is missing.
        OSError: the port cannot be bound.
    """
    provider = choose_provider(
        settings.provider,
        device_id=settings.device_id,
        intra_op_threads=settings.intra_op_threads,
        cpu_fallback=settings.cpu_fallback,
        device_memory_bytes=settings.device_memory_bytes,
    )
    budgets = settings.budgets(worker_count())
    limits = Limits(
        max_tensor_bytes=budgets.max_tensor,
        max_request_bytes=settings.max_request_bytes,
        max_message_bytes=settings.max_message_bytes,
        max_tensor_elements=settings.max_tensor_elements,
        max_request_elements=settings.max_request_elements,
        max_work=settings.max_work,
        max_run_bytes=budgets.call_memory,
    )
    pool = BufferPool(budgets.buffer_pool)
    catalog = Catalog(
        provider,
        feature_level=settings.feature_level,
        limits=limits,
        cache_capacity=settings.compile_cache_size,
        cache_bytes=budgets.compile_cache,
    )
    binding = Binding(
        pool,
        ResidentStore(
            Quota(
                settings.resident_tensors_per_caller,
                settings.resident_bytes_per_caller,
                _share(settings.resident_tensors_total),
                _share(budgets.resident_total),
                settings.resident_idle_seconds,
            ),
            device_of(provider),
        ),
        settings.max_message_bytes,
    )
    admission = Admission(settings.max_concurrent_requests, settings.max_queue_depth)
    version = server_version()
    heap = Heap(budgets.heap_retain)
    metrics = (
        Metrics(
            cache=catalog.cache,
            running=lambda: admission.running,
            waiting=lambda: admission.waiting,
            pool=pool,
            info={"version": version, "provider": provider.name, "device": provider.device},
            heap=heap,
        )
        if settings.metrics
        else None
    )
    workers = ThreadPoolExecutor(
        max_workers=settings.operator_threads(worker_count()), thread_name_prefix=OPERATOR_THREAD_PREFIX
    )
    memory = ByteBudget(budgets.call_memory, max_wait=settings.call_memory_wait_seconds, setting="--call-memory-bytes")
    scheduler = Scheduler(
        admission,
        workers,
        pool,
        memory,
        inline_work=settings.inline_work,
        batch_work=settings.batch_work,
        device_inline_work=settings.device_inline_work,
        max_batch_size=settings.max_batch_size,
        max_delay=settings.max_batch_delay_us / 1e6,
        sizes_by_case=settings.max_batch_size_by_operator,
        metrics=metrics,
    )
    service = Service(
        catalog,
        scheduler,
        binding,
        HandleStore(
            Quota(
                settings.compiled_operators_per_caller,
                settings.compiled_bytes_per_caller,
                _share(settings.compiled_operators_total),
                _share(budgets.compiled_total),
                settings.compiled_idle_seconds,
            )
        ),
        stream_chunk_bytes=CHUNK_BYTES,
        stream_limits=StreamLimits(settings.stream_items_in_flight, settings.stream_bytes_in_flight),
        max_graph_nodes=settings.max_graph_nodes,
        stream_idle_seconds=settings.stream_idle_seconds,
    )

    if metrics is not None:
        Gauge(
            "dmlrpc_call_memory_bytes",
            "Bytes of --call-memory-bytes reserved now by calls in progress (runs and unread responses)",
            registry=metrics.registry,
        ).set_function(lambda: memory.held)
        Gauge(
            "dmlrpc_call_memory_limit_bytes",
            "Bytes calls in progress may reserve (--call-memory-bytes)",
            registry=metrics.registry,
        ).set(memory.capacity)

    # One connection cannot open calls without bound (each holds a handler task, and a stalled one its buffers); the
    # bound is ours, answered by waiting or RESOURCE_EXHAUSTED, never by HTTP/2 refusing a stream.
    connections = ConnectionLimitInterceptor(settings.max_streams_per_connection)
    # What every call goes through, outermost first, wrapped around each handler once (ServedMethods): its span (with
    # tracing on), then its end (status, request id, log line, metrics) holding its connection's slot.
    wrappers: list[HandlerWrapper] = [ErrorInterceptor(metrics, connections)]
    tracing = None
    if settings.tracing != "off" or span_exporter is not None:
        # Only here: the extra may be missing where tracing is off, and off nothing of it is wrapped or imported.
        from dmlrpc_server.tracing import Tracing

        tracing = Tracing.otlp() if span_exporter is None else Tracing(span_exporter, batch=False)
        tracing.instrument(service)
        wrappers.insert(0, tracing.wrapper())  # outermost: the span covers the whole call
    gate = None
    tokens = settings.auth_tokens()
    if tokens:
        open_services = [*(("grpc.health.v1.Health",) if settings.auth_exempt_health else ())]
        if settings.auth_exempt_reflection:
            open_services.extend(REFLECTION_NAMES)
        gate = TokenAuth(tokens, open_services)
    served = ServedMethods(wrappers, gate)
    server = grpc.aio.server(handlers=(served,), options=server_options(settings))

    service_limits = service_pb2.Limits(
        max_message_bytes=settings.max_message_bytes,
        max_tensor_bytes=budgets.max_tensor,
        max_request_bytes=settings.max_request_bytes,
        max_tensor_elements=settings.max_tensor_elements,
        max_request_elements=settings.max_request_elements,
        max_concurrent_requests=settings.max_concurrent_requests,
        max_queue_depth=settings.max_queue_depth,
        max_batch_size=settings.max_batch_size,
        resident_tensors_per_caller=settings.resident_tensors_per_caller,
        resident_bytes_per_caller=settings.resident_bytes_per_caller,
        resident_bytes_total=budgets.resident_total,
        resident_idle_seconds=settings.resident_idle_seconds,
        compiled_operators_per_caller=settings.compiled_operators_per_caller,
        compiled_bytes_per_caller=settings.compiled_bytes_per_caller,
        compiled_idle_seconds=settings.compiled_idle_seconds,
        max_graph_nodes=settings.max_graph_nodes,
        max_stream_items_in_flight=settings.stream_items_in_flight,
        workers=worker_count(),
        max_work=settings.max_work,
        call_memory_bytes=budgets.call_memory,
        resident_tensors_total=settings.resident_tensors_total,
        compiled_operators_total=settings.compiled_operators_total,
        compiled_bytes_total=budgets.compiled_total,
        stream_idle_seconds=settings.stream_idle_seconds,
        max_streams_per_connection=settings.max_streams_per_connection,
        compile_cache_bytes=budgets.compile_cache,
    )
    caps = capabilities(catalog, server_version=version, limits=service_limits)
    repository = _repository(settings, provider, scheduler, catalog, service.handles)
    if metrics is not None:
        metrics.registry.register(ModelCollector(repository.served))
    served.add(handlers(DirectMLServicer(service, caps, authenticated=bool(tokens), publish=repository.publish)))
    inference = InferenceServicer(
        service,
        repository,
        version=version,
        shared_memory=SharedMemory() if settings.allow_client_shm else None,
    )
    served.add(oip_handlers(inference))
    health_servicer = health.aio.HealthServicer()
    served.add(method_handlers(_HEALTH, health_servicer, parse=lambda message: message.FromString))
    if settings.reflection:
        names = (SERVICE_NAME, oip_protocol.SERVICE_NAME, health.SERVICE_NAME, *REFLECTION_NAMES)
        served.add(reflection_handlers(names))

    address = f"{settings.host}:{settings.port}"
    credentials = server_credentials(settings)
    try:
        port = (
            server.add_insecure_port(address) if credentials is None else server.add_secure_port(address, credentials)
        )
    except RuntimeError as error:
        raise OSError(f"could not bind {address} (--port): {error}") from None
    if port == 0:
        raise OSError(f"could not bind {address} (--port)")
    _log.info(
        "configured %s on %s, feature level %s%s%s",
        provider.name,
        provider.device,
        feature_level_name(settings.feature_level),
        ", TLS" + (" with client certificates" if settings.tls_client_ca_file else "") if credentials else "",
        f", {len(tokens)} bearer token(s)" if tokens else "",
    )
    return BuiltServer(
        server,
        port,
        settings,
        service,
        health_servicer,
        metrics,
        workers,
        heap=heap,
        inference=inference,
        connections=connections,
        tracing=tracing,
        methods=served,
    )


def _repository(
    settings: ServerSettings,
    provider: Provider,
    scheduler: Scheduler,
    catalog: Catalog,
    handles: HandleStore,
) -> Repository:
    """The model repository of --model-repository, with the models to serve from the start loaded (a model that
    fails is reported by RepositoryIndex and logged; it never stops the server). Without one it holds only the
    models published from compiled handles."""
    repository = Repository(
        settings.model_repository,
        provider,
        scheduler,
        default_max_batch_size=settings.default_max_batch_size,
        explicit=settings.model_control_mode == "explicit",
        catalog=catalog,
        max_graph_nodes=settings.max_graph_nodes,
        handles=handles,
    )
    if settings.model_repository is None:
        return repository
    everything = not repository.explicit or "*" in settings.load_model
    for name in repository.names() if everything else settings.load_model:
        repository.install(repository.prepare(name))
    return repository
