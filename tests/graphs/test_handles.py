"""Compiled-operator handles: release, ownership, idle expiry, count and byte quotas, limits and batched dispatch."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.handles import CompiledOperator
from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2
from tests.conftest import ServerThread, scrape, start_server

X = np.arange(12, dtype=np.float32).reshape(3, 4)
OWNED = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML


def negate_desc(like: np.ndarray = X) -> operators_pb2.OperatorDesc:
    return ops.element_wise("negate", like).operator_desc


def constant_graph(nbytes: int) -> dmlrpc.Graph:
    """x + constant over ``nbytes // 4`` float32 elements: a graph holding ``nbytes`` of constant data."""
    g = dmlrpc.Graph()
    x = g.input(np.float32, (nbytes // 4,))
    g.output(g.element_wise("add", x, g.constant(np.ones(nbytes // 4, np.float32))))
    return g


@pytest.fixture(scope="module")
def quota_server() -> Iterator[ServerThread]:
    running = start_server(compiled_operators_per_caller=2, compiled_bytes_per_caller=4096, max_graph_nodes=7)
    yield running
    running.stop()


def test_release_then_not_found(client: dmlrpc.Client, server: ServerThread) -> None:
    op = client.compile(negate_desc())
    (result,) = op(X)
    np.testing.assert_array_equal(result, -X)
    held = server.built.service.handles.held
    op.release()
    assert server.built.service.handles.held == held - 1
    with pytest.raises(dmlrpc.NotFoundError) as caught:
        op(X)
    assert op.handle in str(caught.value)
    with pytest.raises(dmlrpc.NotFoundError):
        op.release()
    with op:  # a context manager on a released handle: the NOT_FOUND of its release is swallowed
        pass


def test_unknown_handle(client: dmlrpc.Client) -> None:
    forged = CompiledOperator(
        client, service_pb2.CompiledOperator(handle="no-such-handle-0123456789", input_descs=[dmlrpc.tensor_desc(X)])
    )
    with pytest.raises(dmlrpc.NotFoundError) as caught:
        forged(X)
    assert "no-such-handle-0123456789" in str(caught.value)
    with pytest.raises(dmlrpc.NotFoundError):
        forged.release()


def test_another_clients_handle_is_not_found(server: ServerThread) -> None:
    with dmlrpc.Client(server.address) as mine, dmlrpc.Client(server.address) as theirs:
        op = mine.compile(negate_desc())
        stolen = CompiledOperator(
            theirs,
            service_pb2.CompiledOperator(handle=op.handle, input_descs=op.input_descs, output_descs=op.output_descs),
        )
        with pytest.raises(dmlrpc.NotFoundError):
            stolen(X)
        with pytest.raises(dmlrpc.NotFoundError):
            stolen.release()
        (result,) = op(X)  # still there for its owner
        np.testing.assert_array_equal(result, -X)
        op.release()


def test_a_token_owns_its_handles_across_connections() -> None:
    running = start_server(auth_token="graph-token")
    try:
        with dmlrpc.Client(running.address, token="graph-token") as first:
            op = first.compile(negate_desc())
        with dmlrpc.Client(running.address, token="graph-token") as second:
            again = CompiledOperator(
                second,
                service_pb2.CompiledOperator(
                    handle=op.handle, input_descs=op.input_descs, output_descs=op.output_descs
                ),
            )
            (result,) = again(X)
            np.testing.assert_array_equal(result, -X)
            again.release()
        assert running.built.service.handles.held == 0
    finally:
        running.stop()


def test_idle_handles_expire() -> None:
    running = start_server(compiled_idle_seconds=0.3)
    try:
        with dmlrpc.Client(running.address) as client:
            used = client.compile(negate_desc())
            idle = client.compile(constant_graph(16))
            for _ in range(4):
                time.sleep(0.12)
                used(X)  # dispatching keeps it
            with pytest.raises(dmlrpc.NotFoundError):
                idle(np.zeros(4, np.float32))
            assert running.built.service.handles.held == 1
            used.release()
            assert running.built.service.handles.held == 0
            with pytest.raises(dmlrpc.NotFoundError):
                idle.release()
    finally:
        running.stop()


def test_count_quota(quota_server: ServerThread) -> None:
    with dmlrpc.Client(quota_server.address) as client, dmlrpc.Client(quota_server.address) as other:
        first = client.compile(negate_desc())
        second = client.compile(constant_graph(16))
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="holds 2 of 2"):
            client.compile(negate_desc())
        with pytest.raises(dmlrpc.ResourceExhaustedError):
            client.compile(constant_graph(16))
        with other.compile(negate_desc()) as theirs:  # the quota is per caller
            np.testing.assert_array_equal(theirs(X)[0], -X)
        first.release()
        third = client.compile(negate_desc())
        np.testing.assert_array_equal(third(X)[0], -X)
        np.testing.assert_array_equal(second(np.zeros(4, np.float32))[0], np.ones(4, np.float32))
        third.release()
        second.release()
        assert quota_server.built.service.handles.held == 0


def test_byte_quota_counts_constants_and_owned_data(quota_server: ServerThread) -> None:
    # A constant is held four times (the model the plan keeps; ONNX Runtime's graph and tensor): an 800-byte
    # constant is charged 3200 bytes of the caller's 4096; owned data is held once.
    with dmlrpc.Client(quota_server.address) as client:
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="4096"):
            client.compile(constant_graph(1028))  # over the caller's 4096 on its own
        big = client.compile(constant_graph(800))
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="3200 \\+ 1600"):
            client.compile(constant_graph(400))
        weights = np.ones(256, np.float32)  # 1024 bytes of owned data
        desc = ops.element_wise("add", weights, weights).operator_desc
        desc.element_wise_add.a_tensor.buffer.flags |= OWNED
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="3200 \\+ 1024"):
            client.compile(desc, owned=[weights, None])
        small = client.compile(constant_graph(224))  # 3200 + 896 = 4096: exactly the quota
        np.testing.assert_array_equal(small(np.ones(56, np.float32))[0], np.full(56, 2, np.float32))
        big.release()
        with client.compile(desc, owned=[weights, None]) as owned:  # room again
            np.testing.assert_array_equal(owned(weights)[0], weights * 2)
        small.release()
        assert quota_server.built.service.handles.held == 0


def test_handles_are_unguessable(client: dmlrpc.Client) -> None:
    compiled = [client.compile(negate_desc()) for _ in range(10)]
    try:
        handles = [op.handle for op in compiled]
        assert len(set(handles)) == len(handles)
        for handle in handles:
            assert len(handle) >= 20 and handle.replace("-", "").replace("_", "").isalnum()
        assert len({handle[:8] for handle in handles}) == len(handles)  # no shared prefix or counter
    finally:
        for op in compiled:
            op.release()


def test_capabilities_report_the_limits(quota_server: ServerThread, client: dmlrpc.Client) -> None:
    with dmlrpc.Client(quota_server.address) as quota_client:
        limits = quota_client.get_capabilities().limits
    assert (limits.compiled_operators_per_caller, limits.compiled_bytes_per_caller) == (2, 4096)
    assert (limits.compiled_idle_seconds, limits.max_graph_nodes) == (600, 7)
    defaults = client.get_capabilities().limits
    assert (defaults.compiled_operators_per_caller, defaults.compiled_bytes_per_caller) == (256, 1024 * 1024 * 1024)
    assert (defaults.compiled_idle_seconds, defaults.max_graph_nodes) == (600, 64)


def test_max_graph_nodes_applies(quota_server: ServerThread) -> None:
    def chain(nodes: int) -> dmlrpc.Graph:
        g = dmlrpc.Graph()
        value = g.input(np.float32, (4,))
        for _ in range(nodes):
            value = g.element_wise("negate", value)
        g.output(value)
        return g

    with dmlrpc.Client(quota_server.address) as client:
        with client.compile(chain(7)) as op:
            np.testing.assert_array_equal(op(np.arange(4, dtype=np.float32))[0], -np.arange(4, dtype=np.float32))
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            client.compile(chain(8))
        assert caught.value.field_violations[0].field == "graph_desc.nodes"


def test_compiling_is_disabled_by_a_zero_quota() -> None:
    running = start_server(compiled_operators_per_caller=0)
    try:
        with dmlrpc.Client(running.address) as client:
            with pytest.raises(dmlrpc.ResourceExhaustedError, match="holds 0 of 0"):
                client.compile(negate_desc())
            np.testing.assert_array_equal(client.execute(negate_desc(), [X])[0], -X)
    finally:
        running.stop()


BATCH = 8


@pytest.fixture
def batching(request: pytest.FixtureRequest) -> Iterator[ServerThread]:
    """A fresh server per test (the batcher's company heuristics start clean): batches of up to 8 that wait 50 ms
    (and any overrides the test's ``kind`` names in ``BATCHING_OVERRIDES``)."""
    overrides = BATCHING_OVERRIDES.get(getattr(request, "param", ""), {})
    running = start_server(max_batch_size=BATCH, max_batch_delay_us=50_000, **overrides)
    yield running
    running.stop()


#: Batches hold small work (--batch-work), and on the host a few tiny runs' worth (--inline-work): raised where
#: the inputs are of MiB.
BATCHING_OVERRIDES: dict[str, dict[str, object]] = {
    "graph-with-a-large-constant": {"inline_work": 1 << 30, "batch_work": 1 << 30}
}


def _batches(server: ServerThread) -> tuple[float, float]:
    samples = scrape(server)
    return samples[("dmlrpc_batch_size_count", ())], samples[("dmlrpc_batch_size_sum", ())]


@pytest.mark.parametrize("batching", ["operator", "graph", "graph-with-a-large-constant"], indirect=True)
def test_dispatches_batch_like_execute(batching: ServerThread, request: pytest.FixtureRequest) -> None:
    kind = request.node.callspec.params["batching"]
    # The large constant (2 MiB) is kept beside the model (Plan.external): the batched session is given it too.
    size = 1 << 19 if kind == "graph-with-a-large-constant" else 5
    rng = np.random.default_rng(7)
    constant = rng.standard_normal(size).astype(np.float32)
    pairs = [
        (rng.standard_normal(size).astype(np.float32), rng.standard_normal(size).astype(np.float32))
        for _ in range(BATCH)
    ]

    async def main() -> tuple[list[list[np.ndarray]], float, float]:
        async with dmlrpc.AsyncClient(batching.address, timeout=30, retry=None) as client:
            if kind == "operator":
                op = await client.compile(ops.element_wise("add", pairs[0][0], pairs[0][1]).operator_desc)
            else:
                g = dmlrpc.Graph()
                a, b = g.input(np.float32, (size,)), g.input(np.float32, (size,))
                total = g.element_wise("add", a, b)
                if kind == "graph-with-a-large-constant":
                    total = g.element_wise("add", total, g.constant(constant))
                g.output(total)
                op = await client.compile(g)
            count, total_size = _batches(batching)
            results = await asyncio.gather(*(op(a, b) for a, b in pairs))
            new_count, new_total = _batches(batching)
            await op.release()
            arrays = [[value for value in result if isinstance(value, np.ndarray)] for result in results]
            return arrays, new_count - count, new_total - total_size

    results, runs, requests = asyncio.run(main())
    for (a, b), (result,) in zip(pairs, results, strict=True):
        expected = a + b + constant if kind == "graph-with-a-large-constant" else a + b
        np.testing.assert_array_equal(result, expected)
    assert requests == BATCH
    assert runs < BATCH  # at least two dispatches shared a run
