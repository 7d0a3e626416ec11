"""A small ONNX graph builder for multi-node lowerings: typed values, constants, casts and kernel-type bridging."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from dmlrpc.schema import TensorField
from dmlrpc_server.operators.base import Tensors, make_model, value_info

DType = np.dtype[Any]
BOOL: DType = np.dtype(np.bool_)
F16: DType = np.dtype("<f2")
F32: DType = np.dtype("<f4")
F64: DType = np.dtype("<f8")
I8: DType = np.dtype("i1")
I16: DType = np.dtype("<i2")
I32: DType = np.dtype("<i4")
I64: DType = np.dtype("<i8")
U8: DType = np.dtype("u1")
U16: DType = np.dtype("<u2")
U32: DType = np.dtype("<u4")
U64: DType = np.dtype("<u8")
FLOATS: frozenset[DType] = frozenset({F32, F64})
INTEGERS: frozenset[DType] = frozenset({I8, I16, I32, I64, U8, U16, U32, U64})
NUMERIC: frozenset[DType] = FLOATS | INTEGERS | {F16}
#: Kernel type sets the families share (ONNX Runtime's CPU kernels; other types widen exactly).
F32_ONLY: frozenset[DType] = frozenset({F32})
SIGNED: frozenset[DType] = frozenset({F32, F64, I8, I16, I32, I64})

# The exact widenings tried, in order, when an ONNX Runtime kernel lacks a type. FLOAT16 always computes in FLOAT32
# (ONNX Runtime's CPU kernels for it upcast anyway, and DirectML's shaders compute half in float).
_WIDER: dict[np.dtype[Any], tuple[np.dtype[Any], ...]] = {
    F16: (F32, F64),
    F32: (F32, F64),
    F64: (F64,),
    I8: (I8, I16, I32, I64),
    I16: (I16, I32, I64),
    I32: (I32, I64),
    I64: (I64,),
    U8: (U8, U16, U32, I16, I32, U64, I64),
    U16: (U16, U32, I32, U64, I64),
    U32: (U32, I64, U64),
    U64: (U64,),
}


def widened(dtype: np.dtype[Any], supported: Collection[np.dtype[Any]]) -> np.dtype[Any]:
    """The narrowest type in ``supported`` that holds every value of ``dtype`` exactly."""
    for candidate in _WIDER[np.dtype(dtype)]:
        if candidate in supported:
            return candidate
    raise TypeError(f"no kernel type among {sorted(map(str, supported))} holds {dtype}")


def _narrows(source: DType, target: DType) -> bool:
    """Whether an integer cast from ``source`` to ``target`` can meet a value out of the target's range that
    DirectML's Cast would saturate: any cast into fewer bits, or into an 8- or 16-bit type that does not hold every
    source value (same-width 32-bit casts and widenings keep the bits there)."""
    if source.kind not in "iu" or target.kind not in "iu" or np.can_cast(source, target, "safe"):
        return False
    return target.itemsize < 4 or target.itemsize < source.itemsize


@dataclass(frozen=True)
class Value:
    """A value of the graph: its name and element type."""

    name: str
    dtype: np.dtype[Any]


class Graph:
    """Nodes, inputs, outputs and initializers of one lowered model, built in order."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.opset = 0
        self._count = 0

    def _fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def input(self, name: str, dtype: np.dtype[Any], shape: Sequence[int]) -> Value:
        self.inputs.append(value_info(name, np.dtype(dtype), shape))
        return Value(name, np.dtype(dtype))

    def field_inputs(
        self, fields: Sequence[TensorField], tensors: Tensors
    ) -> tuple[dict[str, Value], tuple[str | None, ...]]:
        """A graph input ``input<i>`` per set tensor of ``fields`` (binding order), keyed by field name, and the
        plan's ``direct_inputs`` (each field's graph input, ``None`` for an unset optional tensor)."""
        values: dict[str, Value] = {}
        feeds: list[str | None] = []
        for index, field in enumerate(fields):
            layout = tensors.layouts[field.name]
            if layout is None:
                feeds.append(None)
            else:
                feeds.append(f"input{index}")
                values[field.name] = self.input(f"input{index}", layout.dtype, layout.sizes)
        return values, tuple(feeds)

    def output(self, value: Value, name: str, shape: Sequence[int]) -> None:
        """Expose ``value`` as graph output ``name``: the node computing it is renamed (an Identity only for a graph
        input), since every extra node is one more for a device to fuse and compile."""
        producer = next((node for node in reversed(self.nodes) if value.name in node.output), None)
        used_later = any(value.name in node.input for node in self.nodes)
        if producer is None or used_later:
            self.nodes.append(onnx.helper.make_node("Identity", [value.name], [name]))
        else:
            producer.output[list(producer.output).index(value.name)] = name
        self.outputs.append(value_info(name, value.dtype, shape))

    def const(self, value: Any, dtype: np.dtype[Any] | type) -> Value:
        """A constant (a scalar broadcasts against any tensor)."""
        name = self._fresh("c")
        array = np.asarray(value, dtype=dtype)
        self.initializers.append(onnx.numpy_helper.from_array(array, name))
        return Value(name, array.dtype)

    def op(
        self, op_type: str, *inputs: Value, dtype: np.dtype[Any] | None = None, opset: int = 0, **attrs: Any
    ) -> Value:
        """A one-output node; its type is ``dtype`` or the first input's. ``opset``: the newest opset it needs."""
        out = self._fresh(op_type.lower())
        self.nodes.append(onnx.helper.make_node(op_type, [v.name for v in inputs], [out], **attrs))
        self.opset = max(self.opset, opset)
        return Value(out, np.dtype(dtype) if dtype is not None else inputs[0].dtype)

    def cast(self, value: Value, dtype: np.dtype[Any]) -> Value:
        """``value`` converted to ``dtype`` (integers wrap, floats to integers truncate toward zero)."""
        dtype = np.dtype(dtype)
        if value.dtype == dtype:
            return value
        if _narrows(value.dtype, dtype):
            return self._plain_cast(self._low_bits(value, dtype), dtype)
        return self._plain_cast(value, dtype)

    def _plain_cast(self, value: Value, dtype: DType) -> Value:
        return self.op("Cast", value, dtype=dtype, to=onnx.helper.np_dtype_to_tensor_dtype(dtype))

    def _low_bits(self, value: Value, dtype: DType) -> Value:
        """``value``'s low ``dtype``-sized bits as a value of ``dtype``'s range, in a 32- or 64-bit integer type.

        DirectML's Cast saturates where ONNX's wraps: to an 8- or 16-bit type it clamps the 32-bit value, read with
        the target's signedness, to the target's range (``uint16 35950 << 1`` cast back gave 65535, ``int8 -1`` to
        ``uint8`` gave 255 and ``-128`` gave 255: docs/directml-notes.md). Shifts and a subtraction keep the bits on
        every provider, so the final Cast never meets a value out of range.
        """
        width = 64 if value.dtype.itemsize == 8 else 32
        unsigned, signed = (U64, I64) if width == 64 else (U32, I32)
        bits = 8 * dtype.itemsize
        # Through the unsigned type of the source's width: a widening or same-width cast, which keeps the bits.
        high = self.op(
            "BitShift", self._plain_cast(value, unsigned), self.const(width - bits, unsigned), direction="LEFT"
        )
        low = self.op("BitShift", high, self.const(width - bits, unsigned), direction="RIGHT")
        if dtype.kind == "u":
            return low
        # Two's complement: subtract 2**bits where the sign bit of the low bits is set.
        sign = self.op("BitShift", low, self.const(bits - 1, unsigned), direction="RIGHT")
        offset = self.op("BitShift", sign, self.const(bits, unsigned), direction="LEFT")
        return self.op("Sub", self._plain_cast(low, signed), self._plain_cast(offset, signed))

    def kernel(
        self,
        op_type: str,
        supported: Collection[np.dtype[Any]],
        *inputs: Value,
        dtype: np.dtype[Any] | None = None,
        opset: int = 0,
        **attrs: Any,
    ) -> Value:
        """``op_type`` on inputs of one type, widened exactly to a type its kernel has, and its result cast back
        to that type (or typed ``dtype``, e.g. BOOL for comparisons, and left so)."""
        original = inputs[0].dtype
        compute = widened(original, supported)
        result = self.op(op_type, *(self.cast(v, compute) for v in inputs), dtype=dtype, opset=opset, **attrs)
        return result if dtype is not None else self.cast(result, original)

    def where(self, condition: Value, a: Value, b: Value) -> Value:
        """Where, for every type: ONNX Runtime's CPU kernel lacks 16-bit integers and UINT64, and before 1.25 (the
        Windows DirectML wheel's CPU provider, where a desc falls back) INT8 and UINT32 too."""
        dtype = a.dtype
        # INT8 widens exactly; UINT32 <-> INT32 and UINT64 <-> INT64 casts keep the bits (DirectML's integer casts
        # wrap, as ONNX Runtime's do), and stay at 32 bits, which every DirectML device compiles.
        compute = {I8: I32, I16: I32, U16: I32, U32: I32, U64: I64}.get(dtype, dtype)
        result = self.op("Where", condition, self.cast(a, compute), self.cast(b, compute))
        return self.cast(result, dtype)

    def model(self) -> onnx.ModelProto:
        return make_model(self.nodes, self.inputs, self.outputs, self.initializers, opset=self.opset or None)
