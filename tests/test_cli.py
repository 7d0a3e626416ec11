"""The command line: `python -m dmlrpc_server` as a real process, its log, a real client, and signals."""

from __future__ import annotations

import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import dmlrpc
from tests.doc_blocks import block

ROOT = Path(__file__).resolve().parents[1]
LISTENING = re.compile(r"dmlrpc server listening on 127\.0\.0\.1:(\d+)$")
START_TIMEOUT = 60.0
#: Windows delivers no signal to another process (Popen.send_signal(SIGTERM) terminates it; a console's Ctrl-C or
#: Ctrl-Break reaches only processes sharing the sender's console, which piped ones under Wine lack): there the
#: server runs behind this relay, which raises each signal named on its stdin inside the server's process, as the
#: console's control handler does. Its module has no ``main``, so a supervisor's workers run plain dmlrpc_server.
#: Its stdin ends when the test process does (even one that pytest-timeout ended with os._exit): the server then
#: exits too, as a killed one would, rather than outlive the run (Wine waits for every process of its own).
WINDOWS = sys.platform == "win32"
_RELAY = """import os, signal, sys, threading
import dmlrpc_server.__main__ as entry
def relay():
    for line in sys.stdin:
        signal.raise_signal(getattr(signal, line.strip()))
    os._exit(70)
threading.Thread(target=relay, daemon=True).start()
sys.exit(entry.main())
"""


class ServerProcess:
    """`python -m dmlrpc_server ...` with its stderr (the log) read line by line on a background thread."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, *(["-c", _RELAY] if WINDOWS else ["-m", "dmlrpc_server"]), *args],
            cwd=ROOT,
            stdin=subprocess.PIPE if WINDOWS else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: re.Pattern[str], timeout: float = START_TIMEOUT) -> re.Match[str] | None:
        """The first log line matching ``pattern``, or None if the process closed its log first."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no log line matching {pattern.pattern!r} in {timeout} s:\n" + self.log())
            try:
                line = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                return None
            self.lines.append(line)
            match = pattern.search(line)
            if match:
                return match

    def signal(self, sig: signal.Signals) -> None:
        """Send the server ``sig`` (SIGTERM, SIGINT; on Windows through the relay, _RELAY)."""
        if not WINDOWS:
            self.process.send_signal(sig)
            return
        assert self.process.stdin is not None
        self.process.stdin.write(f"{sig.name}\n")
        self.process.stdin.flush()

    def finish(self, timeout: float = 30.0) -> int:
        """Wait for the exit code and the rest of the log."""
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
        return code

    def log(self) -> str:
        return "\n".join(self.lines)

    def close(self) -> None:
        """Kill the process if it still runs, and release its pipes; fails if a process it started outlives it."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        if self.process.stdin is not None:
            self.process.stdin.close()
        # NOTE: its workers inherit the log pipe. A reader still blocked on it holds its buffer's lock, and closing
        # it would wait on that for as long as a worker lives on.
        assert not self._reader.is_alive(), (
            f"the server's log pipe is still open: a process it started outlived it\n{self.log()}"
        )
        assert self.process.stderr is not None
        self.process.stderr.close()


@pytest.fixture
def spawn() -> Iterator[Callable[..., ServerProcess]]:
    """Start `python -m dmlrpc_server *args`; every process started is closed after the test."""
    started: list[ServerProcess] = []

    def start(*args: str) -> ServerProcess:
        started.append(ServerProcess(*args))
        return started[-1]

    yield start
    for process in started:
        process.close()


def _run(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dmlrpc_server", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serves_top_k_and_exits_0_on_signal(spawn: Callable[..., ServerProcess], sig: signal.Signals) -> None:
    server = spawn("--port", "0", "--provider", "cpu", "--metrics-port", "0")
    match = server.wait_for(LISTENING)
    assert match is not None, server.log()
    port = int(match.group(1))
    assert port > 0
    assert any("CPUExecutionProvider" in line for line in server.lines), server.log()

    with dmlrpc.Client(f"127.0.0.1:{port}", timeout=60) as client:
        values, indices = client.top_k(np.array([[3.0, 9.0, 1.0, 7.0]], np.float32), 2)
        capabilities = client.get_capabilities()
    np.testing.assert_array_equal(values, [[9.0, 7.0]])
    np.testing.assert_array_equal(indices, [[1, 3]])
    assert capabilities.execution_provider == "CPUExecutionProvider"

    server.signal(sig)
    assert server.finish(timeout=30) == 0, server.log()
    assert any("shutting down" in line for line in server.lines), server.log()


@pytest.mark.skipif(
    "DmlExecutionProvider" in ort.get_available_providers(), reason="this ONNX Runtime build has DirectML"
)
def test_directml_provider_unavailable_exits_2_with_a_clear_message() -> None:
    result = _run(["--port", "0", "--provider", "directml", "--metrics-port", "0"])
    assert result.returncode == 2, result.stderr
    assert "DmlExecutionProvider is not available in this ONNX Runtime build" in result.stderr
    assert "install onnxruntime-directml" in result.stderr
    assert "Traceback" not in result.stderr
    assert "listening" not in result.stderr


def test_help_lists_the_main_flags() -> None:
    result = _run(["--help"])
    assert result.returncode == 0, result.stderr
    for flag in ("--host", "--port", "--provider", "--feature-level", "--max-message-bytes"):
        assert flag in result.stdout
    assert "{auto,directml,cuda,cpu}" in result.stdout
    # Metavars say what a value is, not its Python type; no "(default: null)", no default said twice.
    assert "--max-message-bytes BYTES" in result.stdout and "--port PORT" in result.stdout
    assert "--workers N" in result.stdout and "--feature-level LEVEL" in result.stdout
    for noise in (" int]", " str]", " Path]", "SecretStr", "dict[", "default: null", "default factory"):
        assert noise not in result.stdout, noise
    assert "(default: 512 MiB)" in " ".join(result.stdout.split())  # argparse wraps its lines
    assert "(default: 25600)" not in result.stdout  # the feature level's description states its default


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--provider", "tpu"], "--provider (DMLRPC_PROVIDER): Input should be 'auto', 'directml', 'cuda' or 'cpu'"),
        (["--port", "http"], "--port (DMLRPC_PORT): Input should be a valid integer"),
        (["--port", "70000"], "--port (DMLRPC_PORT): Input should be less than or equal to 65535"),
        (["--feature-level", "9.9"], "--feature-level (DMLRPC_FEATURE_LEVEL)"),
        (["--tls-cert-file", "pyproject.toml"], "tls_cert_file and tls_key_file go together"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    ],
)
def test_bad_flags_exit_2(args: list[str], message: str) -> None:
    result = _run(args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("workers", ["1", "2"])
def test_port_in_use_exits_with_a_clear_message_naming_the_flag(workers: str) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = _run(["--port", str(port), "--provider", "cpu", "--metrics-port", "0", "--workers", workers])
    assert result.returncode != 0
    assert f"could not bind 127.0.0.1:{port} (--port)" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr


def test_second_server_on_the_same_port_is_refused(spawn: Callable[..., ServerProcess]) -> None:
    port = str(_free_port())
    first = spawn("--port", port, "--provider", "cpu", "--metrics-port", "0")
    assert first.wait_for(LISTENING) is not None, first.log()
    second = spawn("--port", port, "--provider", "cpu", "--metrics-port", "0")
    match = second.wait_for(LISTENING)
    assert match is None, f"a second server listens on port {port}:\n{second.log()}"
    assert second.finish() != 0


@pytest.mark.parametrize("workers", ["1", "2"])
def test_metrics_port_in_use_exits_2_naming_the_flag(workers: str) -> None:
    # A second server on one host with the default --metrics-port: a message naming the flag, nothing else (before,
    # gRPC's server also printed an "Event loop is closed" traceback on its way out).
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        metrics_port = holder.getsockname()[1]
        result = _run(["--port", "0", "--provider", "cpu", "--workers", workers, "--metrics-port", str(metrics_port)])
    assert result.returncode == 2, result.stderr
    assert f"could not bind the metrics endpoint 127.0.0.1:{metrics_port}" in result.stderr
    assert "--metrics-port N (0 picks a free one) or --no-metrics" in result.stderr
    assert "Traceback" not in result.stderr and "Event loop is closed" not in result.stderr, result.stderr


def _readme_worker_commands() -> list[list[str]]:
    text = block("README.md", "sh", "workers").text
    return [shlex.split(line.split("#")[0]) for line in text.strip().splitlines()]


@pytest.mark.parametrize("command", _readme_worker_commands(), ids=lambda words: " ".join(words[2:]))
def test_readme_worker_samples_serve(spawn: Callable[..., ServerProcess], command: list[str]) -> None:
    # The README's --workers samples as written, on a free port instead of 50051 (and metrics on any free port):
    # every worker answers (consecutive ports: each its own), with one listening line for the whole server.
    assert command[0] == "dmlrpc-server"
    port = _free_port()
    consecutive = "consecutive" in command
    if consecutive:  # worker i listens on port + i: find two free ones in a row
        while True:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port + 1))
                    break
                except OSError:
                    port = _free_port()
    server = spawn(*command[1:], "--port", str(port), "--metrics-port", "0")
    listening = re.compile(r"dmlrpc server listening on (?:127\.0\.0\.1|0\.0\.0\.0):(\d+)")
    assert server.wait_for(listening) is not None, server.log()
    workers = int(command[command.index("--workers") + 1])
    ports = [port + i for i in range(workers)] if consecutive else [port]
    data = np.array([[3, 9, 1, 7]], np.float32)
    for each in ports:
        with dmlrpc.Client(f"127.0.0.1:{each}", timeout=START_TIMEOUT) as client:
            deadline = time.monotonic() + START_TIMEOUT
            while True:
                try:
                    values, _ = client.top_k(data, k=2, axis=1)
                    break
                except dmlrpc.UnavailableError:
                    assert time.monotonic() < deadline, server.log()
                    time.sleep(0.2)
        np.testing.assert_array_equal(values, [[9, 7]])


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_second_ctrl_c_exits_at_once(spawn: Callable[..., ServerProcess], workers: str) -> None:
    # The first SIGINT starts a shutdown that would drain for a minute; the second ends the server now (exit 1).
    server = spawn("--port", "0", "--provider", "cpu", "--metrics-port", "0", "--workers", workers,
                   "--shutdown-drain-seconds", "60")  # fmt: skip
    assert server.wait_for(LISTENING) is not None, server.log()
    server.signal(signal.SIGINT)
    assert server.wait_for(re.compile(r"shutting down \(drain 60\.0 s")) is not None, server.log()
    server.signal(signal.SIGINT)
    assert server.finish(timeout=30) == 1, server.log()
    assert "second stop signal" in server.log()
