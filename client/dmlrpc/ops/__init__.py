"""Typed builders of operator descs from NumPy arrays, shared by Client and AsyncClient: one module per operator
family, named as the server's ``dmlrpc_server/operators/`` modules are."""

from dmlrpc.ops.activation import activation
from dmlrpc.ops.base import Call
from dmlrpc.ops.cast import cast
from dmlrpc.ops.convolution import convolution
from dmlrpc.ops.cumulative import cumprod, cumsum
from dmlrpc.ops.element_wise import element_wise
from dmlrpc.ops.fold import fold, unfold
from dmlrpc.ops.gather import gather
from dmlrpc.ops.generators import fill_value_sequence, one_hot
from dmlrpc.ops.join_split import join, split
from dmlrpc.ops.matrix import gemm, matrix_multiply_integer
from dmlrpc.ops.movement import pad, slice, tile  # ``dmlrpc.ops.slice`` shadows the builtin here, as NumPy users expect
from dmlrpc.ops.normalization import batch_normalization, lp_normalization, mean_variance_normalization
from dmlrpc.ops.pooling import average_pooling, max_pooling
from dmlrpc.ops.quantized import (
    dequantize,
    dynamic_quantize_linear,
    matrix_multiply_integer_to_float,
    quantize,
    quantized_linear_average_pooling,
    quantized_linear_convolution,
    quantized_linear_matrix_multiply,
)
from dmlrpc.ops.random_generator import random_generator
from dmlrpc.ops.recurrent import gru, lstm, rnn
from dmlrpc.ops.reduce import reduce
from dmlrpc.ops.roi_align import roi_align
from dmlrpc.ops.scatter_elements import scatter_elements
from dmlrpc.ops.scatter_nd import scatter_nd
from dmlrpc.ops.spatial_grad import average_pooling_grad, max_pooling_grad, resample_grad, slice_grad
from dmlrpc.ops.top_k import Direction, top_k
from dmlrpc.ops.training import (
    Activation,
    adam_optimizer,
    batch_normalization_grad,
    batch_normalization_training,
    batch_normalization_training_grad,
    local_response_normalization_grad,
)

__all__ = [
    "Activation",
    "Call",
    "Direction",
    "activation",
    "adam_optimizer",
    "average_pooling",
    "average_pooling_grad",
    "batch_normalization",
    "batch_normalization_grad",
    "batch_normalization_training",
    "batch_normalization_training_grad",
    "cast",
    "convolution",
    "cumprod",
    "cumsum",
    "dequantize",
    "dynamic_quantize_linear",
    "element_wise",
    "fill_value_sequence",
    "fold",
    "gather",
    "gemm",
    "gru",
    "join",
    "local_response_normalization_grad",
    "lp_normalization",
    "lstm",
    "matrix_multiply_integer",
    "matrix_multiply_integer_to_float",
    "max_pooling",
    "max_pooling_grad",
    "mean_variance_normalization",
    "one_hot",
    "pad",
    "quantize",
    "quantized_linear_average_pooling",
    "quantized_linear_convolution",
    "quantized_linear_matrix_multiply",
    "random_generator",
    "reduce",
    "resample_grad",
    "rnn",
    "roi_align",
    "scatter_elements",
    "scatter_nd",
    "slice",
    "slice_grad",
    "split",
    "tile",
    "top_k",
    "unfold",
]
