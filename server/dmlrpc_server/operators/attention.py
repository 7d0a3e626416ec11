"""DML_MULTIHEAD_ATTENTION_OPERATOR_DESC and DML_MULTIHEAD_ATTENTION1_OPERATOR_DESC: scaled dot-product attention."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import OperatorUnavailable
from dmlrpc_server.operators._graph import BOOL, F32, I32, I64, Graph, Value
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

AttentionDesc = TypeVar(
    "AttentionDesc", operators_pb2.MultiheadAttentionOperatorDesc, operators_pb2.MultiheadAttention1OperatorDesc
)

_MASK = operators_pb2.MultiheadAttentionMaskType
_NONE = _MASK.MULTIHEAD_ATTENTION_MASK_TYPE_NONE
_LENGTH = _MASK.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_LENGTH
_END_START = _MASK.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_END_START
_PACKED = _MASK.MULTIHEAD_ATTENTION_MASK_TYPE_KEY_QUERY_SEQUENCE_LENGTH_START_END
_BOOLEAN = _MASK.MULTIHEAD_ATTENTION_MASK_TYPE_BOOLEAN

#: Per part (query, key, value): the fields that can hold it and, for a stacked one, its index on the 4th dimension.
_SOURCES: dict[str, tuple[tuple[str, int | None], ...]] = {
    "query": (("query_tensor", None), ("stacked_query_key_tensor", 0), ("stacked_query_key_value_tensor", 0)),
    "key": (
        ("key_tensor", None),
        ("stacked_query_key_tensor", 1),
        ("stacked_key_value_tensor", 0),
        ("stacked_query_key_value_tensor", 1),
    ),
    "value": (("value_tensor", None), ("stacked_key_value_tensor", 1), ("stacked_query_key_value_tensor", 2)),
}


def _trailing(tensors: Tensors, name: str, count: int, what: str) -> tuple[int, ...]:
    """The last ``count`` sizes of tensor ``name``, whose leading sizes must be 1."""
    sizes = tensors[name].sizes
    require(
        len(sizes) >= count and all(size == 1 for size in sizes[:-count]),
        f"{tensors.field(name)}.buffer.sizes",
        f"sizes {list(sizes)} must be {what} with leading 1s",
    )
    return tuple(sizes[-count:])


@dataclass(frozen=True)
class _Part:
    """Where one of query, key and value comes from: its field, stacked index, and [batch, sequence, heads, size]."""

    field: str
    stacked: int | None
    batch: int
    sequence: int
    heads: int
    size: int


class _Attention(Operator[AttentionDesc]):
    """Multi-head attention as a composition of standard ONNX ops, exact on every provider:

    query, key and value are each brought to [batch, heads, sequence, size] (a stacked tensor [b, s, h, k, d] is
    read at index k of its 4th dimension, which holds head h's k-th part, so the heads interleave); the bias slices
    [0, Hq*D), [Hq*D, Hq*D + Hkv*D) and the rest are added to them first. PastKey/PastValue are concatenated before
    the new keys/values (and are what OutputPresentKey/Value return). Query head h reads key/value head
    h // (QueryHeadCount / KeyValueHeadCount) (MULTIHEAD_ATTENTION: one count for both). Then S = Q @ K^T * Scale
    + RelativePositionBias, MaskFilterValue is added to the masked scores, Softmax over the keys, and @ V, all in
    FLOAT32 (FLOAT16 tensors are widened and the results rounded once).

    Mask semantics (DirectML's, stated on the page; where it says 'set to' for the sequence masks and 'added' for
    MaskFilterValue, it is added, as ONNX Runtime's attention kernels that map onto this operator do): a masked
    score is score + MaskFilterValue, so with the usual -10000 it contributes ~0; a row whose keys are all masked
    is shifted as a whole and gives the softmax of its unmasked scores (e.g. uniform weights for equal scores),
    never zeros or NaN. BOOLEAN: 0 masks, any other value keeps; the mask's sizes (leading 1s dropped) broadcast
    against [batch, QueryHeadCount, sequence, totalSequence]. KEY_SEQUENCE_LENGTH ([1, batch]): key j of batch b is
    masked when j >= length[b]. KEY_SEQUENCE_END_START ([2, batch]: ends, then starts): masked outside
    [start[b], end[b]). Key positions count over the whole (past + new) sequence. The packed-batch type
    KEY_QUERY_SEQUENCE_LENGTH_START_END (query/key start offsets of sequences packed in one token buffer) has no
    defined meaning for the padded [batch, sequence] layouts of the desc and answers UNIMPLEMENTED, as does
    MULTIHEAD_ATTENTION1's PastSequenceLengthsTensor, which its page leaves 'TBD'.
    """

    def head_counts(self, desc: AttentionDesc, tensors: Tensors) -> tuple[int, int]:
        raise NotImplementedError  # pragma: no cover - each operator reads its own fields

    def part(self, tensors: Tensors, name: str, heads: int) -> _Part:
        """Resolve the one field that holds ``name`` (query, key or value) and its sizes."""
        present = [(field, index) for field, index in _SOURCES[name] if tensors.layouts[field] is not None]
        fields = [field for field, _ in _SOURCES[name]]
        require(
            len(present) == 1,
            tensors.field(fields[0]),
            f"exactly one of {', '.join(fields)} must hold the {name} ({len(present)} set)",
        )
        field, index = present[0]
        if index is None:
            batch, sequence, hidden = _trailing(tensors, field, 3, f"[batchSize, sequenceLength, {name}HiddenSize]")
            require(
                hidden % heads == 0,
                f"{tensors.field(field)}.buffer.sizes",
                f"the hidden size {hidden} must be a multiple of the head count {heads}",
            )
            return _Part(field, None, batch, sequence, heads, hidden // heads)
        stacked = 3 if field == "stacked_query_key_value_tensor" else 2
        batch, sequence, count, parts, size = tensors[field].sizes
        require(
            parts == stacked and count == heads,
            f"{tensors.field(field)}.buffer.sizes",
            f"sizes {list(tensors[field].sizes)} must be [batchSize, sequenceLength, {heads} (heads), {stacked}, "
            "headSize]",
        )
        return _Part(field, index, batch, sequence, heads, size)

    def lower(self, desc: AttentionDesc, tensors: Tensors) -> Plan:
        query_heads, kv_heads = self.head_counts(desc, tensors)
        output = tensors["output_tensor"]
        dtype_name = output.data_type
        for field in (*self.inputs, *self.outputs):
            layout = tensors.layouts[field.name]
            if field.name in ("mask_tensor", "past_sequence_lengths_tensor") or layout is None:
                continue
            require(
                layout.data_type == dtype_name,
                f"{tensors.field(field.name)}.buffer.data_type",
                "must equal output_tensor's data type",
            )
        require(math.isfinite(desc.scale), tensors.field("scale"), f"{desc.scale}; must be finite")
        require(
            math.isfinite(desc.mask_filter_value),
            tensors.field("mask_filter_value"),
            f"{desc.mask_filter_value}; must be finite (a masked score is score + mask_filter_value)",
        )
        q = self.part(tensors, "query", query_heads)
        k = self.part(tensors, "key", kv_heads)
        v = self.part(tensors, "value", kv_heads)
        batch, seq, kv_seq = q.batch, q.sequence, k.sequence
        for part in (k, v):
            require(
                part.batch == batch,
                f"{tensors.field(part.field)}.buffer.sizes",
                f"batchSize {part.batch} must equal the query's {batch}",
            )
        require(
            v.sequence == kv_seq,
            f"{tensors.field(v.field)}.buffer.sizes",
            f"the value's sequence length {v.sequence} must equal the key's {kv_seq}",
        )
        require(
            k.size == q.size,
            f"{tensors.field(k.field)}.buffer.sizes",
            f"the key's head size {k.size} must equal the query's {q.size}",
        )
        head, value_head = q.size, v.size
        bias_total = query_heads * head + kv_heads * head + kv_heads * value_head
        if tensors.layouts["bias_tensor"] is not None:
            _trailing(tensors, "bias_tensor", 1, f"[{bias_total}] (hiddenSize + hiddenSize + valueHiddenSize)")
            require(
                tensors["bias_tensor"].sizes[-1] == bias_total,
                f"{tensors.field('bias_tensor')}.buffer.sizes",
                f"sizes {list(tensors['bias_tensor'].sizes)} must be [{bias_total}] (hiddenSize + hiddenSize + "
                "valueHiddenSize) with leading 1s",
            )
        past_key, past_value = tensors.layouts["past_key_tensor"], tensors.layouts["past_value_tensor"]
        require(
            (past_key is None) == (past_value is None),
            tensors.field("past_value_tensor" if past_key is not None else "past_key_tensor"),
            "past_key_tensor and past_value_tensor must be set together (keys and values share one sequence)",
        )
        past = 0
        if past_key is not None:
            past = _trailing(tensors, "past_key_tensor", 4, "[batchSize, headCount, pastSequenceLength, headSize]")[2]
            expected = {
                "past_key_tensor": (batch, kv_heads, past, head),
                "past_value_tensor": (batch, kv_heads, past, value_head),
            }
            for name, want in expected.items():
                got = _trailing(tensors, name, 4, "[batchSize, headCount, pastSequenceLength, headSize]")
                require(
                    got == want,
                    f"{tensors.field(name)}.buffer.sizes",
                    f"sizes {list(tensors[name].sizes)} must be {list(want)} with leading 1s",
                )
        total = past + kv_seq
        presents: dict[str, tuple[int, ...]] = {
            "output_present_key_tensor": (batch, kv_heads, total, head),
            "output_present_value_tensor": (batch, kv_heads, total, value_head),
            "output_tensor": (batch, seq, query_heads * value_head),
        }
        for name, sizes in presents.items():
            if tensors.layouts[name] is None:
                continue
            got = _trailing(tensors, name, len(sizes), f"{list(sizes)}")
            require(
                got == sizes,
                f"{tensors.field(name)}.buffer.sizes",
                f"sizes {list(tensors[name].sizes)} must be {list(sizes)} with leading 1s",
            )
        scores_shape = (batch, query_heads, seq, total)
        if tensors.layouts["relative_position_bias_tensor"] is not None:
            got = _trailing(tensors, "relative_position_bias_tensor", 4, "[batchSize, headCount, sequence, total]")
            require(
                got[0] in (1, batch) and got[1:] == scores_shape[1:],
                f"{tensors.field('relative_position_bias_tensor')}.buffer.sizes",
                f"sizes {list(tensors['relative_position_bias_tensor'].sizes)} must be {list(scores_shape)} (or "
                "batchSize 1) with leading 1s",
            )
        mask = tensors.layouts["mask_tensor"]
        mask_path = tensors.field("mask_tensor")
        require(
            desc.mask_type in (_NONE, _LENGTH, _END_START, _PACKED, _BOOLEAN),
            tensors.field("mask_type"),
            f"{desc.mask_type} is not a DML_MULTIHEAD_ATTENTION_MASK_TYPE",
        )
        require(
            (mask is None) == (desc.mask_type == _NONE),
            mask_path if mask is None else tensors.field("mask_type"),
            "mask_tensor must be set exactly when mask_type is not MULTIHEAD_ATTENTION_MASK_TYPE_NONE",
        )
        mask_shape: tuple[int, ...] = ()
        if desc.mask_type == _PACKED:
            raise OperatorUnavailable(
                f"{tensors.field('mask_type')}: MULTIHEAD_ATTENTION_MASK_TYPE_KEY_QUERY_SEQUENCE_LENGTH_START_END "
                "(packed sequences) is not executable by this server"
            )
        if desc.mask_type in (_LENGTH, _END_START):
            rows = 1 if desc.mask_type == _LENGTH else 2
            got = _trailing(tensors, "mask_tensor", 2, f"[{rows}, batchSize]")
            require(
                got == (rows, batch),
                f"{mask_path}.buffer.sizes",
                f"sizes {list(tensors['mask_tensor'].sizes)} must be [{rows}, {batch}] with leading 1s",
            )
        elif desc.mask_type == _BOOLEAN:
            kept = list(tensors["mask_tensor"].sizes)
            while len(kept) > 4 and kept[0] == 1:
                kept.pop(0)
            padded = [1] * (4 - len(kept)) + kept
            require(
                len(kept) <= 4 and all(m in (1, s) for m, s in zip(padded, scores_shape, strict=True)),
                f"{mask_path}.buffer.sizes",
                f"sizes {list(tensors['mask_tensor'].sizes)} must broadcast against {list(scores_shape)} "
                "([batchSize, headCount, sequenceLength, totalSequenceLength])",
            )
            mask_shape = tuple(padded)
        self.check_extra(desc, tensors)

        graph = Graph()
        feeds: dict[str, int] = {}

        def read(name: str, position: int) -> Value:
            layout = tensors[name]
            feeds[name] = position
            value = graph.input(name, layout.dtype, layout.sizes)
            return graph.cast(value, F32) if layout.dtype != np.dtype(np.int32) else value

        positions = {field.name: i for i, field in enumerate(self.inputs)}
        loaded: dict[str, Value] = {}
        bias = None
        if tensors.layouts["bias_tensor"] is not None:
            bias = graph.op("Reshape", read("bias_tensor", positions["bias_tensor"]), graph.const([bias_total], I64))
        offsets = {"query": 0, "key": query_heads * head, "value": query_heads * head + kv_heads * head}

        def heads_first(part: _Part, name: str) -> Value:
            """The part as [batch, heads, sequence, size], bias added."""
            if part.field not in loaded:
                loaded[part.field] = read(part.field, positions[part.field])
            value = loaded[part.field]
            shape = [part.batch, part.sequence, part.heads, part.size]
            if part.stacked is not None:
                value = graph.op("Gather", value, graph.const(part.stacked, I64), axis=3)
            value = graph.op("Reshape", value, graph.const(shape, I64))
            if bias is not None:
                start = offsets[name]
                piece = graph.op(
                    "Slice",
                    bias,
                    graph.const([start], I64),
                    graph.const([start + part.heads * part.size], I64),
                )
                value = graph.op("Add", value, graph.op("Reshape", piece, graph.const(shape[2:], I64)))
            return graph.op("Transpose", value, perm=[0, 2, 1, 3])

        query = heads_first(q, "query")
        key = heads_first(k, "key")
        value = heads_first(v, "value")
        if past_key is not None:
            for name, size in (("past_key_tensor", head), ("past_value_tensor", value_head)):
                # Drop the leading 1s: [batch, heads, past, size], concatenated before the new sequence.
                earlier = graph.op(
                    "Reshape", read(name, positions[name]), graph.const([batch, kv_heads, past, size], I64)
                )
                if name == "past_key_tensor":
                    key = graph.op("Concat", earlier, key, axis=2)
                else:
                    value = graph.op("Concat", earlier, value, axis=2)
        present_key, present_value = key, value
        if query_heads != kv_heads:
            group = query_heads // kv_heads

            def repeat(x: Value, size: int) -> Value:
                wide = graph.op("Unsqueeze", x, graph.const([2], I64))
                wide = graph.op("Expand", wide, graph.const([batch, kv_heads, group, total, size], I64))
                return graph.op("Reshape", wide, graph.const([batch, query_heads, total, size], I64))

            key, value = repeat(key, head), repeat(value, value_head)
        scores = graph.op("MatMul", query, graph.op("Transpose", key, perm=[0, 1, 3, 2]))
        scores = graph.op("Mul", scores, graph.const(np.float32(desc.scale), F32))
        if tensors.layouts["relative_position_bias_tensor"] is not None:
            rpb = read("relative_position_bias_tensor", positions["relative_position_bias_tensor"])
            rpb_shape = tensors["relative_position_bias_tensor"].sizes[-4:]
            scores = graph.op("Add", scores, graph.op("Reshape", rpb, graph.const(list(rpb_shape), I64)))
        if mask is not None:
            raw = read("mask_tensor", positions["mask_tensor"])
            if desc.mask_type == _BOOLEAN:
                shaped = graph.op("Reshape", raw, graph.const(list(mask_shape), I64))
                masked = graph.op("Equal", shaped, graph.const(np.int32(0), I32), dtype=BOOL)
            else:
                bounds = graph.op("Reshape", raw, graph.const([-1, batch, 1, 1, 1], I64))
                positions_t = graph.const(np.arange(total, dtype=np.int32).reshape(1, 1, 1, total), I32)

                def row(i: int) -> Value:
                    return graph.op("Gather", bounds, graph.const(i, I64), axis=0)  # (batch, 1, 1, 1)

                masked = graph.op("Not", graph.op("Less", positions_t, row(0), dtype=BOOL))
                if desc.mask_type == _END_START:
                    masked = graph.op("Or", masked, graph.op("Less", positions_t, row(1), dtype=BOOL))
            filters = graph.op(
                "Where", masked, graph.const(np.float32(desc.mask_filter_value), F32), graph.const(np.float32(0), F32)
            )
            scores = graph.op("Add", scores, filters)
        weights = graph.op("Softmax", scores, axis=-1)
        attended = graph.op("MatMul", weights, value)  # (batch, query heads, sequence, value head size)
        merged = graph.op(
            "Reshape",
            graph.op("Transpose", attended, perm=[0, 2, 1, 3]),
            graph.const(list(output.sizes), I64),
        )
        graph.output(graph.cast(merged, output.dtype), "output", output.sizes)
        outputs: list[TensorLayout | None] = [output, None, None]
        for i, (name, present) in enumerate(
            (("output_present_key_tensor", present_key), ("output_present_value_tensor", present_value)), start=1
        ):
            layout = tensors.layouts[name]
            if layout is None:
                continue
            shaped = graph.op("Reshape", present, graph.const(list(layout.sizes), I64))
            graph.output(graph.cast(shaped, layout.dtype), name, layout.sizes)
            outputs[i] = layout
        order = dict(feeds)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            result: dict[str, np.ndarray] = {}
            for name, position in order.items():
                array = arrays[position]
                assert array is not None
                result[name] = np.ascontiguousarray(array)
            return result

        def finish(results: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            produced = iter(results)
            return [next(produced) if layout is not None else None for layout in outputs]

        inputs = tuple(tensors.layouts[field.name] for field in self.inputs)
        return Plan(inputs, tuple(outputs), graph.model(), prepare, finish)

    def check_extra(self, desc: AttentionDesc, tensors: Tensors) -> None:
        """Rules of one operator's own fields."""


class MultiheadAttention(_Attention[operators_pb2.MultiheadAttentionOperatorDesc]):
    case: ClassVar[str] = "multihead_attention"

    def head_counts(self, desc: operators_pb2.MultiheadAttentionOperatorDesc, tensors: Tensors) -> tuple[int, int]:
        require(desc.head_count >= 1, tensors.field("head_count"), f"{desc.head_count}; must be at least 1")
        return desc.head_count, desc.head_count


class MultiheadAttention1(_Attention[operators_pb2.MultiheadAttention1OperatorDesc]):
    case: ClassVar[str] = "multihead_attention1"

    def head_counts(self, desc: operators_pb2.MultiheadAttention1OperatorDesc, tensors: Tensors) -> tuple[int, int]:
        require(
            desc.query_head_count >= 1,
            tensors.field("query_head_count"),
            f"{desc.query_head_count}; must be at least 1",
        )
        require(
            desc.key_value_head_count >= 1 and desc.query_head_count % desc.key_value_head_count == 0,
            tensors.field("key_value_head_count"),
            f"{desc.key_value_head_count}; must be at least 1 and divide query_head_count ({desc.query_head_count})",
        )
        return desc.query_head_count, desc.key_value_head_count

    def check_extra(self, desc: operators_pb2.MultiheadAttention1OperatorDesc, tensors: Tensors) -> None:
        if tensors.layouts["past_sequence_lengths_tensor"] is not None:
            raise OperatorUnavailable(
                f"{tensors.field('past_sequence_lengths_tensor')}: its meaning is undocumented ('TBD' on the page), "
                "so this server does not execute it; leave it unset"
            )


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (MultiheadAttention(), MultiheadAttention1())
