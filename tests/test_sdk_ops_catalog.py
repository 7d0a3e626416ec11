"""Every executable operator has an SDK function (a ``dmlrpc.ops`` builder, a Client/AsyncClient method and a
``Graph`` method), and docs/sdk-functions.md lists them all."""

from __future__ import annotations

import inspect
import pathlib

import dmlrpc
from dmlrpc import ops
from dmlrpc._surface import BaseClient
from dmlrpc.ops._catalog import FUNCTIONS, markdown
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "sdk-functions.md"

#: The resample, data-movement, generator, pooling, integer-convolution, arg-reduce and normalization cases (and the
#: older desc versions of those families) that had no SDK function when the NumPy-style functions were completed.
COMPLETED = frozenset(
    {
        "value_scale_2d",
        "upsample_2d",
        "resample",
        "resample1",
        "resample2",
        "resample3",
        "slice",
        "padding",
        "space_to_depth",
        "space_to_depth1",
        "depth_to_space",
        "depth_to_space1",
        "reverse_subsequences",
        "diagonal_matrix",
        "diagonal_matrix1",
        "fill_value_constant",
        "nonzero_coordinates",
        "lp_pooling",
        "lp_pooling1",
        "max_pooling1",
        "max_pooling2",
        "max_unpooling",
        "roi_pooling",
        "average_pooling1",
        "convolution_integer",
        "argmin",
        "argmax",
        "mean_variance_normalization",
        "mean_variance_normalization1",
        "local_response_normalization",
    }
)

#: Executable cases still without a function; this set only shrinks (empty once every operator has one).
STILL_MISSING = frozenset(
    {
        "top_k",
        "gather_elements",
        "gather_nd",
        "gather_nd1",
        "rnn",
        "lstm",
        "gru",
        "random_generator",
        "fold",
        "unfold",
        "roi_align",
        "roi_align1",
        "quantized_linear_matrix_multiply",
        "quantized_linear_convolution",
        "dynamic_quantize_linear",
        "quantized_linear_average_pooling",
        "matrix_multiply_integer_to_float",
        "quantize",
        "dequantize",
        "average_pooling_grad",
        "max_pooling_grad",
        "resample_grad",
        "resample_grad1",
        "slice_grad",
        "adam_optimizer",
        "local_response_normalization_grad",
        "batch_normalization_grad",
        "batch_normalization_training",
        "batch_normalization_training_grad",
    }
)


def test_every_listed_function_is_a_builder_a_client_method_and_a_graph_method() -> None:
    cases = set(operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name)
    for name, sent in FUNCTIONS.items():
        assert name in ops.__all__ and callable(getattr(ops, name)), name
        assert inspect.getdoc(getattr(ops, name)), name
        assert isinstance(inspect.getattr_static(BaseClient, name), dmlrpc._surface.Operation), name
        assert callable(getattr(dmlrpc.Graph, name, None)), name
        assert set(sent) <= cases, name
    functions = {name for name in ops.__all__ if name[0].islower()}
    assert functions == set(FUNCTIONS)


def test_every_executable_operator_has_a_function() -> None:
    covered = {case for sent in FUNCTIONS.values() for case in sent}
    missing = set(REGISTRY) - covered
    assert not missing & COMPLETED, sorted(missing & COMPLETED)
    # A newly executable operator comes with its function, and a function added for one here shrinks this set.
    assert missing <= STILL_MISSING, sorted(missing - STILL_MISSING)


def test_the_docs_list_every_function() -> None:
    assert DOCS.read_text() == markdown(), (
        "docs/sdk-functions.md is stale: regenerate it with dmlrpc.ops._catalog.markdown()"
    )
    for name in FUNCTIONS:
        assert f"| `{name}` |" in DOCS.read_text()
