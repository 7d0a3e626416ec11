"""dmlrpc client SDK: run DirectML operator descs on a remote server with NumPy arrays in and out."""

from dmlrpc import codec, ops
from dmlrpc._channel import TLS, KeepAlive, RetryPolicy
from dmlrpc.aio import AsyncClient
from dmlrpc.client import Client
from dmlrpc.codec import calc_buffer_tensor_size, tensor_desc
from dmlrpc.errors import (
    DeadlineExceededError,
    DmlRpcError,
    FieldViolation,
    InternalError,
    InvalidArgumentError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
)

__all__ = [
    "TLS",
    "AsyncClient",
    "Client",
    "DeadlineExceededError",
    "DmlRpcError",
    "FieldViolation",
    "InternalError",
    "InvalidArgumentError",
    "KeepAlive",
    "ResourceExhaustedError",
    "RetryPolicy",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "calc_buffer_tensor_size",
    "codec",
    "ops",
    "tensor_desc",
]
