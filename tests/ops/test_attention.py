"""MULTIHEAD_ATTENTION and MULTIHEAD_ATTENTION1 over the wire: properties against the NumPy reference (layouts,
bias, past state, relative position bias, mask types, grouped heads), mask edge cases, validation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from tests.references import attention as ref

MASK = operators_pb2.MultiheadAttentionMaskType
NONE = MASK.MULTIHEAD_ATTENTION_MASK_TYPE_NONE
LENGTH = MASK.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_LENGTH
END_START = MASK.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_END_START
PACKED = MASK.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_QUERY_SEQUENCE_LENGTH_START_END
BOOLEAN = MASK.MULTIHEAD_ATTENTION_MASK_TYPE_BOOLEAN
INPUTS = [
    "query_tensor",
    "key_tensor",
    "value_tensor",
    "stacked_query_key_tensor",
    "stacked_key_value_tensor",
    "stacked_query_key_value_tensor",
    "bias_tensor",
    "mask_tensor",
    "relative_position_bias_tensor",
    "past_key_tensor",
    "past_value_tensor",
]


def stack(parts: list[np.ndarray], count: int) -> np.ndarray:
    """[batch, sequence, count * size] parts -> [batch, sequence, count, len(parts), size]."""
    batch, sequence, hidden = parts[0].shape
    return np.stack([p.reshape(batch, sequence, count, hidden // count) for p in parts], axis=3)


def run(
    client: dmlrpc.Client,
    case: str,
    tensors: dict[str, np.ndarray],
    outputs: dict[str, tuple[Any, tuple[int, ...]]],
    attrs: dict[str, Any],
) -> list[np.ndarray | None]:
    names = INPUTS + (["past_sequence_lengths_tensor"] if case == "multihead_attention1" else [])
    fields: dict[str, Any] = {name: tensor_desc(array) for name, array in tensors.items()}
    fields |= {name: tensor_desc(spec) for name, spec in outputs.items()}
    message = (
        operators_pb2.MultiheadAttentionOperatorDesc
        if case == "multihead_attention"
        else operators_pb2.MultiheadAttention1OperatorDesc
    )
    desc = operators_pb2.OperatorDesc(**{case: message(**fields, **attrs)})
    results = client.execute(desc, [tensors.get(name) for name in names])
    return [r if isinstance(r, np.ndarray) or r is None else None for r in results]


def heads_attrs(case: str, query_heads: int, kv_heads: int) -> dict[str, Any]:
    if case == "multihead_attention":
        return {"head_count": query_heads}
    return {"query_head_count": query_heads, "key_value_head_count": kv_heads}


@pytest.mark.parametrize("case", ["multihead_attention", "multihead_attention1"])
@settings(max_examples=25)
@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, case: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([np.float32, np.float16]), label="dtype")
    batch, seq = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 4))
    layout = data.draw(st.sampled_from(["separate", "stacked_qk", "stacked_kv", "stacked_qkv"]), label="layout")
    kv_heads = data.draw(st.integers(1, 2))
    group = (
        1 if case == "multihead_attention" or layout in ("stacked_qk", "stacked_qkv") else data.draw(st.integers(1, 2))
    )
    query_heads = kv_heads * group
    head = data.draw(st.integers(1, 4))
    value_head = head if layout != "separate" else data.draw(st.integers(1, 4))
    kv_seq = seq if layout in ("stacked_qk", "stacked_qkv") else data.draw(st.integers(1, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))

    def draw(*shape: int) -> np.ndarray:
        return rng.uniform(-2, 2, shape).astype(dtype)

    q, k = draw(batch, seq, query_heads * head), draw(batch, kv_seq, kv_heads * head)
    v = draw(batch, kv_seq, kv_heads * value_head)
    tensors: dict[str, np.ndarray] = {}
    if layout == "separate":
        tensors |= {"query_tensor": q, "key_tensor": k, "value_tensor": v}
    elif layout == "stacked_qk":
        tensors |= {"stacked_query_key_tensor": stack([q, k], query_heads), "value_tensor": v}
    elif layout == "stacked_kv":
        tensors |= {"query_tensor": q, "stacked_key_value_tensor": stack([k, v], kv_heads)}
    else:
        tensors |= {"stacked_query_key_value_tensor": stack([q, k, v], query_heads)}
    if layout == "separate" and data.draw(st.booleans(), label="leading 1s"):
        tensors["query_tensor"] = q.reshape(1, 1, *q.shape)
    bias = draw(q.shape[-1] + k.shape[-1] + v.shape[-1]) if data.draw(st.booleans(), label="bias") else None
    if bias is not None:
        tensors["bias_tensor"] = bias
    past = data.draw(st.sampled_from([0, 0, 2]), label="past")
    past_key = past_value = None
    if past:
        past_key, past_value = draw(batch, kv_heads, past, head), draw(batch, kv_heads, past, value_head)
        tensors |= {"past_key_tensor": past_key, "past_value_tensor": past_value}
    total = past + kv_seq
    rpb = None
    if data.draw(st.booleans(), label="relative position bias"):
        rpb = draw(data.draw(st.sampled_from([1, batch])), query_heads, seq, total)
        tensors["relative_position_bias_tensor"] = rpb
    mask_type = data.draw(st.sampled_from([NONE, LENGTH, END_START, BOOLEAN]), label="mask type")
    positions = np.arange(total)
    masked = None
    if mask_type == LENGTH:
        lengths = rng.integers(0, total + 2, batch).astype(np.int32)
        tensors["mask_tensor"] = lengths.reshape(1, batch)
        masked = positions[None, None, None, :] >= lengths[:, None, None, None]
    elif mask_type == END_START:
        ends, starts = rng.integers(0, total + 2, batch), rng.integers(-1, total + 1, batch)
        tensors["mask_tensor"] = np.stack([ends, starts]).astype(np.int32)
        masked = (positions >= ends[:, None, None, None]) | (positions < starts[:, None, None, None])
    elif mask_type == BOOLEAN:
        shape = data.draw(st.sampled_from([(batch, 1, seq, total), (batch, query_heads, seq, total), (total,)]))
        values = rng.integers(0, 2, shape).astype(np.int32)
        tensors["mask_tensor"] = values
        masked = values == 0
    scale = data.draw(st.sampled_from([1.0, 0.5, 1 / np.sqrt(head)]))
    filter_value = data.draw(st.sampled_from([-10000.0, -3.0]))
    attrs = heads_attrs(case, query_heads, kv_heads) | {
        "scale": scale,
        "mask_filter_value": filter_value,
        "mask_type": mask_type,
    }
    outputs: dict[str, tuple[Any, tuple[int, ...]]] = {"output_tensor": (dtype, (batch, seq, query_heads * value_head))}
    with_present = data.draw(st.booleans(), label="present outputs")
    if with_present:
        outputs["output_present_key_tensor"] = (dtype, (batch, kv_heads, total, head))
        outputs["output_present_value_tensor"] = (dtype, (batch, kv_heads, total, value_head))
    out, present_key, present_value = run(client, case, tensors, outputs, attrs)
    expected, expected_key, expected_value = ref.attention(
        q,
        k,
        v,
        query_heads,
        kv_heads,
        scale,
        bias=bias,
        past_key=past_key,
        past_value=past_value,
        relative_position_bias=rpb,
        masked=masked,
        mask_filter_value=filter_value,
    )
    tolerance = 2e-2 if dtype == np.float16 else 1e-5
    if masked is not None and np.broadcast_to(masked, (batch, query_heads, seq, total)).all(axis=-1).any():
        # A wholly masked row's scores are shifted by MaskFilterValue in FLOAT32, where a step is 1e-3 at 10000.
        tolerance = max(tolerance, 5e-3)
    assert out is not None and out.dtype == dtype
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)
    if with_present:
        assert present_key is not None and present_value is not None
        np.testing.assert_allclose(present_key.astype(np.float64), expected_key, rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(present_value.astype(np.float64), expected_value, rtol=tolerance, atol=tolerance)
    else:
        assert present_key is None and present_value is None


def test_masked_keys_get_mask_filter_value_added(client: dmlrpc.Client) -> None:
    # One query over three keys of equal score: key 2 masked by length 2 -> weights 1/2, 1/2, 0 (exp(-10000)).
    q = np.zeros((1, 1, 2), np.float32)
    k = np.zeros((1, 3, 2), np.float32)
    v = np.array([[[1, 0], [0, 1], [9, 9]]], np.float32)
    attrs = {"head_count": 1, "scale": 1.0, "mask_filter_value": -10000.0, "mask_type": LENGTH}
    inputs = {"query_tensor": q, "key_tensor": k, "value_tensor": v, "mask_tensor": np.array([[2]], np.int32)}
    (out, *_) = run(client, "multihead_attention", inputs, {"output_tensor": (np.float32, (1, 1, 2))}, attrs)
    np.testing.assert_allclose(out, [[[0.5, 0.5]]], atol=1e-6)
    # Every key masked: the scores shift alike, so the row is the softmax of the unmasked scores (uniform here).
    inputs["mask_tensor"] = np.array([[0]], np.int32)
    (out, *_) = run(client, "multihead_attention", inputs, {"output_tensor": (np.float32, (1, 1, 2))}, attrs)
    np.testing.assert_allclose(out, [[[10 / 3, 10 / 3]]], rtol=1e-5)


Q = np.zeros((1, 2, 4), np.float32)
OUT = {"output_tensor": (np.float32, (1, 2, 4))}
BASE = {"head_count": 2, "scale": 1.0, "mask_filter_value": -10000.0}
PATH = "operator_desc.multihead_attention"


def expect_invalid(
    client: dmlrpc.Client,
    tensors: dict[str, np.ndarray],
    field: str,
    attrs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    case: str = "multihead_attention",
) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        run(
            client,
            case,
            tensors,
            outputs or OUT,
            BASE | (attrs or {}) if case == "multihead_attention" else attrs or {},
        )
    assert caught.value.field_violations[0].field == f"operator_desc.{case}.{field}"


def test_validation(client: dmlrpc.Client) -> None:
    qkv = {"query_tensor": Q, "key_tensor": Q, "value_tensor": Q}
    expect_invalid(client, {"key_tensor": Q, "value_tensor": Q}, "query_tensor")
    stacked = np.zeros((1, 2, 2, 2, 2), np.float32)
    expect_invalid(client, qkv | {"stacked_query_key_tensor": stacked}, "query_tensor")
    expect_invalid(client, qkv, "head_count", {"head_count": 0})
    expect_invalid(client, qkv, "query_tensor.buffer.sizes", {"head_count": 3})
    expect_invalid(client, qkv, "scale", {"scale": float("nan")})
    expect_invalid(client, qkv, "mask_filter_value", {"mask_filter_value": float("-inf")})
    expect_invalid(client, qkv | {"key_tensor": np.zeros((2, 2, 4), np.float32)}, "key_tensor.buffer.sizes")
    expect_invalid(client, qkv | {"key_tensor": np.zeros((1, 2, 6), np.float32)}, "key_tensor.buffer.sizes")
    expect_invalid(client, qkv | {"value_tensor": np.zeros((1, 3, 4), np.float32)}, "value_tensor.buffer.sizes")
    expect_invalid(client, qkv | {"key_tensor": Q.astype(np.float16)}, "key_tensor.buffer.data_type")
    expect_invalid(client, qkv | {"bias_tensor": np.zeros(11, np.float32)}, "bias_tensor.buffer.sizes")
    expect_invalid(client, qkv | {"past_key_tensor": np.zeros((1, 2, 1, 2), np.float32)}, "past_value_tensor")
    past = {
        "past_key_tensor": np.zeros((1, 2, 1, 2), np.float32),
        "past_value_tensor": np.zeros((1, 2, 2, 2), np.float32),
    }
    expect_invalid(client, qkv | past, "past_value_tensor.buffer.sizes")
    expect_invalid(client, qkv, "output_tensor.buffer.sizes", outputs={"output_tensor": (np.float32, (1, 2, 6))})
    expect_invalid(
        client,
        qkv,
        "output_present_key_tensor.buffer.sizes",
        outputs=OUT | {"output_present_key_tensor": (np.float32, (1, 2, 3, 2))},
    )
    rpb = np.zeros((1, 2, 2, 3), np.float32)
    expect_invalid(client, qkv | {"relative_position_bias_tensor": rpb}, "relative_position_bias_tensor.buffer.sizes")
    mask = np.ones((1, 1), np.int32)
    expect_invalid(client, qkv | {"mask_tensor": mask}, "mask_type")
    expect_invalid(client, qkv, "mask_tensor", {"mask_type": LENGTH})
    expect_invalid(
        client, qkv | {"mask_tensor": np.ones((2, 1), np.int32)}, "mask_tensor.buffer.sizes", {"mask_type": LENGTH}
    )
    expect_invalid(
        client, qkv | {"mask_tensor": np.ones((1, 3), np.int32)}, "mask_tensor.buffer.sizes", {"mask_type": BOOLEAN}
    )
    expect_invalid(client, qkv | {"mask_tensor": mask}, "mask_type", {"mask_type": 9})
    grouped = {"query_head_count": 2, "key_value_head_count": 0, "scale": 1.0}
    expect_invalid(client, qkv, "key_value_head_count", grouped, case="multihead_attention1")
    expect_invalid(
        client, qkv, "key_value_head_count", grouped | {"key_value_head_count": 3}, case="multihead_attention1"
    )


def test_undocumented_inputs_are_unimplemented(client: dmlrpc.Client) -> None:
    qkv = {"query_tensor": Q, "key_tensor": Q, "value_tensor": Q}
    packed = qkv | {"mask_tensor": np.zeros(5, np.int32)}
    with pytest.raises(dmlrpc.UnimplementedError, match="KEY_QUERY_SEQUENCE_LENGTH_START_END"):
        run(client, "multihead_attention", packed, OUT, BASE | {"mask_type": PACKED})
    lengths = qkv | {"past_sequence_lengths_tensor": np.zeros(1, np.float32)}
    attrs = {"query_head_count": 2, "key_value_head_count": 2, "scale": 1.0}
    with pytest.raises(dmlrpc.UnimplementedError, match="past_sequence_lengths_tensor"):
        run(client, "multihead_attention1", lengths, OUT, attrs)
