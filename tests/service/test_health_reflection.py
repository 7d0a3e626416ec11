"""grpc.health.v1 transitions and server reflection, against the real server over a real channel."""

from __future__ import annotations

import threading

import grpc
import numpy as np
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from tests.conftest import ServerThread, start_server

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVICE = "dmlrpc.v1.DirectMLService"


def _check(channel: grpc.Channel, service: str) -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    return int(stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status)


def test_health_starts_not_serving_then_serving_then_not_serving_on_shutdown() -> None:
    running = start_server(ready=False)
    seen: list[int] = []
    first = threading.Event()
    try:
        with grpc.insecure_channel(running.address) as channel:
            assert _check(channel, "") == NOT_SERVING
            assert _check(channel, SERVICE) == NOT_SERVING
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""), timeout=60)

            def follow() -> None:
                try:
                    for response in watch:
                        seen.append(response.status)
                        first.set()
                except grpc.RpcError:
                    pass  # the stream ends when the server stops
                first.set()

            follower = threading.Thread(target=follow)
            follower.start()
            assert first.wait(10)
            running.call(running.built.ready())
            assert _check(channel, "") == SERVING
            assert _check(channel, SERVICE) == SERVING
            with pytest.raises(grpc.RpcError) as unknown:
                _check(channel, "no.such.Service")
            assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
            running.stop(grace=1.0)
            follower.join(timeout=30)
    finally:
        running.stop()
    assert seen == [NOT_SERVING, SERVING, NOT_SERVING]


def test_reflection_lists_every_service(server: ServerThread) -> None:
    with grpc.insecure_channel(server.address) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        services = set(database.get_services())
    assert {SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= services


def test_a_generic_client_calls_execute_from_reflected_descriptors_alone(server: ServerThread) -> None:
    """What grpcurl does: fetch the schema over reflection, build messages dynamically, call Execute."""
    with grpc.insecure_channel(server.address) as channel:
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
        method = pool.FindServiceByName(SERVICE).methods_by_name["Execute"]
        request_class = message_factory.GetMessageClass(method.input_type)
        response_class = message_factory.GetMessageClass(method.output_type)
        call = ops.top_k(np.array([[1.0, 5.0, 3.0]], np.float32), 1)
        wire = prepare_execute(call.operator_desc, call.inputs).request.SerializeToString()
        request = request_class.FromString(wire)
        execute = channel.unary_unary(
            f"/{SERVICE}/Execute",
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )
        response = execute(request, timeout=30)
    values = np.frombuffer(response.outputs[0].buffer.data, np.float32)
    indices = np.frombuffer(response.outputs[1].buffer.data, np.uint32)
    assert values.tolist() == [5.0] and indices.tolist() == [1]


def test_reflection_can_be_turned_off() -> None:
    running = start_server(reflection=False)
    try:
        with grpc.insecure_channel(running.address) as channel, pytest.raises(grpc.RpcError) as info:
            ProtoReflectionDescriptorDatabase(channel).get_services()
        assert info.value.code() is grpc.StatusCode.UNIMPLEMENTED
    finally:
        running.stop()
