"""The SDK refuses a desc the server would refuse for its tensors' sizes before it lays out a byte, with the server's
own message: DirectML's element bound always, and the limits the server publishes in GetCapabilities."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc import _base, ops
from dmlrpc._base import prepare_execute
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.conftest import ServerThread, scrape, start_server


def _requests(server: ServerThread) -> float:
    return sum(value for (name, _), value in scrape(server).items() if name == "dmlrpc_requests_total")


def _server_refusal(server: ServerThread, call: ops.Call) -> grpc.RpcError:
    """What the server answers for ``call``'s desc, sent as a unary Execute with empty buffers (a desc is checked
    before its buffers are read)."""
    request = service_pb2.ExecuteRequest(operator_desc=call.operator_desc)
    for _ in call.inputs:
        request.inputs.add().buffer.data = b""
    with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as refused:
        service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=60)
    return refused.value


@pytest.fixture
def no_encoding(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fails a test whose SDK call laid out any input's bytes; yields the layouts it was asked to encode."""
    encoded: list[Any] = []

    def refuse(array: Any, layout: Any) -> bytes:
        encoded.append(layout)
        raise AssertionError("the SDK encoded an input of a desc it should have refused")

    monkeypatch.setattr(_base, "encode", refuse)
    yield encoded
    assert encoded == []


def test_a_huge_broadcast_fails_in_the_sdk_before_encoding(
    server: ServerThread, client: dmlrpc.Client, no_encoding: list[Any]
) -> None:
    """(100000, 1) + (1, 100000): each input sent once with stride 0, 10^10 logical elements. The SDK spent seconds
    laying the broadcast out before the server refused it."""
    a = np.ones((100_000, 1), np.float32)
    b = np.ones((1, 100_000), np.float32)
    before = _requests(server)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.element_wise("add", a, b)
    assert _requests(server) == before  # nothing reached the server
    error = caught.value
    field = "operator_desc.element_wise_add.a_tensor.buffer.sizes"
    assert error.message == f"{field}: 10000000000 elements; a buffer tensor has at most 2^32 - 1 elements"
    assert [violation.field for violation in error.field_violations] == [field]
    answered = _server_refusal(server, ops.element_wise("add", a, b))
    assert answered.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert answered.details() == error.message


@pytest.fixture(scope="module")
def small_server() -> Iterator[ServerThread]:
    running = start_server(max_tensor_bytes=1 << 20, max_request_bytes=3 << 19)
    yield running
    running.stop()


@pytest.mark.parametrize(
    ("shapes", "limit"),
    [
        pytest.param(((512, 1024), (512, 1024)), "--max-tensor-bytes", id="a tensor over --max-tensor-bytes"),
        pytest.param(((1024, 1), (1, 512)), "--max-tensor-bytes", id="a broadcast over it once materialised"),
        pytest.param(((256, 640), (256, 640)), "--max-request-bytes", id="the request over --max-request-bytes"),
    ],
)
def test_the_published_limits_refuse_before_encoding(
    small_server: ServerThread, no_encoding: list[Any], shapes: tuple[tuple[int, ...], ...], limit: str
) -> None:
    call = ops.element_wise("add", *(np.ones(shape, np.float32) for shape in shapes))
    with dmlrpc.Client(small_server.address) as client:
        limits = client.get_capabilities().limits
    with pytest.raises(dmlrpc.ResourceExhaustedError) as caught:
        prepare_execute(call.operator_desc, call.inputs, limits=limits)
    assert limit in caught.value.message
    answered = _server_refusal(small_server, call)
    assert answered.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert answered.details() == caught.value.message


def test_sizes_within_the_limits_are_sent(small_server: ServerThread) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with dmlrpc.Client(small_server.address) as client:
        limits = client.get_capabilities().limits
        prepared = prepare_execute(ops.element_wise("add", a, a).operator_desc, [a, a], limits=limits)
        np.testing.assert_array_equal(client.element_wise("add", a, a), a + a)
    assert len(prepared.inputs) == 2
