"""DML_ELEMENT_WISE_* rounding, clamping, min/max, sign, selection and classification operators."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc.codec import DTYPE_BY_DATA_TYPE
from dmlrpc_server.operators._elementwise import (
    Context,
    ElementWise,
    define,
    maximum,
    minimum,
    unary,
)
from dmlrpc_server.operators._graph import (
    BOOL,
    NUMERIC,
    Graph,
    Value,
)
from dmlrpc_server.operators._support import integer_bounds, scalar_value
from dmlrpc_server.operators.base import require


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
        # Halves away from zero, in the input's own type (FLOAT64 would need double-precision shader operations,
        # which not every DirectML device has): floor(|x|), plus 1 where the fraction |x| - floor(|x|) (exact) is at
        # least a half. |x| + 0.5 is not exact near 2**23 in FLOAT32 (0.49999997 + 0.5 rounds to 1).
        whole = g.op("Floor", magnitude)
        fraction = g.op("Sub", magnitude, whole)
        up = g.cast(g.op("GreaterOrEqual", fraction, g.const(0.5, x.dtype), dtype=BOOL), x.dtype)
        magnitude = g.op("Add", whole, up)
    else:
        magnitude = g.op("Floor", magnitude)
    # Sign * magnitude would turn an infinite |x| times a zero sign into NaN; the sign is only 0 for 0.
    return g.where(g.op("Less", x, g.const(0, x.dtype), dtype=BOOL), g.op("Neg", magnitude), magnitude)


def _if(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    condition, a, b = xs
    return g.where(g.cast(condition, BOOL), a, b)


ELEMENT_WISE_ROUNDING: tuple[ElementWise, ...] = (
    define("ELEMENT_WISE_CEIL", unary("Ceil")),
    define("ELEMENT_WISE_FLOOR", unary("Floor")),
    define("ELEMENT_WISE_ROUND", _round, check=_check_round),
    define("ELEMENT_WISE_CLIP", _clip, check=_check_clip),
    define("ELEMENT_WISE_CLIP1", _clip1, check=_check_clip1),
    define("ELEMENT_WISE_CLIP_GRAD", _clip_grad, check=_check_clip),
    define("ELEMENT_WISE_CLIP_GRAD1", _clip_grad1, check=_check_clip1),
    define("ELEMENT_WISE_THRESHOLD", _threshold, check=_check_threshold),
    define("ELEMENT_WISE_MAX", lambda g, xs, c: maximum(g, xs[0], xs[1])),
    define("ELEMENT_WISE_MIN", lambda g, xs, c: minimum(g, xs[0], xs[1])),
    define("ELEMENT_WISE_IF", _if, same_type=(("a_tensor", "b_tensor", "output_tensor"),)),
    define("ELEMENT_WISE_IS_NAN", _is_nan, same_type=(("input_tensor",),)),
    define("ELEMENT_WISE_IS_INFINITY", _is_infinity, check=_check_is_infinity, same_type=(("input_tensor",),)),
    define("ELEMENT_WISE_SIGN", _sign),
)
