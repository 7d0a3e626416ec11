"""Class 7, idle callers of the metrics endpoint: 500 connections that send nothing start no threads, and
/metrics and health still answer."""

from __future__ import annotations

import re
import socket
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import grpc

from tests.reliability.hostile import health_answers, wait_serving
from tests.reliability.test_fuzz import assert_still_serving
from tests.test_cli import LISTENING, ServerProcess, spawn  # noqa: F401 - spawn is a fixture

METRICS = re.compile(r"metrics on http://127\.0\.0\.1:(\d+)/metrics")
IDLE_CONNECTIONS = 500


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)", status, re.MULTILINE).group(1))  # type: ignore[union-attr]


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


def test_half_open_metrics_connections_start_no_threads(spawn: Callable[..., ServerProcess]) -> None:  # noqa: F811
    server = spawn("--port", "0", "--metrics-port", "0", "--provider", "cpu", "--workers", "1")
    metrics = server.wait_for(METRICS)
    listening = server.wait_for(LISTENING)
    assert metrics is not None and listening is not None, server.log()
    port = int(metrics.group(1))
    pid = server.process.pid
    with grpc.insecure_channel(f"127.0.0.1:{listening.group(1)}") as channel:
        wait_serving(channel)
        assert_still_serving(channel)  # warmed up: every thread a call needs exists
        assert "dmlrpc_build_info" in _scrape(port)
        before = _threads(pid)
        sockets = []
        try:
            for _ in range(IDLE_CONNECTIONS):
                sockets.append(socket.create_connection(("127.0.0.1", port), timeout=5))
                sockets[-1].sendall(b"GET /metr")  # half a request, and then nothing
            time.sleep(0.5)
            during = _threads(pid)
            assert during <= before + 2, (before, during)
            health_answers(channel)
            assert "dmlrpc_requests_total" in _scrape(port)  # a real scrape is answered while the 500 stay open
            assert_still_serving(channel)
        finally:
            for sock in sockets:
                sock.close()
        assert _threads(pid) <= before + 2
