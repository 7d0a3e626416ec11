"""NumPy reference of DirectML's MULTIHEAD_ATTENTION(1), written from the page's decomposition: bias, Q @ K^T *
Scale, relative position bias, MaskFilterValue added where masked, softmax over the keys, @ V."""

from __future__ import annotations

import numpy as np


def heads(x: np.ndarray, count: int) -> np.ndarray:
    """[batch, sequence, count * size] -> [batch, count, sequence, size]."""
    batch, sequence, hidden = x.shape
    return x.reshape(batch, sequence, count, hidden // count).transpose(0, 2, 1, 3)


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    query_heads: int,
    kv_heads: int,
    scale: float,
    *,
    bias: np.ndarray | None = None,
    past_key: np.ndarray | None = None,
    past_value: np.ndarray | None = None,
    relative_position_bias: np.ndarray | None = None,
    masked: np.ndarray | None = None,
    mask_filter_value: float = -10000.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output [batch, sequence, Hq * Dv], present key, present value) in float64 from [batch, sequence, hidden]
    query/key/value; ``masked`` is a boolean array broadcasting against [batch, Hq, sequence, total]."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    if bias is not None:
        b = np.asarray(bias, np.float64).reshape(-1)
        nq, nk = q.shape[-1], k.shape[-1]
        q, k, v = q + b[:nq], k + b[nq : nq + nk], v + b[nq + nk :]
    qh, kh, vh = heads(q, query_heads), heads(k, kv_heads), heads(v, kv_heads)
    if past_key is not None and past_value is not None:
        kh = np.concatenate([np.asarray(past_key, np.float64), kh], axis=2)
        vh = np.concatenate([np.asarray(past_value, np.float64), vh], axis=2)
    group = query_heads // kv_heads
    keys, values = np.repeat(kh, group, axis=1), np.repeat(vh, group, axis=1)
    scores = np.einsum("bhsd,bhtd->bhst", qh, keys) * scale
    if relative_position_bias is not None:
        scores = scores + np.asarray(relative_position_bias, np.float64)
    if masked is not None:
        scores = scores + np.where(masked, mask_filter_value, 0.0)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    out = np.einsum("bhst,bhtd->bhsd", weights, values)
    batch, _, sequence, size = out.shape
    return out.transpose(0, 2, 1, 3).reshape(batch, sequence, query_heads * size), kh, vh
