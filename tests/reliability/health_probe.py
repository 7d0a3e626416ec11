"""A health watch's own process: checks a server's health on a period and reports the slowest answer as JSON."""

# NOTE: run as a script (``HealthWatch`` starts it) so that what it times is the server's answer alone: a watch
# thread inside the test process also waits for that process's GIL, which the test's client holds while it encodes
# or decodes tens of MiB, and an in-process server's loop shares.

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
    slowest, checks, failures = 0.0, 0, list[str]()
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        stub.Check(health_pb2.HealthCheckRequest(), timeout=10)  # connected before the attack is timed
        while not stop.is_set():
            started = time.perf_counter()
            try:
                answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
                if answer.status != health_pb2.HealthCheckResponse.SERVING:
                    failures.append(f"health answered {answer.status}")
            except grpc.RpcError as error:
                failures.append(f"health failed: {error.code()}")
            slowest = max(slowest, time.perf_counter() - started)
            checks += 1
            if checks == 1:
                print("ready", flush=True)
            stop.wait(interval)
    print(json.dumps({"slowest": slowest, "checks": checks, "failures": failures[:5]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
