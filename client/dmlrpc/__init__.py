"""dmlrpc client SDK: run DirectML operator descs on a remote server with NumPy arrays in and out."""

from dmlrpc import codec, ops
from dmlrpc.aio import AsyncClient
from dmlrpc.client import Client
from dmlrpc.codec import calc_buffer_tensor_size, tensor_desc
from dmlrpc.errors import (
    DmlRpcError,
    FieldViolation,
    InternalError,
    InvalidArgumentError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
)

__all__ = [
    "AsyncClient",
    "Client",
    "DmlRpcError",
    "FieldViolation",
    "InternalError",
    "InvalidArgumentError",
    "ResourceExhaustedError",
    "UnavailableError",
    "UnimplementedError",
    "calc_buffer_tensor_size",
    "codec",
    "ops",
    "tensor_desc",
]
