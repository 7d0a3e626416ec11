"""A health watch's own process: checks a server's health back to back and reports when each check was sent and
answered, as JSON."""

# NOTE: run as a script (``HealthWatch`` starts it) so that its checks are sent while the test process's client
# holds that process's GIL (encoding or decoding tens of MiB), which an in-process server's loop shares.

from __future__ import annotations

import json
import sys
import threading
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main(address: str, interval: float) -> None:
    stop = threading.Event()

    def await_the_end() -> None:
        # The parent closes stdin to end the watch (or dies, which closes it too).
        sys.stdin.read()
        stop.set()

    threading.Thread(target=await_the_end, daemon=True).start()
    checks: list[tuple[int, int]] = []
    failures: list[str] = []
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        stub.Check(health_pb2.HealthCheckRequest(), timeout=10)  # connected before the attack starts
        while not stop.is_set():
            # perf_counter_ns is the machine's monotonic clock (CLOCK_MONOTONIC, or Windows' performance counter),
            # which the test process reads too: its marks and these times compare across the two processes.
            sent = time.perf_counter_ns()
            try:
                answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=30)
                if answer.status != health_pb2.HealthCheckResponse.SERVING:
                    failures.append(f"health answered {answer.status}")
            except grpc.RpcError as error:
                failures.append(f"health failed: {error.code()}")
            checks.append((sent, time.perf_counter_ns()))
            if len(checks) == 1:
                print("ready", checks[0][1], flush=True)
            stop.wait(interval)
    print(json.dumps({"checks": checks, "failures": failures[:5]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
