"""Dynamic batching over the real server: batched results equal unbatched ones, requests never mix, and one
request's cancellation, deadline or error leaves the others of its batch correct."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc_server.batching import BatchQueue, Feeds, Member
from dmlrpc_server.runtime.buffers import BufferPool
from tests.conftest import ServerThread, scrape, start_server
from tests.references import dml

BATCH = 8


@pytest.fixture(scope="module")
def batching() -> Iterator[ServerThread]:
    """Batches of up to 8 that wait 50 ms for company, so concurrent requests reliably share a batch."""
    running = start_server(max_batch_size=BATCH, max_batch_delay_us=50_000)
    yield running
    running.stop()


def _batches(server: ServerThread) -> tuple[float, float]:
    samples = scrape(server)
    return samples[("dmlrpc_batch_size_count", ())], samples[("dmlrpc_batch_size_sum", ())]


def _gather(address: str, calls: list[ops.Call], timeout: float = 30) -> list[list[np.ndarray | None] | BaseException]:
    async def main() -> list[list[np.ndarray | None] | BaseException]:
        async with dmlrpc.AsyncClient(address, timeout=timeout, retry=None) as client:
            return await asyncio.gather(
                *(client.execute(call.operator_desc, call.inputs) for call in calls), return_exceptions=True
            )

    return asyncio.run(main())


def _top_k_calls(rng: np.random.Generator, dtype: str, shape: tuple[int, ...], axis: int, k: int) -> list[ops.Call]:
    calls = []
    for _ in range(BATCH):
        data = rng.integers(-1000, 1000, size=shape).astype(dtype)
        calls.append(ops.top_k(data, k, axis))
    return calls


@pytest.mark.parametrize(
    ("dtype", "shape", "axis", "k"),
    [("float32", (3, 5), 1, 2), ("int32", (4, 2, 3), 0, 3), ("uint16", (7,), 0, 7), ("int64", (2, 6), 1, 1)],
)
def test_batched_top_k_equals_the_reference(
    batching: ServerThread, dtype: str, shape: tuple[int, ...], axis: int, k: int
) -> None:
    rng = np.random.default_rng(abs(hash((dtype, shape))) % 2**32)
    calls = _top_k_calls(rng, dtype, shape, axis, k)
    count, total = _batches(batching)
    results = _gather(batching.address, calls)
    new_count, new_total = _batches(batching)
    assert new_total - total == BATCH
    assert new_count - count < BATCH  # at least two requests shared a run
    for call, result in zip(calls, results, strict=True):
        assert not isinstance(result, BaseException), result
        values, indices = result
        expected_values, expected_indices = dml.top_k(np.asarray(call.inputs[0]), axis, k, decreasing=True)
        np.testing.assert_array_equal(values, expected_values)
        np.testing.assert_array_equal(indices, expected_indices)


def test_batched_scatter_elements_equals_the_reference(batching: ServerThread) -> None:
    rng = np.random.default_rng(7)
    calls, expected = [], []
    for _ in range(BATCH):
        data = rng.standard_normal((4, 6)).astype(np.float32)
        indices = np.stack([rng.permutation(6)[:3] for _ in range(4)]).astype(np.int64)
        updates = rng.standard_normal((4, 3)).astype(np.float32)
        calls.append(ops.scatter_elements(data, indices, updates, axis=1))
        expected.append(dml.scatter_elements(data, indices, updates, 1))
    for result, reference in zip(_gather(batching.address, calls), expected, strict=True):
        assert not isinstance(result, BaseException), result
        np.testing.assert_array_equal(result[0], reference)


def test_batched_scatter_nd_equals_the_reference(batching: ServerThread) -> None:
    rng = np.random.default_rng(8)
    calls, expected = [], []
    for _ in range(BATCH):
        data = rng.standard_normal((5, 4, 3)).astype(np.float32)
        flat = rng.permutation(20)[:6]
        indices = np.stack([flat // 4, flat % 4], axis=-1).astype(np.int32)  # [6, 2]: tuples into [5, 4]
        updates = rng.standard_normal((6, 3)).astype(np.float32)
        calls.append(ops.scatter_nd(data, indices, updates))
        reference = data.copy()
        reference[indices[:, 0], indices[:, 1]] = updates
        expected.append(reference)
    for result, reference in zip(_gather(batching.address, calls), expected, strict=True):
        assert not isinstance(result, BaseException), result
        np.testing.assert_array_equal(np.asarray(result[0]).reshape(reference.shape), reference)


def test_concurrent_requests_with_different_descs_never_mix(batching: ServerThread) -> None:
    rng = np.random.default_rng(9)
    calls: list[ops.Call] = []
    checks: list[Callable[[list[np.ndarray | None]], None]] = []
    for i in range(24):
        k = 1 + i % 3
        data = rng.standard_normal((2, 4 + i % 2)).astype(np.float32)
        calls.append(ops.top_k(data, k, 1))

        def check(result: list[np.ndarray | None], data: np.ndarray = data, k: int = k) -> None:
            np.testing.assert_array_equal(result[0], -np.sort(-data, axis=1)[:, :k])

        checks.append(check)
    for result, check in zip(_gather(batching.address, calls), checks, strict=True):
        assert not isinstance(result, BaseException), result
        check(result)


def test_an_invalid_request_never_joins_its_batch(batching: ServerThread) -> None:
    good = [
        ops.scatter_elements(np.zeros(4, np.float32), np.array([i % 4]), np.array([i], np.float32)) for i in range(5)
    ]
    bad = ops.scatter_elements(np.zeros(4, np.float32), np.array([9]), np.array([1.0], np.float32))
    results = _gather(batching.address, [*good[:2], bad, *good[2:]])
    error = results[2]
    assert isinstance(error, dmlrpc.InvalidArgumentError)
    assert error.field_violations[0].field == "inputs[1].buffer.data"
    for i, result in enumerate([*results[:2], *results[3:]]):
        assert not isinstance(result, BaseException), result
        expected = np.zeros(4, np.float32)
        expected[i % 4] = i
        np.testing.assert_array_equal(result[0], expected)


def test_a_cancelled_request_leaves_its_batch_correct(batching: ServerThread) -> None:
    data = [np.arange(6, dtype=np.float32) * (i + 1) for i in range(4)]

    async def main() -> list[list[np.ndarray | None]]:
        async with dmlrpc.AsyncClient(batching.address, timeout=30) as client:
            tasks = [asyncio.ensure_future(client.top_k(x, 2)) for x in data]
            await asyncio.sleep(0.01)  # inside the 50 ms batch window
            tasks[1].cancel()
            done = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(done[1], asyncio.CancelledError)
        return [result for i, result in enumerate(done) if i != 1]  # type: ignore[misc]

    for x, (values, _) in zip([data[0], data[2], data[3]], asyncio.run(main()), strict=True):
        np.testing.assert_array_equal(values, [x[5], x[4]])


def test_an_expired_request_leaves_its_batch_correct(batching: ServerThread) -> None:
    async def main() -> tuple[object, object]:
        async with dmlrpc.AsyncClient(batching.address, timeout=30, retry=None) as client:
            early = client.top_k(np.arange(6, dtype=np.float32), 2, timeout=0.02)  # expires in the batch window
            late = client.top_k(np.arange(6, dtype=np.float32) + 10, 2)
            return tuple(await asyncio.gather(early, late, return_exceptions=True))  # type: ignore[return-value]

    early, late = asyncio.run(main())
    assert isinstance(early, dmlrpc.DeadlineExceededError)
    assert not isinstance(late, BaseException)
    np.testing.assert_array_equal(late[0], [15.0, 14.0])  # type: ignore[index]


def test_batching_off_runs_each_request_alone() -> None:
    running = start_server(max_batch_size=1)
    try:
        calls = [ops.top_k(np.arange(5, dtype=np.float32) + i, 1) for i in range(6)]
        results = _gather(running.address, calls)
        assert [float(r[0][0]) for r in results] == [4.0 + i for i in range(6)]  # type: ignore[index]
        count, total = _batches(running)
        assert count == total  # every run held one request
    finally:
        running.stop()


def test_pool_reuses_by_size_class_within_its_bound() -> None:
    pool = BufferPool(max_bytes=64 * 1024)
    first = pool.acquire(5000)
    assert first.nbytes == 5000 and first.base is not None and first.base.nbytes == 8192
    first[:] = 0xAB
    pool.release(first)
    again = pool.acquire(6000, zeroed=True)
    assert again.base is first.base  # same size class: reused
    assert not again.any()  # and cleared when asked
    assert (pool.stats.hits, pool.stats.misses) == (1, 1)
    big = pool.acquire(128 * 1024)  # over the bound: freed on release, not kept
    pool.release(big)
    pool.release(again)
    assert pool.stats.held_bytes == 8192 and pool.stats.lent_bytes == 0


class _Doubling:
    """A batch policy over plain numbers (``batching.Policy``): each member's result is twice its feeds, run on a
    worker thread."""

    slots = 1
    full = 4

    def take(self, queue: deque[Member[int]], now_ns: int) -> int:
        return min(len(queue), self.full)

    def inline(self, batch: list[Member[int]]) -> bool:
        return False

    def run(self, batch: list[Member[int]]) -> list[int]:
        return [2 * cast(int, member.feeds) for member in batch]

    def ran(self, batch: list[Member[int]], started_ns: int, results: list[int] | None, error: object) -> None:
        pass


def test_a_batch_the_stopped_workers_cancel_or_refuse_settles_its_members() -> None:
    # The server stops: its worker threads cancel a batch that waited for a thread (each member is cancelled) and
    # refuse a new one (each member gets the error). No member waits for a batch that will never run.
    async def main() -> None:
        workers = ThreadPoolExecutor(1)
        queue: BatchQueue[int] = BatchQueue(_Doubling(), workers)
        doubled = await asyncio.gather(*(queue.result(cast(Feeds, i), 1, None, None) for i in range(6)))
        assert doubled == [0, 2, 4, 6, 8, 10]
        gate, busy = threading.Event(), threading.Event()

        def block() -> bool:
            busy.set()
            return gate.wait(10)

        blocker = workers.submit(block)  # the only thread is busy: the next batch waits for it
        # NOTE: on the thread before the shutdown below, or the shutdown cancels the blocker too.
        assert await asyncio.to_thread(busy.wait, 10)
        waiting = asyncio.ensure_future(queue.result(cast(Feeds, 1), 1, None, None))
        while queue.running == 0:  # a loop turn for the call, one for the lane's look at its queue
            await asyncio.sleep(0)
        assert not waiting.done()
        workers.shutdown(wait=False, cancel_futures=True)
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 10)
        assert blocker.result(10) and queue.running == 0
        with pytest.raises(RuntimeError, match="shutdown"):
            await asyncio.wait_for(queue.result(cast(Feeds, 2), 1, None, None), 10)

    asyncio.run(main())
