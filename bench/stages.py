"""µs per stage of one tiny unary Execute and one tiny ModelInfer, in process, beside the whole call through the
servicer and as served (no gRPC), and the floors' handlers; the served call and its floor again with the CPU caches
cooled before each call, as gRPC's work between served calls leaves them."""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import base64
import tempfile
from pathlib import Path

import oip
from echo_server import infer_floor, parsing_floor
from run import payload, tiny_calls

from dmlrpc.v1 import service_pb2
from dmlrpc_server import ServerSettings, build_server
from dmlrpc_server.binding import encode_outputs, feeds
from dmlrpc_server.calls import read_execute, write_execute
from dmlrpc_server.handlers import method_path
from dmlrpc_server.oip.protocol import service_pb2 as service_pb2_oip
from dmlrpc_server.servicer import SERVICE_NAME, DirectMLServicer

T = TypeVar("T")


class _Context:
    """The little of a grpc.aio ServicerContext that Execute reads."""

    def time_remaining(self) -> None:
        return None

    def peer(self) -> str:
        return "ipv4:127.0.0.1:50000"

    def invocation_metadata(self) -> tuple[()]:
        return ()

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        callback(self)


async def _timed(fn: Callable[[], object] | Callable[[], Awaitable[object]], number: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean µs of ``number`` calls (awaited when ``fn`` returns an awaitable)."""
    samples = []
    probe = fn()
    awaited = asyncio.iscoroutine(probe)
    if awaited:
        await probe  # type: ignore[misc]
    for _ in range(repeats):
        start = time.perf_counter()
        if awaited:
            for _ in range(number):
                await fn()  # type: ignore[misc]
        else:
            for _ in range(number):
                fn()
        samples.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(samples)


#: Bytes written between two calls of a cooled measure: more than the L2 caches of the CPUs here, so that each call
#: finds its code and data where a served call does, after gRPC's own work between two calls has run.
COOLING_BYTES = 8 << 20


async def _cooled(variants: dict[str, Callable[[], Awaitable[object]]], number: int) -> dict[str, float]:
    """Median µs of each awaited call with the caches cooled before it (``COOLING_BYTES`` written), the variants
    taken in turn so that each is preceded by the others alike."""
    import numpy as np

    cooling = np.zeros(COOLING_BYTES, np.uint8)
    samples: dict[str, list[int]] = {name: [] for name in variants}
    for fn in variants.values():
        await fn()
    for i in range(number):
        for name, fn in variants.items():
            cooling[::64] = i & 0xFF  # one write per cache line
            start = time.perf_counter_ns()
            await fn()
            samples[name].append(time.perf_counter_ns() - start)
    return {name: statistics.median(values) / 1e3 for name, values in samples.items()}


async def measure(number: int, repeats: int) -> dict[str, float]:
    built = build_server(ServerSettings(host="127.0.0.1", port=0, provider="cpu", metrics_port=0))
    service = built.service
    catalog = service.catalog
    scheduler = service.scheduler
    pool = service.binding.pool
    servicer = DirectMLServicer(service, service_pb2.GetCapabilitiesResponse())
    raw = base64.b64decode(payload(tiny_calls()["top-k"]))
    context = _Context()
    first = servicer.Execute(raw, context)
    assert not isinstance(first, bytes), "the first call compiles"
    await first
    call = read_execute(raw)
    assert call is not None
    compiled = catalog.lookup(call)
    assert compiled is not None
    buffers = list(call.buffers or [])
    bound = feeds(compiled, buffers)
    results = compiled.run(bound)
    outputs = encode_outputs(compiled, pool, list, results)

    stages: dict[str, Callable[[], Any]] = {
        "read": lambda: read_execute(raw),
        "plan": lambda: catalog.lookup(call),
        # Scheduler.now (a lone tiny call's) with its bind and encode taken out: placement, metrics and the run.
        "admit, place and run": lambda: scheduler.now(call, compiled, lambda: bound, _same),
        "bind": lambda: feeds(compiled, buffers),
        "encode": lambda: encode_outputs(compiled, pool, write_execute, results),
        "  of which the writer": lambda: write_execute(outputs),
    }
    times = {name: await _timed(fn, number, repeats) for name, fn in stages.items()}
    times["onnxruntime run alone"] = await _timed(lambda: compiled.run(bound), number, repeats)
    times["whole Execute (servicer)"] = await _timed(lambda: servicer.Execute(raw, context), number, repeats)
    # As the server serves it: its end (status, metrics) and its connection's slot around the servicer.
    assert built.methods is not None
    served = built.methods.service(_Details(method_path(SERVICE_NAME, "Execute")))
    assert served is not None
    times["as served (the wrappers too)"] = await _timed(lambda: served.unary_unary(raw, context), number, repeats)
    floor = parsing_floor()
    times["the parsing floor's handler"] = await _timed(lambda: floor(raw, context), number, repeats)
    cooled = await _cooled(
        {"as served": lambda: served.unary_unary(raw, context), "floor": lambda: floor(raw, context)}, number
    )
    times["as served, caches cooled"] = cooled["as served"]
    times["the floor's handler, caches cooled"] = cooled["floor"]
    return times


async def measure_model_infer(number: int, repeats: int) -> dict[str, float]:
    """One tiny ModelInfer (``bench/oip.py``'s TopK of [1, 1, 3, 4]) by stage, and the ModelInfer floor's handler
    (the one ``bench/oip.py`` serves) on the same request bytes."""
    case = oip.CASES[0]
    wire = case.infer_request()
    with tempfile.TemporaryDirectory(prefix="bench-stages-") as root:
        files = oip.repository(Path(root))
        built = build_server(
            ServerSettings(host="127.0.0.1", port=0, provider="cpu", metrics_port=0, model_repository=Path(root))
        )
        assert built.methods is not None and built.inference is not None
        served = built.methods.service(_Details(oip.INFER))
        assert served is not None
        servicer = built.inference
        context = _Context()
        await served.unary_unary(wire, context)
        codec = servicer._codec
        repository = servicer.repository
        inference = codec.read(repository, wire)
        assert inference is not None, "the bench's request has the common form"
        outputs = await inference.model.infer(inference.feeds, inference.batch, None)
        parsed = service_pb2_oip.ModelInferRequest.FromString(wire)
        floor = infer_floor(str(files[case.name]))
        stages: dict[str, Callable[[], Any]] = {
            "read (from the wire bytes)": lambda: codec.read(repository, wire),
            "  protobuf's parse and decode": lambda: codec.decode(
                repository.get(parsed.model_name, parsed.model_version),
                service_pb2_oip.ModelInferRequest.FromString(wire),
            ),
            "queue, place and run": lambda: inference.model.infer(inference.feeds, inference.batch, None),
            "encode (the response's bytes)": lambda: codec.encode(inference, outputs),
        }
        times = {name: await _timed(fn, number, repeats) for name, fn in stages.items()}
        times["whole ModelInfer (servicer)"] = await _timed(lambda: servicer.ModelInfer(wire, context), number, repeats)
        times["as served (the wrappers too)"] = await _timed(lambda: served.unary_unary(wire, context), number, repeats)
        times["the floor's handler"] = await _timed(lambda: floor(wire, context), number, repeats)
        cooled = await _cooled(
            {"as served": lambda: served.unary_unary(wire, context), "floor": lambda: floor(wire, context)}, number
        )
        times["as served, caches cooled"] = cooled["as served"]
        times["the floor's handler, caches cooled"] = cooled["floor"]
    return times


class _Details:
    """The handler lookup's view of a call (grpc.HandlerCallDetails)."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


def _same(results: T) -> T:
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=2000, help="calls per timed repetition")
    parser.add_argument("--repeats", type=int, default=7, help="repetitions (the median is printed)")
    args = parser.parse_args()
    times = asyncio.run(measure(args.number, args.repeats))
    wholes = (
        "onnxruntime run alone",
        "whole Execute (servicer)",
        "as served (the wrappers too)",
        "the parsing floor's handler",
        "as served, caches cooled",
        "the floor's handler, caches cooled",
    )
    stages = [name for name in times if name not in wholes]
    stages = [name for name in stages if not name.startswith(" ")]
    print("Execute, tiny TOP_K1")
    for name, us in times.items():
        print(f"{name:36s} {us:8.2f} µs")
    glue = times["whole Execute (servicer)"] - sum(times[name] for name in stages)
    print(f"{'glue (whole - stages)':36s} {glue:8.2f} µs")
    print("\nModelInfer, tiny TopK model")
    for name, us in asyncio.run(measure_model_infer(args.number, args.repeats)).items():
        print(f"{name:36s} {us:8.2f} µs")


if __name__ == "__main__":
    main()
