"""dmlrpc client SDK: run DirectML operator descs on a remote server with NumPy arrays in and out."""

from importlib import metadata as _metadata

from dmlrpc import codec, ops
from dmlrpc._calls import UNARY_LIMIT_BYTES
from dmlrpc._channel import TLS, KeepAlive, RetryPolicy
from dmlrpc.aio import AsyncClient
from dmlrpc.client import Client
from dmlrpc.codec import calc_buffer_tensor_size, tensor_desc
from dmlrpc.errors import (
    ArgumentError,
    ArgumentTypeError,
    ArgumentValueError,
    DeadlineExceededError,
    DmlRpcError,
    FieldViolation,
    InternalError,
    InvalidArgumentError,
    MalformedResponseError,
    NotFoundError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
)
from dmlrpc.graph import Graph, GraphTensor
from dmlrpc.handles import AsyncCompiledOperator, AsyncResidentTensor, CompiledOperator, ResidentTensor
from dmlrpc.many import AsyncExecuteManyStream, ExecuteManyStream

try:
    __version__ = _metadata.version("dmlrpc")
except _metadata.PackageNotFoundError:  # pragma: no cover - imported from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "TLS",
    "UNARY_LIMIT_BYTES",
    "ArgumentError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "AsyncClient",
    "AsyncCompiledOperator",
    "AsyncExecuteManyStream",
    "AsyncResidentTensor",
    "Client",
    "CompiledOperator",
    "DeadlineExceededError",
    "DmlRpcError",
    "ExecuteManyStream",
    "FieldViolation",
    "Graph",
    "GraphTensor",
    "InternalError",
    "InvalidArgumentError",
    "KeepAlive",
    "MalformedResponseError",
    "NotFoundError",
    "ResidentTensor",
    "ResourceExhaustedError",
    "RetryPolicy",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "__version__",
    "calc_buffer_tensor_size",
    "codec",
    "ops",
    "tensor_desc",
]
