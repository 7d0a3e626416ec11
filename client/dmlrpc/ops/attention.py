"""DML_MULTIHEAD_ATTENTION and DML_MULTIHEAD_ATTENTION1 as one NumPy-style builder."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import Result, alone_or_three, operator
from dmlrpc.ops.base import Call, _array, _count, _flag, _float_operand, _scalar, _version, _wrap
from dmlrpc.ops.convolution import _choice
from dmlrpc.v1 import operators_pb2

__all__ = ["MaskType", "multihead_attention"]

#: How ``mask`` reads (DML_MULTIHEAD_ATTENTION_MASK_TYPE): "boolean" (0 masks a score), "key_sequence_length"
#: (one length per batch), "key_sequence_end_start" (ends, then starts, per batch).
MaskType = Literal["boolean", "key_sequence_length", "key_sequence_end_start"]

_MASKS = {
    "boolean": operators_pb2.MULTIHEAD_ATTENTION_MASK_TYPE_BOOLEAN,
    "key_sequence_length": operators_pb2.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_LENGTH,
    "key_sequence_end_start": operators_pb2.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_END_START,
}
_INT32 = np.iinfo(np.int32)


@dataclass(frozen=True)
class _Part:
    """One of query, key and value: the argument holding it and its [batch, sequence, heads, size]."""

    argument: str
    batch: int
    sequence: int
    heads: int
    size: int


def _source(
    name: str, candidates: dict[str, np.ndarray | None], heads: int, where: str, shapes: dict[str, tuple[int, ...]]
) -> _Part:
    """The one argument holding ``name`` (query, key or value) and its sizes: a plain one [batch, sequence,
    heads * size], a stacked one [batch, sequence, heads, 2 or 3, size]."""
    given = [argument for argument, array in candidates.items() if array is not None]
    if len(given) != 1:
        raise ArgumentValueError(
            name,
            f"{where}: exactly one of {', '.join(candidates)} holds the {name}; got "
            f"{', '.join(given) if given else 'none'}",
        )
    argument = given[0]
    shape = shapes[argument]
    if argument == name:
        if len(shape) != 3 or shape[2] % heads:
            raise ArgumentValueError(
                argument,
                f"{where}: {argument} has shape {shape}; it takes (batch, sequence, {heads} heads * head size)",
            )
        return _Part(argument, shape[0], shape[1], heads, shape[2] // heads)
    parts = 3 if argument == "stacked_query_key_value" else 2
    if len(shape) != 5 or shape[2] != heads or shape[3] != parts:
        raise ArgumentValueError(
            argument,
            f"{where}: {argument} has shape {shape}; it takes (batch, sequence, {heads} heads, {parts}, head size)",
        )
    return _Part(argument, shape[0], shape[1], heads, shape[4])


def _mask(mask: npt.ArrayLike, mask_type: object, where: str) -> tuple[np.ndarray, int]:
    """The mask as INT32 (bools: True keeps a score) and its DML_MULTIHEAD_ATTENTION_MASK_TYPE."""
    kind = _choice("boolean" if mask_type is None else mask_type, "mask_type", where, _MASKS)
    data = _array(mask, "mask", where)
    if data.dtype.kind == "b":
        data = data.astype(np.int32)
    if data.dtype.kind not in "iu" or (data.size and (data.min() < _INT32.min or data.max() > _INT32.max)):
        raise ArgumentTypeError(
            "mask", f"{where}: mask has dtype {data.dtype}; it takes bools or int32 values", allowed=("bool", "int32")
        )
    return data.astype(np.int32), kind


@operator(sends=("multihead_attention", "multihead_attention1"), result=Result(alone_or_three, alone_or_three))
def multihead_attention(
    query: npt.ArrayLike | None = None,
    key: npt.ArrayLike | None = None,
    value: npt.ArrayLike | None = None,
    *,
    head_count: int,
    key_value_head_count: int | None = None,
    stacked_query_key: npt.ArrayLike | None = None,
    stacked_key_value: npt.ArrayLike | None = None,
    stacked_query_key_value: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    mask: npt.ArrayLike | None = None,
    mask_type: MaskType | None = None,
    relative_position_bias: npt.ArrayLike | None = None,
    past_key: npt.ArrayLike | None = None,
    past_value: npt.ArrayLike | None = None,
    scale: float | None = None,
    mask_filter_value: float = -10000.0,
    present: bool = False,
    version: int | None = None,
) -> Call:
    """DML_MULTIHEAD_ATTENTION_OPERATOR_DESC, or DML_MULTIHEAD_ATTENTION1_OPERATOR_DESC with grouped heads
    (``key_value_head_count`` other than ``head_count``) or ``version=1``: scaled dot-product attention, per batch
    and query head ``softmax((Q + bias) @ (K + bias)^T * scale + relative_position_bias + masked) @ (V + bias)``.

    It returns the output (batch, sequence, head_count * value head size), and with ``present`` (output, present
    key, present value), those (batch, key_value_head_count, past + key sequence, head size): ``past_key`` /
    ``past_value`` followed by the new ones.

    The query comes from ``query`` (batch, sequence, head_count * head size), ``stacked_query_key`` or
    ``stacked_query_key_value`` (batch, sequence, heads, 2 or 3, head size: index 0/1/2 of the 4th dimension the
    query/key/value of that head); the key from ``key`` (batch, key sequence, key_value_head_count * head size) or
    a stacked array holding it (``stacked_key_value``: key, then value); the value from ``value`` or a stacked
    array holding it; exactly one source each. Query head h reads key/value head
    ``h // (head_count // key_value_head_count)``.

    DirectML's rules: every tensor but the mask one data type, FLOAT32 or FLOAT16; HeadCount (QueryHeadCount) at
    least 1, KeyValueHeadCount at least 1 and dividing it, stacked tensors holding the query only with equal counts;
    query and key one head size; ``bias`` (Hq * head size + Hkv * head size + Hkv * value head size,), added to
    query, key and value; ``past_key`` (batch, Hkv, past, head size) and ``past_value`` (batch, Hkv, past, value
    head size) together; ``relative_position_bias`` (batch or 1, Hq, sequence, past + key sequence); ``mask`` INT32
    (bools are sent as 0/1), set exactly when a MaskType is: "boolean" (the default) broadcasts against (batch, Hq,
    sequence, past + key sequence), 0 masking; "key_sequence_length" (batch,) or (1, batch): key j masked when
    j >= length; "key_sequence_end_start" (2, batch): ends, then starts, masked outside [start, end).
    ``mask_filter_value`` is added to masked scores; ``scale`` defaults to 1 / sqrt(head size). MaskType
    KEY_QUERY_SEQUENCE_LENGTH_START_END (packed sequences) and MULTIHEAD_ATTENTION1's PastSequenceLengthsTensor
    ('TBD' on its page) are not offered.

    Raises:
        ArgumentValueError, ArgumentTypeError: no source or two for a part, shapes that do not fit the head counts
            or one another (the shapes quoted), head counts that do not divide, one of past key and value, a mask
            type without a mask, dtypes other than float32/float16 or unlike, ``version=0`` with grouped heads.
    """
    where = "multihead_attention"
    query_heads = _count(head_count, "head_count", where, 1)
    kv_heads = (
        query_heads if key_value_head_count is None else _count(key_value_head_count, "key_value_head_count", where, 1)
    )
    if query_heads % kv_heads:
        raise ArgumentValueError(
            "key_value_head_count",
            f"{where}: key_value_head_count = {kv_heads} must divide head_count = {query_heads}",
        )
    chosen = (0 if kv_heads == query_heads else 1) if version is None else _version(version, where, (0, 1))
    if chosen == 0 and kv_heads != query_heads:
        raise ArgumentValueError(
            "version", f"{where}: grouped heads ({query_heads} query, {kv_heads} key/value) need version 1"
        )
    named = {
        "query": query,
        "key": key,
        "value": value,
        "stacked_query_key": stacked_query_key,
        "stacked_key_value": stacked_key_value,
        "stacked_query_key_value": stacked_query_key_value,
        "bias": bias,
        "relative_position_bias": relative_position_bias,
        "past_key": past_key,
        "past_value": past_value,
    }
    first = next(((argument, array) for argument, array in named.items() if array is not None), None)
    if first is None:
        raise ArgumentValueError("query", f"{where}: give the query, key and value (or stacked arrays of them)")
    like = _float_operand(first[1], first[0], where, where)
    arrays: dict[str, np.ndarray | None] = {
        argument: None if array is None else _float_operand(array, argument, where, where, like)
        for argument, array in named.items()
    }
    shapes = {argument: array.shape for argument, array in arrays.items() if array is not None}
    stacks = ("stacked_query_key", "stacked_key_value", "stacked_query_key_value")
    if kv_heads != query_heads and any(arrays[s] is not None for s in ("stacked_query_key", "stacked_query_key_value")):
        raise ArgumentValueError(
            "key_value_head_count",
            f"{where}: a stacked array holding the query and the key needs one head count ({query_heads} and "
            f"{kv_heads} given)",
        )
    q = _source("query", {a: arrays[a] for a in ("query", stacks[0], stacks[2])}, query_heads, where, shapes)
    k = _source("key", {a: arrays[a] for a in ("key", *stacks)}, kv_heads, where, shapes)
    v = _source("value", {a: arrays[a] for a in ("value", stacks[1], stacks[2])}, kv_heads, where, shapes)
    quoted = f"{q.argument} {shapes[q.argument]}, {k.argument} {shapes[k.argument]}"
    if k.size != q.size or k.batch != q.batch or v.batch != q.batch or v.sequence != k.sequence:
        raise ArgumentValueError(
            k.argument,
            f"{where}: {quoted} and {v.argument} {shapes[v.argument]} do not fit: one batch size, one head size for "
            "query and key, one sequence length for key and value",
        )
    past = 0
    if (arrays["past_key"] is None) != (arrays["past_value"] is None):
        raise ArgumentValueError("past_key", f"{where}: past_key and past_value come together")
    if arrays["past_key"] is not None:
        past = shapes["past_key"][2] if len(shapes["past_key"]) == 4 else 0
        for argument, size in (("past_key", k.size), ("past_value", v.size)):
            if shapes[argument] != (q.batch, kv_heads, past, size) or not past:
                raise ArgumentValueError(
                    argument,
                    f"{where}: past_key {shapes['past_key']} and past_value {shapes['past_value']}: {argument} takes "
                    f"({q.batch}, {kv_heads}, past length, {size}), one past length for both",
                )
    total = past + k.sequence
    expected_shapes = {
        "bias": ((query_heads * q.size + kv_heads * (k.size + v.size)),),
        "relative_position_bias": (q.batch, query_heads, q.sequence, total),
    }
    for argument, expected in expected_shapes.items():
        shape = shapes.get(argument)
        if shape is not None and shape != expected and not (argument != "bias" and shape == (1, *expected[1:])):
            raise ArgumentValueError(argument, f"{where}: {argument} has shape {shape}; it takes {expected}")
    kind: int = operators_pb2.MULTIHEAD_ATTENTION_MASK_TYPE_NONE
    mask_array: np.ndarray | None = None
    if mask is None and mask_type is not None:
        raise ArgumentValueError("mask_type", f"{where}: mask_type {mask_type!r} without a mask")
    if mask is not None:
        mask_array, kind = _mask(mask, mask_type, where)
        mask_array = _mask_shape(mask_array, mask_type or "boolean", (q.batch, query_heads, q.sequence, total), where)
    size = q.size
    attributes: dict[str, Any] = {
        "scale": 1 / math.sqrt(size) if scale is None else _scalar(scale, "scale", where),
        "mask_filter_value": _scalar(mask_filter_value, "mask_filter_value", where),
        "mask_type": kind,
    }
    for argument in ("scale", "mask_filter_value"):
        if not math.isfinite(attributes[argument]):
            raise ArgumentValueError(argument, f"{where}: {argument} = {attributes[argument]} must be finite")
    outputs: dict[str, Any] = {"output_tensor": tensor_desc((like.dtype, (q.batch, q.sequence, query_heads * v.size)))}
    if _flag(present, "present", where):
        outputs["output_present_key_tensor"] = tensor_desc((like.dtype, (q.batch, kv_heads, total, k.size)))
        outputs["output_present_value_tensor"] = tensor_desc((like.dtype, (q.batch, kv_heads, total, v.size)))
    inputs = {f"{argument}_tensor": array for argument, array in arrays.items()} | {"mask_tensor": mask_array}
    order = (
        "query_tensor", "key_tensor", "value_tensor", "stacked_query_key_tensor", "stacked_key_value_tensor",
        "stacked_query_key_value_tensor", "bias_tensor", "mask_tensor", "relative_position_bias_tensor",
        "past_key_tensor", "past_value_tensor",
    )  # fmt: skip
    descs: dict[str, Any] = {field: tensor_desc(array) for field in order if (array := inputs[field]) is not None}
    bound = tuple(inputs[field] for field in order)
    if chosen == 0:
        message: Any = operators_pb2.MultiheadAttentionOperatorDesc(
            **descs, **outputs, **attributes, head_count=query_heads
        )
        return Call(_wrap("multihead_attention", message), bound)
    message = operators_pb2.MultiheadAttention1OperatorDesc(
        **descs, **outputs, **attributes, query_head_count=query_heads, key_value_head_count=kv_heads
    )
    return Call(_wrap("multihead_attention1", message), (*bound, None))


def _mask_shape(mask: np.ndarray, mask_type: str, scores: tuple[int, ...], where: str) -> np.ndarray:
    """The mask in the shape DirectML reads for its type (a 1-D length mask gains its leading 1)."""
    batch = scores[0]
    if mask_type == "key_sequence_length":
        if mask.shape not in ((batch,), (1, batch)):
            raise ArgumentValueError("mask", f"{where}: mask has shape {mask.shape}; it takes ({batch},) lengths")
        return mask.reshape(1, batch)
    if mask_type == "key_sequence_end_start":
        if mask.shape != (2, batch):
            raise ArgumentValueError("mask", f"{where}: mask has shape {mask.shape}; it takes (2, {batch})")
        return mask
    try:
        fits = 1 <= mask.ndim <= 4 and np.broadcast_shapes(mask.shape, scores) == scores
    except ValueError:
        fits = False
    if not fits:
        raise ArgumentValueError(
            "mask", f"{where}: mask of shape {mask.shape} does not broadcast to the scores' shape {scores}"
        )
    return mask
