"""Admission limits, deadlines and element limits of the real server: refused with the right status, no work done."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc._base import prepare_execute
from dmlrpc.v1 import service_pb2_grpc
from tests.conftest import ServerThread, scrape, start_server
from tests.reliability.hostile import RunGate
from tests.test_validation import (
    EXHAUSTED,
    assert_status,
    broadcast_call,
    raw_desc_refusal,
    sdk_refusal,
    top_k_call,
)

SLOW_SIZE = 1 << 22  # a full top-k of 2^22 floats, 16 MiB: it runs on a worker, held there by a RunGate


def _wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.002)


class SlowCall:
    """A full top-k of 2^20 floats on a background thread, holding the server's only running slot."""

    def __init__(self, address: str, gate: RunGate | None = None) -> None:
        self.gate = gate
        self.data = np.random.default_rng(0).random(SLOW_SIZE, dtype=np.float32)
        self.values: np.ndarray | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(address,))
        self.thread.start()

    def _run(self, address: str) -> None:
        try:
            with dmlrpc.Client(address, timeout=120) as client:
                self.values, _ = client.top_k(self.data, SLOW_SIZE)
        except BaseException as error:  # reported by join()
            self.error = error

    def join(self) -> None:
        if self.gate is not None:
            self.gate.release.set()
        self.thread.join(timeout=120)
        assert self.error is None, self.error
        assert self.values is not None
        np.testing.assert_array_equal(self.values, np.sort(self.data)[::-1])


def _held_slow_call(address: str, monkeypatch: pytest.MonkeyPatch) -> SlowCall:
    """A SlowCall whose run holds the server's only slot until its ``join()``, however fast the machine: its desc
    compiled first (a compile takes a slot of its own), then its run held by a gate."""
    SlowCall(address).join()
    gate = RunGate(monkeypatch, (SLOW_SIZE,))
    slow = SlowCall(address, gate)
    assert gate.entered.wait(60)
    return slow


@pytest.fixture
def one_slot() -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []

    def start(queue: int) -> ServerThread:
        started.append(start_server(max_concurrent_requests=1, max_queue_depth=queue))
        return started[-1]

    yield start
    for running in started:
        running.stop()


def _compute_count(server: ServerThread) -> float:
    return scrape(server).get(("dmlrpc_compute_duration_seconds_count", (("operator", "top_k1"),)), 0.0)


def test_full_queue_answers_resource_exhausted_at_once(
    one_slot: Callable[..., ServerThread], monkeypatch: pytest.MonkeyPatch
) -> None:
    running = one_slot(queue=0)
    admission = running.built.service.scheduler.admission
    slow = _held_slow_call(running.address, monkeypatch)
    _wait_until(lambda: admission.running == 1)
    with (
        dmlrpc.Client(running.address, timeout=30, retry=None) as client,
        pytest.raises(dmlrpc.ResourceExhaustedError) as info,
    ):
        client.top_k(np.arange(8, dtype=np.float32), 2)
    # Refused while the slow call held the slot, with no room to wait (the message says so), however fast either runs.
    assert "1 calls running and 0 waiting" in info.value.message
    slow.join()
    assert admission.running == 0 and admission.waiting == 0


def test_queued_calls_run_in_turn(one_slot: Callable[..., ServerThread], monkeypatch: pytest.MonkeyPatch) -> None:
    running = one_slot(queue=4)
    admission = running.built.service.scheduler.admission
    # Compiled first: a stream takes its slot only once its bytes arrived, so running == 1 is then the run itself.
    slow = _held_slow_call(running.address, monkeypatch)
    _wait_until(lambda: admission.running == 1)
    results: list[np.ndarray] = []
    with dmlrpc.Client(running.address, timeout=60) as client:
        threads = [
            threading.Thread(target=lambda i=i: results.append(client.top_k(np.arange(8, dtype=np.float32) * i, 1)[0]))
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
        _wait_until(lambda: admission.waiting == 3)
        assert scrape(running)[("dmlrpc_queued_requests", ())] == 3
        slow.join()  # the slow call ends, and the queued ones run in turn
        for thread in threads:
            thread.join(timeout=60)
    assert sorted(float(r[0]) for r in results) == [0.0, 7.0, 14.0]
    assert admission.running == 0 and admission.waiting == 0


def test_expired_deadline_skips_the_work(
    one_slot: Callable[..., ServerThread], monkeypatch: pytest.MonkeyPatch
) -> None:
    running = one_slot(queue=4)
    admission = running.built.service.scheduler.admission
    with dmlrpc.Client(running.address, timeout=30) as client:
        client.top_k(np.arange(8, dtype=np.float32), 2)  # compile the small desc first
        slow = _held_slow_call(running.address, monkeypatch)
        _wait_until(lambda: admission.running == 1)
        before = _compute_count(running)
        with pytest.raises(dmlrpc.DeadlineExceededError):
            client.top_k(np.arange(8, dtype=np.float32), 2, timeout=0.1)
        _wait_until(lambda: admission.waiting == 0, timeout=5)  # the server gave up on it too
        slow.join()
        after = _compute_count(running)
    assert after - before == 1  # the slow call only: the expired one never ran
    assert admission.running == 0


def test_cancelled_waiting_call_leaves_the_queue(
    one_slot: Callable[..., ServerThread], monkeypatch: pytest.MonkeyPatch
) -> None:
    running = one_slot(queue=4)
    admission = running.built.service.scheduler.admission
    slow = _held_slow_call(running.address, monkeypatch)
    _wait_until(lambda: admission.running == 1)
    call = top_k_call(k=1, shape=(4,))
    request = prepare_execute(call.operator_desc, call.inputs).request
    with grpc.insecure_channel(running.address) as channel:
        future = service_pb2_grpc.DirectMLServiceStub(channel).Execute.future(request, timeout=60)
        _wait_until(lambda: admission.waiting == 1)
        assert future.cancel()
        _wait_until(lambda: admission.waiting == 0, timeout=5)
    slow.join()
    assert admission.running == 0


@pytest.fixture(scope="module")
def few_elements() -> Iterator[ServerThread]:
    running = start_server(max_tensor_elements=1000, max_request_elements=1500)
    yield running
    running.stop()


def test_tensor_over_max_tensor_elements(few_elements: ServerThread) -> None:
    call = top_k_call(k=1, shape=(7, 143))  # 1001 elements
    with dmlrpc.Client(few_elements.address, timeout=60) as sdk:
        refusal = sdk_refusal(sdk, call.operator_desc, call.inputs)
    assert_status(refusal, EXHAUSTED, "input_tensor.buffer.sizes: 1001 elements exceed the limit of 1000")


def test_request_over_max_request_elements(few_elements: ServerThread) -> None:
    call = top_k_call(k=300, shape=(1000,))  # 1000 + 300 + 300 elements
    with dmlrpc.Client(few_elements.address, timeout=60) as sdk:
        refusal = sdk_refusal(sdk, call.operator_desc, call.inputs)
    assert_status(refusal, EXHAUSTED, "1600 elements, over the limit of 1500")


def test_one_byte_broadcast_to_2_pow_32_minus_2_pow_16_elements_is_refused_by_element_count(
    few_elements: ServerThread,
) -> None:
    operator_desc, _ = broadcast_call((65536, 65535), k=1)
    started = time.monotonic()
    refusal = raw_desc_refusal(few_elements.address, operator_desc, [b"\x07\x00\x00\x00"])
    assert time.monotonic() - started < 5  # nothing of 4 GiB was allocated or touched
    assert_status(refusal, EXHAUSTED, "4294901760 elements exceed the limit of 1000 elements per tensor")
