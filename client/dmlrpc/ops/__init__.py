"""Typed builders of operator descs from NumPy arrays, shared by Client and AsyncClient: one module per operator
family, named as the server's ``dmlrpc_server/operators/`` modules are."""

from dmlrpc.ops.activation import (
    activation,
)
from dmlrpc.ops.attention import (
    MaskType,
    multihead_attention,
)
from dmlrpc.ops.base import (
    Call,
)
from dmlrpc.ops.cast import (
    cast,
)
from dmlrpc.ops.convolution import (
    convolution,
    convolution_integer,
)
from dmlrpc.ops.cumulative import (
    cumprod,
    cumsum,
)
from dmlrpc.ops.element_wise import (
    element_wise,
)
from dmlrpc.ops.fold import (
    fold,
    unfold,
)
from dmlrpc.ops.gather import (
    gather,
    gather_elements,
    gather_nd,
)
from dmlrpc.ops.generators import (
    diagonal_matrix,
    fill_value_constant,
    fill_value_sequence,
    nonzero_coordinates,
    one_hot,
)
from dmlrpc.ops.join_split import (
    join,
    split,
)
from dmlrpc.ops.matrix import (
    gemm,
    matrix_multiply_integer,
)
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
from dmlrpc.ops.quantized import (
    dequantize,
    dynamic_quantize_linear,
    matrix_multiply_integer_to_float,
    quantize,
    quantized_linear_average_pooling,
    quantized_linear_convolution,
    quantized_linear_matrix_multiply,
)
from dmlrpc.ops.random_generator import (
    random_generator,
)
from dmlrpc.ops.recurrent import (
    gru,
    lstm,
    rnn,
)
from dmlrpc.ops.reduce import (
    argmax,
    argmin,
    reduce,
)
from dmlrpc.ops.resample import (
    resample,
    upsample_2d,
    value_scale_2d,
)
from dmlrpc.ops.roi_align import (
    roi_align,
    roi_align_grad,
)
from dmlrpc.ops.scatter_elements import (
    scatter_elements,
)
from dmlrpc.ops.scatter_nd import (
    scatter_nd,
)
from dmlrpc.ops.spatial_grad import (
    average_pooling_grad,
    max_pooling_grad,
    resample_grad,
    slice_grad,
)
from dmlrpc.ops.top_k import (
    Direction,
    top_k,
)
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
    "MaskType",
    "activation",
    "adam_optimizer",
    "argmax",
    "argmin",
    "average_pooling",
    "average_pooling_grad",
    "batch_normalization",
    "batch_normalization_grad",
    "batch_normalization_training",
    "batch_normalization_training_grad",
    "cast",
    "convolution",
    "convolution_integer",
    "cumprod",
    "cumsum",
    "depth_to_space",
    "dequantize",
    "diagonal_matrix",
    "dynamic_quantize_linear",
    "element_wise",
    "fill_value_constant",
    "fill_value_sequence",
    "fold",
    "gather",
    "gather_elements",
    "gather_nd",
    "gemm",
    "gru",
    "join",
    "local_response_normalization",
    "local_response_normalization_grad",
    "lp_normalization",
    "lp_pooling",
    "lstm",
    "matrix_multiply_integer",
    "matrix_multiply_integer_to_float",
    "max_pooling",
    "max_pooling_grad",
    "max_pooling_with_indices",
    "max_unpooling",
    "mean_variance_normalization",
    "multihead_attention",
    "nonzero_coordinates",
    "one_hot",
    "pad",
    "quantize",
    "quantized_linear_average_pooling",
    "quantized_linear_convolution",
    "quantized_linear_matrix_multiply",
    "random_generator",
    "reduce",
    "resample",
    "resample_grad",
    "reverse_subsequences",
    "rnn",
    "roi_align",
    "roi_align_grad",
    "roi_pooling",
    "scatter_elements",
    "scatter_nd",
    "slice",
    "slice_grad",
    "space_to_depth",
    "split",
    "tile",
    "top_k",
    "unfold",
    "upsample_2d",
    "value_scale_2d",
]
