"""DML_ELEMENT_WISE_* trigonometric, hyperbolic, exponential, logarithm and error functions."""

from __future__ import annotations

import math
from collections.abc import Sequence

from dmlrpc_server.operators._elementwise import (
    Context,
    ElementWise,
    define,
    unary,
)
from dmlrpc_server.operators._graph import (
    BOOL,
    F32_ONLY,
    Graph,
    Value,
)


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


ELEMENT_WISE_TRANSCENDENTAL: tuple[ElementWise, ...] = (
    define("ELEMENT_WISE_ACOS", unary("Acos", F32_ONLY)),
    define("ELEMENT_WISE_ASIN", unary("Asin", F32_ONLY)),
    define("ELEMENT_WISE_ATAN", unary("Atan", F32_ONLY)),
    define("ELEMENT_WISE_COS", unary("Cos")),
    define("ELEMENT_WISE_EXP", unary("Exp")),
    define("ELEMENT_WISE_LOG", unary("Log")),
    define("ELEMENT_WISE_SIN", unary("Sin")),
    define("ELEMENT_WISE_TAN", unary("Tan", F32_ONLY)),
    define("ELEMENT_WISE_ERF", unary("Erf", F32_ONLY)),
    define("ELEMENT_WISE_SINH", unary("Sinh", F32_ONLY)),
    define("ELEMENT_WISE_COSH", unary("Cosh", F32_ONLY)),
    define("ELEMENT_WISE_TANH", unary("Tanh")),
    define("ELEMENT_WISE_ASINH", unary("Asinh", F32_ONLY)),
    define("ELEMENT_WISE_ACOSH", unary("Acosh", F32_ONLY)),
    define("ELEMENT_WISE_ATANH", unary("Atanh", F32_ONLY)),
    define("ELEMENT_WISE_ATAN_YX", _atan_yx),
)
