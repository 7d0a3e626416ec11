"""DML_ELEMENT_WISE_* arithmetic, transcendental, rounding and clamping operators: one table entry each."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc.codec import DTYPE_BY_DATA_TYPE
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators._elementwise import Context, DataCheck, ElementWise, define, saturate
from dmlrpc_server.operators._graph import (
    BOOL,
    F32,
    F32_ONLY,
    F64,
    FLOATS,
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
from dmlrpc_server.operators._support import integer_bounds, scalar_value
from dmlrpc_server.operators.base import Tensors, require

#: The CPU kernels' types (ONNX Runtime 1.2x) of the ONNX operators used below; other types widen exactly.
FL = operators_pb2.FeatureLevel


def minimum(g: Graph, a: Value, b: Value) -> Value:
    """min(a, b): ONNX Min for floats (NaN propagates); a comparison for integers, because ONNX Runtime's CPU
    Min/Max kernels for INT64 compare truncated 32-bit values (min(-1, -2**31 - 1) gives -1)."""
    if a.dtype.kind == "f":
        return g.op("Min", a, b)
    return g.where(g.kernel("Less", NUMERIC, b, a, dtype=BOOL), b, a)


def maximum(g: Graph, a: Value, b: Value) -> Value:
    """max(a, b), as ``minimum``."""
    if a.dtype.kind == "f":
        return g.op("Max", a, b)
    return g.where(g.kernel("Greater", NUMERIC, b, a, dtype=BOOL), b, a)


def _unary(op_type: str, supported: frozenset[DType] = FLOATS) -> Any:
    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        return g.kernel(op_type, supported, xs[0])

    return function


def _binary(op_type: str, supported: frozenset[np.dtype[Any]] = NUMERIC) -> Any:
    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        return g.kernel(op_type, supported, xs[0], xs[1])

    return function


def _finite(value: float, field: str) -> None:
    require(not math.isnan(value), field, "must not be NaN")


def _clamp(g: Graph, x: Value, low: float, high: float) -> Value:
    """max(x, low) then min(., high), as DirectML's CLIP orders them (``high`` wins when low > high). Integer tensors
    clamp to the integers inside [low, high], exactly."""
    if x.dtype.kind == "f":
        lower, upper = g.const(low, x.dtype), g.const(high, x.dtype)
    else:
        low_int, high_int = integer_bounds(low, high, x.dtype)
        lower, upper = g.const(low_int, x.dtype), g.const(high_int, x.dtype)
    return minimum(g, maximum(g, x, lower), upper)


def _clip(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    return _clamp(g, xs[0], c.desc.min, c.desc.max)


def _check_clip(desc: Any, c: Context) -> None:
    _finite(desc.min, c.field("min"))
    _finite(desc.max, c.field("max"))


def _threshold(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    return _clamp(g, xs[0], c.desc.min, math.inf)


def _check_threshold(desc: Any, c: Context) -> None:
    _finite(desc.min, c.field("min"))


def _clip1_bounds(c: Context) -> tuple[Any, Any]:
    data_type = c.desc.min_max_data_type
    require(
        DTYPE_BY_DATA_TYPE.get(data_type) == c.output,
        c.field("min_max_data_type"),
        "must equal the output tensor's data type",
    )
    return (
        scalar_value(c.desc.min, data_type, c.field("min")),
        scalar_value(c.desc.max, data_type, c.field("max")),
    )


def _check_clip1(desc: Any, c: Context) -> None:
    _clip1_bounds(c)


def _clip1(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    # max(Min, min(x, Max)): Min wins when Min > Max (the page's order, the reverse of CLIP's).
    low, high = _clip1_bounds(c)
    x = xs[0]
    return maximum(g, minimum(g, x, g.const(high, x.dtype)), g.const(low, x.dtype))


def _gradient_mask(g: Graph, x: Value, low: Any, high: Any) -> Value:
    """low < x < high, exactly, for FLOAT bounds on any tensor type."""
    if x.dtype.kind == "f":
        above = g.op("Greater", x, g.const(low, x.dtype), dtype=BOOL)
        below = g.op("Less", x, g.const(high, x.dtype), dtype=BOOL)
        return g.op("And", above, below, dtype=BOOL)
    # For integers: x > low <=> x >= floor(low) + 1 and x < high <=> x <= ceil(high) - 1.
    info = np.iinfo(x.dtype)
    first = math.floor(low) + 1 if math.isfinite(low) else (-math.inf if low < 0 else math.inf)
    last = math.ceil(high) - 1 if math.isfinite(high) else (math.inf if high > 0 else -math.inf)
    if first > info.max or last < info.min or first > last:
        return g.op("Equal", g.const(0, np.int32), g.const(1, np.int32), dtype=BOOL)
    lower, upper = g.const(max(first, info.min), x.dtype), g.const(min(last, info.max), x.dtype)
    above = g.kernel("GreaterOrEqual", NUMERIC, x, lower, dtype=BOOL)
    below = g.kernel("LessOrEqual", NUMERIC, x, upper, dtype=BOOL)
    return g.op("And", above, below, dtype=BOOL)


def _clip_grad(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x, gradient = xs
    return g.where(_gradient_mask(g, x, c.desc.min, c.desc.max), gradient, g.const(0, gradient.dtype))


def _clip_grad1(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x, gradient = xs
    low, high = _clip1_bounds(c)
    above = g.kernel("Greater", NUMERIC, x, g.const(low, x.dtype), dtype=BOOL)
    below = g.kernel("Less", NUMERIC, x, g.const(high, x.dtype), dtype=BOOL)
    mask = g.op("And", above, below, dtype=BOOL)
    return g.where(mask, gradient, g.const(0, gradient.dtype))


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


def _modulus_truncate(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    a, b = xs
    if a.dtype.kind == "f":
        return g.op("Mod", a, b, fmod=1)
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
    remainder = g.op("Mod", a, b, fmod=1)
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


def _sign(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    sign = g.op("Sign", x)
    if x.dtype.kind != "f":
        return sign
    # The page sends everything neither positive nor negative to 0: NaN too.
    return g.where(g.op("IsNaN", x, dtype=BOOL), g.const(0, x.dtype), sign)


def _is_nan(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    return g.op("IsNaN", xs[0], dtype=BOOL)


_INFINITY_MODES = {0: (1, 1), 1: (1, 0), 2: (0, 1)}


def _check_is_infinity(desc: Any, c: Context) -> None:
    require(
        desc.infinity_mode in _INFINITY_MODES,
        c.field("infinity_mode"),
        f"{desc.infinity_mode} is not a DML_IS_INFINITY_MODE (0 = EITHER, 1 = POSITIVE, 2 = NEGATIVE)",
    )


def _is_infinity(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    positive, negative = _INFINITY_MODES[c.desc.infinity_mode]
    return g.op("IsInf", xs[0], dtype=BOOL, detect_positive=positive, detect_negative=negative)


def _check_round(desc: Any, c: Context) -> None:
    require(
        desc.rounding_mode in (0, 1, 2),
        c.field("rounding_mode"),
        f"{desc.rounding_mode} is not a DML_ROUNDING_MODE (0 = HALVES_TO_NEAREST_EVEN, 1 = TOWARD_ZERO, "
        "2 = TOWARD_INFINITY)",
    )


def _round(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    mode = c.desc.rounding_mode
    if mode == 0:
        return g.op("Round", x)
    magnitude = g.op("Abs", x)
    if mode == 2:
        # Halves away from zero: floor(|x| + 0.5) in FLOAT64, where |x| + 0.5 is exact for FLOAT32 inputs.
        wide = g.cast(magnitude, F64)
        magnitude = g.cast(g.op("Floor", g.op("Add", wide, g.const(0.5, F64))), x.dtype)
    else:
        magnitude = g.op("Floor", magnitude)
    # Sign * magnitude would turn an infinite |x| times a zero sign into NaN; the sign is only 0 for 0.
    return g.where(g.op("Less", x, g.const(0, x.dtype), dtype=BOOL), g.op("Neg", magnitude), magnitude)


def _atan_yx(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    """atan2(y = a, x = b) from Atan and quadrant corrections (ONNX has no Atan2), with IEEE signed zeros: the
    sign of a zero is read as the sign of 1 / zero. DirectML leaves the origin undefined; it gives 0 or pi."""
    y, x = xs
    zero, one = g.const(0, y.dtype), g.const(1, y.dtype)
    pi, half_pi = g.const(math.pi, y.dtype), g.const(math.pi / 2, y.dtype)
    x_zero = g.op("Equal", x, zero, dtype=BOOL)
    y_zero = g.op("Equal", y, zero, dtype=BOOL)
    ratio = g.where(g.op("And", x_zero, y_zero, dtype=BOOL), zero, g.op("Div", y, x))
    base = g.op("Atan", ratio)
    x_negative = g.op("Less", g.op("Div", one, x), zero, dtype=BOOL)
    y_negative = g.op("Less", g.op("Div", one, y), zero, dtype=BOOL)
    quadrant = g.where(x_negative, g.where(y_negative, g.op("Sub", base, pi), g.op("Add", base, pi)), base)
    on_y_axis = g.op("And", x_zero, g.op("Not", y_zero, dtype=BOOL), dtype=BOOL)
    return g.where(on_y_axis, g.where(y_negative, g.op("Neg", half_pi), half_pi), quadrant)


def _difference_square(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    difference = g.kernel("Sub", NUMERIC, xs[0], xs[1])
    return g.kernel("Mul", NUMERIC, difference, difference)


def _if(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    condition, a, b = xs
    return g.where(g.cast(condition, BOOL), a, b)


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


ELEMENT_WISE: tuple[ElementWise, ...] = (
    define("ELEMENT_WISE_IDENTITY", lambda g, xs, c: xs[0]),
    define("ELEMENT_WISE_ABS", _unary("Abs", NUMERIC)),
    define("ELEMENT_WISE_ACOS", _unary("Acos", F32_ONLY)),
    define("ELEMENT_WISE_ADD", _binary("Add")),
    define("ELEMENT_WISE_ASIN", _unary("Asin", F32_ONLY)),
    define("ELEMENT_WISE_ATAN", _unary("Atan", F32_ONLY)),
    define("ELEMENT_WISE_CEIL", _unary("Ceil")),
    define("ELEMENT_WISE_CLIP", _clip, check=_check_clip),
    define("ELEMENT_WISE_COS", _unary("Cos")),
    define("ELEMENT_WISE_DIVIDE", _divide, data_check=_nonzero_divisor),
    define("ELEMENT_WISE_EXP", _unary("Exp")),
    define("ELEMENT_WISE_FLOOR", _unary("Floor")),
    define("ELEMENT_WISE_LOG", _unary("Log")),
    define("ELEMENT_WISE_MAX", lambda g, xs, c: maximum(g, xs[0], xs[1])),
    define("ELEMENT_WISE_MEAN", _mean),
    define("ELEMENT_WISE_MIN", lambda g, xs, c: minimum(g, xs[0], xs[1])),
    define("ELEMENT_WISE_MULTIPLY", _binary("Mul")),
    define(
        "ELEMENT_WISE_POW",
        _pow,
        same_type=(("input_tensor", "output_tensor"),),
        check=_check_pow,
        data_check=_zero_to_negative_power,
    ),
    define("ELEMENT_WISE_CONSTANT_POW", _constant_pow),
    define("ELEMENT_WISE_RECIP", _unary("Reciprocal")),
    define("ELEMENT_WISE_SIN", _unary("Sin")),
    define("ELEMENT_WISE_SQRT", _unary("Sqrt")),
    define("ELEMENT_WISE_SUBTRACT", _binary("Sub")),
    define("ELEMENT_WISE_TAN", _unary("Tan", F32_ONLY)),
    define("ELEMENT_WISE_THRESHOLD", _threshold, check=_check_threshold),
    define("ELEMENT_WISE_SIGN", _sign),
    define("ELEMENT_WISE_ERF", _unary("Erf", F32_ONLY)),
    define("ELEMENT_WISE_SINH", _unary("Sinh", F32_ONLY)),
    define("ELEMENT_WISE_COSH", _unary("Cosh", F32_ONLY)),
    define("ELEMENT_WISE_TANH", _unary("Tanh")),
    define("ELEMENT_WISE_ASINH", _unary("Asinh", F32_ONLY)),
    define("ELEMENT_WISE_ACOSH", _unary("Acosh", F32_ONLY)),
    define("ELEMENT_WISE_ATANH", _unary("Atanh", F32_ONLY)),
    define("ELEMENT_WISE_IF", _if, same_type=(("a_tensor", "b_tensor", "output_tensor"),)),
    define("ELEMENT_WISE_ADD1", _add1, check=_check_add1),
    define("ELEMENT_WISE_ROUND", _round, check=_check_round),
    define("ELEMENT_WISE_IS_INFINITY", _is_infinity, check=_check_is_infinity, same_type=(("input_tensor",),)),
    define("ELEMENT_WISE_IS_NAN", _is_nan, same_type=(("input_tensor",),)),
    define("ELEMENT_WISE_MODULUS_TRUNCATE", _modulus_truncate, data_check=_nonzero_divisor),
    define("ELEMENT_WISE_MODULUS_FLOOR", _modulus_floor, data_check=_nonzero_divisor),
    define("ELEMENT_WISE_ATAN_YX", _atan_yx),
    define("ELEMENT_WISE_CLIP_GRAD", _clip_grad, check=_check_clip),
    define("ELEMENT_WISE_DIFFERENCE_SQUARE", _difference_square),
    define("ELEMENT_WISE_CLIP1", _clip1, check=_check_clip1),
    define("ELEMENT_WISE_CLIP_GRAD1", _clip_grad1, check=_check_clip1),
    define("ELEMENT_WISE_NEGATE", _unary("Neg", SIGNED)),
)
