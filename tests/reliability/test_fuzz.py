"""Fuzzing: generated and mutated Execute and ExecuteStream requests get OK or a documented status, never a fault."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import grpc
import numpy as np
import pytest
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import given

import dmlrpc
from dmlrpc.v1 import service_pb2
from dmlrpc_server import ServerSettings
from dmlrpc_server.binding import encode_outputs, feeds, unary_buffers
from dmlrpc_server.calls import write_execute
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.errors import ServiceError
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.memory import peak_resident_bytes
from dmlrpc_server.runtime.providers import choose_provider
from tests.conftest import ServerThread, start_server
from tests.references import dml
from tests.reliability.fuzzing import (
    DOCUMENTED,
    EXECUTE,
    EXECUTE_STREAM,
    FUZZ_LIMITS,
    Fuzzed,
    execute_requests,
    stream_sequences,
    valid_calls,
)

#: Peak RSS growth of this process (server and client together) the whole module may cause.
RSS_GROWTH_LIMIT = 512 << 20


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[ServerThread]:
    running = start_server(**FUZZ_LIMITS)  # type: ignore[arg-type]
    yield running
    running.stop()


@pytest.fixture(scope="module")
def channel(fuzzed: ServerThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(fuzzed.address, options=[("grpc.max_receive_message_length", 128 << 20)]) as open_:
        yield open_


@pytest.fixture(scope="module")
def statuses() -> Counter[str]:
    return Counter()


def _peak_rss() -> int:
    peak = peak_resident_bytes()
    assert peak is not None
    return peak


def _code(call: grpc.Call | grpc.RpcError) -> grpc.StatusCode:
    return call.code()


def assert_still_serving(channel: grpc.Channel) -> None:
    """Health SERVING, and a valid call still gets the right answer."""
    health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    call = dmlrpc.ops.top_k(np.array([3.0, 9.0, 1.0], np.float32), 2)
    prepared = dmlrpc._base.prepare_execute(call.operator_desc, call.inputs)
    response = channel.unary_unary(EXECUTE, request_serializer=None, response_deserializer=None)(
        prepared.request.SerializeToString(), timeout=30
    )
    values = service_pb2.ExecuteResponse.FromString(response).outputs[0].buffer.data
    np.testing.assert_array_equal(np.frombuffer(values, np.float32), [9.0, 3.0])


def test_fuzzed_execute_requests_get_documented_statuses(
    fuzzed: ServerThread, channel: grpc.Channel, statuses: Counter[str]
) -> None:
    execute = channel.unary_unary(EXECUTE, request_serializer=None, response_deserializer=None)
    before = _peak_rss()

    @given(execute_requests())
    def run(request: Fuzzed) -> None:
        code, details = grpc.StatusCode.OK, ""
        try:
            execute(request.wire, timeout=30)
        except grpc.RpcError as error:
            code, details = _code(error), error.details()
        assert code in DOCUMENTED, (request.how, request.wire.hex(), code, details)
        statuses[f"Execute {code.name}"] += 1

    run()
    assert_still_serving(channel)
    assert _peak_rss() - before < RSS_GROWTH_LIMIT
    assert statuses["Execute OK"] > 0 and statuses["Execute INVALID_ARGUMENT"] > 0, statuses


def test_fuzzed_stream_sequences_get_documented_statuses(
    fuzzed: ServerThread, channel: grpc.Channel, statuses: Counter[str]
) -> None:
    stream = channel.stream_stream(EXECUTE_STREAM, request_serializer=None, response_deserializer=None)

    @given(stream_sequences())
    def run(case: tuple[list[bytes], str]) -> None:
        messages, how = case
        code, details = grpc.StatusCode.OK, ""
        try:
            for _ in stream(iter(messages), timeout=30):
                pass
        except grpc.RpcError as error:
            code, details = _code(error), error.details()
        assert code in DOCUMENTED, (how, [m.hex() for m in messages], code, details)
        statuses[f"ExecuteStream {code.name}"] += 1

    run()
    assert_still_serving(channel)
    assert statuses["ExecuteStream OK"] > 0 and statuses["ExecuteStream INVALID_ARGUMENT"] > 0, statuses


def test_index_values_are_checked_before_onnx_runtime(fuzzed: ServerThread) -> None:
    """Scatters with in-range, edge, negative, out-of-range and duplicate indices (and NaN/Inf data) either are
    refused INVALID_ARGUMENT or write exactly where the reference writes: nothing lands outside the tensor."""
    outcomes: Counter[str] = Counter()
    scatters = valid_calls().filter(lambda call: call.operator_desc.WhichOneof("desc") != "top_k1")
    with dmlrpc.Client(fuzzed.address, timeout=60, retry=None) as client:

        @given(scatters)
        def run(call: dmlrpc.ops.Call) -> None:
            data, indices, updates = (np.asarray(a) for a in call.inputs)
            case = call.operator_desc.WhichOneof("desc")
            desc = getattr(call.operator_desc, case or "")
            if case == "scatter_elements":
                expected = dml.scatter_elements(data, indices, updates, desc.axis)
            else:
                expected = dml.scatter_nd(
                    data, indices, updates, desc.input_dimension_count, desc.indices_dimension_count
                )
            refusal: dmlrpc.DmlRpcError | None = None
            try:
                (output,) = client.execute(call.operator_desc, call.inputs)
            except dmlrpc.DmlRpcError as error:
                refusal = error
            if refusal is not None:
                assert isinstance(expected, str), (refusal, expected)
                assert refusal.code == grpc.StatusCode.INVALID_ARGUMENT, refusal
                outcomes[expected] += 1
                return
            assert not isinstance(expected, str), (expected, indices)
            np.testing.assert_array_equal(np.asarray(output).reshape(data.shape), expected)
            outcomes["ok"] += 1

        run()
    assert outcomes["ok"] > 0 and outcomes["out of range"] > 0, outcomes


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    defaults = ServerSettings(**FUZZ_LIMITS)  # type: ignore[arg-type]
    limits = Limits(
        max_tensor_bytes=defaults.budgets(1).max_tensor,
        max_request_bytes=defaults.max_request_bytes,
        max_message_bytes=defaults.max_message_bytes,
        max_tensor_elements=defaults.max_tensor_elements,
        max_request_elements=defaults.max_request_elements,
    )
    return Catalog(choose_provider("cpu"), feature_level=defaults.feature_level, limits=limits, cache_capacity=256)


def test_fuzzed_requests_in_process_raise_only_service_errors(catalog: Catalog) -> None:
    outcomes: Counter[str] = Counter()

    @given(execute_requests())
    def run(request: Fuzzed) -> None:
        try:
            parsed = service_pb2.ExecuteRequest.FromString(request.wire)
        except DecodeError:
            outcomes["undecodable"] += 1  # the server's deserializer answers these INVALID_ARGUMENT
            return
        try:
            # A unary call's plan, binding, run and encoding, as the server's stages run them.
            compiled = catalog.compiled(parsed.operator_desc)
            catalog.check_response_fits(compiled)
            run = compiled.run(feeds(compiled, unary_buffers(parsed.inputs, compiled.plan)))
            encode_outputs(compiled, BufferPool(0), write_execute, run)
            outcomes["ok"] += 1
        except ServiceError as error:  # anything else escapes and fails the example
            outcomes[type(error).__name__] += 1

    run()
    assert outcomes["ok"] > 0 and outcomes["InvalidArgument"] > 0, outcomes
