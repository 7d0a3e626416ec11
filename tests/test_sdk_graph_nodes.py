"""``Graph`` nodes compiled on the real server equal the eager SDK functions of the same name: the recurrent,
quantized, normalization-gradient, spatial-gradient, FOLD, resample, generator, gather, attention and
QUANTIZE/DEQUANTIZE (tensor-array edges) nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlrpc

_RNG = np.random.default_rng(59)
_Case = tuple[list[np.ndarray], Callable[..., Any], Callable[..., Any]]


def _floats(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def _bytes(*shape: int, dtype: Any = np.uint8) -> np.ndarray:
    info = np.iinfo(dtype)
    return _RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _case(name: str) -> _Case:
    """Per node: the arrays (in the graph's shapes), the node over graph inputs, and the eager call."""
    x4, dy4 = _floats(1, 2, 4, 4), _floats(1, 2, 4, 4)
    stat = np.abs(_floats(1, 2, 1, 1)) + 0.5
    one = np.float32(0.05).reshape(1, 1, 1, 1)
    q, k, v = _floats(1, 3, 8), _floats(1, 4, 8), _floats(1, 4, 6)
    table: dict[str, _Case] = {
        "rnn": (
            [_floats(1, 3, 1, 2), _floats(1, 1, 4, 2), _floats(1, 1, 4, 4)],
            lambda g, a, w, r: g.rnn(a, w, r),
            lambda c, a, w, r: c.rnn(a[0], w[0], r[0]),
        ),
        "gru": (
            [_floats(1, 3, 1, 2), _floats(1, 1, 9, 2), _floats(1, 1, 9, 3)],
            lambda g, a, w, r: g.gru(a, w, r, linear_before_reset=True),
            lambda c, a, w, r: c.gru(a[0], w[0], r[0], linear_before_reset=True),
        ),
        "quantized_linear_matrix_multiply": (
            [_bytes(1, 1, 3, 5), one, _bytes(1, 1, 5, 2, dtype=np.int8), one, one * 40],
            lambda g, *t: g.quantized_linear_matrix_multiply(*t),
            lambda c, *t: c.quantized_linear_matrix_multiply(*t),
        ),
        "quantized_linear_convolution": (
            [_bytes(1, 2, 5, 5), one, _bytes(3, 2, 3, 3, dtype=np.int8), one, one * 30],
            lambda g, *t: g.quantized_linear_convolution(*t, strides=2),
            lambda c, *t: c.quantized_linear_convolution(*t, strides=2),
        ),
        "batch_normalization_grad": (
            [x4, dy4, stat - 0.5, stat, stat],
            lambda g, *t: g.batch_normalization_grad(*t),
            lambda c, *t: c.batch_normalization_grad(*t),
        ),
        "batch_normalization_training_grad": (
            [x4, dy4, stat - 0.5, stat, stat],
            lambda g, *t: g.batch_normalization_training_grad(*t),
            lambda c, *t: c.batch_normalization_training_grad(*t),
        ),
        "local_response_normalization_grad": (
            [x4, dy4],
            lambda g, a, d: g.local_response_normalization_grad(a, d, local_size=3),
            lambda c, a, d: c.local_response_normalization_grad(a, d, local_size=3),
        ),
        "average_pooling_grad": (
            [_floats(1, 2, 2, 2)],
            lambda g, d: g.average_pooling_grad(d, (1, 2, 4, 4), 2, strides=2),
            lambda c, d: c.average_pooling_grad(d, (1, 2, 4, 4), 2, strides=2),
        ),
        "resample_grad": (
            [dy4],
            lambda g, d: g.resample_grad(d, (1, 2, 2, 2), mode="linear"),
            lambda c, d: c.resample_grad(d, (1, 2, 2, 2), mode="linear"),
        ),
        "fold": (
            [_floats(1, 8, 9)],
            lambda g, a: g.fold(a, (4, 4), 2),
            lambda c, a: c.fold(a, (4, 4), 2),
        ),
        "scatter_nd": (
            [x4, np.int32([[[[0, 1, 2, 3]], [[0, 0, 3, 0]]]]).reshape(1, 1, 2, 4), np.float32([[[[7, 9]]]])],
            lambda g, *t: g.scatter_nd(*t),
            lambda c, *t: c.scatter_nd(*t),
        ),
        "value_scale_2d": (
            [_floats(1, 3, 2, 2)],
            lambda g, a: g.value_scale_2d(a, 0.5, [1.0, -1.0, 2.0]),
            lambda c, a: c.value_scale_2d(a, 0.5, [1.0, -1.0, 2.0]),
        ),
        "upsample_2d": (
            [x4],
            lambda g, a: g.upsample_2d(a, (2, 3), "linear"),
            lambda c, a: c.upsample_2d(a, (2, 3), "linear"),
        ),
        "fill_value_constant": (
            [x4],
            lambda g, a: g.element_wise("add", a, g.fill_value_constant(a.shape, 2.5)),
            lambda c, a: c.element_wise("add", a, c.fill_value_constant(a.shape, 2.5)),
        ),
        "diagonal_matrix1": (
            [_floats(3, 5)],
            lambda g, a: g.diagonal_matrix(None, 1, 4.0, fill_end=3, input=a),
            lambda c, a: c.diagonal_matrix(None, 1, 4.0, fill_end=3, input=a),
        ),
        "quantize": (
            [x4 * 30, np.abs(x4) + 0.5, _bytes(1, 2, 4, 4, dtype=np.int8)],
            lambda g, *t: g.quantize(*t),
            lambda c, *t: c.quantize(*t),
        ),
        "dequantize": (
            [_bytes(1, 2, 4, 4), np.abs(x4) + 0.5],
            lambda g, *t: g.dequantize(*t),
            lambda c, *t: c.dequantize(*t),
        ),
        "gather_elements": (
            [x4, _RNG.integers(0, 4, (1, 2, 3, 4)).astype(np.int64)],
            lambda g, a, i: g.gather_elements(a, i, 2),
            lambda c, a, i: c.gather_elements(a, i, 2),
        ),
        "gather_nd": (
            [_floats(3, 4, 5), np.int32([[[0, 1]], [[2, 3]], [[1, 0]]])],
            lambda g, a, i: g.gather_nd(a, i),
            lambda c, a, i: c.gather_nd(a, i),
        ),
        "gather_nd1": (
            [_floats(3, 4, 5), _RNG.integers(0, 4, (3, 2, 1)).astype(np.uint32)],
            lambda g, a, i: g.gather_nd(a, i, 1),
            lambda c, a, i: c.gather_nd(a, i, 1),
        ),
        "top_k": ([x4], lambda g, a: g.top_k(a, 2, version=0), lambda c, a: c.top_k(a, 2, version=0)),
        "multihead_attention": (
            [q, k, v, _floats(1, 2, 3, 4)],
            lambda g, *t: g.multihead_attention(*t[:3], head_count=2, relative_position_bias=t[3]),
            lambda c, *t: c.multihead_attention(*t[:3], head_count=2, relative_position_bias=t[3]),
        ),
        "multihead_attention1": (
            [q, k[..., :4], v[..., :3], _floats(1, 1, 2, 4), _floats(1, 1, 2, 3)],
            lambda g, *t: g.multihead_attention(
                *t[:3], head_count=2, key_value_head_count=1, past_key=t[3], past_value=t[4], present=True
            ),
            lambda c, *t: c.multihead_attention(
                *t[:3], head_count=2, key_value_head_count=1, past_key=t[3], past_value=t[4], present=True
            ),
        ),
        "roi_align_grad": (
            [_floats(2, 2, 2, 2), np.float32([[0, 0, 3, 3], [1, 1, 4, 2]]), np.uint32([0, 0]), x4],
            lambda g, d, r, i, a: g.roi_align_grad(d, r, i, input=a, reduction="max"),
            lambda c, d, r, i, a: c.roi_align_grad(d, r, i, input=a, reduction="max"),
        ),
    }
    return table[name]


_NAMES = [
    "rnn", "gru", "quantized_linear_matrix_multiply", "quantized_linear_convolution", "batch_normalization_grad",
    "batch_normalization_training_grad", "local_response_normalization_grad", "average_pooling_grad",
    "resample_grad", "fold", "scatter_nd", "value_scale_2d", "upsample_2d", "fill_value_constant", "diagonal_matrix1",
    "quantize", "dequantize", "gather_elements", "gather_nd", "gather_nd1", "top_k", "multihead_attention",
    "multihead_attention1", "roi_align_grad",
]  # fmt: skip


@pytest.mark.parametrize("name", _NAMES)
def test_graph_nodes_equal_the_eager_functions(client: dmlrpc.Client, name: str) -> None:
    arrays, node, eager = _case(name)
    g = dmlrpc.Graph()
    inputs = [g.input(a.dtype, a.shape) for a in arrays]
    outputs = node(g, *inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    g.output(*outputs)
    cases = {n.operator.operator.WhichOneof("desc") for n in g.desc().nodes if n.HasField("operator")}
    assert name in cases or name.removesuffix("_constant") in {c.removesuffix("_constant") for c in cases}, cases
    with client.compile(g) as op:
        results = op(*arrays)
    expected = eager(client, *arrays)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(results) == len(expected)
    for got, want in zip(results, expected, strict=True):
        assert isinstance(got, np.ndarray) and got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(
            np.asarray(got, np.float64), np.reshape(want, got.shape).astype(np.float64), rtol=1e-5, atol=1e-6
        )


def test_graph_nodes_refuse_what_an_edge_cannot_carry() -> None:
    g = dmlrpc.Graph()
    x, scale = g.input(np.float32, (2, 3)), g.input(np.float32, (1, 3))
    with pytest.raises(dmlrpc.ArgumentValueError) as caught:
        g.quantize(x, scale)
    assert caught.value.argument == "scale" and "(1, 3)" in str(caught.value) and "(2, 3)" in str(caught.value)
    q, keep = g.input(np.float32, (1, 2, 4)), g.input(np.bool_, (1, 1, 2, 2))
    with pytest.raises(dmlrpc.ArgumentTypeError) as typed:
        g.multihead_attention(q, q, q, head_count=2, mask=keep)
    assert typed.value.argument == "mask" and typed.value.allowed == ("int32",)
    dy, rois, ids = g.input(np.float32, (1, 1, 1, 1)), g.input(np.float32, (1, 4)), g.input(np.int64, (1,))
    with pytest.raises(dmlrpc.ArgumentTypeError) as typed:
        g.roi_align_grad(dy, rois, ids, (1, 1, 2, 2))
    assert typed.value.argument == "batch_indices"
