"""Soak, CI-sized: mixed load at 64 in flight on a server subprocess; no errors but backpressure, no gross leak."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.reliability.soaking import soak
from tests.test_cli import LISTENING, ServerProcess, spawn  # noqa: F401 - spawn is a fixture

SECONDS = 10.0
WARMUP_SECONDS = 10.0
#: The issue's goal is < 5 % over a long run (tools/soak.py, docs/reliability.md); 10 s after a 10 s warm-up moved
#: between -3 % and +4 % in trial runs (the server keeps freed memory for reuse), so CI bounds only gross leaks.
RSS_GROWTH_LIMIT = 0.25


def test_short_soak_has_no_errors_and_flat_memory(spawn: Callable[..., ServerProcess]) -> None:  # noqa: F811
    server = spawn("--port", "0", "--provider", "cpu", "--metrics-port", "0")
    match = server.wait_for(LISTENING)
    assert match is not None, server.log()
    report = asyncio.run(
        soak(f"127.0.0.1:{match.group(1)}", server.process.pid, SECONDS, warmup_s=WARMUP_SECONDS, interval_s=5.0)
    )
    assert server.process.poll() is None, server.log()
    assert report.calls > 1000, report
    assert report.unexpected_errors == {}, report.statuses
    assert report.wrong == 0
    assert len(report.intervals) == 2 and all(i.calls > 0 for i in report.intervals), report.intervals
    print(f"RSS growth {report.rss_growth:+.2%}")
    assert report.rss_growth < RSS_GROWTH_LIMIT, (report.rss_start, report.rss_end, report.intervals)
