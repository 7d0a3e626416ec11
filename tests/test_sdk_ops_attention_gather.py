"""The SDK's multihead_attention, roi_align_grad, gather_elements, gather_nd, top_k(version=0) and element-wise
quantize/dequantize linear functions against the NumPy references and the pages' examples on the real server."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from tests.conftest import ServerThread
from tests.references import attention as attention_ref
from tests.references import gather as gather_ref
from tests.references import quantized as quantized_ref
from tests.references import roi_align_grad as roi_grad_ref

_RNG = np.random.default_rng(41)


def _floats(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(("shape", "axis", "dtype"), [((3, 4), 0, np.float32), ((2, 3, 5), -1, np.int64)])
def test_gather_elements_matches_take_along_axis(
    client: dmlrpc.Client, shape: tuple[int, ...], axis: int, dtype: Any
) -> None:
    x = (_floats(*shape) * 10).astype(dtype)
    taken = list(shape)
    taken[axis] = 2
    indices = _RNG.integers(-shape[axis], shape[axis], taken).astype(np.int32)
    out = client.gather_elements(x, indices, axis)
    assert out.dtype == x.dtype and out.shape == indices.shape
    np.testing.assert_array_equal(out, gather_ref.gather_elements(x, indices, axis % x.ndim))
    np.testing.assert_array_equal(out, np.take_along_axis(x, indices % shape[axis], axis))


def test_gather_elements_page_example(client: dmlrpc.Client) -> None:
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)
    out = client.gather_elements(x, np.uint32([[1, 2, 0], [2, 0, 0]]), 0)
    np.testing.assert_array_equal(out, [[4, 8, 3], [7, 2, 3]])


def test_gather_nd_matches_the_reference_and_the_page_examples(client: dmlrpc.Client) -> None:
    # The page's first example: input {2, 2}, indices {2, 1}.
    np.testing.assert_array_equal(
        client.gather_nd(np.float32([[0, 1], [2, 3]]), np.uint32([[1], [0]])), [[2, 3], [0, 1]]
    )
    x = _floats(3, 4, 5)
    for indices in (np.int64([[0, 1], [2, -1]]), _RNG.integers(0, 3, (2, 2, 1)).astype(np.int32)):
        out = client.gather_nd(x, indices)
        rank = max(x.ndim, indices.ndim, out.ndim)
        expected = gather_ref.gather_nd(
            x.reshape((1,) * (rank - x.ndim) + x.shape),
            indices.reshape((1,) * (rank - indices.ndim) + indices.shape),
            x.ndim,
            indices.ndim,
        )
        assert isinstance(expected, np.ndarray)
        assert out.shape == indices.shape[:-1] + x.shape[indices.shape[-1] :]
        np.testing.assert_array_equal(out, expected.reshape(out.shape))
    # The page's batch example (GATHER_ND1): one batch dimension of 3.
    batched = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    tuples = np.uint32([[[0, 0], [1, 1]], [[1, 1], [0, 0]], [[0, 1], [1, 0]]])
    np.testing.assert_array_equal(client.gather_nd(batched, tuples, 1), [[0, 3], [7, 4], [9, 10]])
    np.testing.assert_array_equal(client.gather_nd(x, np.int32([[1]]), version=1), x[[1]])


def test_top_k_version_0_sends_top_k(client: dmlrpc.Client) -> None:
    x = _floats(3, 6)
    values, indices = client.top_k(x, 2, 1, version=0)
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, 1))


def _heads(size: int, count: int, batch: int = 2, sequence: int = 3) -> np.ndarray:
    return _floats(batch, sequence, count * size)


def test_multihead_attention_matches_numpy(client: dmlrpc.Client) -> None:
    q, k, v = _heads(4, 2), _heads(4, 2, sequence=5), _heads(3, 2, sequence=5)
    out = client.multihead_attention(q, k, v, head_count=2)
    assert isinstance(out, np.ndarray) and out.shape == (2, 3, 6)
    np.testing.assert_allclose(out, attention_ref.attention(q, k, v, 2, 2, 0.5)[0], rtol=1e-5, atol=1e-6)
    # Bias, a relative position bias, a boolean mask (False masks) and an explicit scale.
    bias = _floats(8 + 8 + 6)
    relative = _floats(1, 2, 3, 5)
    keep = _RNG.random((2, 1, 3, 5)) > 0.3
    out = client.multihead_attention(
        q, k, v, head_count=2, bias=bias, relative_position_bias=relative, mask=keep, scale=0.3
    )
    expected = attention_ref.attention(q, k, v, 2, 2, 0.3, bias=bias, relative_position_bias=relative, masked=~keep)[0]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # Key lengths: key j of batch b is masked from lengths[b] on.
    lengths = np.int32([2, 5])
    out = client.multihead_attention(q, k, v, head_count=2, mask=lengths, mask_type="key_sequence_length")
    masked = np.arange(5)[None, None, None, :] >= lengths[:, None, None, None]
    expected = attention_ref.attention(q, k, v, 2, 2, 0.5, masked=masked)[0]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_multihead_attention_grouped_heads_with_past_and_present(client: dmlrpc.Client) -> None:
    q, k, v = _heads(2, 4), _heads(2, 2, sequence=4), _heads(3, 2, sequence=4)
    past_key, past_value = _floats(2, 2, 2, 2), _floats(2, 2, 2, 3)
    built = ops.multihead_attention(
        q, k, v, head_count=4, key_value_head_count=2, past_key=past_key, past_value=past_value, present=True
    )
    assert built.operator_desc.WhichOneof("desc") == "multihead_attention1"
    result = client.multihead_attention(
        q, k, v, head_count=4, key_value_head_count=2, past_key=past_key, past_value=past_value, present=True
    )
    assert isinstance(result, tuple)
    expected = attention_ref.attention(q, k, v, 4, 2, 1 / math.sqrt(2), past_key=past_key, past_value=past_value)
    for got, want in zip(result, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # version=1 sends MULTIHEAD_ATTENTION1 with one head count too, and answers as MULTIHEAD_ATTENTION does.
    k4, v4 = _heads(2, 4, sequence=4), _heads(3, 4, sequence=4)
    assert ops.multihead_attention(q, k4, v4, head_count=4, version=1).operator_desc.HasField("multihead_attention1")
    newer = client.multihead_attention(q, k4, v4, head_count=4, version=1)
    np.testing.assert_allclose(newer, client.multihead_attention(q, k4, v4, head_count=4), rtol=1e-6, atol=1e-7)


def test_multihead_attention_stacked_inputs_equal_the_separate_ones(client: dmlrpc.Client) -> None:
    stacked = _floats(1, 3, 2, 3, 4)  # [batch, sequence, heads, (q, k, v), head size]
    q, k, v = (stacked[:, :, :, i].reshape(1, 3, 8) for i in range(3))
    together = client.multihead_attention(stacked_query_key_value=stacked, head_count=2, version=1)
    apart = client.multihead_attention(q, k, v, head_count=2)
    np.testing.assert_allclose(together, apart, rtol=1e-6, atol=1e-7)
    pair = client.multihead_attention(q, stacked_key_value=np.ascontiguousarray(stacked[:, :, :, 1:]), head_count=2)
    np.testing.assert_allclose(pair, apart, rtol=1e-6, atol=1e-7)


def test_roi_align_grad_matches_numpy_and_the_page_example(client: dmlrpc.Client) -> None:
    dy = _floats(2, 3, 2, 2)
    rois, ids = np.float32([[0, 0, 3, 3], [1, 0.5, 4, 3]]), np.uint32([0, 1])
    out = client.roi_align_grad(dy, rois, ids, (2, 3, 5, 5))
    expected = roi_grad_ref.roi_align_grad(
        dy, rois, ids, (2, 3, 5, 5), average=True, nearest=False, offsets=(0.5, -0.5)
    )
    assert out.shape == (2, 3, 5, 5)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    x = _floats(2, 3, 5, 5)
    out = client.roi_align_grad(dy, rois, ids, input=x, reduction="max", mode="nearest", output_pixel_offset=0)
    expected = roi_grad_ref.roi_align_grad(dy, rois, ids, x.shape, average=False, nearest=True, x=x, offsets=(0.5, 0.0))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    # The page's example: four 2x2 regions of a 4x4 input to 1x3 outputs, one nearest sample each.
    page_rois = np.float32([[0, 0, 2, 2], [2, 0, 4, 2], [0, 2, 2, 4], [2, 2, 4, 4]])
    gradient = np.arange(1, 13, dtype=np.float32).reshape(4, 1, 1, 3)
    out = client.roi_align_grad(
        gradient, page_rois, np.zeros(4, np.uint32), (1, 1, 4, 4), mode="nearest", input_pixel_offset=0.25,
        output_pixel_offset=0, minimum_samples=1, maximum_samples=1,
    )  # fmt: skip
    np.testing.assert_array_equal(out.reshape(4, 4), [[3, 3, 9, 6], [0, 0, 0, 0], [15, 9, 21, 12], [0, 0, 0, 0]])


def test_element_wise_quantize_and_dequantize_linear_work(client: dmlrpc.Client) -> None:
    x = _floats(2, 5) * 60
    scale = _RNG.uniform(0.5, 2, (2, 1)).astype(np.float32)
    for zero in (np.uint8([[3], [200]]), np.int8(-4)):
        q = client.element_wise("quantize_linear", x, scale, zero)
        assert q.dtype == zero.dtype and q.shape == x.shape
        np.testing.assert_array_equal(q, quantized_ref.quantize_op(x, scale, zero, zero.dtype))
        back = client.element_wise("dequantize_linear", q, scale, zero)
        assert back.dtype == np.float32
        np.testing.assert_allclose(back, quantized_ref.dequantize(q, scale, zero), rtol=1e-6)
    # The page's formula rounds half to even: 0.5 -> 0 and 1.5 -> 2, then adds the zero point.
    page = client.element_wise(
        "quantize_linear", np.float32([[1, 2], [3, 4]]), np.float32([[2, 2], [2, 2]]), np.uint8([[128] * 2] * 2)
    )
    np.testing.assert_array_equal(page, [[128, 129], [130, 130]])


def test_async_client_runs_the_new_functions(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            out = await client.gather_nd(np.float32([[0, 1], [2, 3]]), np.uint32([[1], [0]]))
            np.testing.assert_array_equal(out, [[2, 3], [0, 1]])
            q = np.ones((1, 2, 2), np.float32)
            attended = await client.multihead_attention(q, q, q * 3, head_count=1)
            np.testing.assert_allclose(attended, 3 * q)

    asyncio.run(run())


def _refused(kind: type[dmlrpc.ArgumentError], argument: str, call: Callable[[], Any]) -> dmlrpc.ArgumentError:
    with pytest.raises(kind) as caught:
        call()
    assert caught.value.argument == argument and caught.value.request_id is None
    return caught.value


def test_argument_errors_come_before_any_request() -> None:
    # Port 1 has no server: a request would fail UNAVAILABLE, so each argument error shows none was tried.
    x, q = np.zeros((2, 3, 4), np.float32), np.zeros((2, 3, 8), np.float32)
    with dmlrpc.Client("127.0.0.1:1", timeout=5, retry=None) as client:
        error = _refused(dmlrpc.ArgumentValueError, "indices", lambda: client.gather_elements(
            x, np.zeros((2, 2, 2), np.int32), 1))  # fmt: skip
        assert "(2, 2, 2)" in str(error) and "(2, 3, 4)" in str(error)
        _refused(dmlrpc.ArgumentTypeError, "indices", lambda: client.gather_elements(x, np.zeros((2, 3, 4)), 0))
        error = _refused(dmlrpc.ArgumentValueError, "indices", lambda: client.gather_nd(
            x, np.zeros((3, 1), np.int32), 1))  # fmt: skip
        assert "(3, 1)" in str(error) and "(2, 3, 4)" in str(error)
        _refused(dmlrpc.ArgumentValueError, "indices", lambda: client.gather_nd(x, np.zeros((2, 4), np.int32)))
        _refused(dmlrpc.ArgumentValueError, "batch_dimension_count", lambda: client.gather_nd(
            x, np.zeros((2, 1), np.int32), 1, version=0))  # fmt: skip
        _refused(dmlrpc.ArgumentValueError, "direction", lambda: client.top_k(x, 1, direction="increasing", version=0))
        _refused(dmlrpc.ArgumentValueError, "version", lambda: client.top_k(x, 1, version=2))
        error = _refused(dmlrpc.ArgumentValueError, "key", lambda: client.multihead_attention(
            q, np.zeros((2, 3, 6), np.float32), q, head_count=2))  # fmt: skip
        assert "(2, 3, 8)" in str(error) and "(2, 3, 6)" in str(error)
        _refused(dmlrpc.ArgumentValueError, "query", lambda: client.multihead_attention(
            q, q, q, stacked_query_key=np.zeros((2, 3, 2, 2, 4), np.float32), head_count=2))  # fmt: skip
        _refused(dmlrpc.ArgumentValueError, "key_value_head_count", lambda: client.multihead_attention(
            q, q, q, head_count=2, key_value_head_count=3))  # fmt: skip
        _refused(dmlrpc.ArgumentValueError, "version", lambda: client.multihead_attention(
            q, q[..., :4], q[..., :4], head_count=2, key_value_head_count=1, version=0))  # fmt: skip
        _refused(dmlrpc.ArgumentValueError, "past_key", lambda: client.multihead_attention(
            q, q, q, head_count=2, past_key=np.zeros((2, 2, 1, 4), np.float32)))  # fmt: skip
        _refused(dmlrpc.ArgumentValueError, "mask", lambda: client.multihead_attention(
            q, q, q, head_count=2, mask=np.ones((3, 4), bool)))  # fmt: skip
        _refused(dmlrpc.ArgumentValueError, "mask_type", lambda: client.multihead_attention(
            q, q, q, head_count=2, mask_type="boolean"))  # fmt: skip
        _refused(dmlrpc.ArgumentTypeError, "value", lambda: client.multihead_attention(
            q, q, q.astype(np.float16), head_count=2))  # fmt: skip
        error = _refused(dmlrpc.ArgumentValueError, "input_gradient", lambda: client.roi_align_grad(
            np.zeros((2, 3, 2, 2), np.float32), np.zeros((1, 4), np.float32), [0], (1, 3, 4, 4)))  # fmt: skip
        assert "(2, 3, 2, 2)" in str(error) and "(1, 3, 4, 4)" in str(error)
        _refused(dmlrpc.ArgumentValueError, "input", lambda: client.roi_align_grad(
            np.zeros((1, 3, 2, 2), np.float32), np.zeros((1, 4), np.float32), [0], (1, 3, 4, 4),
            reduction="max"))  # fmt: skip
        _refused(dmlrpc.ArgumentValueError, "input_shape", lambda: client.roi_align_grad(
            np.zeros((1, 3, 2, 2), np.float32), np.zeros((1, 4), np.float32), [0]))  # fmt: skip
