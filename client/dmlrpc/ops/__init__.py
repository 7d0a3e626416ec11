"""Typed builders of operator descs from NumPy arrays, shared by Client and AsyncClient: one module per operator
family, named as the server's ``dmlrpc_server/operators/`` modules are."""

from dmlrpc.ops.activation import activation
from dmlrpc.ops.base import Call
from dmlrpc.ops.cast import cast
from dmlrpc.ops.convolution import convolution
from dmlrpc.ops.cumulative import cumprod, cumsum
from dmlrpc.ops.element_wise import element_wise
from dmlrpc.ops.gather import gather
from dmlrpc.ops.generators import fill_value_sequence, one_hot
from dmlrpc.ops.join_split import join, split
from dmlrpc.ops.matrix import gemm, matrix_multiply_integer
from dmlrpc.ops.movement import pad, slice, tile  # ``dmlrpc.ops.slice`` shadows the builtin here, as NumPy users expect
from dmlrpc.ops.normalization import batch_normalization, lp_normalization, mean_variance_normalization
from dmlrpc.ops.pooling import average_pooling, max_pooling
from dmlrpc.ops.reduce import reduce
from dmlrpc.ops.scatter_elements import scatter_elements
from dmlrpc.ops.scatter_nd import scatter_nd
from dmlrpc.ops.top_k import Direction, top_k

__all__ = [
    "Call",
    "Direction",
    "activation",
    "average_pooling",
    "batch_normalization",
    "cast",
    "convolution",
    "cumprod",
    "cumsum",
    "element_wise",
    "fill_value_sequence",
    "gather",
    "gemm",
    "join",
    "lp_normalization",
    "matrix_multiply_integer",
    "max_pooling",
    "mean_variance_normalization",
    "one_hot",
    "pad",
    "reduce",
    "scatter_elements",
    "scatter_nd",
    "slice",
    "split",
    "tile",
    "top_k",
]
