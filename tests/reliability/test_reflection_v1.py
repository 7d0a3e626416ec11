"""Class 9, reflection: a grpc.reflection.v1 client (what current grpcurl asks first) is answered, not UNIMPLEMENTED."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from tests.conftest import ServerThread, start_server
from tests.reliability.hostile import health_answers
from tests.reliability.test_fuzz import assert_still_serving

V1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
SERVICE = "dmlrpc.v1.DirectMLService"
TOKEN = "reflection-test-token"


def _ask(
    channel: grpc.Channel, *requests: reflection_pb2.ServerReflectionRequest, token: str | None = None
) -> list[reflection_pb2.ServerReflectionResponse]:
    """Reflection v1 made from raw method calls: v1 messages are v1alpha's on the wire."""
    info = channel.stream_stream(
        V1,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    metadata = None if token is None else [("authorization", f"Bearer {token}")]
    return list(info(iter(requests), timeout=10, metadata=metadata))


def _check_v1(channel: grpc.Channel) -> None:
    listed, described, itself = _ask(
        channel,
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
    )
    names = {service.name for service in listed.list_services_response.service}
    assert {SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names
    assert "grpc.reflection.v1.ServerReflection" in names
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in described.file_descriptor_response.file_descriptor_proto
    ]
    services = {f"{file.package}.{service.name}" for file in files for service in file.service}
    assert SERVICE in services
    (v1,) = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in itself.file_descriptor_response.file_descriptor_proto
    ]
    assert v1.package == "grpc.reflection.v1" and v1.service[0].name == "ServerReflection"


@pytest.fixture(scope="module")
def open_server() -> Iterator[ServerThread]:
    running = start_server()
    yield running
    running.stop()


def test_a_v1_reflection_client_lists_and_describes_the_services(open_server: ServerThread) -> None:
    with grpc.insecure_channel(open_server.address) as channel:
        _check_v1(channel)
        health_answers(channel)
        assert_still_serving(channel)


@pytest.mark.parametrize("exempt", [True, False])
def test_v1_reflection_with_token_auth(exempt: bool) -> None:
    running = start_server(auth_token=TOKEN, auth_exempt_reflection=exempt)
    try:
        with grpc.insecure_channel(running.address) as channel:
            if exempt:
                _check_v1(channel)
            else:
                with pytest.raises(grpc.RpcError) as info:
                    _ask(channel, reflection_pb2.ServerReflectionRequest(list_services=""))
                assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            health_answers(channel)
            (listed,) = _ask(channel, reflection_pb2.ServerReflectionRequest(list_services=""), token=TOKEN)
            assert SERVICE in {service.name for service in listed.list_services_response.service}
    finally:
        running.stop()
