"""Resident tensors over the wire: upload/execute/read chains equal the host path, ownership, quotas, expiry."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc import ops
from dmlrpc.v1 import service_pb2
from tests.conftest import ServerThread, start_server
from tests.ops.test_element_wise import OPERATORS, draw_case


@pytest.fixture(scope="module")
def quota_server() -> Iterator[ServerThread]:
    running = start_server(resident_tensors_per_caller=3, resident_bytes_per_caller=4096, resident_bytes_total=6144)
    yield running
    running.stop()


def test_upload_read_release(client: dmlrpc.Client) -> None:
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    with client.upload(x) as tensor:
        assert tensor.shape == (2, 3, 4) and tensor.dtype == np.int16
        np.testing.assert_array_equal(tensor.numpy(), x)
    with pytest.raises(dmlrpc.NotFoundError):
        tensor.numpy()


def test_strided_upload_keeps_the_logical_tensor(client: dmlrpc.Client) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with client.upload(x, strides=[8, 2]) as tensor:  # padded rows, every other element
        assert list(tensor.desc.buffer.strides) == [8, 2]
        np.testing.assert_array_equal(tensor.numpy(), x)


def test_allocate_is_zero_filled(client: dmlrpc.Client) -> None:
    with client.allocate(np.uint64, (3, 5)) as tensor:
        np.testing.assert_array_equal(tensor.numpy(), np.zeros((3, 5), np.uint64))


def test_a_chain_stays_on_the_server_and_equals_the_host_path(client: dmlrpc.Client) -> None:
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    add = ops.element_wise("add", x, x).operator_desc
    relu = ops.activation("relu", x).operator_desc
    top = ops.top_k(x, 3).operator_desc
    with client.upload(x) as resident:
        (doubled,) = client.execute(add, [resident, resident], keep=True)
        (rectified,) = client.execute(relu, [doubled], keep=True)
        values, indices = client.execute(top, [rectified], keep=[1])
        assert isinstance(doubled, dmlrpc.ResidentTensor) and isinstance(indices, dmlrpc.ResidentTensor)
        (host_doubled,) = client.execute(add, [x, x])
        (host_rectified,) = client.execute(relu, [host_doubled])
        host_values, host_indices = client.execute(top, [host_rectified])
        np.testing.assert_array_equal(rectified.numpy(), host_rectified)
        np.testing.assert_array_equal(values, host_values)
        np.testing.assert_array_equal(indices.numpy(), host_indices)
        for tensor in (doubled, rectified, indices):
            tensor.release()


@pytest.mark.parametrize("name", OPERATORS[::7])
@settings(max_examples=4)
@given(data=st.data())
def test_resident_inputs_and_outputs_equal_inline_ones(client: dmlrpc.Client, name: str, data: st.DataObject) -> None:
    case = draw_case(data, name)
    expected = client.execute(case.operator_desc, case.arrays)
    residents = [None if a is None else client.upload(np.ascontiguousarray(a)) for a in case.arrays]
    try:
        (kept,) = client.execute(case.operator_desc, residents, keep=True)
        np.testing.assert_array_equal(kept.numpy(), expected[0])
        kept.release()
    finally:
        for tensor in residents:
            if tensor is not None:
                tensor.release()


def test_ownership_is_per_client(server: ServerThread) -> None:
    x = np.ones(3, np.float32)
    with dmlrpc.Client(server.address) as mine, dmlrpc.Client(server.address) as theirs:
        tensor = mine.upload(x)
        desc = ops.activation("relu", x).operator_desc
        for attempt in (lambda: theirs.read_tensor(tensor), lambda: theirs.release_tensor(tensor)):
            with pytest.raises(dmlrpc.NotFoundError):
                attempt()
        with pytest.raises(dmlrpc.NotFoundError) as caught:
            theirs.execute(desc, [tensor])
        assert "inputs[0].resident.handle" in str(caught.value)
        np.testing.assert_array_equal(mine.read_tensor(tensor), x)  # still there for its owner
        tensor.release()


def test_a_token_owns_its_tensors_across_connections() -> None:
    running = start_server(auth_token="alpha-token")
    try:
        x = np.arange(4, dtype=np.int32)
        with dmlrpc.Client(running.address, token="alpha-token") as first:
            tensor = first.upload(x)
        with dmlrpc.Client(running.address, token="alpha-token") as second:
            np.testing.assert_array_equal(second.read_tensor(tensor), x)
            second.release_tensor(tensor)
    finally:
        running.stop()


def test_quotas_refuse_before_allocating(quota_server: ServerThread) -> None:
    with dmlrpc.Client(quota_server.address) as client, dmlrpc.Client(quota_server.address) as other:
        small = [client.upload(np.zeros(16, np.float32)) for _ in range(3)]  # 3 tensors, 192 bytes
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="holds 3 of 3"):
            client.upload(np.zeros(1, np.float32))
        for tensor in small:
            tensor.release()
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="4096"):
            client.upload(np.zeros(1025, np.float32))  # 4100 bytes: over the caller's 4096
        big = client.upload(np.zeros(1000, np.float32))  # 4000 bytes
        other_big = other.upload(np.zeros(500, np.float32))  # 2000 more: 6000 of 6144 in total
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="6144"):
            other.upload(np.zeros(100, np.float32))
        # A kept output counts too, and is refused before the operator runs.
        x = np.zeros(1000, np.float32)
        with pytest.raises(dmlrpc.ResourceExhaustedError):
            client.execute(ops.activation("relu", x).operator_desc, [big], keep=True)
        big.release()
        other_big.release()
        assert quota_server.built.resident.held == (0, 0)


def test_idle_tensors_expire() -> None:
    running = start_server(resident_idle_seconds=0.3)
    try:
        with dmlrpc.Client(running.address) as client:
            used = client.upload(np.ones(2, np.float32))
            idle = client.upload(np.ones(2, np.float32))
            for _ in range(4):
                time.sleep(0.12)
                used.numpy()  # using it keeps it
            with pytest.raises(dmlrpc.NotFoundError):
                idle.numpy()
            used.release()
            assert running.built.resident.held == (0, 0)
    finally:
        running.stop()


def test_binding_rules(client: dmlrpc.Client) -> None:
    x = np.ones((2, 3), np.float32)
    desc = ops.activation("relu", x).operator_desc
    with client.upload(np.ones((3, 2), np.float32)) as wrong_shape, client.upload(x.astype(np.float16)) as wrong_type:
        for tensor, what in ((wrong_shape, "FLOAT32 [3, 2]"), (wrong_type, "FLOAT16 [2, 3]")):
            with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
                client.execute(desc, [tensor])
            assert [v.field for v in caught.value.field_violations] == ["inputs[0].resident"]
            assert what in caught.value.field_violations[0].description
    with pytest.raises(dmlrpc.NotFoundError):
        client.execute(desc, [_Forged("not-a-handle", x)])
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [x], keep=[1])
    assert caught.value.field_violations[0].field == "keep_outputs[0]"
    with pytest.raises(ValueError, match="ExecuteStream"):
        client.execute(desc, [x], keep=True, stream=True)


class _Forged(dmlrpc.ResidentTensor):
    def __init__(self, handle: str, like: np.ndarray) -> None:
        super().__init__(None, handle, dmlrpc.tensor_desc(like))  # type: ignore[arg-type]


def test_create_tensor_stream_rules(server: ServerThread) -> None:
    import grpc

    from dmlrpc._base import create_requests
    from dmlrpc.wire import encode_chunk

    x = np.arange(8, dtype=np.float32)
    desc = dmlrpc.tensor_desc(x)
    with grpc.insecure_channel(server.address) as channel:
        create = channel.stream_unary("/dmlrpc.v1.DirectMLService/CreateTensor")

        def refusal(messages: list[bytes]) -> grpc.RpcError:
            with pytest.raises(grpc.RpcError) as caught:
                create(iter(messages), timeout=30)
            return caught.value

        start, *chunks = list(create_requests(x, desc))
        short = refusal([start, encode_chunk(0, memoryview(b"\0" * 8))])
        assert short.code() == grpc.StatusCode.INVALID_ARGUMENT and "ended after 8 of the 32" in short.details()
        extra = refusal([start, *chunks, encode_chunk(0, memoryview(b"\0"))])
        assert extra.code() == grpc.StatusCode.INVALID_ARGUMENT
        no_start = refusal([encode_chunk(0, memoryview(b"\0" * 4))])
        assert no_start.code() == grpc.StatusCode.INVALID_ARGUMENT
        bad_desc = service_pb2.CreateTensorRequest(
            start=service_pb2.CreateTensorStart(desc=dmlrpc.tensor_desc((np.float32, [0])))
        ).SerializeToString()
        assert refusal([bad_desc]).code() == grpc.StatusCode.INVALID_ARGUMENT
        huge = service_pb2.CreateTensorRequest(
            start=service_pb2.CreateTensorStart(desc=dmlrpc.tensor_desc((np.float32, [1 << 30])), uninitialized=True)
        ).SerializeToString()
        assert refusal([huge]).code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_async_client(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address) as client:
            x = np.arange(6, dtype=np.float32).reshape(2, 3)
            async with await client.upload(x) as tensor:
                (kept,) = await client.execute(ops.element_wise("negate", x).operator_desc, [tensor], keep=True)
                np.testing.assert_array_equal(await kept.numpy(), -x)
                await kept.release()

    asyncio.run(run())


def test_capabilities_report_the_quotas(quota_server: ServerThread) -> None:
    with dmlrpc.Client(quota_server.address) as client:
        limits = client.get_capabilities().limits
    assert (limits.resident_tensors_per_caller, limits.resident_bytes_per_caller) == (3, 4096)
    assert limits.resident_bytes_total == 6144 and limits.resident_idle_seconds == 600
