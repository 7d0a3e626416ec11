"""DML_ACTIVATION_* operators (one table entry each; ``ACTIVATIONS`` holds every one) and fused activations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.feature_levels import parse_feature_level
from dmlrpc_server.operators._elementwise import Context, ElementWise, define, saturate
from dmlrpc_server.operators._graph import (
    BOOL,
    F32,
    F32_ONLY,
    F64,
    FLOATS,
    I8,
    I32,
    I64,
    SIGNED,
    DType,
    Graph,
    Value,
)
from dmlrpc_server.operators.activation_softmax import ACTIVATIONS_OVER_AXES
from dmlrpc_server.operators.base import require
from dmlrpc_server.operators.pages import FUSABLE

FL = operators_pb2.FeatureLevel
RELU_TYPES: frozenset[DType] = frozenset({F32, F64, I8, I32, I64})


def _onnx(op_type: str, supported: frozenset[DType] = FLOATS, **attributes: str) -> Any:
    """An ONNX activation whose FLOAT attributes are the desc's fields named by ``attributes``."""

    def function(g: Graph, xs: Sequence[Value], c: Context) -> Value:
        values: dict[str, Any] = {name: float(getattr(c.desc, field)) for name, field in attributes.items()}
        return g.kernel(op_type, supported, xs[0], **values)

    return function


def _linear(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    return g.op("Add", g.op("Mul", x, g.const(c.desc.alpha, x.dtype)), g.const(c.desc.beta, x.dtype))


def _parametric_softplus(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    inner = g.op("Softplus", g.op("Mul", x, g.const(c.desc.beta, x.dtype)))
    return g.op("Mul", inner, g.const(c.desc.alpha, x.dtype))


def _scaled_tanh(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    inner = g.op("Tanh", g.op("Mul", x, g.const(c.desc.beta, x.dtype)))
    return g.op("Mul", inner, g.const(c.desc.alpha, x.dtype))


def _softplus(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    steepness = g.const(c.desc.steepness, x.dtype)
    return g.op("Div", g.op("Softplus", g.op("Mul", x, steepness)), steepness)


def _check_softplus(desc: Any, c: Context) -> None:
    if c.feature_level < FL.FEATURE_LEVEL_6_4:
        require(desc.steepness >= 1, c.field("steepness"), f"{desc.steepness} is below 1 (allowed from 6.4)")
    require(desc.steepness != 0 and not math.isnan(desc.steepness), c.field("steepness"), "must be nonzero")


def _check_celu(desc: Any, c: Context) -> None:
    require(desc.alpha != 0, c.field("alpha"), "must be nonzero (CELU divides by it)")


def _relu(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    return g.kernel("Relu", RELU_TYPES, xs[0])


def _parameterized_relu(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x, slope = xs
    zero = g.const(0, x.dtype)
    scaled = g.kernel("Mul", SIGNED, x, slope)
    return g.where(g.kernel("GreaterOrEqual", SIGNED, x, zero, dtype=BOOL), x, scaled)


def _relu_grad(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x, gradient = xs
    positive = g.kernel("Greater", SIGNED, x, g.const(0, x.dtype), dtype=BOOL)
    return g.where(positive, gradient, g.const(0, gradient.dtype))


def _shrink(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    """x - Bias if x > Threshold, else x + Bias if x < -Threshold, else 0: in the page's order, which decides a
    negative Threshold (ONNX Shrink tests x < -lambd first). Integer tensors compute in FLOAT64, truncated toward
    zero and saturated to the type."""
    x = xs[0]
    wide = x if x.dtype.kind == "f" else g.cast(x, F64)
    threshold, bias = g.const(c.desc.threshold, wide.dtype), g.const(c.desc.bias, wide.dtype)
    below = g.where(
        g.op("Less", wide, g.op("Neg", threshold), dtype=BOOL), g.op("Add", wide, bias), g.const(0, wide.dtype)
    )
    result = g.where(g.op("Greater", wide, threshold, dtype=BOOL), g.op("Sub", wide, bias), below)
    return result if x.dtype.kind == "f" else saturate(g, result, x.dtype)


def _gelu(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    erf = g.kernel("Erf", F32_ONLY, g.op("Mul", x, g.const(1 / math.sqrt(2), x.dtype)))
    return g.op("Mul", g.op("Mul", x, g.const(0.5, x.dtype)), g.op("Add", erf, g.const(1, x.dtype)))


def _swish(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    return g.op("Mul", x, g.op("Sigmoid", g.op("Mul", x, g.const(c.desc.sigmoid_input_scale, x.dtype))))


def _hard_swish(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    x = xs[0]
    return g.op("Mul", x, g.op("HardSigmoid", x, alpha=float(c.desc.alpha), beta=float(c.desc.beta)))


ACTIVATIONS: tuple[ElementWise, ...] = (
    *ACTIVATIONS_OVER_AXES,
    define("ACTIVATION_ELU", _onnx("Elu", alpha="alpha")),
    define("ACTIVATION_HARD_SIGMOID", _onnx("HardSigmoid", alpha="alpha", beta="beta")),
    define("ACTIVATION_IDENTITY", lambda g, xs, c: xs[0]),
    define("ACTIVATION_LEAKY_RELU", _onnx("LeakyRelu", alpha="alpha")),
    define("ACTIVATION_LINEAR", _linear),
    define("ACTIVATION_PARAMETERIZED_RELU", _parameterized_relu),
    define("ACTIVATION_PARAMETRIC_SOFTPLUS", _parametric_softplus),
    define("ACTIVATION_RELU", _relu),
    define("ACTIVATION_SCALED_ELU", _onnx("Selu", alpha="alpha", gamma="gamma")),
    define("ACTIVATION_SCALED_TANH", _scaled_tanh),
    define("ACTIVATION_SIGMOID", _onnx("Sigmoid")),
    define("ACTIVATION_SOFTPLUS", _softplus, check=_check_softplus),
    define("ACTIVATION_SOFTSIGN", _onnx("Softsign")),
    define("ACTIVATION_TANH", _onnx("Tanh")),
    define("ACTIVATION_THRESHOLDED_RELU", _onnx("ThresholdedRelu", alpha="alpha")),
    define("ACTIVATION_SHRINK", _shrink),
    define("ACTIVATION_CELU", _onnx("Celu", F32_ONLY, alpha="alpha"), check=_check_celu),
    define("ACTIVATION_RELU_GRAD", _relu_grad),
    define("ACTIVATION_GELU", _gelu),
    define("ACTIVATION_SWISH", _swish),
    define("ACTIVATION_HARD_SWISH", _hard_swish),
)

_BY_CASE = {operator.case: operator for operator in ACTIVATIONS}


def check_fused(desc: Any, c: Context) -> None:
    """A `FusedActivation`: a fusable activation type at this feature level, its tensors unset (null), its own
    attribute rules, and a FLOAT16/FLOAT32 output."""
    if not desc.HasField("fused_activation"):
        return
    fused = desc.fused_activation
    case = fused.WhichOneof("desc")
    path = c.field("fused_activation")
    if case is None:
        raise InvalidArgument(path, "an OperatorDesc with no desc set; leave fused_activation unset for none")
    name = case.upper()
    level = FUSABLE.get(name)
    if level is None or parse_feature_level(level) > c.feature_level:
        fusable = ", ".join(n.lower() for n, lv in FUSABLE.items() if parse_feature_level(lv) <= c.feature_level)
        raise InvalidArgument(f"{path}.{case}", f"DML_OPERATOR_{name} is not fusable; fusable: {fusable}")
    require(c.output.kind == "f", path, "a fused activation needs a FLOAT32 or FLOAT16 output")
    activation = _BY_CASE[case]
    inner = getattr(fused, case)
    for field in (*activation.inputs, *activation.outputs):
        require(not inner.HasField(field.name), f"{path}.{case}.{field.name}", "must be unset in a fused activation")
    activation.check(inner, Context(inner, None, c.output, c.feature_level, f"{path}.{case}"))


def apply_fused(g: Graph, value: Value, c: Context) -> Value:
    """``value`` through the desc's fused activation, if it has one (checked by ``check_fused``)."""
    if not c.desc.HasField("fused_activation"):
        return value
    case = c.desc.fused_activation.WhichOneof("desc")
    inner = getattr(c.desc.fused_activation, case)
    return _BY_CASE[case].function(g, [value], Context(inner, None, c.output, c.feature_level, ""))
