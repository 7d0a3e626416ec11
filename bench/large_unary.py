"""Large calls through the SDK: unary Execute (stream=False) against ExecuteStream, one local server, same run."""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

import dmlrpc


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256], help="MiB of the input (and the output)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved repetitions of each mode")
    args = parser.parse_args()
    largest = max(args.sizes) << 20
    port = _free_port()
    # Limits raised so that the largest unary call fits the server (the message holds one tensor each way).
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "dmlrpc_server", "--provider", "cpu", "--port", str(port), "--workers", "1"),
            *("--no-metrics", "--memory-bytes", str(8 * largest + (1 << 30))),
            *("--max-message-bytes", str(largest + (1 << 20)), "--max-tensor-bytes", str(largest)),
            *("--max-request-bytes", str(2 * largest)),
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        with dmlrpc.Client(f"127.0.0.1:{port}", timeout=600) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    client.get_capabilities()
                    break
                except dmlrpc.UnavailableError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            print(f"{'MiB':>6} {'streamed s':>11} {'unary s':>9} {'unary/streamed':>15}")
            for mib in args.sizes:
                x = np.ones(mib << 18, np.float32)
                desc = dmlrpc.ops.element_wise("identity", x).operator_desc
                times: dict[bool, list[float]] = {True: [], False: []}
                for _ in range(args.reps):
                    for stream in (True, False):
                        started = time.perf_counter()
                        (y,) = client.execute(desc, [x], stream=stream)
                        times[stream].append(time.perf_counter() - started)
                        assert isinstance(y, np.ndarray) and y.shape == x.shape
                streamed, unary = statistics.median(times[True]), statistics.median(times[False])
                print(f"{mib:>6} {streamed:>11.2f} {unary:>9.2f} {unary / streamed:>14.2f}x", flush=True)
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
