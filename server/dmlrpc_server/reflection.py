"""gRPC server reflection served as v1alpha and v1 (one servicer: the two differ only in their package name)."""

from __future__ import annotations

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2

from dmlrpc_server.handlers import method_path

#: grpcio-reflection ships only v1alpha; v1's messages are the same on the wire under another package name.
REFLECTION_V1_NAME = "grpc.reflection.v1.ServerReflection"
#: Both reflection services' names (what auth may exempt and reflection itself lists).
REFLECTION_NAMES = (reflection.SERVICE_NAME, REFLECTION_V1_NAME)
_REFLECTION_V1_FILE = "grpc/reflection/v1/reflection.proto"


def reflection_handlers(service_names: tuple[str, ...]) -> dict[str, grpc.RpcMethodHandler]:
    """The handlers, by path, of server reflection as ``grpc.reflection.v1alpha`` and as ``grpc.reflection.v1``
    (what current grpcurl, Postman and grpc-java ask first), with one servicer: the two protocols differ only in
    their package name."""
    _register_v1_descriptor()
    servicer = reflection.aio.ReflectionServicer(service_names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    return {method_path(name, "ServerReflectionInfo"): handler for name in REFLECTION_NAMES}


def _register_v1_descriptor() -> None:
    """Put ``grpc/reflection/v1/reflection.proto`` in the default descriptor pool (a renamed copy of v1alpha's), so
    that reflection can describe the v1 service it lists."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_REFLECTION_V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = _REFLECTION_V1_FILE
    proto.package = "grpc.reflection.v1"
    proto.options.Clear()
    for message in proto.message_type:
        for field in message.field:
            if field.HasField("type_name"):
                field.type_name = field.type_name.replace(".grpc.reflection.v1alpha.", ".grpc.reflection.v1.")
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(".grpc.reflection.v1alpha.", ".grpc.reflection.v1.")
            method.output_type = method.output_type.replace(".grpc.reflection.v1alpha.", ".grpc.reflection.v1.")
    pool.AddSerializedFile(proto.SerializeToString())
