"""Every executable operator has an SDK function (a ``dmlrpc.ops`` builder, a Client/AsyncClient method and a
``Graph`` method, each with a docstring) that sends its desc (tests/test_sdk_faces.py: the faces and
docs/sdk-functions.md are generated from the declarations)."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.ops._registry import OPERATORS
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY

#: SDK function name -> the OperatorDesc cases it sends.
FUNCTIONS = {name: declared.sends for name, declared in OPERATORS.items()}
_F = np.zeros((1, 2, 4, 4), np.float32)
_U8 = np.zeros((1, 2, 4, 4), np.uint8)
_RNN = (np.zeros((2, 1, 3), np.float32), np.zeros((1, 4, 3), np.float32), np.zeros((1, 4, 1), np.float32))
_QKV = (np.zeros((1, 2, 4), np.float32), np.zeros((1, 3, 4), np.float32), np.zeros((1, 3, 2), np.float32))
_ROIS = (np.zeros((1, 4), np.float32), [0])

#: Per operator case that a function sends by its arguments (the functions of one case, and the older or newer desc
#: versions others send): one call that sends it.
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
    "roi_align": lambda: ops.roi_align(_F, *_ROIS, (1, 1)),
    "roi_align1": lambda: ops.roi_align(_F, *_ROIS, (1, 1), input_pixel_offset=0),
    "roi_align_grad": lambda: ops.roi_align_grad(_F[:1], *_ROIS, _F.shape),
    "random_generator": lambda: ops.random_generator(np.zeros(6, np.uint32), 4),
    "multihead_attention": lambda: ops.multihead_attention(*_QKV, head_count=2),
    "multihead_attention1": lambda: ops.multihead_attention(
        _QKV[0], _QKV[2], _QKV[2], head_count=2, key_value_head_count=1
    ),
    "gather_elements": lambda: ops.gather_elements(_F, np.zeros((1, 2, 4, 4), np.int32), 2),
    "gather_nd": lambda: ops.gather_nd(_F, np.zeros((2, 2), np.int32)),
    "gather_nd1": lambda: ops.gather_nd(_F, np.zeros((1, 2, 1), np.int32), 1),
    "top_k": lambda: ops.top_k(_F, 2, version=0),
    "top_k1": lambda: ops.top_k(_F, 2),
    "slice": lambda: ops.slice(_F, (0, 0, 0, 0), (1, 1, 1, 1), version=0),
    "slice1": lambda: ops.slice(_F, (0, 0, 0, 0), (1, 1, 1, 1)),
    "max_pooling": lambda: ops.max_pooling(_F, 2),
    "max_pooling1": lambda: ops.max_pooling_with_indices(_F, 2),
    "max_pooling2": lambda: ops.max_pooling_with_indices(_F, 2, dilations=2),
}


def _function(case: str) -> str:
    return next(name for name, sent in FUNCTIONS.items() if case in sent)


def test_every_listed_function_is_a_builder_a_client_method_and_a_graph_method() -> None:
    cases = set(operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name)
    for name, sent in FUNCTIONS.items():
        assert name in ops.__all__ and callable(getattr(ops, name)), name
        assert callable(getattr(dmlrpc.Client, name, None)) and callable(getattr(dmlrpc.AsyncClient, name, None)), name
        assert callable(getattr(dmlrpc.Graph, name, None)), name
        for owner in (ops, dmlrpc.Client, dmlrpc.AsyncClient, dmlrpc.Graph):
            assert inspect.getdoc(getattr(owner, name)), f"{owner.__name__}.{name} has no docstring"
        assert set(sent) <= cases, name
        for case in sent if name not in ("element_wise", "activation") else ():
            # The builder's docstring names what it sends (a version suffix may be written "(1)" or "1/2").
            assert f"DML_{case.upper().rstrip('0123456789')}" in (getattr(ops, name).__doc__ or ""), (name, case)
    functions = {name for name in ops.__all__ if name[0].islower()}
    assert functions == set(FUNCTIONS)


def test_every_executable_operator_has_a_function() -> None:
    covered = [case for sent in FUNCTIONS.values() for case in sent]
    # A newly executable operator comes with its function; the table names no case the server does not execute.
    assert sorted(set(REGISTRY) - set(covered)) == []
    assert sorted(set(covered) - set(REGISTRY)) == []


@pytest.mark.parametrize("case", sorted(_EXAMPLES))
def test_each_example_sends_its_case_through_the_function_listed_for_it(case: str) -> None:
    call = _EXAMPLES[case]()
    assert call.operator_desc.WhichOneof("desc") == case
    assert case in REGISTRY
    name = _function(case)
    assert f"DML_{case.upper().rstrip('0123456789')}" in (getattr(ops, name).__doc__ or "")
