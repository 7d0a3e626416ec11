"""Every executable operator of the quantized, recurrent, training, spatial-gradient, FOLD/UNFOLD, ROI_ALIGN and
RANDOM_GENERATOR families has an SDK function, on both clients and on Graph, that builds its desc."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc_server.operators import REGISTRY

_F = np.zeros((1, 2, 4, 4), np.float32)
_U8 = np.zeros((1, 2, 4, 4), np.uint8)
_RNN = (np.zeros((2, 1, 3), np.float32), np.zeros((1, 4, 3), np.float32), np.zeros((1, 4, 1), np.float32))

#: Per operator case: one call of the SDK function that sends it (its name is the case's, a version suffix dropped).
_EXAMPLES: dict[str, Callable[[], ops.Call]] = {
    "quantize": lambda: ops.quantize(_F, 1.0),
    "dequantize": lambda: ops.dequantize(_U8, 1.0),
    "dynamic_quantize_linear": lambda: ops.dynamic_quantize_linear(_F),
    "quantized_linear_matrix_multiply": lambda: ops.quantized_linear_matrix_multiply(
        _U8[0, 0], 1.0, _U8[0, 0], 1.0, 1.0
    ),
    "quantized_linear_convolution": lambda: ops.quantized_linear_convolution(_U8, 1.0, _U8, 1.0, 1.0),
    "quantized_linear_average_pooling": lambda: ops.quantized_linear_average_pooling(_U8, 1.0, 1.0, 2),
    "matrix_multiply_integer_to_float": lambda: ops.matrix_multiply_integer_to_float(_U8[0, 0], 1.0, _U8[0, 0], 1.0),
    "rnn": lambda: ops.rnn(_RNN[0], np.zeros((1, 1, 3), np.float32), np.zeros((1, 1, 1), np.float32)),
    "lstm": lambda: ops.lstm(*_RNN),
    "gru": lambda: ops.gru(_RNN[0], np.zeros((1, 3, 3), np.float32), np.zeros((1, 3, 1), np.float32)),
    "local_response_normalization_grad": lambda: ops.local_response_normalization_grad(_F, _F),
    "batch_normalization_grad": lambda: ops.batch_normalization_grad(_F, _F, 0.0, 1.0, 1.0),
    "batch_normalization_training": lambda: ops.batch_normalization_training(_F, 1.0, 0.0),
    "batch_normalization_training_grad": lambda: ops.batch_normalization_training_grad(_F, _F, 0.0, 1.0, 1.0),
    "adam_optimizer": lambda: ops.adam_optimizer(_F, _F, _F, _F, 1),
    "average_pooling_grad": lambda: ops.average_pooling_grad(_F[:, :, :2, :2], _F.shape, 2, strides=2),
    "max_pooling_grad": lambda: ops.max_pooling_grad(_F, _F[:, :, :2, :2], 2, strides=2),
    "resample_grad": lambda: ops.resample_grad(_F, (1, 2, 2, 2)),
    "resample_grad1": lambda: ops.resample_grad(_F, (1, 2, 2, 2), rounding_direction="increasing"),
    "slice_grad": lambda: ops.slice_grad(_F, _F.shape, (0, 0, 0, 0), _F.shape),
    "fold": lambda: ops.fold(np.zeros((1, 4, 9), np.float32), (4, 4), 2),
    "unfold": lambda: ops.unfold(_F, 2),
    "roi_align": lambda: ops.roi_align(_F, np.zeros((1, 4), np.float32), [0], (1, 1)),
    "roi_align1": lambda: ops.roi_align(_F, np.zeros((1, 4), np.float32), [0], (1, 1), input_pixel_offset=0),
    "random_generator": lambda: ops.random_generator(np.zeros(6, np.uint32), 4),
}


def test_these_families_are_executable_and_each_has_an_example() -> None:
    # A case listed here that the server does not execute, or one of these families' executable cases without an
    # example (a new operator the SDK lacks), fails.
    families = (
        "quantiz",
        "dequantize",
        "rnn",
        "lstm",
        "gru",
        "_grad",
        "training",
        "adam",
        "fold",
        "roi_align",
        "random",
    )
    executable = {
        case
        for case in REGISTRY
        if any(word in case for word in families) and not case.startswith(("element_wise_", "activation_"))
    }
    assert set(_EXAMPLES) <= set(REGISTRY)
    assert executable - set(_EXAMPLES) == set()


@pytest.mark.parametrize("case", sorted(_EXAMPLES))
def test_every_case_has_a_function_on_ops_clients_and_graph(case: str) -> None:
    call = _EXAMPLES[case]()
    assert call.operator_desc.WhichOneof("desc") == case
    name = case.removesuffix("1")
    for owner in (ops, dmlrpc.Client, dmlrpc.AsyncClient):
        function = getattr(owner, name)
        assert (
            function.__doc__ and f"DML_{case.upper()}" in (getattr(ops, name).__doc__ or "") + function.__doc__.upper()
        )
    if name not in ("quantize", "dequantize"):  # tensor arrays: Graph.node takes operators without them
        assert callable(getattr(dmlrpc.Graph, name))
