"""dmlrpc server: DirectML operator descs over gRPC, executed through ONNX Runtime."""

from dmlrpc_server.server import BuiltServer, build_server
from dmlrpc_server.settings import ServerSettings

__all__ = ["BuiltServer", "ServerSettings", "build_server"]
