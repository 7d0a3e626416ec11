"""Class 6, identity: one verified token is one owner whatever its headers, and without auth many self-chosen
client ids together stay within the server-wide totals."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import grpc
import numpy as np
import pytest

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.conftest import ServerThread, start_server
from tests.reliability.hostile import health_answers
from tests.reliability.test_fuzz import assert_still_serving

TOKEN = "identity-test-token"
Metadata = Sequence[tuple[str, str]]


def _auth(*values: str) -> Metadata:
    return [("authorization", value) for value in values]


def _client_id(index: int) -> Metadata:
    return [("dmlrpc-client-id", f"attacker-{index}")]


def _create(stub: service_pb2_grpc.DirectMLServiceStub, metadata: Metadata) -> str:
    start = service_pb2.CreateTensorStart(desc=tensor_desc((np.float32, (4,))), uninitialized=True)
    request = service_pb2.CreateTensorRequest(start=start)
    return str(stub.CreateTensor(iter([request]), metadata=metadata, timeout=10).handle)


def _read(stub: service_pb2_grpc.DirectMLServiceStub, handle: str, metadata: Metadata) -> None:
    list(stub.ReadTensor(service_pb2.ReadTensorRequest(handle=handle), metadata=metadata, timeout=10))


def _compile(stub: service_pb2_grpc.DirectMLServiceStub, metadata: Metadata) -> str:
    call = ops.top_k(np.arange(8, dtype=np.float32), 2)
    request = service_pb2.CompileOperatorRequest(operator_desc=call.operator_desc)
    return str(stub.CompileOperator(request, metadata=metadata, timeout=10).handle)


def _refused(call: object, code: grpc.StatusCode) -> str:
    assert isinstance(call, Exception)
    assert isinstance(call, grpc.RpcError), call
    assert call.code() == code, (call.code(), call.details())
    return str(call.details())


def _attempt(function: object, *args: object) -> object:
    try:
        return function(*args)  # type: ignore[operator]
    except grpc.RpcError as error:
        return error


@pytest.fixture(scope="module")
def token_server() -> Iterator[ServerThread]:
    running = start_server(auth_token=TOKEN, resident_tensors_per_caller=2)
    yield running
    running.stop()


def test_one_token_is_one_owner_whatever_the_scheme_case_and_spacing(token_server: ServerThread) -> None:
    with grpc.insecure_channel(token_server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        first = _create(stub, _auth(f"Bearer {TOKEN}"))
        for form in (f"bearer {TOKEN}", f"BEARER  {TOKEN} ", f"Bearer {TOKEN}"):
            _read(stub, first, _auth(form))  # readable under every form: one owner
        second = _create(stub, _auth(f"bearer {TOKEN}"))
        # The per-caller quota (2) is shared by every form of the token: a third is refused, naming the flag.
        details = _refused(_attempt(_create, stub, _auth(f"BEARER {TOKEN}")), grpc.StatusCode.RESOURCE_EXHAUSTED)
        assert "holds 2 of 2 (--resident-tensors-per-caller)" in details
        for handle in (first, second):
            stub.ReleaseTensor(service_pb2.ReleaseTensorRequest(handle=handle), metadata=_auth(f"bearer {TOKEN}"))
        health_answers(channel)
    assert token_server.built.resident.held == (0, 0)


@pytest.mark.parametrize(
    "headers",
    [
        (f"Bearer {TOKEN}", "Bearer someone-else"),
        ("Bearer someone-else", f"Bearer {TOKEN}"),
        (f"Bearer {TOKEN}", f"Bearer {TOKEN}"),
        (f"Bearer {TOKEN}", f"Basic {TOKEN}"),
    ],
)
def test_several_authorization_headers_are_refused(token_server: ServerThread, headers: tuple[str, str]) -> None:
    """The check and the owner must read the same header; with several there is no one header to read."""
    with grpc.insecure_channel(token_server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        details = _refused(_attempt(_create, stub, _auth(*headers)), grpc.StatusCode.UNAUTHENTICATED)
        assert "one `authorization: Bearer <token>` header" in details
        health_answers(channel)
    assert token_server.built.resident.held == (0, 0)
    with grpc.insecure_channel(token_server.address) as channel:
        call = ops.top_k(np.array([3.0, 9.0, 1.0], np.float32), 2)
        request = prepare_execute(call.operator_desc, call.inputs).request
        response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(
            request, metadata=_auth(f"Bearer {TOKEN}"), timeout=10
        )
        np.testing.assert_array_equal(np.frombuffer(response.outputs[0].buffer.data, np.float32), [9.0, 3.0])


@pytest.fixture(scope="module")
def open_server() -> Iterator[ServerThread]:
    running = start_server(
        compiled_operators_per_caller=2,
        compiled_operators_total=4,
        resident_tensors_per_caller=2,
        resident_tensors_total=4,
    )
    yield running
    running.stop()


def test_many_client_ids_cannot_pass_the_compiled_total(open_server: ServerThread) -> None:
    with grpc.insecure_channel(open_server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        made = [(index, _compile(stub, _client_id(index))) for index in range(4)]
        for index in range(4, 8):  # fresh ids, each far under its own quota
            details = _refused(_attempt(_compile, stub, _client_id(index)), grpc.StatusCode.RESOURCE_EXHAUSTED)
            assert "--compiled-operators-total (4)" in details and "raise it" in details
            health_answers(channel)
        assert open_server.built.service.handles.held == 4
        for index, handle in made:
            request = service_pb2.ReleaseCompiledOperatorRequest(handle=handle)
            stub.ReleaseCompiledOperator(request, metadata=_client_id(index), timeout=10)
        _compile(stub, _client_id(9))  # room again
        assert_still_serving(channel)


def test_many_client_ids_cannot_pass_the_resident_total(open_server: ServerThread) -> None:
    with grpc.insecure_channel(open_server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        made = [(index, _create(stub, _client_id(index))) for index in range(4)]
        details = _refused(_attempt(_create, stub, _client_id(4)), grpc.StatusCode.RESOURCE_EXHAUSTED)
        assert "--resident-tensors-total (4)" in details and "raise it" in details
        # A kept output is a resident tensor too: refused before the operator runs.
        call = ops.top_k(np.array([3.0, 9.0, 1.0], np.float32), 2)
        request = prepare_execute(call.operator_desc, call.inputs).request
        request.keep_outputs.append(0)
        failure = _attempt(stub.Execute, request, 10, _client_id(5))
        details = _refused(failure, grpc.StatusCode.RESOURCE_EXHAUSTED)
        assert "--resident-tensors-total (4)" in details
        health_answers(channel)
        for index, handle in made:
            stub.ReleaseTensor(service_pb2.ReleaseTensorRequest(handle=handle), metadata=_client_id(index))
        assert_still_serving(channel)
    assert open_server.built.resident.held == (0, 0)
