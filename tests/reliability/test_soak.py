"""Soak, CI-sized: mixed load at 64 in flight on a server subprocess; no errors but backpressure, no gross leak."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from tests.reliability.soaking import soak
from tests.reliability.test_recycling import METRICS, scrape
from tests.test_cli import LISTENING, ServerProcess, spawn  # noqa: F401 - spawn is a fixture

SECONDS = 10.0
WARMUP_SECONDS = 10.0
#: The issue's goal is < 5 % over a long run (tools/soak.py, docs/reliability.md); CI bounds only gross leaks.
RSS_GROWTH_LIMIT = 0.25


def test_short_soak_has_no_errors_and_flat_memory(spawn: Callable[..., ServerProcess]) -> None:  # noqa: F811
    # NOTE: the server keeps no free heap (--heap-retain-bytes 0) and RSS is read once it has trimmed its idle heap:
    # with the default it may keep up to a sixteenth of its memory free for reuse, which a 10 s window reads as
    # growth or not depending on whether its idle trim has run yet (it failed +26 % once on one pinned core).
    server = spawn("--port", "0", "--provider", "cpu", "--metrics-port", "0", "--heap-retain-bytes", "0")
    metrics = server.wait_for(METRICS)  # logged before the listening line
    match = server.wait_for(LISTENING)
    assert match is not None and metrics is not None, server.log()
    metrics_port = int(metrics.group(1))

    def trimmed() -> None:
        seen = scrape(metrics_port)["dmlrpc_heap_trims_total"]
        deadline = time.monotonic() + 30
        while scrape(metrics_port)["dmlrpc_heap_trims_total"] == seen:
            assert time.monotonic() < deadline, "the idle server never trimmed its heap"
            time.sleep(0.05)

    report = asyncio.run(
        soak(
            f"127.0.0.1:{match.group(1)}",
            server.process.pid,
            SECONDS,
            warmup_s=WARMUP_SECONDS,
            interval_s=5.0,
            settled=trimmed,
        )
    )
    assert server.process.poll() is None, server.log()
    assert report.calls > 1000, report
    assert report.unexpected_errors == {}, report.statuses
    assert report.wrong == 0
    assert len(report.intervals) == 2 and all(i.calls > 0 for i in report.intervals), report.intervals
    print(f"RSS growth {report.rss_growth:+.2%}")
    assert report.rss_growth < RSS_GROWTH_LIMIT, (report.rss_start, report.rss_end, report.intervals)
