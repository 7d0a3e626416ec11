"""Fixtures: the real server (build_server) on 127.0.0.1:0 in a background event loop, and real clients."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings

import dmlrpc
from dmlrpc_server import BuiltServer, ServerSettings, build_server
from tests.dml import report

T = TypeVar("T")

settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile(
    "ci", deadline=None, max_examples=250, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    # Under pytest-xdist (the README's test command, -n 2) a module's tests run on one worker (its fixtures' servers
    # start once, and a session fixture that builds into build/ runs once) and the whole DirectML lane on one: its
    # Wine server holds GB and must start once, beside the rest of the suite on the other worker.
    from xdist.scheduler import LoadScopeScheduling

    class ModulesAndTheLane(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return "tests/dml" if nodeid.startswith("tests/dml/") else nodeid.split("::", 1)[0]

    return ModulesAndTheLane(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    # pytest-xdist's controller: what the lane's worker sent of its server (tests/dml/report.py).
    report.LANE_SERVER.extend(tuple(entry) for entry in node.workeroutput.get(report.WORKER_OUTPUT, ()))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    report.write_summary(terminalreporter)


class ServerThread:
    """Runs a BuiltServer on its own event loop thread, as a deployed server runs on its own loop."""

    def __init__(self, settings: ServerSettings, *, ready: bool = True, span_exporter: Any = None) -> None:
        self.loop = asyncio.new_event_loop()
        started: Future[BuiltServer] = Future()

        def run() -> None:
            asyncio.set_event_loop(self.loop)

            async def start() -> BuiltServer:
                built = build_server(settings, span_exporter=span_exporter)
                await built.start(ready=ready)
                return built

            try:
                started.set_result(self.loop.run_until_complete(start()))
            except BaseException as error:  # surface start-up failures in the test thread
                started.set_exception(error)
                return
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, name="dmlrpc-test-server", daemon=True)
        self.thread.start()
        self.built = started.result(timeout=60)
        self.address = f"127.0.0.1:{self.built.port}"

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run a coroutine on the server's loop (for BuiltServer.ready(), stop(), ...) and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=timeout)

    def stop(self, grace: float | None = None) -> None:
        """Stop the server (a second call does nothing)."""
        if self.loop.is_closed():
            return
        self.call(self.built.stop(grace), timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


def start_server(*, ready: bool = True, **overrides: object) -> ServerThread:
    """Start a real server with test-friendly settings (CPU provider, ports 0) plus ``overrides``."""
    options: dict[str, object] = {"host": "127.0.0.1", "port": 0, "provider": "cpu", "metrics_port": 0, **overrides}
    return ServerThread(ServerSettings(**options), ready=ready)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def server() -> Iterator[ServerThread]:
    running = start_server()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def client(server: ServerThread) -> Iterator[dmlrpc.Client]:
    with dmlrpc.Client(server.address, timeout=60) as sdk:
        yield sdk


def scrape(server: ServerThread) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The server's /metrics over HTTP: {(sample name, sorted labels): value}."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    assert server.built.metrics_port, "metrics are off for this server"
    with urllib.request.urlopen(f"http://127.0.0.1:{server.built.metrics_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
