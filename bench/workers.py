"""--workers measurement: tiny-op req/s and latency of one server process vs several, load over several channels.

python bench/workers.py                       # --workers 1 and 2, one and two load generator processes
python bench/workers.py --workers 1 2 4 8 --loadgens 1 2 4 --duration 3 --reps 3
python bench/workers.py --workers 2 --worker-ports shared relayed   # what the supervisor's relay costs
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import procs
from run import payload, tiny_calls


def _serving(target: str, timeout: float = 60.0) -> None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        serving = health_pb2.HealthCheckResponse.SERVING
        while time.monotonic() < deadline:
            try:
                if stub.Check(health_pb2.HealthCheckRequest(), timeout=5).status == serving:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.05)
    raise procs.ChildError(f"{target} not SERVING")


def measure(workers: int, ports: str, loadgens: list[procs.Loadgen], job: dict[str, Any]) -> dict[str, float]:
    """One load run against a fresh ``--workers`` server on ``ports`` (--worker-ports): every load generator at once,
    their req/s summed."""
    flags = ["--port", "0", "--metrics-port", "0", "--provider", "cpu", "--workers", str(workers)]
    flags += ["--worker-ports", ports]
    server = procs.Server(f"workers-{workers}", [sys.executable, "-m", "dmlrpc_server", *flags]).wait_ready()
    try:
        _serving(server.target)
        procs.wait_quiet()
        for loadgen in loadgens:  # all start together: write every job, then read every result
            assert loadgen.proc.stdin is not None
            loadgen.proc.stdin.write(json.dumps({**job, "target": server.target}) + "\n")
            loadgen.proc.stdin.flush()
        results = []
        for loadgen in loadgens:
            assert loadgen.proc.stdout is not None
            results.append(json.loads(loadgen.proc.stdout.readline()))
        errors = [r["error"] for r in results if "error" in r]
        if errors:
            raise procs.ChildError(errors[0])
        return {
            "rps": sum(r["rps"] for r in results),
            "p50_us": statistics.median(r["p50_us"] for r in results),
            "p99_us": max(r["p99_us"] for r in results),
            "errors": sum(r["errors"] for r in results),
        }
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--loadgens", type=int, nargs="+", default=[1, 2], help="load generator processes")
    parser.add_argument("--inflight", type=int, default=64, help="calls in flight per load generator")
    parser.add_argument("--channels", type=int, default=8, help="channels (connections) per load generator")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--op", default="top-k", choices=sorted(tiny_calls()))
    parser.add_argument(
        "--worker-ports", nargs="+", default=["shared"], choices=["shared", "relayed"], help="--worker-ports to compare"
    )
    args = parser.parse_args(argv)

    job = {
        "kind": "grpc", "payload_b64": payload(tiny_calls()[args.op]), "inflight": args.inflight,
        "channels": args.channels, "duration": args.duration, "warmup": 0.3,
    }  # fmt: skip
    print(f"{os.cpu_count()} CPUs; {args.op}, {args.inflight} in flight over {args.channels} channels per loadgen")
    rows: dict[tuple[int, int, str], list[dict[str, float]]] = {}
    for rep in range(args.reps):
        cases = list(itertools.product(args.loadgens, args.workers, args.worker_ports))
        cases = cases[rep % len(cases) :] + cases[: rep % len(cases)]  # rotate the order every repetition
        for count, workers, ports in cases:
            loadgens = [procs.Loadgen() for _ in range(count)]
            try:
                rows.setdefault((count, workers, ports), []).append(measure(workers, ports, loadgens, job))
            finally:
                for loadgen in loadgens:
                    loadgen.stop()
    header = f"{'loadgens':>8} {'workers':>7} {'ports':>8} {'req/s':>9} {'p50 us':>8} {'p99 us':>8}"
    print(f"{header}  (median of {args.reps})")
    for (count, workers, ports), runs in sorted(rows.items()):
        rps = statistics.median(r["rps"] for r in runs)
        p50 = statistics.median(r["p50_us"] for r in runs)
        p99 = statistics.median(r["p99_us"] for r in runs)
        print(
            f"{count:>8} {workers:>7} {ports:>8} {rps:>9.0f} {p50:>8.0f} {p99:>8.0f}"
            f"   runs: {[round(r['rps']) for r in runs]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
