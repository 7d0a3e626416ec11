"""ExecuteMany: Client.map / Client.stream and the async client against the real server, and the raw stream."""

from __future__ import annotations

import asyncio
import collections
import queue
from collections.abc import AsyncIterator, Iterator, Sequence

import grpc
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc import ops
from dmlrpc._base import InputValue, prepare_execute
from dmlrpc.many import DEFAULT_WINDOW, MESSAGE_BYTES, MESSAGE_ITEMS, ExecuteManyStream, Operator, Outputs, encode_item
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc
from tests.conftest import ServerThread, start_server
from tests.strategies import shapes

X = np.array([[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]], np.float32)


def _top_k(shape: tuple[int, ...] = X.shape, k: int = 2) -> ops.Call:
    return ops.top_k(np.zeros(shape, np.float32), k)


def _bad_desc() -> ops.Call:
    call = _top_k()
    call.operator_desc.top_k1.k = 9  # beyond the axis
    return call


def _same_error(item: BaseException | None, unary: dmlrpc.DmlRpcError) -> None:
    assert isinstance(item, dmlrpc.DmlRpcError), item
    assert (type(item), item.code, item.message, item.field_violations) == (
        type(unary),
        unary.code,
        unary.message,
        unary.field_violations,
    )


def _unary_error(client: dmlrpc.Client, operator: Operator, inputs: Sequence[InputValue]) -> dmlrpc.DmlRpcError:
    def call() -> object:
        if isinstance(operator, dmlrpc.CompiledOperator):
            return operator(*inputs)
        assert isinstance(operator, operators_pb2.OperatorDesc)
        return client.execute(operator, inputs)

    with pytest.raises(dmlrpc.DmlRpcError) as caught:
        call()
    return caught.value


def _assert_outputs_equal(got: Sequence[np.ndarray | None], want: Sequence[object]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, np.asarray(b))


# ---------------------------------------------------------------------------------------------------------------
# The request bytes


def test_an_item_carries_the_unary_request_byte_for_byte(client: dmlrpc.Client) -> None:
    call = ops.top_k(X, 2)
    piece, _ = encode_item(7, call.operator_desc, call.inputs)
    (item,) = service_pb2.ExecuteManyRequest.FromString(piece).items
    assert item.tag == 7 and item.WhichOneof("call") == "execute"
    assert (
        item.execute.SerializeToString() == prepare_execute(call.operator_desc, call.inputs).request.SerializeToString()
    )
    with client.compile(call.operator_desc) as compiled:
        piece, _ = encode_item(0, compiled, [X])
        (item,) = service_pb2.ExecuteManyRequest.FromString(piece * 3).items[2:]
        assert item.tag == 0 and item.dispatch.SerializeToString() == compiled.request([X], None).SerializeToString()


# ---------------------------------------------------------------------------------------------------------------
# Client.map and Client.stream


@settings(max_examples=8)
@given(shape=shapes(max_dims=4), count=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_map_equals_execute(client: dmlrpc.Client, shape: tuple[int, ...], count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    call = _top_k(shape, k=max(1, shape[-1] // 2))
    batches = [[rng.standard_normal(shape).astype(np.float32)] for _ in range(count)]
    expected = [client.execute(call.operator_desc, inputs) for inputs in batches]
    for got, want in zip(client.map(call.operator_desc, batches), expected, strict=True):
        _assert_outputs_equal(got, want)
    unordered = dict(client.map(call.operator_desc, batches, ordered=False, window=3))
    assert sorted(unordered) == list(range(count))
    for index, want in enumerate(expected):
        _assert_outputs_equal(unordered[index], want)


@settings(max_examples=6)
@given(descs=st.lists(st.tuples(shapes(max_dims=3), st.sampled_from(["add", "max", "top_k"])), min_size=1, max_size=12))
def test_items_of_many_descs_equal_execute(client: dmlrpc.Client, descs: list[tuple[tuple[int, ...], str]]) -> None:
    rng = np.random.default_rng(len(descs))
    calls = []
    for shape, name in descs:
        a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        calls.append(ops.top_k(a, 1) if name == "top_k" else ops.element_wise(name, a, b))
    with client.stream(window=4) as stream:
        futures = [stream.submit(call.operator_desc, call.inputs) for call in calls]
    for future, call in zip(futures, calls, strict=True):
        _assert_outputs_equal(future.result(), client.execute(call.operator_desc, call.inputs))


def test_a_bad_item_fails_alone_and_the_stream_goes_on(client: dmlrpc.Client) -> None:
    good = ops.top_k(X, 2)
    bad_desc = _bad_desc()
    short = [b"\x00" * 8]  # far shorter than the input's 48 bytes
    with client.stream(window=2) as stream:
        futures = [
            stream.submit(good.operator_desc, good.inputs),
            stream.submit(bad_desc.operator_desc, bad_desc.inputs),
            stream.submit(good.operator_desc, good.inputs),
            stream.submit(good.operator_desc, short),
            *(stream.submit(good.operator_desc, [X + i]) for i in range(10)),
        ]
    desc_error = _unary_error(client, bad_desc.operator_desc, bad_desc.inputs)
    assert isinstance(desc_error, dmlrpc.InvalidArgumentError)
    assert desc_error.field_violations[0].field == "operator_desc.top_k1.k"
    _same_error(futures[1].exception(), desc_error)
    _same_error(futures[3].exception(), _unary_error(client, good.operator_desc, short))
    expected = client.execute(good.operator_desc, good.inputs)
    _assert_outputs_equal(futures[0].result(), expected)
    _assert_outputs_equal(futures[2].result(), expected)
    for i, future in enumerate(futures[4:]):
        _assert_outputs_equal(future.result(), client.execute(good.operator_desc, [X + i]))


def test_ordered_map_raises_a_failed_item_at_its_position(client: dmlrpc.Client) -> None:
    call = ops.top_k(X, 2)
    batches: list[Sequence[InputValue]] = [[X + i] for i in range(6)]
    batches[3] = [b"\x00" * 8]
    results: list[Outputs] = []
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        results.extend(client.map(call.operator_desc, batches))
    assert len(results) == 3
    for i, got in enumerate(results):
        _assert_outputs_equal(got, client.execute(call.operator_desc, [X + i]))
    _same_error(caught.value, _unary_error(client, call.operator_desc, batches[3]))


def test_unordered_map_yields_every_index_once(client: dmlrpc.Client) -> None:
    call = ops.element_wise("add", X, X)
    batches = [[X * i, X] for i in range(200)]
    seen = dict(client.map(call.operator_desc, batches, ordered=False, window=16))
    assert sorted(seen) == list(range(200))
    for i, (output,) in seen.items():
        np.testing.assert_array_equal(output, X * i + X)


def test_map_of_dispatch_items(client: dmlrpc.Client) -> None:
    with client.compile(ops.top_k(X, 3).operator_desc) as compiled:
        batches = [[X * i] for i in range(30)]
        for i, got in enumerate(client.map(compiled, batches)):
            _assert_outputs_equal(got, compiled(*batches[i]))
        with client.stream() as stream:
            bad = stream.submit(compiled, [b"\x00"])
            good = stream.submit(compiled, [X])
        _same_error(bad.exception(), _unary_error(client, compiled, [b"\x00"]))
        _assert_outputs_equal(good.result(), compiled(X))


def test_map_reads_no_further_ahead_than_the_window(client: dmlrpc.Client) -> None:
    call = ops.element_wise("add", X, X)
    for ordered in (True, False):
        read = 0

        def batches() -> Iterator[list[np.ndarray]]:
            nonlocal read
            for i in range(100):
                read += 1
                yield [X, X + i]

        taken = 0
        for _ in client.map(call.operator_desc, batches(), ordered=ordered, window=5):
            taken += 1
            assert read - taken <= 5 - 1, (ordered, read, taken)
        assert (read, taken) == (100, 100)


def test_closing_the_map_early_cancels_the_stream(client: dmlrpc.Client) -> None:
    call = ops.element_wise("add", X, X)
    results = client.map(call.operator_desc, ([X, X] for _ in range(10_000)), window=8)
    assert len(next(results)) == 1
    results.close()
    with client.stream() as stream:
        future = stream.submit(call.operator_desc, call.inputs)
    np.testing.assert_array_equal(future.result()[0], X + X)
    with pytest.raises(ValueError, match="closed"):
        stream.submit(call.operator_desc, call.inputs)


def test_inputs_that_do_not_fit_raise_before_anything_is_sent(client: dmlrpc.Client) -> None:
    call = ops.element_wise("add", X, X)
    with client.stream() as stream, pytest.raises(ValueError, match="takes 2 inputs"):
        stream.submit(call.operator_desc, [X])


def test_the_default_window_is_the_servers(client: dmlrpc.Client) -> None:
    limit = client.get_capabilities().limits.max_stream_items_in_flight
    with client.stream() as stream:
        assert stream.window == (limit or DEFAULT_WINDOW)


def test_a_small_server_limit_sets_the_window_and_every_item_passes() -> None:
    running = start_server(stream_items_in_flight=3)
    try:
        with dmlrpc.Client(running.address, timeout=60) as client:
            call = ops.element_wise("add", X, X)
            with client.stream() as stream:
                assert stream.window == 3
            outputs = list(client.map(call.operator_desc, ([X, X + i] for i in range(100))))
            for i, (output,) in enumerate(outputs):
                np.testing.assert_array_equal(output, X + X + i)
    finally:
        running.stop()


# ---------------------------------------------------------------------------------------------------------------
# AsyncClient


def test_async_map_and_stream(server: ServerThread) -> None:
    call = ops.top_k(X, 2)
    batches = [[X + i] for i in range(40)]

    async def aiter_batches() -> AsyncIterator[list[np.ndarray]]:
        for inputs in batches:
            await asyncio.sleep(0)
            yield inputs

    async def main() -> tuple[list[Outputs], dict[int, Outputs], list[Outputs], BaseException | None]:
        async with dmlrpc.AsyncClient(server.address, timeout=60) as client:
            ordered = [outputs async for outputs in client.map(call.operator_desc, batches, window=7)]
            unordered = {i: o async for i, o in client.map(call.operator_desc, aiter_batches(), ordered=False)}
            async with client.stream(window=3) as stream:
                futures = [await stream.submit(call.operator_desc, inputs) for inputs in batches[:5]]
                bad = await stream.submit(_bad_desc().operator_desc, _bad_desc().inputs)
                futures += [await stream.submit(call.operator_desc, inputs) for inputs in batches[5:10]]
            submitted = [await future for future in futures]
            return ordered, unordered, submitted, bad.exception()

    ordered, unordered, submitted, bad = asyncio.run(main())
    sync = dmlrpc.Client(server.address, timeout=60)
    expected = [sync.execute(call.operator_desc, inputs) for inputs in batches]
    assert sorted(unordered) == list(range(40))
    for i, want in enumerate(expected):
        _assert_outputs_equal(ordered[i], want)
        _assert_outputs_equal(unordered[i], want)
    for got, want in zip(submitted, expected[:10], strict=True):
        _assert_outputs_equal(got, want)
    _same_error(bad, _unary_error(sync, _bad_desc().operator_desc, _bad_desc().inputs))
    sync.close()


def test_async_map_raises_a_failed_item_and_closes_early(server: ServerThread) -> None:
    call = ops.top_k(X, 2)
    batches: list[Sequence[InputValue]] = [[X + i] for i in range(5)]
    batches[2] = [b"\x00"]

    async def main() -> tuple[int, int]:
        async with dmlrpc.AsyncClient(server.address, timeout=60) as client:
            taken = 0

            async def take() -> None:
                nonlocal taken
                async for _ in client.map(call.operator_desc, batches):
                    taken += 1

            with pytest.raises(dmlrpc.InvalidArgumentError):
                await take()
            endless = client.map(call.operator_desc, ([X] for _ in range(10_000)), window=4)
            await endless.__anext__()
            await endless.aclose()
            (values, _), *_ = [o async for o in client.map(call.operator_desc, [[X]])]
            assert values is not None
            return taken, int(values[0, 0])

    assert asyncio.run(main()) == (2, 11)


# ---------------------------------------------------------------------------------------------------------------
# The raw stream


def test_raw_stream_answers_every_item_once_whatever_its_tag(server: ServerThread) -> None:
    good = ops.top_k(X, 2)
    bad = _bad_desc()
    tags = [0, 0, 5, 2**64 - 1, 5, 17, 3, 2**40, 1, 1]
    messages = []
    for start in range(0, len(tags), 3):
        request = service_pb2.ExecuteManyRequest()
        for tag in tags[start : start + 3]:
            call = bad if tag == 17 else good
            request.items.add(tag=tag, execute=prepare_execute(call.operator_desc, call.inputs).request)
        messages.append(request)
    with grpc.insecure_channel(server.address) as channel:
        responses = list(service_pb2_grpc.DirectMLServiceStub(channel).ExecuteMany(iter(messages), timeout=60))
    results = [result for response in responses for result in response.results]
    assert collections.Counter(r.tag for r in results) == collections.Counter(tags)
    for result in results:
        if result.tag == 17:
            assert result.status.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
            assert [v.field for v in result.status.field_violations] == ["operator_desc.top_k1.k"]
        else:
            assert result.status.code == 0, result.status
            assert np.frombuffer(result.response.outputs[0].buffer.data, "<f4").tolist() == [11, 10, 9, 8, 7, 6]


def test_items_are_packed_up_to_the_message_bounds() -> None:
    small, _ = encode_item(1, ops.top_k(X, 2).operator_desc, [X])
    half = np.zeros(3 << 16, np.float32)  # 0.75 MiB: 1.5 MiB an item
    big, _ = encode_item(2, ops.element_wise("add", half, half).operator_desc, [half, half])
    stream = ExecuteManyStream.__new__(ExecuteManyStream)  # only its request side, without a call
    stream._outgoing = queue.SimpleQueue()
    for piece in [small] * (MESSAGE_ITEMS + 5) + [big] * 3 + [None]:
        stream._outgoing.put(piece)
    messages = list(stream._requests())
    assert [len(service_pb2.ExecuteManyRequest.FromString(m).items) for m in messages] == [MESSAGE_ITEMS, 7, 1]
    assert all(len(m) <= MESSAGE_BYTES for m in messages)
