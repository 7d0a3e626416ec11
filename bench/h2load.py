"""h2load as a compiled gRPC unary load generator: one run, its parsed summary, and proof that its calls succeeded."""

from __future__ import annotations

import argparse
import re
import resource
import shlex
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import procs
import report

METHOD = "/dmlrpc.v1.DirectMLService/Execute"
MISSING = "!!!!!!!! h2load IS NOT INSTALLED: run tools/install-h2load.sh (CI does) !!!!!!!!"
#: h2load counts any HTTP 200 as a success; a gRPC error is an HTTP 200 too, with grpc-status in its trailers.
HEADERS = ("content-type: application/grpc", "te: trailers")

_FINISHED = re.compile(r"finished in ([\d.]+)(us|ms|s), ([\d.]+) req/s")
_REQUESTS = re.compile(
    r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout"
)
_STATUS = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
_DATA = re.compile(r"traffic: .*\((\d+)\) data")
_REQUESTS_TOTAL = re.compile(r"^dmlrpc_requests_total\{(?P<labels>[^}]*)\} (?P<value>[\d.eE+]+)$", re.M)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


class CallsFailed(RuntimeError):
    """h2load's run did not consist of successful gRPC calls only (or did not finish)."""


def find(given: str | None = None) -> str | None:
    """The h2load binary: ``given``, else the one on PATH."""
    return given or shutil.which("h2load")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every h2load bench takes: the binary, the server's extra flags, the quiet wait and the outputs."""
    parser.add_argument("--h2load", help="the h2load binary (default: on PATH; tools/install-h2load.sh)")
    parser.add_argument("--server-flags", default="", help="extra dmlrpc-server flags")
    parser.add_argument("--quiet-wait", type=float, default=2.0, help="max seconds to wait for a quiet CPU per run")
    parser.add_argument("--json", type=Path, metavar="FILE", help="save rows, raw results and conditions")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="write the results table as Markdown")


def _add_load_arguments(parser: argparse.ArgumentParser, reps: int) -> None:
    """The options of interleaved h2load runs: each run's length, the repetitions, the loaded runs' concurrency."""
    parser.add_argument("--duration", type=float, default=2.0, help="seconds of each measured run")
    parser.add_argument("--reps", type=int, default=reps, help="interleaved repetitions")
    parser.add_argument("--connections", type=int, default=8, help="h2load -c of the 64-in-flight load")
    parser.add_argument("--streams", type=int, default=8, help="h2load -m (calls in flight a connection)")


def prepare(
    parser: argparse.ArgumentParser, script: str, argv: list[str] | None, *, reps: int | None = None
) -> tuple[argparse.Namespace, str, dict[str, Any]] | None:
    """``bench/<script>``'s arguments (``parser``'s and ``add_arguments``'; with ``reps``, the interleaved runs' too,
    ``reps`` repetitions by default), the h2load binary and the run's conditions (with h2load's version), ``argv``
    None meaning this process's; None, said loudly, without h2load."""
    add_arguments(parser)
    if reps is not None:
        _add_load_arguments(parser, reps)
    args = parser.parse_args(argv)
    binary = find(args.h2load)
    if binary is None:
        print(MISSING, file=sys.stderr)
        return None
    command = f"python bench/{script} " + shlex.join(sys.argv[1:] if argv is None else argv)
    info = report.conditions(command.strip())
    info["h2load"] = version(binary)
    return args, binary, info


def version(binary: str) -> str:
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else "?"


#: Bytes of a gRPC message frame's header: the compressed flag and the 4-byte length.
FRAME_HEADER = 5


def grpc_frame(message: bytes) -> bytes:
    """One uncompressed gRPC message frame: flag byte 0, 4-byte big-endian length, the message."""
    return b"\0" + struct.pack(">I", len(message)) + message


@dataclass(frozen=True)
class Load:
    """h2load's concurrency: ``connections`` TCP connections (``-c``), ``streams`` calls in flight on each (``-m``),
    ``threads`` client threads (``-t``, at most ``connections``)."""

    connections: int
    streams: int
    threads: int = 1

    @property
    def inflight(self) -> int:
        return self.connections * self.streams

    def label(self) -> str:
        return f"{self.connections} conn x {self.streams} streams"


def parse_summary(text: str) -> dict[str, Any]:
    """The figures of h2load's summary (req/s, request counts, HTTP status classes, DATA bytes received)."""
    finished, requests = _FINISHED.search(text), _REQUESTS.search(text)
    status, data = _STATUS.search(text), _DATA.search(text)
    if finished is None or requests is None or status is None or data is None:
        raise CallsFailed(f"h2load printed no complete summary:\n{text[-2000:]}")
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0}[finished.group(2)]
    total, started, done, succeeded, failed, errored, timeout = (int(v) for v in requests.groups())
    return {
        "elapsed_s": float(finished.group(1)) * scale,
        "rps": float(finished.group(3)),
        "total": total,
        "started": started,
        "done": done,
        "succeeded": succeeded,
        "failed": failed,
        "errored": errored,
        "timeout": timeout,
        "status_2xx": int(status.group(1)),
        "data_bytes": int(data.group(1)),
    }


def parse_log(text: str) -> list[int]:
    """Each request's elapsed microseconds from h2load's ``--log-file`` (start µs, HTTP status, elapsed µs a line);
    a status other than 200 fails."""
    elapsed = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 3:
            continue
        if fields[1] != "200":
            raise CallsFailed(f"h2load logged HTTP status {fields[1]}")
        elapsed.append(int(fields[2]))
    return elapsed


def requests_by_code(metrics_port: int, method: str = "Execute") -> dict[str, float]:
    """``dmlrpc_requests_total`` of ``method`` from the server's /metrics, summed by gRPC status code."""
    text = procs.metrics_text(metrics_port)
    codes: dict[str, float] = {}
    for match in _REQUESTS_TOTAL.finditer(text):
        labels = dict(_LABEL.findall(match.group("labels")))
        if labels.get("method") == method:
            codes[labels.get("code", "")] = codes.get(labels.get("code", ""), 0.0) + float(match.group("value"))
    return codes


def _delta(after: dict[str, float], before: dict[str, float]) -> dict[str, int]:
    return {code: round(after[code] - before.get(code, 0.0)) for code in after if after[code] != before.get(code, 0.0)}


@dataclass(frozen=True)
class Run:
    """How long one h2load run lasts: ``count`` calls (``-n``), or ``duration`` seconds after ``warmup`` (``-D``).

    A counted run completes every call it sends, so the server's count of them is compared exactly; but it splits
    the calls evenly over the connections, so where a server's processes hold unequal shares of the connections
    (``SO_REUSEPORT`` hashes them), the busiest process's share ends the run while the others idle: throughput is
    measured by timed runs, whose end cuts off the calls then in flight.
    """

    count: int | None = None
    duration: float = 2.0
    warmup: float = 0.5

    def timeout(self) -> float:
        return 120.0 if self.count is not None else self.warmup + self.duration + 60.0

    def __str__(self) -> str:
        return f"{self.count} calls" if self.count is not None else f"a {self.duration:g} s run"


class H2load:
    """Runs h2load on one pre-framed request body against a target, and checks that its calls succeeded."""

    def __init__(
        self, binary: str, body: bytes, *, cpus: str | None = None, path: str = METHOD, headers: tuple[str, ...] = ()
    ) -> None:
        """``headers``: request headers beside gRPC's own (call metadata, e.g. a W3C traceparent)."""
        self.binary = binary
        self.headers = (*HEADERS, *headers)
        self.cpus = cpus  # taskset CPU list of h2load (None: the runner's own affinity)
        self.path = path
        self.method = path.rsplit("/", 1)[-1]  # the server's metrics label of the calls
        self._dir = tempfile.TemporaryDirectory(prefix="bench-h2load-")
        self.body = Path(self._dir.name) / "body"
        self.body.write_bytes(body)
        self.body_size = len(body)

    def close(self) -> None:
        self._dir.cleanup()

    def command(self, target: str, load: Load, run: Run, log: Path | None) -> list[str]:
        argv = [self.binary, "-c", str(load.connections), "-m", str(load.streams)]
        argv += ["-t", str(min(load.threads, load.connections)), "-d", str(self.body)]
        if run.count is not None:
            argv += ["-n", str(run.count)]
        else:
            argv += ["-D", f"{round(run.duration * 1000)}ms", f"--warm-up-time={round(run.warmup * 1000)}ms"]
        for header in self.headers:
            argv += ["-H", header]
        if log is not None:
            argv.append(f"--log-file={log}")
        argv.append(f"http://{target}{self.path}")
        return ["taskset", "-c", self.cpus, *argv] if self.cpus else argv

    def run(
        self, target: str, load: Load, run: Run, *, log: bool = False, metrics_port: int | None = None,
        echo: bool = False, response_bytes: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """One run; ``metrics_port`` (our server), ``echo`` (the bare echo) or ``response_bytes`` (a server that
        answers every call with a message of that many bytes, e.g. the top-k floor) says how to prove that its calls
        were gRPC successes. Returns the summary, h2load's CPU seconds and, with ``log``, the latency percentiles."""
        frame = self.body_size if echo else None if response_bytes is None else response_bytes + FRAME_HEADER
        log_path = Path(self._dir.name) / "log" if log else None
        if log_path is not None:
            log_path.unlink(missing_ok=True)  # h2load appends to it
        before = requests_by_code(metrics_port, self.method) if metrics_port else {}
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        timeout = run.timeout()
        try:
            done = subprocess.run(
                self.command(target, load, run, log_path), capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            raise CallsFailed(f"h2load did not finish {run} in {timeout:.0f} s") from exc
        after_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise CallsFailed(f"h2load exited with status {done.returncode}:\n{(done.stdout + done.stderr)[-2000:]}")
        result = parse_summary(done.stdout)
        result["client_cpu_s"] = (after_usage.ru_utime - usage.ru_utime) + (after_usage.ru_stime - usage.ru_stime)
        count = result["succeeded"]
        result["count"] = count
        if not (count == result["status_2xx"] == result["done"] == result["total"] > 0) or (
            run.count is not None and count != run.count
        ):
            raise CallsFailed(f"h2load: {run}, {result}; it printed:\n{(done.stdout + done.stderr)[-1500:]}")
        # The echo answers each call with the request's own frame; an error is trailers-only (no DATA). A timed run's
        # DATA bytes also hold its warm-up's and those of calls cut off at its end.
        received = result["data_bytes"] // (frame or self.body_size)
        if frame and (received < count or (run.count is not None and result["data_bytes"] != count * frame)):
            raise CallsFailed(
                f"{'echo' if echo else 'responses'}: {result['data_bytes']} response bytes for {count} calls of "
                f"{frame} bytes each (gRPC errors carry none)"
            )
        # Calls the server answered in the whole run, its warm-up and its end included: what its CPU time was spent on.
        result["served"] = received
        if metrics_port:
            result["codes"] = self._server_codes(metrics_port, self.method, before, count, run, load)
            result["served"] = sum(result["codes"].values())
        if log_path is not None:
            latencies = parse_log(log_path.read_text())
            if len(latencies) != count:
                raise CallsFailed(f"h2load logged {len(latencies)} calls of {count}")
            result["p50_us"] = float(statistics.median(latencies))
            result["p99_us"] = float(sorted(latencies)[min(len(latencies) - 1, int(len(latencies) * 0.99))])
        return result

    @staticmethod
    def _server_codes(
        metrics_port: int, method: str, before: dict[str, float], count: int, run: Run, load: Load
    ) -> dict[str, int]:
        """The server's own count of the run's calls by gRPC code, which must match h2load's: exactly for a counted
        run; for a timed run, at least ``count`` OK (its warm-up's calls are the server's too) and nothing else but
        the calls in flight at its end, which h2load cancels."""
        # The server counts a call when it finishes, which can trail the response h2load saw by a moment.
        deadline = time.monotonic() + 3.0
        while True:
            codes = _delta(requests_by_code(metrics_port, method), before)
            if codes.get("OK", 0) >= count or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if run.count is not None:
            if codes != {"OK": count}:
                raise CallsFailed(f"the server counted {codes} for {count} calls that h2load counted as succeeded")
            return codes
        others = {code: n for code, n in codes.items() if code not in ("OK", "CANCELLED")}
        if codes.get("OK", 0) < count or others or codes.get("CANCELLED", 0) > load.inflight:
            raise CallsFailed(
                f"the server counted {codes} for a timed run of {count} calls that h2load counted as succeeded "
                f"({load.inflight} in flight)"
            )
        return codes
