"""Prometheus metrics of one server, in a registry of its own, served over HTTP on a separate port (and, with
--workers, the workers' metrics summed by their supervisor)."""

from __future__ import annotations

import asyncio
import bisect
import errno
import gzip
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from urllib.request import urlopen

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, Info, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.cache import CompileCache
from dmlrpc_server.runtime.memory import Heap, resident_bytes
from dmlrpc_server.runtime.process import worker_index

_log = logging.getLogger(__name__)

#: The most bytes of a request's head (request line and headers) the metrics endpoint reads.
_HEAD_LIMIT = 16 * 1024

#: Calls ``Metrics`` records before it adds them to its series (``Metrics.fold``).
FOLD_EVERY = 128
#: Latency buckets from 100 µs (a tiny operator) to 30 s (a multi-GiB tensor).
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class _Child:
    """One labelled series: a counter value, or histogram bucket counts and a sum."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.sum += amount

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value


class _Series:
    """A counter or histogram family updated without locks: every update happens on the event loop thread.

    NOTE: prometheus-client's own metrics take a lock and walk every bucket in Python on each update, which cost
    about a quarter of the server's own CPU per tiny request; scrapes read these plain values instead.
    """

    def __init__(self, name: str, documentation: str, labels: tuple[str, ...] = (), buckets: tuple[float, ...] = ()):
        self.name = name
        self.documentation = documentation
        self.labelnames = labels
        self.buckets = buckets
        self.children: dict[tuple[str, ...], _Child] = {}
        self._unlabelled = self.labels() if not labels else None

    def labels(self, *values: str) -> _Child:
        child = self.children.get(values)
        if child is None:
            child = self.children[values] = _Child(self.buckets)
        return child

    def inc(self, amount: float = 1.0) -> None:
        assert self._unlabelled is not None
        self._unlabelled.sum += amount

    def observe(self, value: float) -> None:
        assert self._unlabelled is not None
        self._unlabelled.observe(value)

    def family(self) -> CounterMetricFamily | HistogramMetricFamily:
        if not self.buckets:
            counter = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
            for values, child in list(self.children.items()):
                counter.add_metric(values, child.sum)
            return counter
        histogram = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, child in list(self.children.items()):
            cumulative, total = [], 0
            for bound, count in zip((*self.buckets, float("inf")), list(child.counts), strict=True):
                total += count
                cumulative.append((floatToGoString(bound), total))  # type: ignore[no-untyped-call]
            histogram.add_metric(values, cumulative, child.sum)
        return histogram


class _Endpoint:
    """A registry served over HTTP/1.1 on the running event loop.

    NOTE: not prometheus-client's ``start_http_server``: it starts a thread per connection, and 500 connections that
    send nothing made 512 threads. Here a connection is a coroutine; at most ``MAX_CONNECTIONS`` are open (a new one
    closes the oldest that has not sent its request yet), a request must arrive within ``READ_SECONDS``, and the
    answer closes the connection.
    """

    #: Open connections served at once.
    MAX_CONNECTIONS = 32
    #: The longest wait for a request's head, and for a slow reader to take the answer.
    READ_SECONDS = 10.0
    #: Collect on a worker thread (the supervisor's collection scrapes its workers over HTTP, which blocks).
    offload = False

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._server: asyncio.Server | None = None
        #: Open connections, oldest first; True while still reading the request.
        self._open: dict[asyncio.StreamWriter, bool] = {}

    async def serve(self, host: str, port: int) -> int:
        """Serve /metrics over HTTP on the running event loop; returns the bound port."""
        address = host.strip("[]") or None
        try:
            self._server = await asyncio.start_server(self._connected, address, port, limit=_HEAD_LIMIT)
        except OSError as error:
            hint = (
                "; another process (another dmlrpc-server?) serves that port: give this server its own "
                "--metrics-port N (0 picks a free one) or --no-metrics"
                if error.errno == errno.EADDRINUSE
                else ""
            )
            raise OSError(f"could not bind the metrics endpoint {host}:{port}: {error.strerror}{hint}") from None
        bound = int(self._server.sockets[0].getsockname()[1])
        if worker_index() is None:
            _log.info("metrics on http://%s:%d/metrics", host, bound)
        else:
            # NOTE: worded apart from "metrics on": tools parse that line for the endpoint, the supervisor's.
            _log.info("worker metrics (summed by the supervisor) at http://%s:%d/metrics", host, bound)
        return bound

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._open) >= self.MAX_CONNECTIONS:
            idle = next((other for other, reading in self._open.items() if reading), None)
            if idle is None:  # every connection is being answered: this one waits for none of them
                writer.transport.abort()
                return
            idle.transport.abort()
            self._open.pop(idle, None)
        self._open[writer] = True
        try:
            await self._answer(reader, writer)
        except (OSError, EOFError, asyncio.LimitOverrunError, ValueError, TimeoutError, asyncio.TimeoutError):
            pass  # the client went away, sent garbage or too slowly: nothing to answer
        finally:
            self._open.pop(writer, None)
            writer.transport.abort()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.READ_SECONDS)
        self._open[writer] = False
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(":") for h in header_lines)}
        path = target.split("?", 1)[0]
        if method not in ("GET", "HEAD"):
            status, body, kind = "405 Method Not Allowed", b"only GET and HEAD\n", "text/plain"
        elif path not in ("/", "/metrics"):
            status, body, kind = "404 Not Found", b"metrics are at /metrics\n", "text/plain"
        else:
            status, kind = "200 OK", CONTENT_TYPE_LATEST
            if self.offload:
                body = await asyncio.get_running_loop().run_in_executor(None, generate_latest, self.registry)
            else:
                body = generate_latest(self.registry)
        encoding = ""
        if status.startswith("200") and "gzip" in headers.get("accept-encoding", ""):
            body = gzip.compress(body, compresslevel=1)
            encoding = "Content-Encoding: gzip\r\n"
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n{encoding}"
            "Connection: close\r\n\r\n".encode("latin-1")
        )
        if method != "HEAD":
            writer.write(body)
        await asyncio.wait_for(writer.drain(), self.READ_SECONDS)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()


class Metrics(_Endpoint):
    """Every metric the server exports (names and meanings are listed in the README's Metrics section)."""

    def __init__(
        self,
        *,
        cache: CompileCache,
        running: Callable[[], float],
        waiting: Callable[[], float],
        pool: BufferPool,
        info: dict[str, str],
        heap: Heap | None = None,
    ) -> None:
        super().__init__()
        registry = self.registry
        self.requests = _Series(
            "dmlrpc_requests",
            "RPCs finished, by method, operator type (Execute only) and gRPC status code",
            ("method", "operator", "code"),
        )
        self.request_duration = _Series(
            "dmlrpc_request_duration_seconds",
            "Time from receiving a request to its response or error, by method and operator",
            ("method", "operator"),
            LATENCY_BUCKETS,
        )
        self.queue_duration = _Series(
            "dmlrpc_queue_duration_seconds", "Time an Execute call waited for a running slot", (), LATENCY_BUCKETS
        )
        self.compute_duration = _Series(
            "dmlrpc_compute_duration_seconds",
            "Time to validate, compile (on a cache miss) and run an operator, by operator",
            ("operator",),
            LATENCY_BUCKETS,
        )
        self.batch_size = _Series("dmlrpc_batch_size", "Requests per ONNX Runtime run", (), BATCH_BUCKETS)
        self.received_bytes = _Series("dmlrpc_received_bytes", "Bytes of Execute requests received")
        self.sent_bytes = _Series("dmlrpc_sent_bytes", "Bytes of Execute responses sent")
        series = (
            self.requests,
            self.request_duration,
            self.queue_duration,
            self.compute_duration,
            self.batch_size,
            self.received_bytes,
            self.sent_bytes,
        )
        #: Calls recorded by ``ran``, ``finished`` and ``batched``, not yet in the series (``fold``).
        self._ran: list[tuple[str, int, float, float, int, int]] = []
        self._finished: list[tuple[str, str, str, float]] = []
        self._batched: list[int] = []
        registry.register(_SeriesCollector(series, self.fold))
        # The unlabelled series' one child each, held for ``fold``.
        self._queued, self._batches = self.queue_duration.labels(), self.batch_size.labels()
        self._received, self._sent = self.received_bytes.labels(), self.sent_bytes.labels()
        Gauge("dmlrpc_inflight_requests", "Execute calls running now", registry=registry).set_function(running)
        Gauge("dmlrpc_queued_requests", "Execute calls waiting for a running slot", registry=registry).set_function(
            waiting
        )
        Info("dmlrpc_build", "Server version, execution provider and device", registry=registry).info(info)
        registry.register(_CacheCollector(cache))
        registry.register(_PoolCollector(pool))
        registry.register(_MemoryCollector(heap))

    def ran(self, operator: str, batch: int, queued: float, computed: float, received: int, sent: int) -> None:
        """One call's run: its time waiting for a slot and computing, its bytes in and out, and the size of the
        batch it ran in (0: its batch lane counts the batch)."""
        pending = self._ran
        pending.append((operator, batch, queued, computed, received, sent))
        if len(pending) >= FOLD_EVERY:
            self.fold()

    def finished(self, method: str, operator: str, code: str, seconds: float) -> None:
        """One RPC's end: counted by its method, operator and status code, and its duration observed."""
        pending = self._finished
        pending.append((method, operator, code, seconds))
        if len(pending) >= FOLD_EVERY:
            self.fold()

    def batched(self, size: int) -> None:
        """One batch run of ``size`` requests, whichever queue ran it."""
        pending = self._batched
        pending.append(size)
        if len(pending) >= FOLD_EVERY:
            self.fold()

    def fold(self) -> None:
        """Add the calls ``ran``, ``finished`` and ``batched`` recorded to their series (a scrape folds first).

        NOTE: a call records a tuple, and the series are updated in bulk: one at a time, a tiny call's half-dozen
        scattered series updates (children, buckets, sums) cost more than the rest of its metrics, as the gRPC
        machinery between calls leaves them out of the CPU's caches. Use from the event loop thread only.
        """
        ran, self._ran = self._ran, []
        queue, batches, received, sent = self._queued, self._batches, self._received, self._sent
        compute = self.compute_duration
        for operator, batch, queued, computed, size, answered in ran:
            if batch:
                batches.observe(batch)
            queue.observe(queued)
            (compute.children.get((operator,)) or compute.labels(operator)).observe(computed)
            received.sum += size
            sent.sum += answered
        batched, self._batched = self._batched, []
        for size in batched:
            batches.observe(size)
        finished, self._finished = self._finished, []
        requests, durations = self.requests, self.request_duration
        for method, operator, code, seconds in finished:
            (requests.children.get((method, operator, code)) or requests.labels(method, operator, code)).sum += 1
            (durations.children.get((method, operator)) or durations.labels(method, operator)).observe(seconds)


class WorkerMetrics(_Endpoint):
    """The supervisor's endpoint: every worker's metrics scraped at once and summed, plus ``dmlrpc_workers``,
    ``dmlrpc_worker_restarts`` and ``dmlrpc_worker_recycles``.

    Counters, histograms and gauges with equal labels are summed over the workers; ``*_info`` families are taken
    from one worker, as every worker reports the same build. The counters and histograms of a process that ended
    (recycled, restarted) are carried on in the sums, so they never go back: its final values where it sent them
    (``retire``), else those of its last scrape.
    """

    offload = True

    def __init__(
        self,
        workers: Callable[[], list[tuple[int, int, bool]]],
        restarts: Callable[[], int],
        *,
        recycles: Callable[[], int] = lambda: 0,
        timeout: float = 5.0,
    ) -> None:
        """``workers``: (pid, metrics port, whether it is a worker's current process) of every worker process that
        serves metrics now, recycled ones finishing their calls included."""
        super().__init__()
        self._workers = _WorkersCollector(workers, restarts, recycles, timeout)
        self.registry.register(self._workers)

    def retire(self, pid: int, final: str) -> None:
        """Carry the final exposition of worker process ``pid``, which is ending, into the sums."""
        self._workers.retire(pid, final)


def _scrape(port: int, timeout: float) -> str | None:
    try:
        with urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as response:
            return str(response.read().decode())
    except OSError as error:  # the worker is restarting or stopping: its share is missing from this scrape
        _log.debug("metrics of the worker on port %d: %s", port, error)
        return None


#: {family name: (documentation, type, {(sample name, sorted labels): value})}
_Families = dict[str, tuple[str, str, dict[tuple[str, tuple[tuple[str, str], ...]], float]]]
#: Families whose samples only grow within one process (``*_created`` samples, timestamps, excepted).
_GROWING = frozenset({"counter", "histogram", "summary"})


def _growing(text: str) -> _Families:
    """The counters and histograms of one exposition."""
    families: _Families = {}
    for family in text_string_to_metric_families(text):
        if family.type in _GROWING:
            families[family.name] = (
                family.documentation,
                family.type,
                {
                    (sample.name, tuple(sorted(sample.labels.items()))): sample.value
                    for sample in family.samples
                    if not sample.name.endswith("_created")
                },
            )
    return families


def _add(total: _Families, more: _Families) -> None:
    for name, (documentation, kind, samples) in more.items():
        values = total.setdefault(name, (documentation, kind, {}))[2]
        for key, value in samples.items():
            values[key] = values.get(key, 0.0) + value


def sum_families(texts: Iterable[str], carried: _Families | None = None) -> list[Metric]:
    """Prometheus text expositions merged: samples of equal name and labels summed, ``*_info`` from the first;
    ``carried`` (the counters of processes gone) added in."""
    merged: dict[str, Metric] = {}
    sums: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
    for text in texts:
        for family in text_string_to_metric_families(text):
            known = merged.get(family.name)
            if known is None:
                known = merged[family.name] = Metric(family.name, family.documentation, family.type)
                sums[family.name] = {}
            elif family.name.endswith("_info"):
                continue
            values = sums[family.name]
            for sample in family.samples:
                key = (sample.name, tuple(sorted(sample.labels.items())))
                values[key] = values.get(key, 0.0) + sample.value
    for name, (documentation, kind, samples) in (carried or {}).items():
        if name not in merged:
            merged[name] = Metric(name, documentation, kind)
        values = sums.setdefault(name, {})
        for key, value in samples.items():
            values[key] = values.get(key, 0.0) + value
    for name, family in merged.items():
        for (sample_name, labels), value in sums[name].items():
            family.add_sample(sample_name, dict(labels), value)
    return list(merged.values())


class _WorkersCollector(Collector):
    def __init__(
        self,
        workers: Callable[[], list[tuple[int, int, bool]]],
        restarts: Callable[[], int],
        recycles: Callable[[], int],
        timeout: float,
    ) -> None:
        self._workers = workers
        self._restarts = restarts
        self._recycles = recycles
        self._timeout = timeout
        # NOTE: scrapes run on worker threads, retire on the supervisor's event loop.
        self._lock = threading.Lock()
        #: Each live process's counters at its last scrape, by pid: what is carried if it ends without a word.
        self._last: dict[int, _Families] = {}
        #: Processes whose final counters are carried already: a scrape that raced their end is not counted again.
        self._retired: set[int] = set()
        #: The counters of every process gone.
        self._carried: _Families = {}

    def retire(self, pid: int, final: str) -> None:
        with self._lock:
            self._last.pop(pid, None)
            if pid not in self._retired:
                _add(self._carried, _growing(final))
                self._retired.add(pid)

    def collect(self) -> Iterator[Metric]:
        workers = self._workers()
        texts = {pid: text for pid, text in ((pid, _scrape(port, self._timeout)) for pid, port, _ in workers) if text}
        live = {pid for pid, _, _ in workers}
        serving = sum(1 for pid, _, current in workers if current and pid in texts)
        with self._lock:
            for pid in [pid for pid in self._last if pid not in live]:  # ended without its final counters
                _add(self._carried, self._last.pop(pid))
            self._retired &= live
            counted = [text for pid, text in texts.items() if pid not in self._retired]
            for pid, text in texts.items():
                if pid not in self._retired:
                    self._last[pid] = _growing(text)
            carried = {name: (doc, kind, dict(values)) for name, (doc, kind, values) in self._carried.items()}
            for pid in live - texts.keys() - self._retired:
                # Alive but not answering (a recycled process stops serving /metrics just before it sends its final
                # counters): its last scrape stands in, so the sums do not dip meanwhile.
                _add(carried, self._last.get(pid, {}))
        yield from sum_families(counted, carried)
        yield GaugeMetricFamily("dmlrpc_workers", "Workers whose metrics this scrape summed", serving)
        yield CounterMetricFamily(
            "dmlrpc_worker_restarts", "Worker processes restarted after they died", value=self._restarts()
        )
        yield CounterMetricFamily(
            "dmlrpc_worker_recycles",
            "Worker processes replaced after creating --max-sessions-per-worker ONNX Runtime sessions",
            value=self._recycles(),
        )


class _SeriesCollector(Collector):
    def __init__(self, series: tuple[_Series, ...], fold: Callable[[], None]) -> None:
        self._series = series
        self._fold = fold

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        self._fold()
        for series in self._series:
            yield series.family()


class _CacheCollector(Collector):
    """Reads the compile cache's own counters at scrape time (no second set of books)."""

    def __init__(self, cache: CompileCache) -> None:
        self._cache = cache

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        stats = self._cache.stats
        yield CounterMetricFamily(
            "dmlrpc_compile_cache_hits", "Operator descs found compiled in the cache", value=self._cache.hits
        )
        yield CounterMetricFamily(
            "dmlrpc_compile_cache_misses", "Operator descs validated and compiled anew", value=stats.misses
        )
        yield CounterMetricFamily(
            "dmlrpc_compile_cache_evictions", "Compiled descs dropped to stay within capacity", value=stats.evictions
        )
        fallbacks = CounterMetricFamily(
            "dmlrpc_provider_fallbacks",
            "Compiled descs the execution provider could not run in full, run on the CPU provider instead "
            "(kind: session, all of it; nodes, some of its nodes)",
            labels=("operator", "kind"),
        )
        for (operator, kind), count in sorted(stats.fallbacks.items()):
            fallbacks.add_metric((operator, kind), count)
        yield fallbacks
        yield GaugeMetricFamily("dmlrpc_compile_cache_entries", "Compiled descs held now", value=len(self._cache))
        yield GaugeMetricFamily("dmlrpc_compile_cache_capacity", "Most compiled descs held", value=self._cache.capacity)
        yield GaugeMetricFamily(
            "dmlrpc_compile_cache_bytes",
            "Estimated bytes of the compiled descs (sessions, models) and desc aliases held now",
            value=self._cache.held_bytes,
        )
        yield GaugeMetricFamily(
            "dmlrpc_compile_cache_max_bytes", "Most bytes the compiled descs may hold", value=self._cache.max_bytes
        )
        yield CounterMetricFamily(
            "dmlrpc_compile_cache_uncached",
            "Descs compiled for their call only (alone over the cache's byte bound)",
            value=stats.uncached,
        )


class _PoolCollector(Collector):
    """Reads the buffer pool's counters at scrape time."""

    def __init__(self, pool: BufferPool) -> None:
        self._pool = pool

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        stats = self._pool.stats
        yield GaugeMetricFamily(
            "dmlrpc_buffer_pool_bytes", "Bytes of free buffers the pool holds for reuse", value=stats.held_bytes
        )
        yield GaugeMetricFamily(
            "dmlrpc_buffer_pool_lent_bytes", "Bytes of pooled buffers in use now", value=stats.lent_bytes
        )
        yield CounterMetricFamily("dmlrpc_buffer_pool_hits", "Buffers served from the pool", value=stats.hits)
        yield CounterMetricFamily("dmlrpc_buffer_pool_misses", "Buffers newly allocated", value=stats.misses)


class _MemoryCollector(Collector):
    """The process's resident memory and glibc's free heap, read at scrape time."""

    def __init__(self, heap: Heap | None) -> None:
        self._heap = heap

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        resident = resident_bytes()
        if resident is not None:
            yield GaugeMetricFamily(
                "dmlrpc_resident_memory_bytes", "Resident memory of the server process (VmRSS)", value=resident
            )
        heap = self._heap
        if heap is None or not heap.available:
            return
        yield GaugeMetricFamily(
            "dmlrpc_heap_free_bytes",
            "Free bytes in the malloc heap as glibc counts them (pages a trim gave back to the kernel included)",
            value=heap.free_bytes(),
        )
        yield GaugeMetricFamily(
            "dmlrpc_heap_retain_bytes", "Free heap bytes kept for reuse before a trim", value=heap.retain_bytes
        )
        yield CounterMetricFamily(
            "dmlrpc_heap_trims", "Times free heap memory was given back to the kernel", value=heap.stats.trims
        )
        yield CounterMetricFamily(
            "dmlrpc_heap_trim_seconds", "Time spent giving free heap memory back", value=heap.stats.trim_seconds
        )
