"""Typed builders of operator descs from NumPy arrays, shared by Client and AsyncClient: one module per operator
family, named as the server's ``dmlrpc_server/operators/`` modules are."""

from dmlrpc.ops.activation import activation
from dmlrpc.ops.base import Call
from dmlrpc.ops.cast import cast
from dmlrpc.ops.convolution import convolution, convolution_integer
from dmlrpc.ops.cumulative import cumprod, cumsum
from dmlrpc.ops.element_wise import element_wise
from dmlrpc.ops.gather import gather
from dmlrpc.ops.generators import (
    diagonal_matrix,
    fill_value_constant,
    fill_value_sequence,
    nonzero_coordinates,
    one_hot,
)
from dmlrpc.ops.join_split import join, split
from dmlrpc.ops.matrix import gemm, matrix_multiply_integer
from dmlrpc.ops.movement import (  # ``dmlrpc.ops.slice`` shadows the builtin here, as NumPy users expect
    depth_to_space,
    pad,
    reverse_subsequences,
    slice,
    space_to_depth,
    tile,
)
from dmlrpc.ops.normalization import (
    batch_normalization,
    local_response_normalization,
    lp_normalization,
    mean_variance_normalization,
)
from dmlrpc.ops.pooling import (
    average_pooling,
    lp_pooling,
    max_pooling,
    max_pooling_with_indices,
    max_unpooling,
    roi_pooling,
)
from dmlrpc.ops.reduce import argmax, argmin, reduce
from dmlrpc.ops.resample import resample, upsample_2d, value_scale_2d
from dmlrpc.ops.scatter_elements import scatter_elements
from dmlrpc.ops.scatter_nd import scatter_nd
from dmlrpc.ops.top_k import Direction, top_k

__all__ = [
    "Call",
    "Direction",
    "activation",
    "argmax",
    "argmin",
    "average_pooling",
    "batch_normalization",
    "cast",
    "convolution",
    "convolution_integer",
    "cumprod",
    "cumsum",
    "depth_to_space",
    "diagonal_matrix",
    "element_wise",
    "fill_value_constant",
    "fill_value_sequence",
    "gather",
    "gemm",
    "join",
    "local_response_normalization",
    "lp_normalization",
    "lp_pooling",
    "matrix_multiply_integer",
    "max_pooling",
    "max_pooling_with_indices",
    "max_unpooling",
    "mean_variance_normalization",
    "nonzero_coordinates",
    "one_hot",
    "pad",
    "reduce",
    "resample",
    "reverse_subsequences",
    "roi_pooling",
    "scatter_elements",
    "scatter_nd",
    "slice",
    "space_to_depth",
    "split",
    "tile",
    "top_k",
    "upsample_2d",
    "value_scale_2d",
]
