"""DML_CAST_OPERATOR_DESC: data type conversion."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._graph import BOOL, F16, F32, F64, I64, DType, Graph, Value
from dmlrpc_server.operators._support import same_sizes
from dmlrpc_server.operators.base import Operator, Plan, Tensors

# Conversion rules (the page defines none; these are what a demanding user expects, and what Direct3D's ftoi/ftou
# and IEEE 754 give):
# - float -> integer: truncation toward zero; out-of-range values (infinities included) saturate to the target's
#   minimum/maximum; NaN gives 0. (ONNX Cast leaves these undefined: the lowering clamps first.)
# - integer -> integer: two's complement wrap-around (the low bits are kept), as C and ONNX Cast.
# - to a float type: round to nearest, ties to even; overflow gives an infinity. FLOAT64 -> FLOAT16 is rounded once
#   (ONNX Runtime goes through FLOAT32, which double-rounds; the lowering corrects it).
_F16_MAX = 65504.0
#: The smallest magnitude that rounds to infinity in FLOAT16 (the midpoint above its largest finite value).
_F16_OVERFLOW = 65520.0


def _float_to_integer(g: Graph, x: Value, dtype: DType) -> Value:
    """Saturating truncation of a float to an integer type, NaN -> 0, computed in FLOAT64 (exact for every input)."""
    wide = g.cast(x, F64)
    wide = g.op("Where", g.op("IsNaN", wide, dtype=BOOL), g.const(0.0, F64), wide, dtype=F64)
    info = np.iinfo(dtype.str)
    if dtype.itemsize < 8:
        clipped = g.op("Clip", wide, g.const(float(info.min), F64), g.const(float(info.max), F64))
        return g.cast(clipped, dtype)
    # The 64-bit maxima are not FLOAT64 values: clip to the largest FLOAT64 below 2**63 (2**64) and saturate the
    # values at or above it separately.
    limit = 2.0**63 if dtype == I64 else 2.0**64
    below = float(np.nextafter(limit, 0.0))
    clipped = g.cast(g.op("Clip", wide, g.const(float(info.min), F64), g.const(below, F64)), dtype)
    over = g.op("GreaterOrEqual", wide, g.const(limit, F64), dtype=BOOL)
    return g.where(over, g.const(int(info.max), dtype), clipped)


def _float64_to_float16(g: Graph, x: Value) -> Value:
    """FLOAT64 -> FLOAT16 rounded once, to nearest even.

    Through FLOAT32, ``m = f32(x)`` may land exactly on a midpoint of two FLOAT16 values although ``x`` does not;
    ties-to-even then may pick the wrong one. That happens only where ``m`` is a midpoint and ``x != m``: then the
    right value is the neighbour on ``x``'s side.
    """
    m = g.cast(x, F32)
    t = g.cast(m, F16)
    wide_t = g.cast(t, F64)
    wide_m = g.cast(m, F64)
    rest = g.op("Sub", x, wide_m)  # exact: what f32 rounding dropped
    offset = g.op("Sub", wide_m, wide_t)  # from t toward the other neighbour when m is a midpoint
    other = g.op("Add", wide_t, g.op("Add", offset, offset))
    other_half = g.cast(g.cast(other, F32), F16)
    zero = g.const(0.0, F64)
    midpoint = g.op(
        "And",
        g.op("Not", g.op("Equal", offset, zero, dtype=BOOL)),
        g.op("Equal", g.cast(other_half, F64), other, dtype=BOOL),
        dtype=BOOL,
    )
    beyond = g.op("Greater", g.op("Mul", rest, offset), zero, dtype=BOOL)  # x lies past m, toward the other
    result = g.op("Where", g.op("And", midpoint, beyond, dtype=BOOL), other_half, t, dtype=F16)
    # m may round up to the overflow midpoint (then t = inf) while |x| is below it: x rounds to the largest finite.
    finite = g.op("Less", g.op("Abs", x), g.const(_F16_OVERFLOW, F64), dtype=BOOL)
    overflowed = g.op("And", finite, g.op("IsInf", wide_t, dtype=BOOL), dtype=BOOL)
    largest = g.cast(g.op("Mul", g.op("Sign", x), g.const(_F16_MAX, F64)), F16)
    return g.op("Where", overflowed, largest, result, dtype=F16)


def convert(g: Graph, x: Value, dtype: DType) -> Value:
    """``x`` converted to ``dtype`` by DirectML's CAST rules as chosen above."""
    if x.dtype == dtype:
        return g.op("Identity", x)
    if x.dtype.kind == "f" and dtype.kind in "iu":
        return _float_to_integer(g, x, dtype)
    if x.dtype == F64 and dtype == F16:
        return _float64_to_float16(g, x)
    return g.cast(x, dtype)


class Cast(Operator[operators_pb2.CastOperatorDesc]):
    case: ClassVar[str] = "cast"

    def lower(self, desc: operators_pb2.CastOperatorDesc, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        target = tensors["output_tensor"]
        same_sizes(tensors)
        g = Graph()
        x = g.input("input", source.dtype, source.sizes)
        g.output(convert(g, x, target.dtype), "output", target.sizes)

        return Plan.direct((source,), (target,), g.model())


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Cast(),)
