"""Smoke test of a running dmlrpc container: health SERVING, top-k, the expected provider, workers and metrics.

Runs inside the image (it has the SDK): `docker exec -i CONTAINER python - --expect-provider cpu < smoke.py`
(or `podman exec`), or from outside with the SDK installed and `--target HOST:PORT`. With `--expect-workers N`
the server must report N worker processes, top-k is called over 2N connections (the kernel spreads them over the
workers sharing the port), and the metrics scrape (the supervisor sums every worker's own endpoint) must count N.
Exit status 0 when every check passes; one line per check on stdout.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import urllib.request

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc

import dmlrpc

PROVIDERS = {
    "directml": "DmlExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "cpu": "CPUExecutionProvider",
}
# DXGI's software adapter: DirectML "works" on it, but on the CPU (the host GPU is not reaching the container).
SOFTWARE_ADAPTERS = ("Microsoft Basic Render Driver", "Microsoft Basic Display Adapter")


def wait_serving(target: str, deadline_s: float) -> None:
    stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(target))
    end = time.monotonic() + deadline_s
    last = "no answer"
    while time.monotonic() < end:
        try:
            status = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2).status
            last = health_pb2.HealthCheckResponse.ServingStatus.Name(status)
            if status == health_pb2.HealthCheckResponse.SERVING:
                print(f"ok   health: {last}")
                return
        except grpc.RpcError as error:
            last = f"{error.code().name}"
        time.sleep(1)
    sys.exit(f"FAIL health: not SERVING after {deadline_s:.0f} s (last: {last})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--expect-provider", choices=sorted(PROVIDERS), required=True)
    parser.add_argument("--wait-seconds", type=float, default=180)
    parser.add_argument("--expect-workers", type=int, help="the worker processes the server must run")
    parser.add_argument("--metrics-url", help="default: port 9464 of the target's host, when --expect-workers")
    args = parser.parse_args()

    wait_serving(args.target, args.wait_seconds)
    # One connection each: a fresh channel per client (distinct options keep gRPC from sharing a subchannel).
    for connection in range(2 * (args.expect_workers or 1)):
        with dmlrpc.Client(args.target, timeout=60, options=[("dmlrpc.smoke.connection", connection)]) as client:
            top_k(client)
            caps = client.get_capabilities()
    print("ok   top_k: [[11, 10], [9, 8], [7, 6]] at [[3, 2], [2, 3], [3, 2]]")
    expected = PROVIDERS[args.expect_provider]
    if caps.execution_provider != expected:
        sys.exit(f"FAIL provider: {caps.execution_provider!r} (expected {expected}: a CPU fallback?)")
    if args.expect_provider == "directml" and any(name in caps.device for name in SOFTWARE_ADAPTERS):
        sys.exit(f"FAIL device: {caps.device!r} is DXGI's software adapter, not the GPU")
    print(f"ok   provider: {caps.execution_provider} on {caps.device!r} (onnxruntime {caps.onnxruntime_version})")
    if args.expect_workers is not None:
        if caps.limits.workers != args.expect_workers:
            sys.exit(f"FAIL workers: the server runs {caps.limits.workers}, expected {args.expect_workers}")
        url = args.metrics_url or f"http://{args.target.rsplit(':', 1)[0]}:9464/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        found = re.search(r"^dmlrpc_workers (\S+)$", text, re.MULTILINE)
        if found is None or float(found.group(1)) != args.expect_workers:
            sys.exit(f"FAIL metrics: dmlrpc_workers is {found and found.group(1)}, expected {args.expect_workers}")
        print(f"ok   workers: {args.expect_workers} serving; the metrics scrape summed {found.group(1)} of them")


def top_k(client: dmlrpc.Client) -> None:
    x = np.array([[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]], np.float32)
    values, indices = client.top_k(x, k=2, axis=1, direction="decreasing")
    if values.tolist() != [[11, 10], [9, 8], [7, 6]] or indices.tolist() != [[3, 2], [2, 3], [3, 2]]:
        sys.exit(f"FAIL top_k: got {values.tolist()} {indices.tolist()}")


if __name__ == "__main__":
    main()
