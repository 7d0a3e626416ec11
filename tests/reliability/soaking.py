"""Soak load: mixed operators and sizes at a fixed number of calls in flight, with per-interval figures."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import dmlrpc
from dmlrpc import ops

#: The throughput benchmark's saturation point (docs/benchmarks.md: req/s stops rising at 64 in flight).
CONCURRENCY = 64


@dataclass(frozen=True)
class Workload:
    """One call of the mix, its expected first output, and how often it is drawn."""

    name: str
    call: ops.Call
    expected: np.ndarray
    weight: int


def workloads() -> list[Workload]:
    """Tiny ops (batched), medium tensors (worker threads), a strided desc and a streamed tensor."""
    rng = np.random.default_rng(11)
    tiny = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    medium = rng.standard_normal((64, 1024)).astype(np.float32)
    data = rng.standard_normal(4096).astype(np.float32)
    rows = rng.permutation(4096)[:256].reshape(-1, 1).astype(np.int64)
    updates = rng.standard_normal(256).astype(np.float32)
    scattered = data.copy()
    scattered[rows[:, 0]] = updates
    grid = rng.integers(-100, 100, (32, 32)).astype(np.int32)
    positions = np.argsort(rng.random((4, 32)), axis=0)[:4].astype(np.int32)
    values = rng.integers(-100, 100, (4, 32)).astype(np.int32)
    written = grid.copy()
    np.put_along_axis(written, positions, values, 0)
    large = rng.standard_normal((4, 1 << 19)).astype(np.float32)  # 8 MiB: over the SDK's stream threshold below
    return [
        Workload("top_k tiny", ops.top_k(tiny, 2), -np.sort(-tiny, axis=-1)[..., :2], 40),
        Workload(
            "scatter_nd tiny",
            ops.scatter_nd(np.arange(8, dtype=np.float32), np.array([[1], [3], [5], [7]]), np.ones(4, np.float32)),
            np.array([0, 1, 2, 1, 4, 1, 6, 1], np.float32),
            30,
        ),
        Workload("scatter_elements 32x32", ops.scatter_elements(grid, positions, values, 0), written, 10),
        Workload("top_k 64x1024", ops.top_k(medium, 16), -np.sort(-medium, axis=1)[:, :16], 10),
        Workload("scatter_nd 4096", ops.scatter_nd(data, rows, updates), scattered, 9),
        Workload("top_k 8 MiB streamed", ops.top_k(large, 4), -np.sort(-large, axis=1)[:, :4], 1),
    ]


def rss(pid: int) -> int:
    """The process's resident set size (VmRSS) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise KeyError("VmRSS")


@dataclass
class Interval:
    """Figures for one reporting interval."""

    end_s: float
    calls: int
    p50_ms: float
    p99_ms: float
    errors: dict[str, int]
    rss_bytes: int


@dataclass
class SoakReport:
    seconds: float
    warmup_s: float
    calls: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    wrong: int = 0
    intervals: list[Interval] = field(default_factory=list)
    rss_start: int = 0
    rss_end: int = 0

    @property
    def throughput(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    @property
    def rss_growth(self) -> float:
        return (self.rss_end - self.rss_start) / self.rss_start if self.rss_start else 0.0

    @property
    def unexpected_errors(self) -> dict[str, int]:
        """Errors other than backpressure (RESOURCE_EXHAUSTED)."""
        return {k: v for k, v in self.statuses.items() if k not in ("OK", "RESOURCE_EXHAUSTED")}


async def soak(
    address: str,
    pid: int,
    seconds: float,
    *,
    warmup_s: float = 5.0,
    concurrency: int = CONCURRENCY,
    interval_s: float = 5.0,
    on_interval: Callable[[Interval], None] | None = None,
    settled: Callable[[], None] | None = None,
) -> SoakReport:
    """Run the mix for ``warmup_s`` (not counted) then ``seconds``; the server's RSS is read with no call in flight
    after the warm-up and at the end, so calls' transient buffers do not count as growth (and, with ``settled``, once
    it has returned: e.g. once the server has trimmed its idle heap)."""
    mix = workloads()
    weights = np.array([w.weight for w in mix], dtype=np.float64)
    weights /= weights.sum()
    report = SoakReport(seconds=seconds, warmup_s=warmup_s)
    latencies: list[float] = []
    interval_errors: Counter[str] = Counter()
    measuring = False
    stop = asyncio.Event()

    async with dmlrpc.AsyncClient(address, timeout=60, retry=None, stream_threshold_bytes=4 << 20) as client:

        async def worker(seed: int) -> None:
            rng = np.random.default_rng(seed)
            while not stop.is_set():
                work = mix[int(rng.choice(len(mix), p=weights))]
                began = time.perf_counter()
                try:
                    outputs = await client.execute(work.call.operator_desc, work.call.inputs)
                    code = "OK"
                    first = np.asarray(outputs[0]).reshape(work.expected.shape)
                    if measuring and not np.array_equal(first, work.expected):
                        report.wrong += 1
                except dmlrpc.DmlRpcError as error:
                    code = error.code.name if error.code is not None else "UNKNOWN"
                if not measuring:
                    continue
                latencies.append(time.perf_counter() - began)
                report.statuses[code] += 1
                report.calls += 1
                if code != "OK":
                    interval_errors[code] += 1

        async def drain(running: list[asyncio.Task[None]]) -> None:
            stop.set()
            await asyncio.gather(*running, return_exceptions=True)
            stop.clear()

        tasks = [asyncio.create_task(worker(seed)) for seed in range(concurrency)]
        try:
            await asyncio.sleep(warmup_s)
            await drain(tasks)  # RSS is read with nothing in flight, at the start and at the end
            if settled is not None:
                await asyncio.to_thread(settled)
            report.rss_start = rss(pid)
            measuring = True
            tasks = [asyncio.create_task(worker(seed)) for seed in range(concurrency, 2 * concurrency)]
            started = time.monotonic()
            while (elapsed := time.monotonic() - started) < seconds:
                await asyncio.sleep(min(interval_s, seconds - elapsed))
                window, errors = sorted(latencies), dict(interval_errors)
                latencies.clear()
                interval_errors.clear()
                percentiles = np.percentile(window, [50, 99]) * 1000 if window else np.zeros(2)
                interval = Interval(
                    time.monotonic() - started,
                    len(window),
                    float(percentiles[0]),
                    float(percentiles[1]),
                    errors,
                    rss(pid),
                )
                report.intervals.append(interval)
                if on_interval is not None:
                    on_interval(interval)
            measuring = False
            await drain(tasks)
            if settled is not None:
                await asyncio.to_thread(settled)
            report.rss_end = rss(pid)
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
    return report
