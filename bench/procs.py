"""Child processes of a benchmark run: servers (found by their log lines), the raw TCP echo and the load generator."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
#: glibc settings that stop it from mmapping and unmapping every large buffer (see docs/benchmarks.md).
MALLOC_ENV = {
    "MALLOC_MMAP_THRESHOLD_": "4294967296",
    "MALLOC_TRIM_THRESHOLD_": "4294967296",
    "MALLOC_TOP_PAD_": "268435456",
}
_LISTENING = re.compile(r"listening on ([\w.\-\[\]:]+):(\d+)")
_METRICS = re.compile(r"metrics on http://([\w.\-\[\]:]+):(\d+)/metrics")
_WARMED = re.compile(r"warmed up in")


class ChildError(RuntimeError):
    pass


def _child_env(extra: dict[str, str] | None, malloc: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MALLOC_ENV and not k.startswith("DMLRPC_")}
    if malloc:
        env.update(MALLOC_ENV)
    env.update(extra or {})
    return env


class Server:
    """A server process; ``port`` (and ``metrics_port``) are parsed from the lines it writes to stderr."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        *,
        malloc: bool = False,
        ready: re.Pattern[str] | None = None,
        ready_count: int = 1,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self._spawn = (argv, malloc, ready, ready_count, env)  # what ``respawn`` starts again
        self._ready_count = ready_count  # lines matching ``ready`` to wait for (one per worker process)
        self._ready_seen = 0
        self.tail: deque[str] = deque(maxlen=40)
        self.port = 0
        self.metrics_port = 0
        self._ready = threading.Event()
        self._ready_pattern = ready
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=_child_env(env, malloc), text=True,
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.tail.append(line.rstrip())
            if (match := _METRICS.search(line)) is not None:
                self.metrics_port = int(match.group(2))
            elif (match := _LISTENING.search(line)) is not None:
                self.port = int(match.group(2))
            elif self._ready_pattern is not None and self._ready_pattern.search(line):
                self._ready_seen += 1
            # Ready once the port is known and (for our server) every worker has warmed up, in whatever order a
            # --workers N supervisor and its workers log these lines.
            if self.port and (self._ready_pattern is None or self._ready_seen >= self._ready_count):
                self._ready.set()
        self._ready.set()

    def wait_ready(self, timeout: float = 60.0) -> Server:
        if not self._ready.wait(timeout) or self.proc.poll() is not None or not self.port:
            raise ChildError(f"{self.name} did not start:\n" + "\n".join(self.tail))
        return self

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def pids(self) -> list[int]:
        """The server's process and its descendants (the workers of a ``--workers N`` server)."""
        found, queue = [], [self.proc.pid]
        while queue:
            pid = queue.pop()
            found.append(pid)
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/children") as children:
                        queue.extend(int(child) for child in children.read().split())
                except (OSError, ValueError):
                    continue
        return found

    def respawn(self) -> Server:
        """Stop this server and start the same command again: a fresh instance (wait for it with ``wait_ready``)."""
        self.stop()
        argv, malloc, ready, ready_count, env = self._spawn
        return Server(self.name, argv, malloc=malloc, ready=ready, ready_count=ready_count, env=env)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # The reader ends at the pipe's end; closing the pipe then keeps an in-process caller (a test) free of
        # unclosed-file warnings.
        self._reader.join(5)
        if self.proc.stderr is not None and not self._reader.is_alive():
            self.proc.stderr.close()


def our_server(
    name: str,
    flags: list[str] | None = None,
    *,
    malloc: bool = False,
    provider: str = "cpu",
    env: dict[str, str] | None = None,
) -> Server:
    argv = [sys.executable, "-m", "dmlrpc_server", "--port", "0", "--metrics-port", "0", "--provider", provider]
    flags = flags or []
    count = worker_count(flags, provider)
    return Server(name, [*argv, *flags], malloc=malloc, ready=_WARMED, ready_count=count, env=env)


def worker_count(flags: list[str], provider: str = "cpu") -> int:
    """The server processes ``our_server(name, flags, provider=provider)`` runs (``--workers N``, else the build's
    default for that provider: a ``--provider`` in ``flags`` wins, as it does on the server's command line)."""
    if "--workers" in flags:
        return int(flags[flags.index("--workers") + 1])
    try:
        from dmlrpc_server.settings import load_settings
    except ImportError:
        return 1
    # NOTE: the build's own settings resolve the default (it depends on the CPUs, the provider and the platform);
    # builds without --workers have no worker_processes. The provider must be the server's: on a GPU host "auto"
    # would resolve to the GPU's default (one worker) for a server that runs on the CPU provider.
    return int(getattr(load_settings(["--provider", provider, *flags], environ={}), "worker_processes", 1))


def echo_server(
    mode: str, *, malloc: bool = False, port: int = 0, args: list[str] | None = None, env: dict[str, str] | None = None
) -> Server:
    """``bench/echo_server.py --mode mode`` (``args``: its other flags, e.g. the top-k floor's)."""
    argv = [sys.executable, str(BENCH / "echo_server.py"), "--mode", mode, "--port", str(port), *(args or [])]
    return Server(f"echo-{mode}", argv, malloc=malloc, env=env)


def server_malloc_environment(flags: list[str]) -> dict[str, str]:
    """The malloc tuning our server's workers apply to themselves with ``flags`` on the CPU provider (as its
    ``__main__`` decides it: none with ``--no-tune-malloc``), as the environment that gives another process the same:
    the floors measured under our memory bound."""
    from dmlrpc_server.runtime.memory import malloc_environment
    from dmlrpc_server.settings import load_settings

    settings = load_settings(["--provider", "cpu", *flags], environ={})
    if not settings.tune_malloc:
        return {}
    return malloc_environment(settings.budgets(settings.worker_processes).heap_retain)


class EchoGroup:
    """``processes`` echo servers of one mode sharing one port (gRPC sets ``SO_REUSEPORT`` on Linux, as our
    ``--workers`` do): the first picks the port, the others bind it once it is known (in ``wait_ready``)."""

    def __init__(
        self, mode: str, processes: int, args: list[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        """``env``: the members' environment beside the runner's (e.g. ``server_malloc_environment``)."""
        self.mode = mode
        self.processes = processes
        self.args = args or []
        self.env = env
        self.members = [echo_server(mode, args=self.args, env=env)]

    def wait_ready(self, timeout: float = 60.0) -> EchoGroup:
        first = self.members[0].wait_ready(timeout)
        while len(self.members) < self.processes:
            member = echo_server(self.mode, port=first.port, args=self.args, env=self.env)
            self.members.append(member.wait_ready(timeout))
        return self

    @property
    def target(self) -> str:
        return self.members[0].target

    @property
    def metrics_port(self) -> int:
        return 0

    def pids(self) -> list[int]:
        return [pid for member in self.members for pid in member.pids()]

    def respawn(self) -> EchoGroup:
        """Stop every member and start the group again (wait for it with ``wait_ready``)."""
        self.stop()
        return EchoGroup(self.mode, self.processes, self.args, self.env)

    def stop(self) -> None:
        for member in self.members:
            member.stop()


def tcp_server() -> Server:
    return Server("tcp-echo", [sys.executable, str(BENCH / "tcp.py")])


class Loadgen:
    """The load generator process (``bench/loadgen.py``): one JSON job in, one JSON result out."""

    def __init__(self, *, malloc: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(BENCH / "loadgen.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_child_env(None, malloc), text=True,
        )  # fmt: skip

    @property
    def pid(self) -> int:
        return self.proc.pid

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """Runs one job; a result with ``unimplemented`` means the server lacks the job's method."""
        self.send(job)
        return self.receive(job)

    def send(self, job: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def receive(self, job: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise ChildError(f"the load generator exited (status {self.proc.wait()})")
        result: dict[str, Any] = json.loads(line)
        if "error" in result:
            raise ChildError(f"load generator job {job.get('kind')} failed: {result['error']}")
        return result

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class LoadgenPool:
    """``processes`` load generator processes running the same job at once; counts and req/s are summed.

    One Python client process cannot saturate a server of several workers on a many-core host. Only the first
    process measures the server's CPU; latency percentiles are the median of the processes' own.
    """

    def __init__(self, processes: int, *, malloc: bool = False) -> None:
        self.loadgens = [Loadgen(malloc=malloc) for _ in range(max(1, processes))]

    @property
    def pid(self) -> int:
        return self.loadgens[0].pid

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        if len(self.loadgens) == 1:
            return self.loadgens[0].run(job)
        for index, loadgen in enumerate(self.loadgens):
            loadgen.send(
                job if index == 0 else {k: v for k, v in job.items() if k not in ("server_pid", "server_pids")}
            )
        results = [loadgen.receive(job) for loadgen in self.loadgens]
        return combine(results)

    def stop(self) -> None:
        for loadgen in self.loadgens:
            loadgen.stop()


def combine(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One result of several load generator processes' results of the same job."""
    if any("unimplemented" in r for r in results):
        return next(r for r in results if "unimplemented" in r)
    count = sum(r["count"] for r in results)
    combined = dict(results[0])
    combined.update(
        count=count,
        errors=sum(r["errors"] for r in results),
        rps=sum(r["rps"] for r in results),
        processes=len(results),
    )
    for key in ("p50_us", "p99_us", "mean_us"):
        combined[key] = float(statistics.median(r[key] for r in results))
    combined["min_us"] = min(r["min_us"] for r in results)
    if "status_codes" in combined:  # ExecuteMany: per-item error codes
        codes: dict[str, int] = {}
        for r in results:
            for code, n in r["status_codes"].items():
                codes[code] = codes.get(code, 0) + n
        combined["status_codes"] = codes
    client = sum(r["client_cpu_us_per_call"] * r["count"] for r in results)
    combined["client_cpu_us_per_call"] = client / max(count, 1)
    combined["server_cpu_us_per_call"] = results[0]["server_cpu_us_per_call"] * results[0]["count"] / max(count, 1)
    return combined


def wait_quiet(max_wait: float = 2.0, busy_limit: float = 0.10, window: float = 0.2) -> bool:
    """Wait up to ``max_wait`` s until the machine's CPU is at most ``busy_limit`` busy over ``window``.

    Returns whether it became quiet (``False``: the run starts anyway, noted as noisy).
    """
    deadline = time.monotonic() + max_wait
    while True:
        before = _cpu_times()
        time.sleep(window)
        after = _cpu_times()
        if before is None or after is None:
            return True
        total = after[0] - before[0]
        busy = 1.0 - (after[1] - before[1]) / total if total > 0 else 0.0
        if busy <= busy_limit:
            return True
        if time.monotonic() >= deadline:
            return False


def _cpu_times() -> tuple[int, int] | None:
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return sum(fields), fields[3] + fields[4]  # total, idle + iowait


def metrics_text(metrics_port: int) -> str:
    """The server's /metrics exposition, as text."""
    from urllib.request import urlopen

    with urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as response:
        return str(response.read().decode())


def scrape(metrics_port: int) -> dict[str, float]:
    """The server's Prometheus samples without labels (``name -> value``)."""
    text = metrics_text(metrics_port)
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "{" not in line:
            name, _, value = line.partition(" ")
            try:
                samples[name] = float(value)
            except ValueError:
                continue
    return samples
