"""NumPy references of the element-wise and activation operators, written from DirectML's pages (and dmlrpc's
documented definitions where the pages are silent), independent of the server code."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Reference = Callable[[Sequence[np.ndarray | None], Any, np.dtype[Any]], np.ndarray]


def wrap(values: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """Python integers reduced modulo 2**bits into ``dtype`` (two's complement for signed types)."""
    bits = 8 * dtype.itemsize
    flat = [int(v) % (1 << bits) for v in np.asarray(values, dtype=object).reshape(-1)]
    if dtype.kind == "i":
        flat = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in flat]
    return np.array(flat, dtype=dtype).reshape(np.shape(values))


def saturate(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Float values truncated toward zero and clamped into integer ``dtype`` (NaN to 0), exactly."""
    info = np.iinfo(dtype)
    flat = [
        0
        if math.isnan(v)
        else min(max(int(v), int(info.min)), int(info.max))
        if math.isfinite(v)
        else (int(info.max) if v > 0 else int(info.min))
        for v in np.asarray(values, np.float64).reshape(-1).tolist()
    ]
    return np.array(flat, dtype=dtype).reshape(np.shape(values))


def ints(array: np.ndarray) -> np.ndarray:
    return array.astype(object)


def scale_bias(x: np.ndarray, desc: Any) -> np.ndarray:
    """ScaleBias applied to the input: in float64, converted back for integer tensors."""
    if "scale_bias" not in desc.DESCRIPTOR.fields_by_name or not desc.HasField("scale_bias"):
        return x
    scaled = x.astype(np.float64) * np.float64(np.float32(desc.scale_bias.scale)) + np.float64(
        np.float32(desc.scale_bias.bias)
    )
    if x.dtype.kind == "f":
        # The server computes FLOAT32 (and FLOAT16) in FLOAT32: round the same way before the function.
        wide = np.float64 if x.dtype == np.float64 else np.float32
        return (x.astype(wide) * wide(desc.scale_bias.scale) + wide(desc.scale_bias.bias)).astype(np.float64)
    return saturate(scaled, x.dtype)


def _float(function: Callable[[np.ndarray], np.ndarray]) -> Reference:
    def reference(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
        x = xs[0]
        assert x is not None
        with np.errstate(all="ignore"):
            return np.asarray(function(scale_bias(x, desc).astype(np.float64))).astype(out)

    return reference


def _same(function: Callable[..., Any]) -> Reference:
    """An integer-exact function of the inputs in Python integers (wrapped) or in float64 for float types."""

    def reference(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
        arrays = [x for x in xs if x is not None]
        if out.kind == "f":
            with np.errstate(all="ignore"):
                return np.asarray(function(*(a.astype(np.float64) for a in arrays))).astype(out)
        return wrap(np.vectorize(function, otypes=[object])(*(ints(a) for a in arrays)), out)

    return reference


def _bool(function: Callable[..., np.ndarray]) -> Reference:
    def reference(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(function(*(x for x in xs if x is not None))).astype(out)

    return reference


def _truncated_divide(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _truncated_mod(a: int, b: int) -> int:
    return a - b * _truncated_divide(a, b)


def _divide(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    a, b = xs
    assert a is not None and b is not None
    if out.kind == "f":
        with np.errstate(all="ignore"):
            return (a.astype(np.float64) / b.astype(np.float64)).astype(out)
    return wrap(np.vectorize(_truncated_divide, otypes=[object])(ints(a), ints(b)), out)


def _mod_truncate(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    a, b = xs
    assert a is not None and b is not None
    if out.kind == "f":
        with np.errstate(all="ignore"):
            return np.fmod(a.astype(np.float64), b.astype(np.float64)).astype(out)
    return wrap(np.vectorize(_truncated_mod, otypes=[object])(ints(a), ints(b)), out)


def _mod_floor(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    a, b = xs
    assert a is not None and b is not None
    if out.kind == "f":
        with np.errstate(all="ignore"):
            return np.mod(a.astype(np.float64), b.astype(np.float64)).astype(out)
    return wrap(np.vectorize(lambda p, q: p - q * (p // q), otypes=[object])(ints(a), ints(b)), out)


def _mean(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    a, b = xs
    assert a is not None and b is not None
    if out.kind == "f":
        return ((a.astype(np.float64) + b.astype(np.float64)) / 2).astype(out)
    return wrap(np.vectorize(lambda p, q: _truncated_divide(p + q, 2), otypes=[object])(ints(a), ints(b)), out)


def _int_pow(base: int, exponent: int) -> int:
    if exponent >= 0:
        return int(pow(base, exponent, 1 << 64))
    if base == 1:
        return 1
    if base == -1:
        return -1 if exponent % 2 else 1
    return 0


def _pow(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    base, exponent = xs
    assert base is not None and exponent is not None
    base = scale_bias(base, desc)
    if base.dtype.kind != "f" and exponent.dtype.kind != "f":
        return wrap(np.vectorize(_int_pow, otypes=[object])(ints(base), ints(exponent)), out)
    with np.errstate(all="ignore"):
        power = np.power(base.astype(np.float64), exponent.astype(np.float64))
        return power.astype(out) if out.kind == "f" else saturate(power, out)


def _clamp(x: np.ndarray, low: float, high: float, *, min_first: bool) -> np.ndarray:
    if x.dtype.kind != "f":
        info = np.iinfo(x.dtype)
        low = min(max(math.ceil(low), int(info.min)), int(info.max)) if math.isfinite(low) else low
        high = min(max(math.floor(high), int(info.min)), int(info.max)) if math.isfinite(high) else high
        values = ints(x)
        lower = [max(v, low) if low != -math.inf else v for v in values.reshape(-1)]
        both = [min(v, high) if high != math.inf else v for v in lower]
        return np.array(both, dtype=x.dtype).reshape(x.shape)
    wide = x.astype(np.float64)
    if min_first:
        return np.minimum(np.maximum(wide, low), high)
    return np.maximum(np.minimum(wide, high), low)


def _clip(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    low, high = float(np.float32(desc.min)), float(np.float32(desc.max))
    return _clamp(scale_bias(x, desc), low, high, min_first=True).astype(out)


def _threshold(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    return _clamp(scale_bias(x, desc), float(np.float32(desc.min)), math.inf, min_first=True).astype(out)


def _clip_grad(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x, gradient = xs
    assert x is not None and gradient is not None
    low, high = float(np.float32(desc.min)), float(np.float32(desc.max))
    inside = np.array([low < v < high for v in x.reshape(-1).tolist()]).reshape(x.shape)
    return np.where(inside, gradient, 0).astype(out)


def _round(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    wide = x.astype(np.float64)
    mode = desc.rounding_mode
    if mode == 0:
        return np.round(wide).astype(out)
    if mode == 1:
        return np.trunc(wide).astype(out)
    return (np.sign(wide) * np.floor(np.abs(wide) + 0.5)).astype(out)


def _sign(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    return np.nan_to_num(np.sign(x.astype(np.float64)), nan=0.0).astype(out)


def _is_infinity(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    mode = desc.infinity_mode
    hit = np.isinf(x) & ((mode == 0) | ((x > 0) & (mode == 1)) | ((x < 0) & (mode == 2)))
    return hit.astype(out)


def _bits(function: Callable[..., np.ndarray]) -> Reference:
    def reference(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
        arrays = [x for x in xs if x is not None]
        unsigned = np.dtype(f"<u{arrays[0].dtype.itemsize}")
        return np.asarray(function(*(a.view(unsigned) for a in arrays))).astype(unsigned).view(out)

    return reference


def _bit_count(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    unsigned = x.view(np.dtype(f"<u{x.dtype.itemsize}"))
    return np.array([bin(int(v)).count("1") for v in unsigned.reshape(-1)], dtype=out).reshape(x.shape)


def _shift(left: bool) -> Reference:
    def reference(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
        a, b = xs
        assert a is not None and b is not None
        bits = 8 * a.dtype.itemsize
        values = [
            0 if s >= bits else ((v << s) if left else (v >> s))
            for v, s in zip(ints(a).reshape(-1), ints(b).reshape(-1), strict=True)
        ]
        return wrap(np.array(values, dtype=object).reshape(a.shape), out)

    return reference


def _atan2(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    a, b = xs
    assert a is not None and b is not None
    return np.arctan2(a.astype(np.float64), b.astype(np.float64)).astype(out)


def _if(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    condition, a, b = xs
    assert condition is not None and a is not None and b is not None
    return np.where(condition != 0, a, b).astype(out)


def _quantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, out: np.dtype[Any]) -> np.ndarray:
    with np.errstate(all="ignore"):
        q = np.round(x.astype(np.float32) / scale.astype(np.float32)).astype(np.float64)
    if zero_point is not None:
        q = q + zero_point.astype(np.float64)
    info = np.iinfo(out)
    return np.clip(q, info.min, info.max).astype(out)


def _dequantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> np.ndarray:
    difference = x.astype(np.int64) - (zero_point.astype(np.int64) if zero_point is not None else 0)
    return difference.astype(np.float32) * scale.astype(np.float32)


def _quantize_linear(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x, scale, zero_point = xs
    assert x is not None and scale is not None
    return _quantize(x, scale, zero_point, out)


def _dequantize_linear(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x, scale, zero_point = xs
    assert x is not None and scale is not None
    with np.errstate(over="ignore"):
        return _dequantize(x, scale, zero_point).astype(out)


def _quantized_linear_add(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    a, a_scale, a_zero, b, b_scale, b_zero, out_scale, out_zero = xs
    assert a is not None and b is not None and a_scale is not None and b_scale is not None and out_scale is not None
    total = _dequantize(a, a_scale, a_zero) + _dequantize(b, b_scale, b_zero)
    return _quantize(total, out_scale, out_zero, out)


def _relu_like(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    return np.maximum(x, 0).astype(out)


def _softmax_rows(x: np.ndarray, axes: Sequence[int], kind: str) -> np.ndarray:
    axes = tuple(axes)
    wide = x.astype(np.float64)
    if kind == "hardmax":
        moved = np.moveaxis(wide, axes, range(wide.ndim - len(axes), wide.ndim))
        flat = moved.reshape(*moved.shape[: wide.ndim - len(axes)], -1)
        result = np.zeros_like(flat)
        np.put_along_axis(result, np.argmax(flat, axis=-1)[..., None], 1.0, axis=-1)
        return np.moveaxis(result.reshape(moved.shape), range(wide.ndim - len(axes), wide.ndim), axes)
    shifted = wide - wide.max(axis=axes, keepdims=True)
    total = np.exp(shifted).sum(axis=axes, keepdims=True)
    return shifted - np.log(total) if kind == "log" else np.exp(shifted) / total


def _softmax(kind: str, last: bool) -> Reference:
    def reference(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
        x = xs[0]
        assert x is not None
        axes = [x.ndim - 1] if last else sorted(desc.axes)
        return _softmax_rows(x, axes, kind).astype(out)

    return reference


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _activation(function: Callable[[np.ndarray, Any], np.ndarray]) -> Reference:
    def reference(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
        x = xs[0]
        assert x is not None
        with np.errstate(all="ignore"):
            return np.asarray(function(x.astype(np.float64), desc)).astype(out)

    return reference


def _celu(x: np.ndarray, alpha: Any) -> np.ndarray:
    """CELU: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    # NOTE: where the min drops expm1's value it may overflow (large x / alpha): that is no error here.
    with np.errstate(over="ignore"):
        return np.maximum(0, x) + np.minimum(0, alpha * np.expm1(x / alpha))  # type: ignore[no-any-return]


def _f(value: float) -> float:
    """A FLOAT attribute as the server reads it (FLOAT32)."""
    return float(np.float32(value))


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0, x)


def fused(name: str, x: np.ndarray, desc: Any) -> np.ndarray:
    """A fused activation applied to a float64 array."""
    return np.asarray(ACTIVATIONS[name](x, desc))


ACTIVATIONS: dict[str, Callable[[np.ndarray, Any], np.ndarray]] = {
    # NOTE: expm1 of the negative side only: the branch np.where drops would overflow (float16) and warn.
    "ACTIVATION_ELU": lambda x, d: np.where(x >= 0, x, _f(d.alpha) * np.expm1(np.minimum(x, 0))),
    "ACTIVATION_HARD_SIGMOID": lambda x, d: np.maximum(0, np.minimum(_f(d.alpha) * x + _f(d.beta), 1)),
    "ACTIVATION_IDENTITY": lambda x, d: x,
    "ACTIVATION_LEAKY_RELU": lambda x, d: np.where(x >= 0, x, _f(d.alpha) * x),
    "ACTIVATION_LINEAR": lambda x, d: _f(d.alpha) * x + _f(d.beta),
    "ACTIVATION_PARAMETRIC_SOFTPLUS": lambda x, d: _f(d.alpha) * softplus(_f(d.beta) * x),
    "ACTIVATION_RELU": lambda x, d: np.maximum(x, 0),
    "ACTIVATION_SCALED_ELU": lambda x, d: np.where(
        x > 0, _f(d.gamma) * x, _f(d.gamma) * _f(d.alpha) * np.expm1(np.minimum(x, 0))
    ),
    "ACTIVATION_SCALED_TANH": lambda x, d: _f(d.alpha) * np.tanh(_f(d.beta) * x),
    "ACTIVATION_SIGMOID": lambda x, d: 1 / (1 + np.exp(-x)),
    "ACTIVATION_SOFTPLUS": lambda x, d: softplus(_f(d.steepness) * x) / _f(d.steepness),
    "ACTIVATION_SOFTSIGN": lambda x, d: x / (1 + np.abs(x)),
    "ACTIVATION_TANH": lambda x, d: np.tanh(x),
    "ACTIVATION_THRESHOLDED_RELU": lambda x, d: np.where(x > _f(d.alpha), x, 0),
    "ACTIVATION_SHRINK": lambda x, d: np.where(
        x > _f(d.threshold), x - _f(d.bias), np.where(x < -_f(d.threshold), x + _f(d.bias), 0)
    ),
    "ACTIVATION_CELU": lambda x, d: _celu(x, _f(d.alpha)),
    "ACTIVATION_GELU": lambda x, d: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
    "ACTIVATION_SWISH": lambda x, d: x / (1 + np.exp(-_f(d.sigmoid_input_scale) * x)),
    "ACTIVATION_HARD_SWISH": lambda x, d: x * np.maximum(0, np.minimum(_f(d.alpha) * x + _f(d.beta), 1)),
}


def _shrink(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    result = ACTIVATIONS["ACTIVATION_SHRINK"](x.astype(np.float64), desc)
    return result.astype(out) if out.kind == "f" else saturate(result, out)


def _prelu(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x, slope = xs
    assert x is not None and slope is not None
    if out.kind == "f":
        return np.where(x >= 0, x.astype(np.float64), x.astype(np.float64) * slope).astype(out)
    return wrap(np.where(x >= 0, ints(x), ints(x) * ints(slope)), out)


def _relu_grad(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x, gradient = xs
    assert x is not None and gradient is not None
    return np.where(x > 0, gradient, 0).astype(out)


def _add1(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    a, b = xs
    assert a is not None and b is not None
    total = a.astype(np.float32).astype(np.float64) + b.astype(np.float32)
    if desc.HasField("fused_activation"):
        case = desc.fused_activation.WhichOneof("desc")
        total = fused(case.upper(), total, getattr(desc.fused_activation, case))
    return total.astype(out)


def _clip1_bounds(desc: Any, dtype: np.dtype[Any]) -> tuple[Any, Any]:
    def read(scalar: Any) -> Any:
        case = scalar.WhichOneof("value")
        if case == "bytes":
            return np.frombuffer(scalar.bytes[: dtype.itemsize], dtype=dtype)[0]
        return dtype.type(getattr(scalar, case))

    return read(desc.min), read(desc.max)


def _clip1(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x = xs[0]
    assert x is not None
    low, high = _clip1_bounds(desc, out)
    x = scale_bias(x, desc)
    if out.kind == "f":
        return np.maximum(np.float64(low), np.minimum(x.astype(np.float64), np.float64(high))).astype(out)
    return np.array([max(int(low), min(int(v), int(high))) for v in x.reshape(-1).tolist()], out).reshape(x.shape)


def _clip_grad1(xs: Sequence[np.ndarray | None], desc: Any, out: np.dtype[Any]) -> np.ndarray:
    x, gradient = xs
    assert x is not None and gradient is not None
    low, high = _clip1_bounds(desc, out)
    inside = np.array([low < v < high for v in x.reshape(-1).tolist()]).reshape(x.shape)
    return np.where(inside, gradient, 0).astype(out)


REFERENCES: dict[str, Reference] = {
    "ELEMENT_WISE_IDENTITY": lambda xs, d, out: scale_bias(xs[0], d).astype(out),  # type: ignore[arg-type]
    "ELEMENT_WISE_ABS": lambda xs, d, out: (
        np.abs(scale_bias(xs[0], d)).astype(out)  # type: ignore[arg-type]
        if out.kind == "f"
        else wrap(np.abs(ints(scale_bias(xs[0], d))), out)  # type: ignore[arg-type]
    ),
    "ELEMENT_WISE_ACOS": _float(np.arccos),
    "ELEMENT_WISE_ADD": _same(lambda a, b: a + b),
    "ELEMENT_WISE_ASIN": _float(np.arcsin),
    "ELEMENT_WISE_ATAN": _float(np.arctan),
    "ELEMENT_WISE_CEIL": _float(np.ceil),
    "ELEMENT_WISE_CLIP": _clip,
    "ELEMENT_WISE_COS": _float(np.cos),
    "ELEMENT_WISE_DIVIDE": _divide,
    "ELEMENT_WISE_EXP": _float(np.exp),
    "ELEMENT_WISE_FLOOR": _float(np.floor),
    "ELEMENT_WISE_LOG": _float(np.log),
    "ELEMENT_WISE_LOGICAL_AND": _bool(lambda a, b: (a != 0) & (b != 0)),
    "ELEMENT_WISE_LOGICAL_EQUALS": _bool(lambda a, b: a == b),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": _bool(lambda a, b: a > b),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": _bool(lambda a, b: a < b),
    "ELEMENT_WISE_LOGICAL_NOT": _bool(lambda a: a == 0),
    "ELEMENT_WISE_LOGICAL_OR": _bool(lambda a, b: (a != 0) | (b != 0)),
    "ELEMENT_WISE_LOGICAL_XOR": _bool(lambda a, b: (a != 0) != (b != 0)),
    "ELEMENT_WISE_MAX": _same(lambda a, b: np.maximum(a, b) if isinstance(a, np.ndarray) else max(a, b)),
    "ELEMENT_WISE_MEAN": _mean,
    "ELEMENT_WISE_MIN": _same(lambda a, b: np.minimum(a, b) if isinstance(a, np.ndarray) else min(a, b)),
    "ELEMENT_WISE_MULTIPLY": _same(lambda a, b: a * b),
    "ELEMENT_WISE_POW": _pow,
    "ELEMENT_WISE_CONSTANT_POW": lambda xs, d, out: _float(lambda x: np.power(x, _f(d.exponent)))(xs, d, out),
    "ELEMENT_WISE_RECIP": _float(lambda x: 1 / x),
    "ELEMENT_WISE_SIN": _float(np.sin),
    "ELEMENT_WISE_SQRT": _float(np.sqrt),
    "ELEMENT_WISE_SUBTRACT": _same(lambda a, b: a - b),
    "ELEMENT_WISE_TAN": _float(np.tan),
    "ELEMENT_WISE_THRESHOLD": _threshold,
    "ELEMENT_WISE_QUANTIZE_LINEAR": _quantize_linear,
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": _dequantize_linear,
    "ELEMENT_WISE_SIGN": _sign,
    "ELEMENT_WISE_IS_NAN": _bool(np.isnan),
    "ELEMENT_WISE_ERF": _float(_erf),
    "ELEMENT_WISE_SINH": _float(np.sinh),
    "ELEMENT_WISE_COSH": _float(np.cosh),
    "ELEMENT_WISE_TANH": _float(np.tanh),
    "ELEMENT_WISE_ASINH": _float(np.arcsinh),
    "ELEMENT_WISE_ACOSH": _float(np.arccosh),
    "ELEMENT_WISE_ATANH": _float(np.arctanh),
    "ELEMENT_WISE_IF": _if,
    "ELEMENT_WISE_ADD1": _add1,
    "ELEMENT_WISE_BIT_SHIFT_LEFT": _shift(left=True),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": _shift(left=False),
    "ELEMENT_WISE_ROUND": _round,
    "ELEMENT_WISE_IS_INFINITY": _is_infinity,
    "ELEMENT_WISE_MODULUS_TRUNCATE": _mod_truncate,
    "ELEMENT_WISE_MODULUS_FLOOR": _mod_floor,
    "ELEMENT_WISE_BIT_AND": _bits(np.bitwise_and),
    "ELEMENT_WISE_BIT_OR": _bits(np.bitwise_or),
    "ELEMENT_WISE_BIT_XOR": _bits(np.bitwise_xor),
    "ELEMENT_WISE_BIT_NOT": _bits(np.invert),
    "ELEMENT_WISE_BIT_COUNT": _bit_count,
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _bool(lambda a, b: a >= b),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _bool(lambda a, b: a <= b),
    "ELEMENT_WISE_ATAN_YX": _atan2,
    "ELEMENT_WISE_CLIP_GRAD": _clip_grad,
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _same(lambda a, b: (a - b) * (a - b)),
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": _quantized_linear_add,
    "ELEMENT_WISE_CLIP1": _clip1,
    "ELEMENT_WISE_CLIP_GRAD1": _clip_grad1,
    "ELEMENT_WISE_NEGATE": lambda xs, d, out: (
        (-xs[0].astype(np.float64)).astype(out) if out.kind == "f" else wrap(-ints(xs[0]), out)  # type: ignore[union-attr,arg-type]
    ),
    "ACTIVATION_HARDMAX": _softmax("hardmax", last=True),
    "ACTIVATION_LOG_SOFTMAX": _softmax("log", last=True),
    "ACTIVATION_SOFTMAX": _softmax("softmax", last=True),
    "ACTIVATION_SOFTMAX1": _softmax("softmax", last=False),
    "ACTIVATION_LOG_SOFTMAX1": _softmax("log", last=False),
    "ACTIVATION_HARDMAX1": _softmax("hardmax", last=False),
    "ACTIVATION_PARAMETERIZED_RELU": _prelu,
    "ACTIVATION_RELU_GRAD": _relu_grad,
    "ACTIVATION_SHRINK": _shrink,
    "ACTIVATION_RELU": lambda xs, d, out: np.maximum(xs[0], 0).astype(out),  # type: ignore[call-overload]
    **{
        name: _activation(function)
        for name, function in ACTIVATIONS.items()
        if name not in ("ACTIVATION_SHRINK", "ACTIVATION_RELU")
    },
}
