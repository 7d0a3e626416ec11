"""DML_ELEMENT_WISE_* arithmetic operators: one table entry each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators._elementwise import (
    Context,
    DataCheck,
    ElementWise,
    binary,
    define,
    saturate,
    unary,
)
from dmlrpc_server.operators._graph import (
    BOOL,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    NUMERIC,
    SIGNED,
    U32,
    U64,
    DType,
    Graph,
    Value,
)
from dmlrpc_server.operators.base import Tensors, require

#: The CPU kernels' types (ONNX Runtime 1.2x) of the ONNX operators used below; other types widen exactly.
FL = operators_pb2.FeatureLevel


def _integer_division(g: Graph, a: Value, b: Value, op_type: str, **attrs: Any) -> Value:
    """Integer ``op_type`` (Div or Mod) whose divisor -1 cannot trap: x / -1 = -x and x % -1 = 0, both wrapping."""
    a, b = g.cast(a, _wide(a.dtype)), g.cast(b, _wide(b.dtype))
    if a.dtype.kind == "u":
        return g.op(op_type, a, b, **attrs)
    minus_one = g.op("Equal", b, g.const(-1, b.dtype), dtype=BOOL)
    safe = g.where(minus_one, g.const(1, b.dtype), b)
    result = g.op(op_type, a, safe, **attrs)
    if op_type == "Div":
        return g.where(minus_one, g.op("Neg", a), result)
    return g.where(minus_one, g.const(0, a.dtype), result)


def _wide(dtype: DType) -> DType:
    # Div and Mod kernels take every integer type; 8- and 16-bit ones compute in 32 bits (no trap, same result).
    if dtype.itemsize >= 4:
        return dtype
    return I32 if dtype.kind == "i" else U32


def _divide(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    a, b = xs
    if a.dtype.kind == "f":
        return g.op("Div", a, b)
    return g.cast(_integer_division(g, a, b, "Div"), a.dtype)


def _float_fmod(g: Graph, a: Value, b: Value) -> Value:
    """C's fmod: a finite ``a`` over an infinite ``b`` is ``a`` itself. DirectML's own float Mod gave NaN there on
    the lane's device (computed as a - b * trunc(a / b), where inf * 0 is NaN: ONNX's mod edge cases)."""
    finite_over_infinite = g.op(
        "And", g.op("IsInf", b, dtype=BOOL), g.op("Not", g.op("IsInf", a, dtype=BOOL), dtype=BOOL), dtype=BOOL
    )
    return g.where(finite_over_infinite, a, g.op("Mod", a, b, fmod=1))


def _modulus_truncate(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    a, b = xs
    if a.dtype.kind == "f":
        return _float_fmod(g, a, b)
    # Integers take the exact floor modulus (ONNX Runtime's integer fmod=1 goes through FLOAT64 and loses 64-bit
    # values) and move it to the dividend's sign.
    remainder = _integer_division(g, a, b, "Mod", fmod=0)
    if a.dtype.kind == "u":
        return g.cast(remainder, a.dtype)
    wide_b = g.cast(b, remainder.dtype)
    zero = g.const(0, remainder.dtype)
    nonzero = g.op("Not", g.op("Equal", remainder, zero, dtype=BOOL), dtype=BOOL)
    signs_differ = g.op(
        "Xor",
        g.op("Less", g.cast(a, remainder.dtype), zero, dtype=BOOL),
        g.op("Less", wide_b, zero, dtype=BOOL),
        dtype=BOOL,
    )
    moved = g.where(g.op("And", nonzero, signs_differ, dtype=BOOL), g.op("Sub", remainder, wide_b), remainder)
    return g.cast(moved, a.dtype)


def _modulus_floor(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    a, b = xs
    if a.dtype.kind != "f":
        return g.cast(_integer_division(g, a, b, "Mod", fmod=0), a.dtype)
    # fmod, then moved into the divisor's sign (exact, unlike a - b * floor(a / b)).
    remainder = _float_fmod(g, a, b)
    zero = g.const(0, a.dtype)
    nonzero = g.op("Not", g.op("Equal", remainder, zero, dtype=BOOL), dtype=BOOL)
    signs_differ = g.op("Xor", g.op("Less", remainder, zero, dtype=BOOL), g.op("Less", b, zero, dtype=BOOL), dtype=BOOL)
    return g.where(g.op("And", nonzero, signs_differ, dtype=BOOL), g.op("Add", remainder, b), remainder)


def _nonzero_divisor(tensors: Tensors) -> DataCheck | None:
    """Integer division by zero has no defined result (and traps on the CPU): refused naming the element."""
    if tensors["b_tensor"].dtype.kind == "f":
        return None

    def check(arrays: Sequence[np.ndarray | None]) -> None:
        divisor = arrays[1]
        assert divisor is not None
        zeros = divisor == 0
        if zeros.any():
            position = [int(p) for p in np.argwhere(zeros)[0]]
            raise InvalidArgument(
                "inputs[1].buffer.data", f"integer division by zero: b_tensor element {position} is 0"
            )

    return check


def _mean(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    a, b = xs
    if a.dtype.kind == "f":
        return g.op("Div", g.op("Add", a, b), g.const(2, a.dtype))
    # Exact (a + b) / 2 in 64 bits, truncated toward zero: no overflow for the 32-bit types DirectML takes.
    total = g.op("Add", g.cast(a, I64), g.cast(b, I64))
    return g.cast(g.op("Div", total, g.const(2, I64)), a.dtype)


def _integer_power(g: Graph, base: Value, exponent: Value, bits: int) -> Value:
    """base ** exponent, exactly modulo 2**64, by square-and-multiply over the exponent's bits; a negative exponent
    gives 1 / base**|e| truncated (1 for base 1, +-1 for base -1, else 0)."""
    b = g.cast(g.cast(base, I64), U64)  # two's complement bits, so products wrap as the narrow type would
    e = g.cast(exponent, I64)
    negative = g.op("Less", e, g.const(0, I64), dtype=BOOL)
    remaining = g.op("Abs", e)
    result = g.const(1, U64)
    one, two = g.const(1, I64), g.const(2, I64)
    for _ in range(bits):
        odd = g.op("Equal", g.op("Mod", remaining, two, fmod=0), one, dtype=BOOL)
        result = g.where(odd, g.op("Mul", result, b), result)
        b = g.op("Mul", b, b)
        remaining = g.op("Div", remaining, two)
    base64 = g.cast(base, I64)
    odd_exponent = g.op("Equal", g.op("Mod", g.op("Abs", e), two, fmod=0), one, dtype=BOOL)
    minus_one_result = g.where(odd_exponent, g.const(-1, I64), g.const(1, I64))
    reciprocal = g.where(
        g.op("Equal", base64, one, dtype=BOOL),
        one,
        g.where(g.op("Equal", base64, g.const(-1, I64), dtype=BOOL), minus_one_result, g.const(0, I64)),
    )
    return g.where(negative, g.cast(reciprocal, U64), result)


def _pow(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    base, exponent = xs
    if base.dtype.kind != "f" and exponent.dtype.kind != "f":
        return g.cast(_integer_power(g, base, exponent, 8 * exponent.dtype.itemsize), c.output)
    # FLOAT32 only when both are floats: an integer exponent (or base) converts exactly only to FLOAT64, and its
    # parity decides the sign of a negative base's power.
    both_float = base.dtype.kind == "f" and exponent.dtype.kind == "f"
    compute = F32 if both_float and F64 not in (base.dtype, exponent.dtype) else F64
    power = g.op("Pow", g.cast(base, compute), g.cast(exponent, compute))
    if c.output.kind == "f":
        return power
    # An integer base to an integral power is an integer: round it, since a device's pow may land a hair below
    # (CUDA's gives 3 ** 1.0 as 2.9999999999999996, which truncation would turn into 2).
    wide_exponent = g.cast(exponent, F64)
    integral = g.op("Equal", g.op("Floor", wide_exponent), wide_exponent, dtype=BOOL)
    wide = g.cast(power, F64)
    return saturate(g, g.where(integral, g.op("Round", wide), wide), c.output)


def _zero_to_negative_power(tensors: Tensors) -> DataCheck | None:
    if tensors["input_tensor"].dtype.kind == "f" or tensors["exponent_tensor"].dtype.kind == "f":
        return None

    def check(arrays: Sequence[np.ndarray | None]) -> None:
        base, exponent = arrays
        assert base is not None and exponent is not None
        bad = (base == 0) & (exponent < 0)
        if bad.any():
            position = [int(p) for p in np.argwhere(bad)[0]]
            raise InvalidArgument(
                "inputs[1].buffer.data", f"integer 0 to a negative power at element {position} (division by zero)"
            )

    return check


def _constant_pow(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    return g.op("Pow", xs[0], g.const(c.desc.exponent, xs[0].dtype))


def _difference_square(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    difference = g.kernel("Sub", NUMERIC, xs[0], xs[1])
    return g.kernel("Mul", NUMERIC, difference, difference)


def _add1(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    from dmlrpc_server.operators.activation import apply_fused

    total = g.op("Add", xs[0], xs[1])
    return apply_fused(g, total, c)


def _check_add1(desc: Any, c: Context) -> None:
    from dmlrpc_server.operators.activation import check_fused

    check_fused(desc, c)


def _check_pow(desc: Any, c: Context) -> None:
    assert c.tensors is not None
    if c.feature_level < FL.FEATURE_LEVEL_3_0:
        require(
            c.tensors["exponent_tensor"].data_type == c.tensors["input_tensor"].data_type,
            f"{c.field('exponent_tensor')}.buffer.data_type",
            "must equal input_tensor's data type before feature level 3.0",
        )


#: ABS and NEGATE compute 8- and 16-bit integers in INT32 and wrap back: DirectML's own Abs and Neg of those types
#: saturate the type's minimum (int8 -128 gave 127 on the lane's device) where ONNX and C wrap it to itself.
_WRAPPED_SIGN = frozenset({I8, I16})

ELEMENT_WISE: tuple[ElementWise, ...] = (
    define("ELEMENT_WISE_IDENTITY", lambda g, xs, c: xs[0]),
    define("ELEMENT_WISE_ABS", unary("Abs", NUMERIC - _WRAPPED_SIGN)),
    define("ELEMENT_WISE_ADD", binary("Add")),
    define("ELEMENT_WISE_DIVIDE", _divide, data_check=_nonzero_divisor),
    define("ELEMENT_WISE_MEAN", _mean),
    define("ELEMENT_WISE_MULTIPLY", binary("Mul")),
    define(
        "ELEMENT_WISE_POW",
        _pow,
        same_type=(("input_tensor", "output_tensor"),),
        check=_check_pow,
        data_check=_zero_to_negative_power,
    ),
    define("ELEMENT_WISE_CONSTANT_POW", _constant_pow),
    define("ELEMENT_WISE_RECIP", unary("Reciprocal")),
    define("ELEMENT_WISE_SQRT", unary("Sqrt")),
    define("ELEMENT_WISE_SUBTRACT", binary("Sub")),
    define("ELEMENT_WISE_ADD1", _add1, check=_check_add1),
    define("ELEMENT_WISE_MODULUS_TRUNCATE", _modulus_truncate, data_check=_nonzero_divisor),
    define("ELEMENT_WISE_MODULUS_FLOOR", _modulus_floor, data_check=_nonzero_divisor),
    define("ELEMENT_WISE_DIFFERENCE_SQUARE", _difference_square),
    define("ELEMENT_WISE_NEGATE", unary("Neg", SIGNED - _WRAPPED_SIGN)),
)
