"""Load generator process: reads one JSON job a line on stdin, runs it, writes one JSON result a line on stdout.

Jobs:
- ``grpc``: N calls in flight of one pre-serialized payload on the Execute method path (identity serializers, so
  the client's cost is the same against the echo and the real server), for a duration or a call count, spread
  over ``channels`` separate channels (one TCP connection each, so that ``--workers`` servers see several).
- ``execute_many``: bidirectional ExecuteMany streams sending one pre-serialized ExecuteManyRequest of
  ``items_per_message`` items over and over, at most ``inflight`` items outstanding per stream: results/s,
  per-item latency, errors = results with a non-zero status code.
- ``liveness``: health checks (grpc.health.v1 Check) on their own channel every ``interval`` s, while another
  channel runs a heavy payload back to back (or idle, as the baseline).
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
MANY_METHOD = "/dmlrpc.v1.DirectMLService/ExecuteMany"
HEALTH_METHOD = "/grpc.health.v1.Health/Check"
OPTIONS = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


class Unimplemented(Exception):
    """The server answered UNIMPLEMENTED (a method this build does not have)."""


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc (0.0 where unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _server_pids(job: dict[str, Any]) -> list[int]:
    """The server's processes whose CPU a job reports (``server_pids``, or the one ``server_pid``)."""
    pids: list[int] = job.get("server_pids") or ([job["server_pid"]] if job.get("server_pid") else [])
    return pids


def _cpu_of(pids: list[int]) -> float:
    return sum(process_cpu(pid) for pid in pids)


async def _until(tasks: list[asyncio.Future[None]], when: float) -> None:
    """Sleep until ``when`` (perf_counter), returning early to raise the first task's error."""
    done, _ = await asyncio.wait(tasks, timeout=max(0.0, when - time.perf_counter()), return_when="FIRST_EXCEPTION")
    for task in done:
        if task.exception() is not None:
            for other in tasks:
                other.cancel()
            task.result()


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
        self._channels: dict[tuple[str, int], grpc.aio.Channel] = {}

    def _channel(self, target: str, index: int = 0) -> grpc.aio.Channel:
        """Channel ``index`` to ``target``: distinct indices are distinct TCP connections (own subchannel pool and
        channel args, so gRPC does not share one subchannel between them)."""
        channel = self._channels.get((target, index))
        if channel is None:
            options = OPTIONS
            if index:
                options = [*OPTIONS, ("grpc.use_local_subchannel_pool", 1), ("dmlrpc.bench.channel", index)]
            channel = grpc.aio.insecure_channel(target, options=options)
            self._channels[(target, index)] = channel
        return channel

    def _call(self, target: str, index: int = 0, method: str = METHOD) -> Any:
        return self._channel(target, index).unary_unary(method)  # no serializers: bytes in, bytes out

    async def grpc_job(self, job: dict[str, Any]) -> dict[str, Any]:
        channels: int = job.get("channels", 1)
        calls = [self._call(job["target"], index) for index in range(channels)]
        payload = base64.b64decode(job["payload_b64"]) if "payload_b64" in job else bytes(job["payload_size"])
        inflight: int = job.get("inflight", 1)
        duration: float | None = job.get("duration")
        count: int | None = job.get("count")
        server_pids = _server_pids(job)
        errors = 0
        expected = job.get("response_size")

        warm_until = time.perf_counter() + job.get("warmup", 0.2)
        warm_calls = 0
        while warm_calls < max(job.get("warmup_calls", 1), channels) or time.perf_counter() < warm_until:
            response = await calls[warm_calls % channels](payload)
            warm_calls += 1
            if expected is not None and len(response) != expected:
                raise RuntimeError(f"unexpected response size {len(response)}, expected {expected}")

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

        cpu0, server0 = time.process_time(), _cpu_of(server_pids)
        await asyncio.gather(*(worker(calls[i % channels]) for i in range(inflight)))
        elapsed = time.perf_counter() - start
        cpu = {"client": time.process_time() - cpu0}
        if server_pids:
            cpu["server"] = _cpu_of(server_pids) - server0
        return summarize(latencies, elapsed, errors, cpu)

    async def execute_many_job(self, job: dict[str, Any]) -> dict[str, Any]:
        """``streams`` ExecuteMany streams, each sending one of a few pre-serialized messages whenever its window has
        room for ``items_per_message`` more items (at most ``inflight`` outstanding per stream).

        The messages differ only in their items' tags (message ``j`` carries tags ``j * B .. j * B + B - 1``); a
        message is sent again only once all its items are answered, so outstanding tags are unique and each result
        maps to its message's send time. Results before the warm-up ends and after the duration are not counted.
        """
        from dmlrpc.v1 import service_pb2

        per_message: int = job.get("items_per_message", 64)
        inflight: int = max(job.get("inflight", 512), per_message)
        slots = inflight // per_message
        streams: int = job.get("streams", 1)
        channels: int = job.get("channels", 1)
        execute = service_pb2.ExecuteRequest.FromString(base64.b64decode(job["payload_b64"]))
        messages = []
        for slot in range(slots):
            items = [service_pb2.ExecuteItem(tag=slot * per_message + i, execute=execute) for i in range(per_message)]
            messages.append(service_pb2.ExecuteManyRequest(items=items).SerializeToString())
        server_pids = _server_pids(job)
        latencies: list[float] = []
        errors = [0]
        codes: dict[int, int] = {}
        now = time.perf_counter()
        start = now + job.get("warmup", 0.2)
        stop = start + job["duration"]
        parse = service_pb2.ExecuteManyResponse.FromString

        async def stream(index: int) -> None:
            call = self._channel(job["target"], index % channels).stream_stream(MANY_METHOD)()
            free: asyncio.Queue[int] = asyncio.Queue()
            for slot in range(slots):
                free.put_nowait(slot)
            sent_at = [0.0] * slots
            remaining = [0] * slots

            async def writer() -> None:
                while time.perf_counter() < stop:
                    slot = await free.get()
                    remaining[slot] = per_message
                    sent_at[slot] = time.perf_counter()
                    await call.write(messages[slot])
                await call.done_writing()

            writing = asyncio.ensure_future(writer())
            try:
                while True:
                    data = await call.read()
                    if data is grpc.aio.EOF:
                        break
                    received = time.perf_counter()
                    counted = start <= received < stop
                    for result in parse(data).results:
                        slot = result.tag // per_message
                        if counted:
                            if result.status.code:
                                errors[0] += 1
                                codes[result.status.code] = codes.get(result.status.code, 0) + 1
                            else:
                                latencies.append(received - sent_at[slot])
                        remaining[slot] -= 1
                        if remaining[slot] == 0:
                            free.put_nowait(slot)
                await writing
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
                writing.cancel()
                # A write into a call the server already ended fails on its own; the call's status says why.
                if await call.code() == grpc.StatusCode.UNIMPLEMENTED:
                    raise Unimplemented(await call.details()) from None
                raise

        # An empty stream first: a server without ExecuteMany answers UNIMPLEMENTED to it (while a large write into
        # a call the server already ended may fail as INTERNAL instead).
        probe = self._channel(job["target"]).stream_stream(MANY_METHOD)()
        await probe.done_writing()
        try:
            while await probe.read() is not grpc.aio.EOF:
                pass
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                raise Unimplemented(error.details()) from None
            raise
        tasks = [asyncio.ensure_future(stream(index)) for index in range(streams)]
        await _until(tasks, start)
        cpu0, server0 = time.process_time(), _cpu_of(server_pids)
        await _until(tasks, stop)
        cpu = {"client": time.process_time() - cpu0}
        if server_pids:
            cpu["server"] = _cpu_of(server_pids) - server0
        await asyncio.gather(*tasks)
        result = summarize(latencies, job["duration"], errors[0], cpu)
        result["status_codes"] = codes
        return result

    async def liveness_job(self, job: dict[str, Any]) -> dict[str, Any]:
        """Health checks every ``interval`` s for ``duration`` s on channel 1, while channel 0 runs the heavy payload
        back to back (``heavy``) or nothing (idle): the health checks' latencies and the heavy calls' latencies."""
        target = job["target"]
        health = self._call(target, 1, HEALTH_METHOD)
        heavy_call = self._call(target, 0)
        probe = b""  # HealthCheckRequest(service=""): the whole server
        await health(probe)
        heavy_payload = base64.b64decode(job["payload_b64"])
        heavy_latencies: list[float] = []
        running = [job.get("heavy", False)]
        errors = [0]

        async def heavy_loop() -> None:
            while running[0]:
                t0 = time.perf_counter()
                try:
                    await heavy_call(heavy_payload)
                except grpc.RpcError:
                    errors[0] += 1
                    continue
                heavy_latencies.append(time.perf_counter() - t0)

        heavy = asyncio.ensure_future(heavy_loop())
        if running[0]:
            await asyncio.sleep(job.get("settle", 0.05))  # the first heavy call is in the server
        probes: list[float] = []
        start = time.perf_counter()
        stop = start + job["duration"]
        interval = job.get("interval", 0.01)
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            await health(probe)
            probes.append(time.perf_counter() - t0)
            await asyncio.sleep(max(0.0, t0 + interval - time.perf_counter()))
        running[0] = False
        await heavy
        data = np.asarray(probes)
        return {
            "probes": len(probes),
            "p50_ms": float(np.percentile(data, 50)) * 1e3,
            "p99_ms": float(np.percentile(data, 99)) * 1e3,
            "max_ms": float(data.max()) * 1e3,
            "heavy_calls": len(heavy_latencies),
            "heavy_errors": errors[0],
            "heavy_p50_ms": float(np.median(heavy_latencies)) * 1e3 if heavy_latencies else None,
        }

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
        if kind == "execute_many":
            return await self.execute_many_job(job)
        if kind == "liveness":
            return await self.liveness_job(job)
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
        except Unimplemented as error:
            result = {"unimplemented": str(error)}
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                result = {"unimplemented": str(error.details())}
            else:
                result = {"error": f"{type(error).__name__}: {error.code()}: {error.details()}"}
        except Exception as error:
            result = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(_main())
