"""Load generator process: reads one JSON job a line on stdin, runs it, writes one JSON result a line on stdout.

Jobs:
- ``grpc``: N calls in flight of one pre-serialized payload on the Execute method path (identity serializers, so
  the client's cost is the same against the echo and the real server), for a duration or a call count; with
  ``channels`` > 1 the calls are spread over that many channels, each its own TCP connection (what spreads load
  over ``--workers`` processes sharing a port: the kernel balances connections, not calls).
- ``sequence``: calls one at a time over several payloads in a given order, every latency returned.
- ``sdk``: the real SDK path for a tiny top-k (``dmlrpc.Client.top_k``), one in flight.
- ``sdk_large``: ``dmlrpc.Client.scatter_nd`` of a large float32 input with a few updates (unary or streamed).
- ``tcp``: raw TCP round trips of a payload to ``bench/tcp.py``.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import os
import sys
import time
from typing import Any

import grpc
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tcp import TcpClient

METHOD = "/dmlrpc.v1.DirectMLService/Execute"
OPTIONS = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc (0.0 where unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def summarize(latencies: list[float], elapsed: float, errors: int, cpu: dict[str, float]) -> dict[str, Any]:
    data = np.asarray(latencies) if latencies else np.zeros(1)
    count = len(latencies)
    return {
        "count": count,
        "errors": errors,
        "elapsed_s": elapsed,
        "rps": count / elapsed if elapsed > 0 else 0.0,
        "p50_us": float(np.percentile(data, 50)) * 1e6,
        "p99_us": float(np.percentile(data, 99)) * 1e6,
        "mean_us": float(data.mean()) * 1e6,
        "min_us": float(data.min()) * 1e6,
        "client_cpu_us_per_call": cpu.get("client", 0.0) / max(count, 1) * 1e6,
        "server_cpu_us_per_call": cpu.get("server", 0.0) / max(count, 1) * 1e6,
    }


class Loadgen:
    def __init__(self) -> None:
        self._channels: dict[str, grpc.aio.Channel] = {}

    def _call(self, target: str, channel_index: int = 0) -> Any:
        key = f"{target}#{channel_index}"
        channel = self._channels.get(key)
        if channel is None:
            # A subchannel pool of its own: channels to one target otherwise share one connection.
            options = [*OPTIONS, ("grpc.use_local_subchannel_pool", 1)] if channel_index else OPTIONS
            channel = grpc.aio.insecure_channel(target, options=options)
            self._channels[key] = channel
        return channel.unary_unary(METHOD)  # no serializers: bytes in, bytes out

    async def grpc_job(self, job: dict[str, Any]) -> dict[str, Any]:
        calls = [self._call(job["target"], index) for index in range(job.get("channels", 1))]
        call = calls[0]
        payload = base64.b64decode(job["payload_b64"]) if "payload_b64" in job else bytes(job["payload_size"])
        inflight: int = job.get("inflight", 1)
        duration: float | None = job.get("duration")
        count: int | None = job.get("count")
        server_pid: int = job.get("server_pid", 0)
        errors = 0
        expected = job.get("response_size")

        warm_until = time.perf_counter() + job.get("warmup", 0.2)
        warm_calls = 0
        while warm_calls < job.get("warmup_calls", 1) or time.perf_counter() < warm_until:
            response = await call(payload)
            warm_calls += 1
            if expected is not None and len(response) != expected:
                raise RuntimeError(f"unexpected response size {len(response)}, expected {expected}")

        for other in calls[1:]:  # connect every channel before the clock starts
            await other(payload)
        latencies: list[float] = []
        remaining = [count if count is not None else 1 << 62]
        start = time.perf_counter()
        stop = start + duration if duration is not None else float("inf")

        async def worker(call: Any) -> None:
            nonlocal errors
            while remaining[0] > 0 and time.perf_counter() < stop:
                remaining[0] -= 1
                t0 = time.perf_counter()
                try:
                    await call(payload)
                except grpc.RpcError:
                    errors += 1
                    continue
                latencies.append(time.perf_counter() - t0)

        cpu0, server0 = time.process_time(), process_cpu(server_pid) if server_pid else 0.0
        await asyncio.gather(*(worker(calls[index % len(calls)]) for index in range(inflight)))
        elapsed = time.perf_counter() - start
        cpu = {"client": time.process_time() - cpu0}
        if server_pid:
            cpu["server"] = process_cpu(server_pid) - server0
        return summarize(latencies, elapsed, errors, cpu)

    async def sequence_job(self, job: dict[str, Any]) -> dict[str, Any]:
        """Calls one at a time over ``payloads_b64`` in the given ``order``; returns every call's latency."""
        call = self._call(job["target"])
        payloads = [base64.b64decode(body) for body in job["payloads_b64"]]
        latencies = []
        for index in job["order"]:
            t0 = time.perf_counter()
            await call(payloads[index])
            latencies.append(time.perf_counter() - t0)
        return {"latencies_us": [t * 1e6 for t in latencies]}

    def sdk_job(self, job: dict[str, Any]) -> dict[str, Any]:
        import dmlrpc

        x = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
        latencies: list[float] = []
        with dmlrpc.Client(job["target"]) as client:
            warm_until = time.perf_counter() + job.get("warmup", 0.2)
            while time.perf_counter() < warm_until:
                client.top_k(x, k=2, axis=3)
            start = time.perf_counter()
            cpu0 = time.process_time()
            stop = start + job["duration"]
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                client.top_k(x, k=2, axis=3)
                latencies.append(time.perf_counter() - t0)
            elapsed = time.perf_counter() - start
            cpu = {"client": time.process_time() - cpu0}
        return summarize(latencies, elapsed, 0, cpu)

    def sdk_large_job(self, job: dict[str, Any]) -> dict[str, Any]:
        import dmlrpc

        size: int = job["size"]
        data = np.arange(size // 4, dtype=np.float32)
        indices = np.array([[4], [3], [1], [7]], np.int64)
        updates = np.array([9, 10, 11, 12], np.float32)
        kwargs: dict[str, Any] = {}
        if "stream_threshold_bytes" in inspect.signature(dmlrpc.Client).parameters:
            kwargs["stream_threshold_bytes"] = job["stream_threshold_bytes"] if job.get("stream") else 1 << 62
        elif job.get("stream"):
            raise RuntimeError("this SDK has no streaming")
        times: list[float] = []
        sent = size + indices.nbytes + updates.nbytes
        with dmlrpc.Client(job["target"], **kwargs) as client:
            for i in range(job.get("warmup_calls", 1) + job["reps"]):
                t0 = time.perf_counter()
                out = client.scatter_nd(data, indices, updates)
                elapsed = time.perf_counter() - t0
                if out.nbytes != size or out[3] != 10.0:
                    raise RuntimeError("wrong scatter-ND result")
                received = out.nbytes
                del out
                if i >= job.get("warmup_calls", 1):
                    times.append(elapsed)
        return {"times_s": times, "bytes": sent + received}

    def tcp_job(self, job: dict[str, Any]) -> dict[str, Any]:
        client = TcpClient(job["address"])
        payload = bytes(job["size"])
        try:
            client.round_trip(payload)
            times = [client.round_trip(payload) for _ in range(job["reps"])]
        finally:
            client.close()
        return {"times_s": times, "bytes": 2 * job["size"]}

    async def run(self, job: dict[str, Any]) -> dict[str, Any]:
        kind = job["kind"]
        if kind == "grpc":
            return await self.grpc_job(job)
        if kind == "sequence":
            return await self.sequence_job(job)
        if kind == "sdk":
            return self.sdk_job(job)
        if kind == "sdk_large":
            return self.sdk_large_job(job)
        if kind == "tcp":
            return self.tcp_job(job)
        raise ValueError(f"unknown job kind {kind!r}")


async def _main() -> None:
    loadgen = Loadgen()
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        try:
            result = await loadgen.run(json.loads(line))
        except Exception as error:
            result = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(_main())
