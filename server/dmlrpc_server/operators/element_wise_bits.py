"""DML_ELEMENT_WISE_* logical, comparison and bit operators: booleans as 0/1 integers, bits of any type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dmlrpc_server.operators._elementwise import Context, ElementWise, define
from dmlrpc_server.operators._graph import BOOL, NUMERIC, U8, U32, U64, DType, Graph, Value

SHIFTS: frozenset[DType] = frozenset({U8, U32, U64})
_COMPARED = (("a_tensor", "b_tensor"),)


def _logical(op_type: str) -> Any:
    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        # Any nonzero value is true; the result is 1 or 0 of the output type.
        return g.op(op_type, *(g.cast(x, BOOL) for x in xs), dtype=BOOL)

    return function


def _compare(op_type: str) -> Any:
    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        return g.kernel(op_type, NUMERIC, xs[0], xs[1], dtype=BOOL)

    return function


def _bitwise(op_type: str) -> Any:
    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        return g.op(op_type, *xs, opset=18)

    return function


def _shift(direction: str) -> Any:
    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        a, b = xs
        shifted = g.kernel("BitShift", SHIFTS, a, b, direction=direction)
        # A shift by the bit width or more moves every bit out: 0 (C leaves it undefined; DirectML's pages are silent).
        width = g.const(8 * a.dtype.itemsize, b.dtype)
        too_far = g.kernel("GreaterOrEqual", NUMERIC, b, width, dtype=BOOL)
        return g.where(too_far, g.const(0, a.dtype), shifted)

    return function


def _bit_count(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    """Population count of the raw bits by the SWAR method (ONNX has no popcount), in 32 bits for types up to 32
    bits (no 64-bit integer shader operations needed) and in 64 bits for 64-bit types."""
    width = 64 if xs[0].dtype.itemsize == 8 else 32
    dtype = U64 if width == 64 else U32
    x = g.cast(xs[0], dtype)

    def mask(pattern: int) -> Value:
        return g.const(pattern & ((1 << width) - 1), dtype)

    def masked(value: Value, pattern: int) -> Value:
        return g.op("BitwiseAnd", value, mask(pattern), opset=18)

    def shifted(value: Value, bits: int) -> Value:
        return g.op("BitShift", value, g.const(bits, dtype), direction="RIGHT")

    x = g.op("Sub", x, masked(shifted(x, 1), 0x5555555555555555))
    x = g.op("Add", masked(x, 0x3333333333333333), masked(shifted(x, 2), 0x3333333333333333))
    x = masked(g.op("Add", x, shifted(x, 4)), 0x0F0F0F0F0F0F0F0F)
    return shifted(g.op("Mul", x, mask(0x0101010101010101)), width - 8)


def _bit_not(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    return g.op("BitwiseNot", xs[0], opset=18)


ELEMENT_WISE_BITS: tuple[ElementWise, ...] = (
    define("ELEMENT_WISE_LOGICAL_AND", _logical("And")),
    define("ELEMENT_WISE_LOGICAL_EQUALS", _compare("Equal"), same_type=_COMPARED),
    define("ELEMENT_WISE_LOGICAL_GREATER_THAN", _compare("Greater"), same_type=_COMPARED),
    define("ELEMENT_WISE_LOGICAL_LESS_THAN", _compare("Less"), same_type=_COMPARED),
    define("ELEMENT_WISE_LOGICAL_NOT", _logical("Not")),
    define("ELEMENT_WISE_LOGICAL_OR", _logical("Or")),
    define("ELEMENT_WISE_LOGICAL_XOR", _logical("Xor")),
    define("ELEMENT_WISE_BIT_SHIFT_LEFT", _shift("LEFT")),
    define("ELEMENT_WISE_BIT_SHIFT_RIGHT", _shift("RIGHT")),
    define("ELEMENT_WISE_BIT_AND", _bitwise("BitwiseAnd"), bitwise=True),
    define("ELEMENT_WISE_BIT_OR", _bitwise("BitwiseOr"), bitwise=True),
    define("ELEMENT_WISE_BIT_XOR", _bitwise("BitwiseXor"), bitwise=True),
    define("ELEMENT_WISE_BIT_NOT", _bit_not, bitwise=True),
    define("ELEMENT_WISE_BIT_COUNT", _bit_count, bitwise=True, same_type=(("input_tensor",),)),
    define("ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL", _compare("GreaterOrEqual"), same_type=_COMPARED),
    define("ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL", _compare("LessOrEqual"), same_type=_COMPARED),
)
