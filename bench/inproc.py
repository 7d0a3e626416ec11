"""The compute floor: the server's own lowering of a desc run in-process (ONNX Runtime session, full handler)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.codec import decode
from dmlrpc.v1 import service_pb2
from dmlrpc_server import binding, calls
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.providers import choose_provider

MiB = 1 << 20


def make_catalog(cache_capacity: int = 1024) -> Catalog:
    """A catalog configured as the server's defaults (CPU provider, one intra-op thread)."""
    limits = Limits(max_tensor_bytes=512 * MiB, max_request_bytes=1024 * MiB, max_message_bytes=512 * MiB)
    return Catalog(choose_provider("cpu"), feature_level=LATEST, limits=limits, cache_capacity=cache_capacity)


def per_call_us(fn: Callable[[], object], *, number: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean µs per call over ``number`` calls."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number * 1e6)
    return float(np.median(samples))


def floor(call: ops.Call, *, number: int = 2000, repeats: int = 5) -> dict[str, float]:
    """µs per run of one desc in-process: ORT ``session.run`` alone, the server's handler, and request parsing.

    - ``session_run_us``: ``InferenceSession.run`` with ready feeds (the compute floor).
    - ``handler_us``: the stages of a unary call in a row (cache lookup, binding checks, decode, prepare, run,
      finish, encode) — everything the server does per request except gRPC, admission, the interceptors and the
      dispatcher.
    - ``parse_us``: ``ExecuteRequest.FromString`` of the serialized request.
    """
    catalog = make_catalog()
    request = prepare_execute(call.operator_desc, call.inputs).request
    compiled = catalog.compiled(request.operator_desc)
    arrays = [
        None if layout is None else decode(binding.buffer.data, layout)
        for binding, layout in zip(request.inputs, compiled.plan.inputs, strict=True)
    ]
    feeds = compiled.plan.prepare(arrays)
    session, names = compiled.session, compiled.output_names
    payload = request.SerializeToString()
    pool = BufferPool(0)

    def handler() -> object:
        found = catalog.compiled(request.operator_desc)
        catalog.check_response_fits(found)
        bound = binding.feeds(found, binding.unary_buffers(request.inputs, found.plan))
        return binding.encode_outputs(found, pool, calls.write_execute, found.run(bound))

    return {
        "session_run_us": per_call_us(lambda: session.run(names, feeds), number=number, repeats=repeats),
        "handler_us": per_call_us(handler, number=number, repeats=repeats),
        "parse_us": per_call_us(lambda: service_pb2.ExecuteRequest.FromString(payload), number=number, repeats=repeats),
    }


def cold_compile_us(calls: list[ops.Call]) -> list[float]:
    """µs of ``Catalog.compiled`` for each desc on a fresh cache (validation, lowering, session creation)."""
    catalog = make_catalog()
    times = []
    for call in calls:
        start = time.perf_counter()
        catalog.compiled(call.operator_desc)
        times.append((time.perf_counter() - start) * 1e6)
    return times
