"""Prometheus metrics of one server, in a registry of its own, served over HTTP on a separate port."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.compiler import CompileCache

_log = logging.getLogger(__name__)

#: Latency buckets from 100 µs (a tiny operator) to 30 s (a multi-GiB tensor).
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    """Every metric the server exports (names and meanings are listed in the README's Metrics section)."""

    def __init__(
        self,
        *,
        cache: CompileCache,
        running: Callable[[], float],
        waiting: Callable[[], float],
        pool: BufferPool,
        info: dict[str, str],
    ) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.requests = Counter(
            "dmlrpc_requests",
            "RPCs finished, by method, operator type (Execute only) and gRPC status code",
            ["method", "operator", "code"],
            registry=registry,
        )
        self.request_duration = Histogram(
            "dmlrpc_request_duration_seconds",
            "Time from receiving a request to its response or error, by method and operator",
            ["method", "operator"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.queue_duration = Histogram(
            "dmlrpc_queue_duration_seconds",
            "Time an Execute call waited for a running slot",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.compute_duration = Histogram(
            "dmlrpc_compute_duration_seconds",
            "Time to validate, compile (on a cache miss) and run an operator, by operator",
            ["operator"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.batch_size = Histogram(
            "dmlrpc_batch_size", "Requests per ONNX Runtime run", buckets=BATCH_BUCKETS, registry=registry
        )
        self.received_bytes = Counter("dmlrpc_received_bytes", "Bytes of Execute requests received", registry=registry)
        self.sent_bytes = Counter("dmlrpc_sent_bytes", "Bytes of Execute responses sent", registry=registry)
        Gauge("dmlrpc_inflight_requests", "Execute calls running now", registry=registry).set_function(running)
        Gauge("dmlrpc_queued_requests", "Execute calls waiting for a running slot", registry=registry).set_function(
            waiting
        )
        Info("dmlrpc_build", "Server version, execution provider and device", registry=registry).info(info)
        registry.register(_CacheCollector(cache))
        registry.register(_PoolCollector(pool))
        self._http: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def serve(self, host: str, port: int) -> int:
        """Serve /metrics over HTTP on a background thread; returns the bound port."""
        address = host.strip("[]")
        try:
            self._http, self._thread = start_http_server(port, addr=address, registry=self.registry)
        except OSError as error:
            raise OSError(f"could not bind the metrics endpoint {host}:{port}: {error}") from None
        bound = int(self._http.server_port)
        _log.info("metrics on http://%s:%d/metrics", host, bound)
        return bound

    def close(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


class _CacheCollector(Collector):
    """Reads the compile cache's own counters at scrape time (no second set of books)."""

    def __init__(self, cache: CompileCache) -> None:
        self._cache = cache

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        stats = self._cache.stats
        yield CounterMetricFamily(
            "dmlrpc_compile_cache_hits", "Operator descs found compiled in the cache", value=stats.hits
        )
        yield CounterMetricFamily(
            "dmlrpc_compile_cache_misses", "Operator descs validated and compiled anew", value=stats.misses
        )
        yield CounterMetricFamily(
            "dmlrpc_compile_cache_evictions", "Compiled descs dropped to stay within capacity", value=stats.evictions
        )
        yield GaugeMetricFamily("dmlrpc_compile_cache_entries", "Compiled descs held now", value=len(self._cache))
        yield GaugeMetricFamily("dmlrpc_compile_cache_capacity", "Most compiled descs held", value=self._cache.capacity)


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
