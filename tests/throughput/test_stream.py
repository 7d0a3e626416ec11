"""ExecuteStream: tensors larger than the unary message limit round-trip in chunks; the stream's rules."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.conftest import ServerThread, start_server

MESSAGE_LIMIT = 4 << 20  # gRPC's default, far below the tensors below


@pytest.fixture(scope="module")
def small_messages() -> Iterator[ServerThread]:
    running = start_server(max_message_bytes=MESSAGE_LIMIT)
    yield running
    running.stop()


def _scatter(size: int) -> tuple[ops.Call, np.ndarray]:
    rng = np.random.default_rng(size)
    data = rng.standard_normal(size).astype(np.float32)
    indices = rng.permutation(size)[:100].reshape(-1, 1).astype(np.int64)
    updates = rng.standard_normal(100).astype(np.float32)
    expected = data.copy()
    expected[indices[:, 0]] = updates
    return ops.scatter_nd(data, indices, updates), expected


def test_tensor_over_the_unary_limit_round_trips_through_the_stream(small_messages: ServerThread) -> None:
    call, expected = _scatter(5 << 20)  # 20 MiB in and out, 5x the message limit
    with dmlrpc.Client(small_messages.address, timeout=120, stream_threshold_bytes=1 << 20) as client:
        (output,) = client.execute(call.operator_desc, call.inputs)
        np.testing.assert_array_equal(np.asarray(output).reshape(expected.shape), expected)
        with pytest.raises(dmlrpc.ResourceExhaustedError):  # the same call as one message cannot pass
            client.execute(call.operator_desc, call.inputs, stream=False)


def test_a_client_with_grpc_defaults_reads_every_chunk(small_messages: ServerThread) -> None:
    # gRPC refuses a received message over 4 MiB by default: each chunk message, its framing included, fits.
    call, expected = _scatter(5 << 20)
    with grpc.insecure_channel(small_messages.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        responses = list(stub.ExecuteStream(iter(_messages(call)), timeout=120))
    assert max(response.ByteSize() for response in responses) <= 4 << 20
    data = b"".join(response.chunk.data for response in responses if response.HasField("chunk"))
    np.testing.assert_array_equal(np.frombuffer(data, np.float32), expected)


def test_async_client_streams_too(small_messages: ServerThread) -> None:
    data = np.random.default_rng(3).standard_normal((4, 1 << 20)).astype(np.float32)  # 16 MiB

    async def main() -> tuple[np.ndarray, np.ndarray]:
        async with dmlrpc.AsyncClient(small_messages.address, timeout=120, stream_threshold_bytes=1 << 20) as client:
            return await client.top_k(data, 3)

    values, indices = asyncio.run(main())
    np.testing.assert_array_equal(values, -np.sort(-data, axis=1)[:, :3])
    np.testing.assert_array_equal(np.take_along_axis(data, indices.astype(np.int64), 1), values)


def test_small_calls_may_stream_explicitly(client: dmlrpc.Client) -> None:
    values, _ = client.execute(*_pair(ops.top_k(np.array([3.0, 9.0, 1.0], np.float32), 2)), stream=True)
    np.testing.assert_array_equal(values, [9.0, 3.0])


def _pair(call: ops.Call) -> tuple[object, object]:
    return call.operator_desc, call.inputs


def _raw_stream(server: ServerThread, messages: list[service_pb2.ExecuteStreamRequest]) -> grpc.RpcError:
    with grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            list(stub.ExecuteStream(iter(messages), timeout=30))
    return info.value


def _violation(error: grpc.RpcError) -> str:
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    detail = error_details_pb2.BadRequest()
    status.details[0].Unpack(detail)
    return str(detail.field_violations[0].field)


def _messages(call: ops.Call) -> list[service_pb2.ExecuteStreamRequest]:
    """The SDK's stream messages (wire bytes, chunks written by dmlrpc.wire) read back as protobuf messages."""
    return [
        service_pb2.ExecuteStreamRequest.FromString(raw)
        for raw in prepare_execute(call.operator_desc, call.inputs).stream_requests()
    ]


def test_stream_errors_name_the_field(server: ServerThread) -> None:
    call = ops.top_k(np.arange(8, dtype=np.float32), 2)
    messages = _messages(call)

    bad_k = _messages(ops.top_k(np.arange(8, dtype=np.float32), 2))
    bad_k[0].start.operator_desc.top_k1.k = 99
    error = _raw_stream(server, bad_k)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert _violation(error) == "start.operator_desc.top_k1.k"

    no_start = messages[1:]
    error = _raw_stream(server, no_start)
    assert _violation(error) == "start"

    short = _messages(call)[:1]
    short[0].start.input_bytes[0] = 8
    error = _raw_stream(server, short)
    assert _violation(error) == "start.input_bytes[0]"

    truncated = [messages[0], service_pb2.ExecuteStreamRequest(chunk=service_pb2.TensorChunk(binding=0, data=b"1234"))]
    error = _raw_stream(server, truncated)
    assert _violation(error) == "start.input_bytes[0]"
    assert "ended after 4 of the 32 bytes" in error.details()  # type: ignore[attr-defined]

    extra = [*messages, service_pb2.ExecuteStreamRequest(chunk=service_pb2.TensorChunk(binding=0, data=b"x"))]
    assert _violation(_raw_stream(server, extra)) == "chunk.data"

    wrong_binding = [messages[0], service_pb2.ExecuteStreamRequest(chunk=service_pb2.TensorChunk(binding=5, data=b"x"))]
    assert _violation(_raw_stream(server, wrong_binding)) == "chunk.binding"


def test_declared_sizes_over_the_limits_are_refused_before_any_data(server: ServerThread) -> None:
    """A start that declares more than the per-tensor limit is refused at once: nothing is allocated or read."""
    call = ops.top_k(np.arange(8, dtype=np.float32), 2)
    start = _messages(call)[0]
    start.start.input_bytes[0] = 1 << 40
    error = _raw_stream(server, [start])
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
    assert "start.input_bytes[0]" in error.details()  # type: ignore[attr-defined]


def test_wire_chunks_are_protobuf_chunks() -> None:
    """dmlrpc.wire writes exactly what protobuf writes, and reads what protobuf writes."""
    from dmlrpc.wire import decode_chunk, encode_chunk

    for binding, data in [(0, b""), (0, b"abc"), (3, bytes(range(256)) * 3), (300, b"x" * 200_000)]:
        written = encode_chunk(binding, data)
        message = service_pb2.ExecuteStreamResponse(chunk=service_pb2.TensorChunk(binding=binding, data=data))
        assert service_pb2.ExecuteStreamResponse.FromString(written) == message
        decoded = decode_chunk(message.SerializeToString())
        assert decoded is not None and decoded[0] == binding and bytes(decoded[1]) == data
    start = service_pb2.ExecuteStreamRequest(start=service_pb2.ExecuteStreamStart(input_bytes=[4]))
    assert decode_chunk(start.SerializeToString()) is None
    with pytest.raises(ValueError, match="runs past"):
        decode_chunk(b"\x12\x05\x12\x09abc")


def test_unary_is_refused_past_the_unary_limit(client: dmlrpc.Client) -> None:
    # A FILL_VALUE_CONSTANT whose output is one element past dmlrpc.UNARY_LIMIT_BYTES: nothing is allocated, and the
    # refusal comes before any RPC (unary is several times slower than a stream there: docs/benchmarks.md).
    call = ops.fill_value_constant((dmlrpc.UNARY_LIMIT_BYTES >> 2) + 1, 1.0)
    with pytest.raises(dmlrpc.ArgumentValueError) as raised:
        client.execute(call.operator_desc, call.inputs, stream=False)
    assert raised.value.argument == "stream"
    assert f"exceeds {dmlrpc.UNARY_LIMIT_BYTES} bytes (256 MiB)" in str(raised.value), raised.value
    assert "leave stream unset or pass stream=True" in str(raised.value)


def test_by_size_streams_past_the_unary_limit_whatever_the_threshold() -> None:
    from dmlrpc._calls import EXECUTE, EXECUTE_STREAM, _by_size

    over = ops.fill_value_constant((dmlrpc.UNARY_LIMIT_BYTES >> 2) + 1, 1.0)
    at = ops.fill_value_constant(dmlrpc.UNARY_LIMIT_BYTES >> 2, 1.0)
    prepared = [prepare_execute(call.operator_desc, list(call.inputs), None, 0) for call in (over, at)]
    huge_threshold = 1 << 40  # stream_threshold_bytes set above the limit: the limit still decides
    assert _by_size(prepared[0], None, huge_threshold).method == EXECUTE_STREAM
    assert _by_size(prepared[1], None, huge_threshold).method == EXECUTE
