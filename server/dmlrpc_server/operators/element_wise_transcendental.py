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
    F32,
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


#: Cephes' single-precision asin polynomial in z = x^2 (|x| <= 1/2): asin(x) = x + x * z * P(z), within 2 ulp.
_ASIN_COEFFICIENTS = (4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2, 1.6666752422e-1)


def _asin(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    """asin(x). On DirectML, from additions, products and a square root (Cephes' asinf): the device's own asin
    can be a polynomial of about 7e-5 absolute error (the lane's gives asin(0) = 6.8e-5), which is no use near 0,
    where asin(x) ~ x; ONNX Runtime's CPU kernel is exact to a few ulp and stays."""
    if c.tensors is None or not c.tensors.on_directml:
        return g.kernel("Asin", F32_ONLY, xs[0])
    x = g.cast(xs[0], F32)
    half, one = g.const(0.5, F32), g.const(1.0, F32)
    a = g.op("Abs", x)
    # |x| > 1/2: asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)), whose argument is again at most 1/2. |x| > 1 and NaN
    # give NaN through the square root or the comparisons, as asin does.
    large = g.op("Greater", a, half, dtype=BOOL)
    z = g.where(large, g.op("Mul", half, g.op("Sub", one, a)), g.op("Mul", a, a))
    s = g.where(large, g.op("Sqrt", z), a)
    poly = g.const(_ASIN_COEFFICIENTS[0], F32)
    for coefficient in _ASIN_COEFFICIENTS[1:]:
        poly = g.op("Add", g.op("Mul", poly, z), g.const(coefficient, F32))
    r = g.op("Add", g.op("Mul", g.op("Mul", poly, z), s), s)
    r = g.where(large, g.op("Sub", g.const(math.pi / 2, F32), g.op("Add", r, r)), r)
    return g.cast(g.where(g.op("Less", x, g.const(0.0, F32), dtype=BOOL), g.op("Neg", r), r), xs[0].dtype)


ELEMENT_WISE_TRANSCENDENTAL: tuple[ElementWise, ...] = (
    define("ELEMENT_WISE_ACOS", unary("Acos", F32_ONLY)),
    define("ELEMENT_WISE_ASIN", _asin),
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
