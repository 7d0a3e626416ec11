"""The client error hierarchy (dmlrpc.errors): one class per status code, built from real server errors."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import numpy as np
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

import dmlrpc
from dmlrpc import errors, ops
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc
from tests.conftest import ServerThread

CODES = [code for code in grpc.StatusCode if code is not grpc.StatusCode.OK]


class FakeRpcError(grpc.RpcError):
    """A grpc.RpcError as the channel raises it: code(), details(), trailing_metadata()."""

    def __init__(self, code: grpc.StatusCode, details: str | None, metadata: tuple[tuple[str, Any], ...] = ()) -> None:
        super().__init__()
        self._code, self._details, self._metadata = code, details, metadata

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str | None:
        return self._details

    def trailing_metadata(self) -> tuple[tuple[str, Any], ...]:
        return self._metadata


def test_every_status_code_but_ok_has_its_own_class() -> None:
    by_code = errors.DmlRpcError._by_code
    assert set(by_code) == set(CODES)
    assert len(set(by_code.values())) == len(CODES)
    for code, cls in by_code.items():
        assert issubclass(cls, errors.DmlRpcError) and cls is not errors.DmlRpcError
        assert cls.grpc_status_code is code
        assert cls.__name__ in errors.__all__ and getattr(errors, cls.__name__) is cls
    assert grpc.StatusCode.OK not in by_code


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("InvalidArgumentError", grpc.StatusCode.INVALID_ARGUMENT),
        ("UnimplementedError", grpc.StatusCode.UNIMPLEMENTED),
        ("ResourceExhaustedError", grpc.StatusCode.RESOURCE_EXHAUSTED),
        ("UnavailableError", grpc.StatusCode.UNAVAILABLE),
        ("InternalError", grpc.StatusCode.INTERNAL),
    ],
)
def test_package_exports_the_main_classes(name: str, code: grpc.StatusCode) -> None:
    assert getattr(dmlrpc, name) is errors.DmlRpcError._by_code[code]
    assert dmlrpc.DmlRpcError is errors.DmlRpcError


@pytest.mark.parametrize("code", CODES, ids=[code.name for code in CODES])
def test_from_rpc_error_picks_the_class_for_each_code(code: grpc.StatusCode) -> None:
    cause = FakeRpcError(code, "what happened", (("dmlrpc-request-id", "abc123"),))
    error = errors.from_rpc_error(cause)
    assert type(error) is errors.DmlRpcError._by_code[code]
    assert error.code is code
    assert error.message == "what happened"
    assert str(error) == f"{code.name}: what happened"
    assert error.field_violations == ()
    assert error.request_id == "abc123"
    assert error.__cause__ is cause


def test_from_rpc_error_without_details_or_code() -> None:
    error = errors.from_rpc_error(FakeRpcError(grpc.StatusCode.ABORTED, None, ()))
    assert isinstance(error, errors.AbortedError) and error.message == "ABORTED" and error.request_id is None
    bare = errors.from_rpc_error(grpc.RpcError())
    assert isinstance(bare, errors.UnknownError) and bare.code is grpc.StatusCode.UNKNOWN


def _bad_request(address: str) -> grpc.RpcError:
    """A real INVALID_ARGUMENT from the server: scatter index 5 out of range [0, 2)."""
    call = ops.scatter_elements(np.zeros((2, 2), np.float32), np.array([[0, 5]], np.uint32), np.ones((1, 2)))
    request = service_pb2.ExecuteRequest(
        operator_desc=call.operator_desc,
        inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=a.tobytes())) for a in call.inputs],  # type: ignore[union-attr]
    )
    with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as info:
        service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=60)
    return info.value


def test_from_rpc_error_parses_the_real_servers_bad_request(server: ServerThread) -> None:
    cause = _bad_request(server.address)
    error = errors.from_rpc_error(cause)
    assert isinstance(error, dmlrpc.InvalidArgumentError)
    assert error.__cause__ is cause
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.message == cause.details()  # type: ignore[attr-defined]
    status = rpc_status.from_call(cause)  # type: ignore[arg-type]
    assert status is not None
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert error.field_violations == tuple(
        dmlrpc.FieldViolation(v.field, v.description) for v in bad_request.field_violations
    )
    (violation,) = error.field_violations
    assert violation.field == "inputs[1].buffer.data"
    assert "index value 5 at indices_tensor position [0, 1]" in violation.description


def test_client_raises_the_sdk_error_with_its_cause(client: dmlrpc.Client) -> None:
    call = ops.top_k(np.arange(6, dtype=np.float32).reshape(2, 3), 2)
    call.operator_desc.top_k1.k = 0
    with pytest.raises(dmlrpc.InvalidArgumentError) as info:
        client.execute(call.operator_desc, call.inputs)
    error = info.value
    assert isinstance(error.__cause__, grpc.RpcError)
    assert error.__cause__.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert error.field_violations == (
        dmlrpc.FieldViolation(
            "operator_desc.top_k1.k", "k = 0 is out of range: 1 <= k <= 3 (the input size along axis 1)"
        ),
    )
    assert error.request_id is not None and len(error.request_id) == 32  # every failed call names its log line


def test_unimplemented_from_the_real_server(server: ServerThread) -> None:
    # Every operator type executes; what stays documented as not executable is part of one: ROI_ALIGN_GRAD's
    # gradient with respect to the regions (OutputROIGradientTensor), which the SDK does not offer, so it is added.
    x = np.zeros((1, 1, 4, 4), np.float32)
    call = ops.roi_align_grad(
        np.zeros((1, 1, 2, 2), np.float32), np.array([[0, 0, 2, 2]], np.float32), np.zeros(1, np.uint32), input=x
    )
    call.operator_desc.roi_align_grad.output_roi_gradient_tensor.CopyFrom(tensor_desc((np.float32, (1, 4))))
    request = service_pb2.ExecuteRequest(
        operator_desc=call.operator_desc,
        inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=a.tobytes())) for a in call.inputs],  # type: ignore[union-attr]
    )
    with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as info:
        service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=60)
    error = errors.from_rpc_error(info.value)
    assert isinstance(error, dmlrpc.UnimplementedError)
    assert error.field_violations == ()
    assert "output_roi_gradient_tensor" in error.message and "not executable" in error.message


def test_unknown_method_is_unimplemented_through_the_sdk(server: ServerThread) -> None:
    with grpc.insecure_channel(server.address) as channel:
        missing = channel.unary_unary("/dmlrpc.v1.DirectMLService/NoSuchMethod")
        with pytest.raises(grpc.RpcError) as info:
            missing(b"", timeout=60)
    assert isinstance(errors.from_rpc_error(info.value), dmlrpc.UnimplementedError)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again on exit: nothing listens there


def test_no_raw_rpc_error_escapes_the_client_when_nothing_listens() -> None:
    call = ops.top_k(np.ones(3, np.float32), 1)
    with dmlrpc.Client(f"127.0.0.1:{_closed_port()}", timeout=1) as sdk:
        with pytest.raises((dmlrpc.UnavailableError, errors.DeadlineExceededError)) as info:
            sdk.execute(call.operator_desc, call.inputs)
        assert isinstance(info.value.__cause__, grpc.RpcError)
        with pytest.raises((dmlrpc.UnavailableError, errors.DeadlineExceededError)):
            sdk.get_capabilities()
        with pytest.raises((dmlrpc.UnavailableError, errors.DeadlineExceededError)):
            sdk.top_k(np.ones(3, np.float32), 1, timeout=0.5)


def test_no_raw_rpc_error_escapes_the_async_client() -> None:
    call = ops.top_k(np.ones(3, np.float32), 1)

    async def run() -> BaseException:
        async with dmlrpc.AsyncClient(f"127.0.0.1:{_closed_port()}", timeout=1) as sdk:
            try:
                await sdk.execute(call.operator_desc, call.inputs)
            except BaseException as error:
                return error
        raise AssertionError("execute succeeded with nothing listening")

    error = asyncio.run(run())
    assert isinstance(error, (dmlrpc.UnavailableError, errors.DeadlineExceededError)), repr(error)
    assert isinstance(error.__cause__, grpc.RpcError)


def test_async_client_maps_real_server_errors(server: ServerThread) -> None:
    call = ops.top_k(np.arange(6, dtype=np.float32).reshape(2, 3), 2, direction=7)

    async def run() -> dmlrpc.DmlRpcError:
        async with dmlrpc.AsyncClient(server.address, timeout=60) as sdk:
            with pytest.raises(dmlrpc.InvalidArgumentError) as info:
                await sdk.execute(call.operator_desc, call.inputs)
        return info.value

    error = asyncio.run(run())
    assert [v.field for v in error.field_violations] == ["operator_desc.top_k1.axis_direction"]
    assert isinstance(error.__cause__, grpc.RpcError)


@pytest.fixture
def garbled_server() -> Iterator[str]:
    """A gRPC server whose Execute fails with a corrupt grpc-status-details-bin trailer (as a faulty proxy might)."""

    def execute(request: bytes, context: grpc.ServicerContext) -> bytes:
        context.set_trailing_metadata((("grpc-status-details-bin", b"\xff\xff\xff"),))
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "garbled")

    handler = grpc.method_handlers_generic_handler(
        "dmlrpc.v1.DirectMLService", {"Execute": grpc.unary_unary_rpc_method_handler(execute)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[handler])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None).wait()


def test_corrupt_status_details_still_give_an_sdk_error(garbled_server: str) -> None:
    call = ops.top_k(np.ones(3, np.float32), 1)
    with dmlrpc.Client(garbled_server, timeout=10) as sdk, pytest.raises(dmlrpc.DmlRpcError) as info:
        sdk.execute(call.operator_desc, call.inputs)
    assert isinstance(info.value, dmlrpc.InvalidArgumentError)
    assert info.value.message == "garbled"


def test_unbuildable_request_is_a_local_value_error(client: dmlrpc.Client) -> None:
    # The SDK refuses requests it cannot encode before any call: ValueError, not an RPC error.
    with pytest.raises(ValueError, match="no operator desc set"):
        client.execute(operators_pb2.OperatorDesc(), [])
