"""SIGTERM under load: health NOT_SERVING, new calls refused, every accepted call completes, exit code 0."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable

import numpy as np

import dmlrpc
from tests.test_cli import LISTENING, ServerProcess, spawn  # noqa: F401 - spawn is a fixture

CLIENTS = 4


def test_sigterm_during_load_completes_every_accepted_call(spawn: Callable[..., ServerProcess]) -> None:  # noqa: F811
    server = spawn("--port", "0", "--provider", "cpu", "--metrics-port", "0", "--shutdown-grace-seconds", "20")
    match = server.wait_for(LISTENING)
    assert match is not None, server.log()
    address = f"127.0.0.1:{match.group(1)}"
    data = np.random.default_rng(1).random((64, 1024), dtype=np.float32)  # 256 KiB: runs on a worker thread
    expected = np.sort(data, axis=1)[:, ::-1][:, :16]
    completed = 0
    refused: list[BaseException] = []
    wrong: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def load() -> None:
        nonlocal completed
        with dmlrpc.Client(address, timeout=60, retry=None) as client:
            while not stop.is_set():
                try:
                    values, _ = client.top_k(data, 16)
                except dmlrpc.DmlRpcError as error:
                    with lock:
                        refused.append(error)
                    return
                with lock:
                    completed += 1
                    if not np.array_equal(values, expected):
                        wrong.append("wrong values")

    threads = [threading.Thread(target=load) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while completed < 50 and time.monotonic() < deadline:
        time.sleep(0.01)
    at_signal = completed
    server.signal(signal.SIGTERM)
    code = server.finish(timeout=60)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)

    assert code == 0, server.log()
    assert at_signal >= 50
    assert not wrong
    # Every call either completed correctly or was refused as UNAVAILABLE: none was cut off mid-way.
    assert all(isinstance(error, dmlrpc.UnavailableError) for error in refused), refused
    assert len(refused) == CLIENTS  # each client ran until the server stopped answering
    assert any("shutting down" in line for line in server.lines), server.log()
    assert server.lines[-1].endswith("stopped"), server.log()
