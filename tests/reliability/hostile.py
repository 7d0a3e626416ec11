"""Helpers of the hostile-caller tests: a health check and a stream that stalls on purpose."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence

import grpc
import numpy as np
import onnxruntime as ort
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc.wire import encode_chunk
from dmlrpc_server.runtime.compiler import Compiled


def health_answers(channel: grpc.Channel, metadata: Sequence[tuple[str, str]] = ()) -> None:
    """Health answers SERVING. Called while an attack's state is held (stalled streams, queued calls, open sockets),
    it is answered then or not at all: a server that the state held back would answer only once it ended. The
    timeout only guards against a hang; how fast health answers beside heavy work is measured by bench/."""
    request = health_pb2.HealthCheckRequest(service="")
    status = health_pb2_grpc.HealthStub(channel).Check(request, metadata=metadata, timeout=30).status
    assert status == health_pb2.HealthCheckResponse.SERVING


class Stalling:
    """A request iterator that sends ``messages`` and then sends nothing until ``release`` (or forever)."""

    def __init__(self, messages: Sequence[bytes]) -> None:
        self.messages = list(messages)
        self.sent = threading.Event()
        self.release = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield from self.messages
        self.sent.set()
        while not self.release.wait(0.05):
            pass


def slow_pooling(size: int) -> tuple[operators_pb2.OperatorDesc, np.ndarray]:
    """A max pooling of a ``size`` x ``size`` image with a window half its side: one ONNX Runtime node whose work
    grows as size^4 while its bytes grow as size^2, so the server runs it off its event loop. How long it takes
    depends on the machine: a test that needs it to last holds it with a ``RunGate``."""
    image = np.random.default_rng(0).random((1, 1, size, size), dtype=np.float32)
    window = size // 2
    out = size - window + 1
    desc = operators_pb2.OperatorDesc(
        max_pooling=operators_pb2.MaxPoolingOperatorDesc(
            input_tensor=tensor_desc(image),
            output_tensor=tensor_desc((np.float32, (1, 1, out, out))),
            dimension_count=2,
            strides=[1, 1],
            window_size=[window, window],
            start_padding=[0, 0],
            end_padding=[0, 0],
        )
    )
    return desc, image


class RunGate:
    """Holds each operator run whose feeds include an array of ``shape`` until ``release`` is set: work that lasts
    as long as the test says, on a machine of any speed. ``entered`` is set once such a run has begun."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...]) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        run = Compiled.run

        def gated(
            compiled: Compiled, feeds: dict[str, np.ndarray], options: ort.RunOptions | None = None
        ) -> list[np.ndarray]:
            if any(array.shape == shape for array in feeds.values()):
                self.entered.set()
                self.release.wait(60)
            return run(compiled, feeds, options)

        monkeypatch.setattr(Compiled, "run", gated)


def wait_serving(channel: grpc.Channel, timeout: float = 60.0) -> None:
    """Wait until health reports SERVING (a server process listens before it has warmed up)."""
    deadline = time.monotonic() + timeout
    request = health_pb2.HealthCheckRequest(service="")
    while time.monotonic() < deadline:
        status = health_pb2_grpc.HealthStub(channel).Check(request, timeout=10, wait_for_ready=True).status
        if status == health_pb2.HealthCheckResponse.SERVING:
            return
        time.sleep(0.05)
    raise AssertionError(f"not SERVING within {timeout} s")


def half_upload() -> list[bytes]:
    """An ExecuteStream's start (a top_k of 2^16 floats) and half of its input's bytes."""
    call = ops.top_k(np.random.default_rng(0).random(1 << 16, dtype=np.float32), 4)
    start = next(prepare_execute(call.operator_desc, call.inputs).stream_requests())
    return [start, encode_chunk(0, bytes(1 << 17))]
