"""Hostile requests (small messages that ask for much work or memory) and a health watch kept during an attack."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import grpc
import numpy as np

import dmlrpc
from dmlrpc import ops
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2

#: The health watch's script (``HealthWatch``).
_PROBE = Path(__file__).with_name("health_probe.py")

#: Channel options of a reader that holds the server back: flow control windows fixed at 64 KiB. With BDP probing,
#: gRPC grows a stream's window to its estimate of bytes in flight, which a loaded machine (late ping acks) inflates
#: past a 32 MiB response: the server then hands it all to the caller's transport and gives its memory back though
#: the caller has read nothing. With a fixed window the server runs about one message ahead of what is read.
HELD_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 64 << 10)]

#: Statuses no request may ever get, however hostile.
FORBIDDEN = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)


def _scalar_binding(value: float = 3.0) -> service_pb2.BindingDesc:
    return service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=np.float32(value).tobytes()))


def broadcast_max_pooling(size: int, window: tuple[int, int]) -> service_pb2.ExecuteRequest:
    """MAX_POOLING over a [1, 1, size, size] FLOAT32 input that is one element broadcast (strides 0), window
    ``window`` at stride 1: a 4-byte buffer whose work grows with size^2 x window and whose lowering gathers every
    window (an intermediate of size^2 x window elements)."""
    rows, columns = size - window[0] + 1, size - window[1] + 1
    desc = operators_pb2.OperatorDesc()
    pooling = desc.max_pooling
    pooling.input_tensor.CopyFrom(tensor_desc((np.float32, (1, 1, size, size)), strides=[0, 0, 0, 0]))
    pooling.output_tensor.CopyFrom(tensor_desc((np.float32, (1, 1, rows, columns))))
    pooling.dimension_count = 2
    pooling.strides.extend([1, 1])
    pooling.window_size.extend(window)
    pooling.start_padding.extend([0, 0])
    pooling.end_padding.extend([0, 0])
    return service_pb2.ExecuteRequest(operator_desc=desc, inputs=[_scalar_binding()])


def broadcast_gemm(rows: int, inner: int, columns: int) -> service_pb2.ExecuteRequest:
    """GEMM of a [1, 1, rows, inner] by an [1, 1, inner, columns] FLOAT32 matrix, each one element broadcast: 8
    bytes of data for rows x inner x columns multiply-adds."""
    desc = operators_pb2.OperatorDesc()
    gemm = desc.gemm
    gemm.a_tensor.CopyFrom(tensor_desc((np.float32, (1, 1, rows, inner)), strides=[0, 0, 0, 0]))
    gemm.b_tensor.CopyFrom(tensor_desc((np.float32, (1, 1, inner, columns)), strides=[0, 0, 0, 0]))
    gemm.output_tensor.CopyFrom(tensor_desc((np.float32, (1, 1, rows, columns))))
    gemm.alpha = 1.0
    bindings = [_scalar_binding(), _scalar_binding(), service_pb2.BindingDesc()]
    return service_pb2.ExecuteRequest(operator_desc=desc, inputs=bindings)


def much_work() -> service_pb2.ExecuteRequest:
    """5.5e11 multiply-adds (hours of one CPU core) from 8 bytes of data, every tensor within the size limits:
    over the default --max-work."""
    return broadcast_gemm(4096, 32768, 4096)


def large_intermediate() -> service_pb2.ExecuteRequest:
    """A pooling whose inputs and output are within the tensor limits but whose lowering would gather a 43 GB
    intermediate (4096 x 3297 windows of 800 elements)."""
    return broadcast_max_pooling(4096, (1, 800))


def broadcast_identity(elements: int) -> operators_pb2.OperatorDesc:
    """ELEMENT_WISE_IDENTITY of a [1, elements] FLOAT32 input that is one element broadcast."""
    desc = operators_pb2.OperatorDesc()
    desc.CopyFrom(ops.element_wise("identity", np.zeros(4, np.float32)).operator_desc)
    identity = desc.element_wise_identity
    identity.input_tensor.CopyFrom(tensor_desc((np.float32, (1, elements)), strides=[0, 0]))
    identity.output_tensor.CopyFrom(tensor_desc((np.float32, (1, elements))))
    return desc


def broadcast_constant_graph(elements: int) -> graph_pb2.GraphDesc:
    """A graph whose 4-byte constant feeds a broadcast input of ``elements`` FLOAT32 elements: a CompileGraph of
    under 100 bytes that makes the server hold 4 x ``elements`` bytes."""
    graph = dmlrpc.Graph()
    constant = graph.constant(np.float32(2.0))
    (output,) = graph.node(broadcast_identity(elements), [constant])
    graph.output(output)
    return graph.desc()


def broadcast_identity_request(elements: int) -> service_pb2.ExecuteRequest:
    """ELEMENT_WISE_IDENTITY with a 4-byte input and an output of 4 x ``elements`` bytes."""
    return service_pb2.ExecuteRequest(operator_desc=broadcast_identity(elements), inputs=[_scalar_binding()])


def stream_start(request: service_pb2.ExecuteRequest) -> bytes:
    """The ExecuteStream messages of ``request``: its start, then each input's bytes in one chunk."""
    start = service_pb2.ExecuteStreamRequest(
        start=service_pb2.ExecuteStreamStart(
            operator_desc=request.operator_desc,
            input_bytes=[len(binding.buffer.data) for binding in request.inputs],
        )
    )
    return start.SerializeToString()


def stream_messages(request: service_pb2.ExecuteRequest) -> Iterator[service_pb2.ExecuteStreamRequest]:
    """``request`` as ExecuteStream messages: the start, then one chunk per input."""
    yield service_pb2.ExecuteStreamRequest.FromString(stream_start(request))
    for index, binding in enumerate(request.inputs):
        yield service_pb2.ExecuteStreamRequest(chunk=service_pb2.TensorChunk(binding=index, data=binding.buffer.data))


class HealthWatch:
    """Checks the server's health back to back from a process of its own while an attack runs. Every check must
    answer SERVING, and every hostile call marked with ``during`` must have had a health check sent and answered
    while it was in flight: a server whose loop the call held would answer that check only once the call ended.

    ``with HealthWatch(address) as watch: with watch.during("the compile"): ...`` then ``watch.assert_served()``.
    """

    def __init__(self, address: str, *, interval: float = 0.005) -> None:
        self.address = address
        self.interval = interval
        self.checks: list[tuple[int, int]] = []
        self.failures: list[str] = []
        self.calls: list[tuple[str, int, int]] = []
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> HealthWatch:
        launched = time.perf_counter_ns()
        self._process = subprocess.Popen(
            [sys.executable, str(_PROBE), self.address, str(self.interval)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        first = self._process.stdout.readline().split()
        assert first[:1] == ["ready"], f"the health watch did not start: {first!r}"
        # Its first check was answered after it was launched and before this read: the two processes read one clock.
        assert launched <= int(first[1]) <= time.perf_counter_ns(), "the watch's clock is not this process's"
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._process is not None
        report, _ = self._process.communicate(timeout=60)  # closes its stdin: the watch ends and reports
        if report.strip():
            seen = json.loads(report.strip().splitlines()[-1])
            self.checks = [(sent, answered) for sent, answered in seen["checks"]]
            self.failures = seen["failures"]

    @contextmanager
    def during(self, call: str) -> Iterator[None]:
        """Marks the hostile call made inside the block (on the clock the watch's process reads too)."""
        started = time.perf_counter_ns()
        yield
        self.calls.append((call, started, time.perf_counter_ns()))

    def assert_served(self) -> None:
        assert self.checks, "the health watch made no check"
        assert not self.failures, self.failures[:5]
        for call, started, ended in self.calls:
            within = any(started <= sent and answered <= ended for sent, answered in self.checks)
            assert within, f"no health check was answered while {call} was in flight ({len(self.checks)} checks)"


def assert_serves(address: str) -> None:
    """A valid request gets its correct answer (the server survived and still computes)."""
    rng = np.random.default_rng(5)
    data = rng.standard_normal((3, 16)).astype(np.float32)
    call = ops.top_k(data, 2)
    with dmlrpc.Client(address) as client:
        values, _ = client.execute(call.operator_desc, list(call.inputs), timeout=30)
    assert isinstance(values, np.ndarray)
    np.testing.assert_array_equal(values, -np.sort(-data, axis=-1)[:, :2])
