"""ONNX's own single-node operator test cases mapped onto DirectML operator descs through the SDK's builders."""

from __future__ import annotations

import functools
import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc.codec import packed_strides, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops import Call
from dmlrpc.v1 import operators_pb2

Array = npt.NDArray[Any]
Outputs = list[Any]

__all__ = [
    "MAPPERS",
    "UNMAPPED_OPS",
    "XFAIL",
    "NodeCase",
    "counts",
    "mapped_cases",
    "skipped_cases",
]


class Unmappable(Exception):
    """One case of a mapped op type that has no exact DirectML equivalent (its reason is the message)."""


@dataclass(frozen=True)
class Node:
    """What a mapper reads of an ONNX case: the node's attributes, its inputs and expected outputs by position."""

    op_type: str
    opset: int
    attrs: dict[str, Any]
    inputs: list[Array | None]
    outputs: list[Array]
    #: The node's output positions that ``outputs`` hold (an optional output left out is an empty name in ONNX).
    slots: list[int]

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def input(self, index: int) -> Array | None:
        return self.inputs[index] if index < len(self.inputs) else None

    def x(self, index: int = 0) -> Array:
        value = self.input(index)
        if value is None:
            raise Unmappable(f"input {index} is absent")
        return value


@dataclass(frozen=True)
class Mapped:
    """A mapper's answer: the SDK call, how its (NumPy-shaped) results become ONNX's outputs, and its tolerance."""

    call: Call
    convert: Callable[[Outputs], Outputs] | None = None
    rtol: float | None = None
    atol: float | None = None
    xfail: str | None = None


@dataclass(frozen=True)
class NodeCase:
    """One ONNX test case as a DirectML call: the desc and inputs for ``client.execute``, and ONNX's outputs."""

    id: str
    op_type: str
    operator_desc: operators_pb2.OperatorDesc
    inputs: tuple[Any, ...]
    expected: tuple[Array, ...]
    rtol: float
    atol: float
    finish: Callable[[Outputs], Outputs] = field(repr=False)
    xfail: str | None = None

    def outputs(self, raw: Sequence[Any]) -> Outputs:
        """The server's outputs as ONNX's: reshaped and typed as the SDK's call says, then converted (exactly)."""
        return self.finish(list(raw))


Mapper = Callable[[Node], Mapped]
MAPPERS: dict[str, Mapper] = {}


def _register(*op_types: str) -> Callable[[Mapper], Mapper]:
    def add(mapper: Mapper) -> Mapper:
        for op_type in op_types:
            MAPPERS[op_type] = mapper
        return mapper

    return add


# ---------------------------------------------------------------------------------------------------------------
# Conversions and checks shared by the mappers (each one exact: a value that would change is refused instead).

_DML_DTYPES = frozenset(
    np.dtype(t) for t in (np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)
) | frozenset(np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.bool_))


def _dml_dtype(array: Array, where: str = "input") -> Array:
    if array.dtype not in _DML_DTYPES:
        raise Unmappable(f"{where} dtype {array.dtype} has no DirectML data type")
    return array


def _floats(node: Node, *arrays: Array | None) -> None:
    """Refuse dtypes that DirectML's float-only operators lack (FLOAT64 is nowhere in them)."""
    for array in arrays:
        if array is not None and array.dtype not in (np.float32, np.float16):
            raise Unmappable(f"{node.op_type} on {array.dtype}: DirectML takes float32/float16 only")


def _nonempty(*arrays: Array | None) -> None:
    for array in arrays:
        if array is not None and array.size == 0:
            raise Unmappable("an empty tensor: DirectML has no zero-sized dimensions")


def _index_array(values: Array, dtype: npt.DTypeLike = np.int32) -> Array:
    """Integer indices in ``dtype`` where every value fits (exact), else refused."""
    target = np.dtype(dtype)
    info = np.iinfo(target)
    if values.size and (values.min() < info.min or values.max() > info.max):
        raise Unmappable(f"index values do not fit {target}")
    return values.astype(target)


def _ints(values: Array | Sequence[int] | None) -> list[int]:
    return [] if values is None else [int(v) for v in np.asarray(values).reshape(-1)]


def _as(dtype: npt.DTypeLike, index: int = 0) -> Callable[[Outputs], Outputs]:
    """Output ``index`` converted to ``dtype`` (used for index and boolean outputs: uint32 -> int64, uint8 -> bool,
    where every value is representable)."""

    def convert(outputs: Outputs) -> Outputs:
        outputs[index] = np.asarray(outputs[index]).astype(dtype)
        return outputs

    return convert


def _reshape(shape: Sequence[int], index: int = 0) -> Callable[[Outputs], Outputs]:
    def convert(outputs: Outputs) -> Outputs:
        outputs[index] = np.asarray(outputs[index]).reshape(tuple(shape))
        return outputs

    return convert


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _axes_input(node: Node, index: int, attr: str = "axes") -> list[int] | None:
    """Axes given as an input (newer opsets) or an attribute (older ones); ``None``: not given."""
    given = node.input(index)
    if given is not None:
        return _ints(given)
    value = node.attr(attr)
    return None if value is None else [int(v) for v in value]


# ---------------------------------------------------------------------------------------------------------------
# Element-wise operators and activations.

_UNARY = {
    "Abs": "abs",
    "Acos": "acos",
    "Acosh": "acosh",
    "Asin": "asin",
    "Asinh": "asinh",
    "Atan": "atan",
    "Atanh": "atanh",
    "Ceil": "ceil",
    "Cos": "cos",
    "Cosh": "cosh",
    "Erf": "erf",
    "Exp": "exp",
    "Floor": "floor",
    "Log": "log",
    "Neg": "negate",
    "Reciprocal": "recip",
    "Sign": "sign",
    "Sin": "sin",
    "Sinh": "sinh",
    "Sqrt": "sqrt",
    "Tan": "tan",
    "Tanh": "tanh",
    "BitwiseNot": "bit_not",
}


@_register(*_UNARY)
def _unary(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    return Mapped(ops.element_wise(_UNARY[node.op_type], x))


_BINARY = {
    "Add": "add",
    "Sub": "subtract",
    "Mul": "multiply",
    "Div": "divide",
    "Pow": "pow",
    "BitwiseAnd": "bit_and",
    "BitwiseOr": "bit_or",
    "BitwiseXor": "bit_xor",
}


@_register(*_BINARY)
def _binary(node: Node) -> Mapped:
    a, b = _dml_dtype(node.x(0)), _dml_dtype(node.x(1))
    if node.op_type == "Pow" and a.dtype != b.dtype:
        # DirectML's POW takes one data type for both operands; ONNX Pow mixes them (the result is the base's).
        raise Unmappable(f"Pow of {a.dtype} by {b.dtype}: DirectML's POW has one data type")
    if node.op_type == "Pow" and a.dtype.itemsize == 8:
        raise Unmappable(f"Pow of {a.dtype}: DirectML's POW takes no 64-bit type")
    return Mapped(ops.element_wise(_BINARY[node.op_type], a, b))


_LOGICAL = {
    "And": "logical_and",
    "Or": "logical_or",
    "Xor": "logical_xor",
    "Not": "logical_not",
    "Equal": "logical_equals",
    "Greater": "logical_greater_than",
    "Less": "logical_less_than",
    "GreaterOrEqual": "logical_greater_than_or_equal",
    "LessOrEqual": "logical_less_than_or_equal",
}


@_register(*_LOGICAL)
def _logical(node: Node) -> Mapped:
    inputs = [_dml_dtype(a) for a in node.inputs if a is not None]
    call = ops.element_wise(_LOGICAL[node.op_type], *inputs)
    # The comparisons answer UINT8 0/1 (the logical operators on bool give bool already): ONNX's bool exactly.
    return Mapped(call, _as(np.bool_))


@_register("Max", "Min", "Mean", "Sum")
def _variadic(node: Node) -> Mapped:
    inputs = [_dml_dtype(a) for a in node.inputs if a is not None]
    name = {"Max": "max", "Min": "min", "Mean": "mean", "Sum": "add"}[node.op_type]
    if len(inputs) == 1:
        return Mapped(ops.element_wise("identity", inputs[0]))
    if len(inputs) != 2:
        raise Unmappable(f"{node.op_type} of {len(inputs)} inputs: DirectML's operator takes two")
    return Mapped(ops.element_wise(name, *inputs))


@_register("Mod")
def _mod(node: Node) -> Mapped:
    # ONNX Mod's fmod=1 is C's fmod (the dividend's sign): DirectML's MODULUS_TRUNCATE; fmod=0 is Python's %
    # (the divisor's sign): MODULUS_FLOOR.
    name = "modulus_truncate" if node.attr("fmod", 0) else "modulus_floor"
    return Mapped(ops.element_wise(name, _dml_dtype(node.x(0)), _dml_dtype(node.x(1))))


@_register("BitShift")
def _bit_shift(node: Node) -> Mapped:
    # ONNX's one op with a direction attribute is DirectML's two descs.
    name = "bit_shift_left" if node.attr("direction") == b"LEFT" else "bit_shift_right"
    if node.x(0).dtype.kind != "u":
        raise Unmappable(f"BitShift of {node.x(0).dtype}: DirectML's BIT_SHIFT takes unsigned types")
    return Mapped(ops.element_wise(name, node.x(0), node.x(1)))


@_register("IsNaN")
def _is_nan(node: Node) -> Mapped:
    return Mapped(ops.element_wise("is_nan", node.x()), _as(np.bool_))


@_register("IsInf")
def _is_inf(node: Node) -> Mapped:
    positive, negative = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    if not positive and not negative:
        raise Unmappable("IsInf detecting neither sign: DirectML's IS_INFINITY has no such mode")
    mode = (
        operators_pb2.IS_INFINITY_MODE_EITHER
        if positive and negative
        else operators_pb2.IS_INFINITY_MODE_POSITIVE
        if positive
        else operators_pb2.IS_INFINITY_MODE_NEGATIVE
    )
    return Mapped(ops.element_wise("is_infinity", node.x(), infinity_mode=mode), _as(np.bool_))


@_register("Round")
def _round(node: Node) -> Mapped:
    mode = operators_pb2.ROUNDING_MODE_HALVES_TO_NEAREST_EVEN  # ONNX Round rounds halves to even
    return Mapped(ops.element_wise("round", node.x(), rounding_mode=mode))


@_register("Where")
def _where(node: Node) -> Mapped:
    condition, a, b = node.x(0), _dml_dtype(node.x(1)), _dml_dtype(node.x(2))
    return Mapped(ops.element_wise("if", condition, a, b))


@_register("Clip")
def _clip(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    low: float = float(node.attr("min", -np.inf))
    high: float = float(node.attr("max", np.inf))
    if node.input(1) is not None:
        low = float(node.x(1).item())
    if node.input(2) is not None:
        high = float(node.x(2).item())
    if x.dtype.kind != "f" and any(math.isfinite(v) and float(np.float32(v)) != v for v in (low, high)):
        raise Unmappable("integer bounds that FLOAT32 does not hold")
    # CLIP's page: f(x) = min(Max, max(Min, x)), ONNX Clip's order (Max wins when Min > Max); CLIP1's is the
    # reverse, so CLIP it is. Its FLOAT bounds clamp integer tensors to the integers inside them.
    return Mapped(ops.element_wise("clip", x, min=low, max=high))


@_register("Identity")
def _identity(node: Node) -> Mapped:
    return Mapped(ops.element_wise("identity", _dml_dtype(node.x())))


@_register("Dropout")
def _dropout(node: Node) -> Mapped:
    # Inference Dropout (no training mode, no mask output) is the identity.
    if node.input(2) is not None and bool(node.x(2)):
        raise Unmappable("Dropout in training mode draws random masks")
    if len(node.outputs) != 1:
        raise Unmappable("Dropout's mask output has no DirectML operator")
    return Mapped(ops.element_wise("identity", node.x()))


_ACTIVATIONS: dict[str, tuple[str, Callable[[Node], dict[str, Any]]]] = {
    "Relu": ("relu", lambda n: {}),
    "Sigmoid": ("sigmoid", lambda n: {}),
    "Softsign": ("softsign", lambda n: {}),
    "Softplus": ("softplus", lambda n: {"steepness": 1.0}),
    "LeakyRelu": ("leaky_relu", lambda n: {"alpha": n.attr("alpha", 0.01)}),
    "Elu": ("elu", lambda n: {"alpha": n.attr("alpha", 1.0)}),
    "Celu": ("celu", lambda n: {"alpha": n.attr("alpha", 1.0)}),
    "Selu": (
        "scaled_elu",
        lambda n: {
            "alpha": n.attr("alpha", 1.67326319217681884765625),
            "gamma": n.attr("gamma", 1.05070102214813232421875),
        },
    ),
    "HardSigmoid": ("hard_sigmoid", lambda n: {"alpha": n.attr("alpha", 0.2), "beta": n.attr("beta", 0.5)}),
    "HardSwish": ("hard_swish", lambda n: {"alpha": 1 / 6, "beta": 0.5}),
    "ThresholdedRelu": ("thresholded_relu", lambda n: {"alpha": n.attr("alpha", 1.0)}),
    "Shrink": ("shrink", lambda n: {"bias": n.attr("bias", 0.0), "threshold": n.attr("lambd", 0.5)}),
    "Swish": ("swish", lambda n: {"sigmoid_input_scale": n.attr("alpha", 1.0)}),
}


@_register(*_ACTIVATIONS)
def _activation(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    name, attributes = _ACTIVATIONS[node.op_type]
    return Mapped(ops.activation(name, x, **attributes(node)))


@_register("Gelu")
def _gelu(node: Node) -> Mapped:
    if node.attr("approximate", b"none") != b"none":
        raise Unmappable("Gelu's tanh approximation: DirectML's GELU is the erf form")
    _floats(node, node.x())
    return Mapped(ops.activation("gelu", node.x()))


@_register("PRelu")
def _prelu(node: Node) -> Mapped:
    x, slope = node.x(0), node.x(1)
    _floats(node, x, slope)
    return Mapped(ops.activation("parameterized_relu", x, slope))


@_register("Softmax", "LogSoftmax", "Hardmax")
def _softmax(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    rank = x.ndim
    axis = _axis(node.attr("axis", -1 if node.opset >= 13 else 1), rank)
    # Before opset 13 these ops coerce the input to 2-D at axis: the reduction is over every axis from it.
    axes = [axis] if node.opset >= 13 else list(range(axis, rank))
    name = {"Softmax": "softmax1", "LogSoftmax": "log_softmax1", "Hardmax": "hardmax1"}[node.op_type]
    return Mapped(ops.activation(name, x, axes=axes))


@_register("Cast", "CastLike")
def _cast(node: Node) -> Mapped:
    from onnx import helper

    x = node.x()
    if node.op_type == "CastLike":
        target = node.x(1).dtype
    else:
        target = np.dtype(helper.tensor_dtype_to_np_dtype(node.attr("to")))
    if x.dtype not in _DML_DTYPES or target not in _DML_DTYPES:
        raise Unmappable(f"Cast {x.dtype} -> {target}: a type DirectML lacks")
    if target == np.bool_:
        raise Unmappable("Cast to bool: DirectML writes UINT8 values, not x != 0")
    if node.attr("saturate", 1) == 0:
        raise Unmappable("Cast's saturate=0 is for float8 types")
    return Mapped(ops.cast(x, target))


# ---------------------------------------------------------------------------------------------------------------
# Data movement through DirectML's strides: IDENTITY reading a tensor desc whose sizes and strides express the
# transpose, broadcast or reshape (DirectML has no such operators: its documentation points to the strides).


def _strided_identity(source: Array, sizes: Sequence[int], strides: Sequence[int], view: Array) -> Call:
    """ELEMENT_WISE_IDENTITY reading ``source``'s buffer through ``sizes``/``strides``; ``view`` is that reading
    as NumPy makes it (what the SDK encodes back into the buffer's layout)."""
    wire = list(sizes) or [1]
    desc = operators_pb2.OperatorDesc(
        element_wise_identity=operators_pb2.ElementWiseIdentityOperatorDesc(
            input_tensor=tensor_desc((source.dtype, wire), list(strides) or [1]),
            output_tensor=tensor_desc((source.dtype, wire)),
        )
    )
    return Call(desc, (view.reshape(wire),), (tuple(sizes),))


@_register("Transpose")
def _transpose(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    perm = [int(p) for p in node.attr("perm", list(range(x.ndim))[::-1])]
    strides = packed_strides(x.shape)
    return Mapped(_strided_identity(x, [x.shape[p] for p in perm], [strides[p] for p in perm], np.transpose(x, perm)))


@_register("Expand")
def _expand(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    shape = np.broadcast_shapes(x.shape, tuple(_ints(node.x(1))))
    padded = x.reshape((1,) * (len(shape) - x.ndim) + x.shape)
    strides = [
        0 if size == 1 and full != 1 else s
        for size, full, s in zip(padded.shape, shape, packed_strides(padded.shape), strict=True)
    ]
    return Mapped(_strided_identity(padded, shape, strides, np.broadcast_to(padded, shape)))


@_register("Reshape", "Flatten", "Squeeze", "Unsqueeze")
def _reshape_op(node: Node) -> Mapped:
    # A reshape is a tensor desc of other sizes over the same packed buffer: IDENTITY with the new sizes, which
    # the harness works out by ONNX's rules.
    x = _dml_dtype(node.x())
    _nonempty(x)
    if node.op_type == "Reshape":
        requested = _ints(node.x(1))
        if not node.attr("allowzero", 0):
            requested = [x.shape[i] if d == 0 else d for i, d in enumerate(requested)]
        shape = np.empty(x.shape, dtype=np.bool_).reshape(requested).shape
    elif node.op_type == "Flatten":
        axis = _axis(int(node.attr("axis", 1)), x.ndim)
        shape = (math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))
    elif node.op_type == "Squeeze":
        axes = _axes_input(node, 1)
        shape = np.squeeze(np.empty(x.shape, np.bool_), None if axes is None else tuple(axes)).shape
    else:
        shape = np.expand_dims(np.empty(x.shape, np.bool_), tuple(_axes_input(node, 1) or [])).shape
    return Mapped(_strided_identity(x, shape, packed_strides(shape), x.reshape(shape)))


# ---------------------------------------------------------------------------------------------------------------
# Matrix products and convolutions.


@_register("Gemm")
def _gemm(node: Node) -> Mapped:
    a, b, c = node.x(0), node.x(1), node.input(2)
    _floats(node, a, b, c)
    return Mapped(
        ops.gemm(
            a,
            b,
            c,
            trans_a=bool(node.attr("transA", 0)),
            trans_b=bool(node.attr("transB", 0)),
            alpha=node.attr("alpha", 1.0),
            beta=node.attr("beta", 1.0),
        )
    )


@_register("MatMul")
def _matmul(node: Node) -> Mapped:
    a, b = node.x(0), node.x(1)
    _floats(node, a, b)
    if a.ndim == 1 or b.ndim == 1:
        # ONNX (as np.matmul) makes a 1-D operand a matrix by a leading (A) or trailing (B) 1 and drops it from
        # the result: the same product over the same buffers.
        shape = np.matmul(np.zeros(a.shape, np.float32), np.zeros(b.shape, np.float32)).shape
        a2 = a.reshape(1, -1) if a.ndim == 1 else a
        b2 = b.reshape(-1, 1) if b.ndim == 1 else b
        return Mapped(ops.gemm(a2, b2), _reshape(shape))
    return Mapped(ops.gemm(a, b))


@_register("MatMulInteger")
def _matmul_integer(node: Node) -> Mapped:
    return Mapped(
        ops.matrix_multiply_integer(node.x(0), node.x(1), a_zero_point=node.input(2), b_zero_point=node.input(3))
    )


def _window(node: Node, x: Array, kernel: Sequence[int], *, transpose: bool = False) -> dict[str, Any]:
    """Strides, dilations and start/end padding of a Conv/Pool node, ``auto_pad`` resolved as ONNX does (for
    ConvTranspose by ``_conv_transpose``, from the output's shape)."""
    spatial = x.ndim - 2
    strides = [int(s) for s in node.attr("strides", [1] * spatial)]
    dilations = [int(d) for d in node.attr("dilations", [1] * spatial)]
    pads = [int(p) for p in node.attr("pads", [0] * (2 * spatial))]
    auto_pad = node.attr("auto_pad", b"NOTSET")
    if auto_pad in (b"SAME_UPPER", b"SAME_LOWER") and not transpose:
        pads = [0] * (2 * spatial)
        for i in range(spatial):
            out = -(-x.shape[2 + i] // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - x.shape[2 + i])
            small, large = total // 2, total - total // 2
            pads[i], pads[spatial + i] = (small, large) if auto_pad == b"SAME_UPPER" else (large, small)
    elif auto_pad == b"VALID":
        pads = [0] * (2 * spatial)
    elif auto_pad not in (b"NOTSET", b"") and not transpose:
        raise Unmappable(f"auto_pad {auto_pad!r} here")
    return {"strides": strides, "dilations": dilations, "start_padding": pads[:spatial], "end_padding": pads[spatial:]}


@_register("Conv")
def _conv(node: Node) -> Mapped:
    x, w, b = node.x(0), node.x(1), node.input(2)
    _floats(node, x, w, b)
    window = _window(node, x, w.shape[2:])
    return Mapped(ops.convolution(x, w, b, group_count=int(node.attr("group", 1)), **window))


@_register("ConvTranspose")
def _conv_transpose(node: Node) -> Mapped:
    x, w, b = node.x(0), node.x(1), node.input(2)
    _floats(node, x, w, b)
    spatial = x.ndim - 2
    window = _window(node, x, w.shape[2:], transpose=True)
    output_padding = [int(p) for p in node.attr("output_padding", [0] * spatial)]
    strides, dilations = window["strides"], window["dilations"]
    full = [(x.shape[2 + i] - 1) * strides[i] + (w.shape[2 + i] - 1) * dilations[i] + 1 for i in range(spatial)]
    if node.attr("output_shape") is not None or node.attr("auto_pad", b"NOTSET") not in (b"NOTSET", b""):
        # ONNX derives the padding from the requested shape: total = full + output_padding - shape, split as
        # auto_pad says (SAME_UPPER puts the larger half at the end).
        upper = node.attr("auto_pad", b"NOTSET") != b"SAME_LOWER"
        given = node.attr("output_shape")
        expected = (
            [int(d) for d in given[-spatial:]]
            if given is not None
            else [x.shape[2 + i] * strides[i] for i in range(spatial)]
        )
        start, end = [], []
        for i in range(spatial):
            total = full[i] + output_padding[i] - expected[i]
            if total < 0:
                output_padding[i] -= total
                total = 0
            small, large = total // 2, total - total // 2
            start.append(small if upper else large)
            end.append(large if upper else small)
        window["start_padding"], window["end_padding"] = start, end
    return Mapped(
        ops.convolution(
            x,
            w,
            b,
            group_count=int(node.attr("group", 1)),
            direction="backward",
            output_padding=output_padding,
            **window,
        )
    )


@_register("ConvInteger")
def _conv_integer(node: Node) -> Mapped:
    x, w = node.x(0), node.x(1)
    window = _window(node, x, w.shape[2:])
    return Mapped(
        ops.convolution_integer(
            x,
            w,
            input_zero_point=node.input(2),
            filter_zero_point=node.input(3),
            group_count=int(node.attr("group", 1)),
            **window,
        )
    )


# ---------------------------------------------------------------------------------------------------------------
# Pooling.


def _ceil_padding(node: Node, x: Array, kernel: Sequence[int], window: dict[str, Any]) -> None:
    """ONNX's ceil_mode as extra end padding (DirectML's output size formula floors): exact where padding never
    counts (max pooling; average pooling without count_include_pad)."""
    if not node.attr("ceil_mode", 0):
        return
    for i, size in enumerate(x.shape[2:]):
        span = (kernel[i] - 1) * window["dilations"][i] + 1
        padded = size + window["start_padding"][i] + window["end_padding"][i]
        out = -(-(padded - span) // window["strides"][i]) + 1
        # ONNX drops a last window that starts in the end padding.
        if (out - 1) * window["strides"][i] >= size + window["start_padding"][i]:
            out -= 1
        needed = (out - 1) * window["strides"][i] + span - padded
        window["end_padding"][i] += max(0, needed)


@_register("MaxPool")
def _max_pool(node: Node) -> Mapped:
    x = node.x()
    kernel = [int(k) for k in node.attr("kernel_shape")]
    if node.attr("storage_order", 0):
        raise Unmappable("MaxPool's column-major indices (storage_order=1): DirectML's are row-major")
    window = _window(node, x, kernel)
    _ceil_padding(node, x, kernel, window)
    if node.slots == [0, 1]:
        call = ops.max_pooling_with_indices(x, kernel, index_dtype=np.uint64, **window)
        # DirectML's indices are unsigned: ONNX's int64 holds every one exactly.
        return Mapped(call, _as(np.int64, 1))
    return Mapped(ops.max_pooling(x, kernel, **window))


@_register("AveragePool")
def _average_pool(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    kernel = [int(k) for k in node.attr("kernel_shape")]
    window = _window(node, x, kernel)
    include = bool(node.attr("count_include_pad", 0))
    if include and node.attr("ceil_mode", 0):
        raise Unmappable("ceil_mode with count_include_pad: ONNX's divisor leaves out the ceil overhang")
    _ceil_padding(node, x, kernel, window)
    if node.attr("auto_pad", b"NOTSET") in (b"SAME_UPPER", b"SAME_LOWER") and include:
        raise Unmappable("auto_pad SAME with count_include_pad")
    return Mapped(ops.average_pooling(x, kernel, include_padding=include, **window))


@_register("LpPool")
def _lp_pool(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    kernel = [int(k) for k in node.attr("kernel_shape")]
    window = _window(node, x, kernel)
    _ceil_padding(node, x, kernel, window)
    return Mapped(ops.lp_pooling(x, kernel, p=int(node.attr("p", 2)), **window))


@_register("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    kernel = list(x.shape[2:])
    build = ops.average_pooling if node.op_type == "GlobalAveragePool" else ops.max_pooling
    return Mapped(build(x, kernel))


@_register("MaxUnpool")
def _max_unpool(node: Node) -> Mapped:
    x, indices = node.x(0), node.x(1)
    kernel = [int(k) for k in node.attr("kernel_shape")]
    spatial = len(kernel)
    strides = [int(s) for s in node.attr("strides", [1] * spatial)]
    pads = [int(p) for p in node.attr("pads", [0] * (2 * spatial))]
    default = [(x.shape[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[spatial + i] for i in range(spatial)]
    shape = tuple(_ints(node.input(2))) if node.input(2) is not None else (*x.shape[:2], *default)
    # ONNX's indices address the default-sized output (as MaxPool wrote them) even where output_shape is larger;
    # DirectML's address the output: the same elements, renumbered exactly.
    coordinates = np.unravel_index(indices.astype(np.int64), (*x.shape[:2], *default))
    renumbered = np.ravel_multi_index(coordinates, shape)
    return Mapped(ops.max_unpooling(x, _index_array(np.asarray(renumbered), np.uint32), shape))


# ---------------------------------------------------------------------------------------------------------------
# Reductions and index selection.

_REDUCE = {
    "ReduceSum": "sum",
    "ReduceMean": "average",
    "ReduceMax": "max",
    "ReduceMin": "min",
    "ReduceProd": "multiply",
    "ReduceL1": "l1",
    "ReduceL2": "l2",
    "ReduceSumSquare": "sum_square",
    "ReduceLogSum": "log_sum",
    "ReduceLogSumExp": "log_sum_exp",
}


@_register(*_REDUCE)
def _reduce(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    _nonempty(x)
    if x.dtype == np.bool_:
        raise Unmappable("a reduction of bool: DirectML's REDUCE takes numbers")
    axes = _axes_input(node, 1)
    keepdims = bool(node.attr("keepdims", 1))
    if not axes:
        if axes is not None and node.attr("noop_with_empty_axes", 0):
            return Mapped(ops.element_wise("identity", x))
        axes = None
    call = ops.reduce(_REDUCE[node.op_type], x, axes, keepdims=keepdims)
    return Mapped(call)


@_register("ArgMax", "ArgMin")
def _arg(node: Node) -> Mapped:
    x = node.x()
    build = ops.argmax if node.op_type == "ArgMax" else ops.argmin
    call = build(
        x,
        int(node.attr("axis", 0)),
        keepdims=bool(node.attr("keepdims", 1)),
        select_last_index=bool(node.attr("select_last_index", 0)),
        index_dtype=np.int64,
    )
    return Mapped(call)


@_register("TopK")
def _top_k(node: Node) -> Mapped:
    x = node.x()
    k = int(node.x(1).reshape(-1)[0])
    if not node.attr("sorted", 1):
        raise Unmappable("TopK unsorted: ONNX leaves the order open")
    call = ops.top_k(
        x,
        k,
        int(node.attr("axis", -1)),
        direction="decreasing" if node.attr("largest", 1) else "increasing",
        index_dtype=np.uint64,
    )
    # DirectML's indices are unsigned: ONNX's int64 holds every one exactly.
    return Mapped(call, _as(np.int64, 1))


@_register("CumSum", "CumProd")
def _cumulative(node: Node) -> Mapped:
    x = node.x()
    axis = int(node.x(1).reshape(-1)[0])
    build = ops.cumsum if node.op_type == "CumSum" else ops.cumprod
    return Mapped(build(x, axis, reverse=bool(node.attr("reverse", 0)), exclusive=bool(node.attr("exclusive", 0))))


# ---------------------------------------------------------------------------------------------------------------
# Gather and scatter.


def _no_reduction(node: Node) -> None:
    if node.attr("reduction", b"none") != b"none":
        raise Unmappable("a scatter reduction: DirectML's scatters overwrite")


@_register("Gather")
def _gather(node: Node) -> Mapped:
    x, indices = _dml_dtype(node.x(0)), node.x(1)
    return Mapped(ops.gather(x, indices, int(node.attr("axis", 0))))


@_register("GatherElements")
def _gather_elements(node: Node) -> Mapped:
    return Mapped(ops.gather_elements(_dml_dtype(node.x(0)), node.x(1), int(node.attr("axis", 0))))


@_register("GatherND")
def _gather_nd(node: Node) -> Mapped:
    return Mapped(ops.gather_nd(_dml_dtype(node.x(0)), node.x(1), int(node.attr("batch_dims", 0))))


@_register("ScatterElements", "Scatter")
def _scatter_elements(node: Node) -> Mapped:
    _no_reduction(node)
    return Mapped(ops.scatter_elements(node.x(0), node.x(1), node.x(2), int(node.attr("axis", 0))))


@_register("ScatterND")
def _scatter_nd(node: Node) -> Mapped:
    _no_reduction(node)
    return Mapped(ops.scatter_nd(node.x(0), node.x(1), node.x(2)))


# ---------------------------------------------------------------------------------------------------------------
# Slicing, padding, joining and rearranging.


@_register("Slice")
def _slice(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    if node.opset < 10:
        starts, ends = list(node.attr("starts")), list(node.attr("ends"))
        axes: list[int] = list(node.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = _ints(node.x(1)), _ints(node.x(2))
        axes = _ints(node.input(3)) if node.input(3) is not None else list(range(len(starts)))
        steps = _ints(node.input(4)) if node.input(4) is not None else [1] * len(starts)
    offsets, sizes, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        axis = _axis(axis, x.ndim)
        picked = range(x.shape[axis])[slice(start, end, step)]
        if len(picked) == 0:
            raise Unmappable("an empty slice: DirectML has no zero-sized dimensions")
        first, last = min(picked[0], picked[-1]), max(picked[0], picked[-1])
        offsets[axis], sizes[axis], strides[axis] = first, last - first + 1, step
    return Mapped(ops.slice(x, offsets, sizes, strides))


@_register("Pad")
def _pad(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    mode = node.attr("mode", b"constant").decode()
    if node.opset < 11:
        pads = [int(p) for p in node.attr("pads")]
        value = float(node.attr("value", 0.0))
    else:
        pads = _ints(node.x(1))
        given = node.input(2)
        value = given.item() if given is not None and given.size else 0
    axes = _ints(node.input(3)) if node.input(3) is not None else list(range(x.ndim))
    start, end = [0] * x.ndim, [0] * x.ndim
    for i, axis in enumerate(axes):
        start[_axis(axis, x.ndim)], end[_axis(axis, x.ndim)] = pads[i], pads[len(axes) + i]
    if min(start + end) < 0:
        raise Unmappable("negative padding (a crop): DirectML's PADDING adds only")
    numpy_mode = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}[mode]
    return Mapped(ops.pad(x, start, end, numpy_mode, value))


@_register("Tile")
def _tile(node: Node) -> Mapped:
    return Mapped(ops.tile(_dml_dtype(node.x(0)), _ints(node.x(1))))


@_register("Concat")
def _concat(node: Node) -> Mapped:
    inputs = [_dml_dtype(a) for a in node.inputs if a is not None]
    _nonempty(*inputs)
    return Mapped(ops.join(inputs, int(node.attr("axis"))))


@_register("Split")
def _split(node: Node) -> Mapped:
    x = _dml_dtype(node.x())
    axis = _axis(int(node.attr("axis", 0)), x.ndim)
    given = node.input(1) if node.input(1) is not None else node.attr("split")
    if given is not None:
        sizes = _ints(given)
    else:
        # ONNX's equal split over the outputs (num_outputs), the last piece smaller where they do not divide.
        parts = int(node.attr("num_outputs", len(node.slots)))
        piece = -(-x.shape[axis] // parts)
        sizes = [min(piece, x.shape[axis] - i * piece) for i in range(parts)]
    if min(sizes) < 1:
        raise Unmappable("an empty piece: DirectML has no zero-sized dimensions")
    return Mapped(ops.split(x, sizes, axis))


@_register("DepthToSpace")
def _depth_to_space(node: Node) -> Mapped:
    order = "column_row_depth" if node.attr("mode", b"DCR") == b"CRD" else "depth_column_row"
    return Mapped(ops.depth_to_space(node.x(), int(node.attr("blocksize")), order))


@_register("SpaceToDepth")
def _space_to_depth(node: Node) -> Mapped:
    order = "column_row_depth" if node.attr("mode", b"DCR") == b"CRD" else "depth_column_row"
    return Mapped(ops.space_to_depth(node.x(), int(node.attr("blocksize")), order))


@_register("ReverseSequence")
def _reverse_sequence(node: Node) -> Mapped:
    x, lengths = _dml_dtype(node.x(0)), node.x(1)
    time_axis, batch_axis = int(node.attr("time_axis", 0)), int(node.attr("batch_axis", 1))
    shape = [1] * x.ndim
    shape[batch_axis] = x.shape[batch_axis]
    full = np.broadcast_to(
        _index_array(lengths, np.uint32).reshape(shape), [*x.shape[:time_axis], 1, *x.shape[time_axis + 1 :]]
    )
    return Mapped(ops.reverse_subsequences(x, np.ascontiguousarray(full), time_axis))


# ---------------------------------------------------------------------------------------------------------------
# Resampling.


def _halves(shape: Sequence[int], scales: Sequence[float], offset: float) -> bool:
    """Whether any output position maps onto an input coordinate halfway between two elements."""
    for size, scale in zip(shape, scales, strict=True):
        coordinates = (np.arange(size) + offset) / scale - offset
        if np.any(np.isclose(coordinates - np.floor(coordinates), 0.5, rtol=0, atol=1e-4)):
            return True
    return False


def _resize_shape(node: Node, x: Array, scales: Sequence[float]) -> list[int]:
    """ONNX Resize's output shape: the sizes given (rounded by the kept ratio's scale), else floor(size * scale)."""
    sizes = node.input(3) if node.op_type == "Resize" else None
    if sizes is None or not sizes.size:
        return [math.floor(n * s) for n, s in zip(x.shape, scales, strict=True)]
    shape = list(x.shape)
    axes = [_axis(int(a), x.ndim) for a in node.attr("axes", range(x.ndim))]
    kept = node.attr("keep_aspect_ratio_policy", b"stretch") != b"stretch"
    for axis, size in zip(axes, sizes.reshape(-1), strict=True):
        shape[axis] = round(x.shape[axis] * scales[axis]) if kept else int(size)
    return shape


def _resize_scales(node: Node, x: Array) -> list[float]:
    """Per dimension the scale ONNX's coordinate transform uses: the scales given, or from the sizes given (one
    for all the axes where the aspect ratio is kept), over ``axes`` (1 elsewhere)."""
    axes = [_axis(int(a), x.ndim) for a in node.attr("axes", range(x.ndim))]
    scales = [1.0] * x.ndim
    given, sizes = node.input(2), node.input(3)
    if given is not None and given.size:
        for axis, scale in zip(axes, given.reshape(-1), strict=True):
            scales[axis] = float(scale)
        return scales
    if sizes is None:
        raise Unmappable("Resize with neither scales nor sizes")
    ratios = [int(size) / x.shape[axis] for axis, size in zip(axes, sizes.reshape(-1), strict=True)]
    policy = node.attr("keep_aspect_ratio_policy", b"stretch")
    if policy != b"stretch":
        ratios = [min(ratios) if policy == b"not_larger" else max(ratios)] * len(axes)
    for axis, ratio in zip(axes, ratios, strict=True):
        scales[axis] = ratio
    return scales


_COORDINATES = {b"half_pixel": 0.5, b"pytorch_half_pixel": 0.5, b"asymmetric": 0.0, b"align_corners": 0.0}


@_register("Resize", "Upsample")
def _resize(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    mode = node.attr("mode", b"nearest")
    if node.op_type == "Upsample":
        transform, nearest = b"asymmetric", b"floor"
        scales = [float(s) for s in node.x(1)]
    else:
        transform = node.attr("coordinate_transformation_mode", b"half_pixel")
        nearest = node.attr("nearest_mode", b"round_prefer_floor")
        scales = _resize_scales(node, x)
    expected = _resize_shape(node, x, scales)
    if mode == b"cubic":
        raise Unmappable("cubic interpolation: DirectML's RESAMPLE is nearest or linear")
    if transform not in _COORDINATES:
        raise Unmappable(f"coordinate_transformation_mode {transform.decode()}")
    offset = _COORDINATES[transform]
    if transform == b"align_corners":
        # x_in = x_out * (in - 1) / (length - 1): DirectML's formula with offsets 0 and that ratio as the scale,
        # where ONNX's length is in * scale unfloored when scales are given, the output size otherwise.
        lengths = [i * s for i, s in zip(x.shape, scales, strict=True)]
        scales = [
            (n - 1) / (i - 1) if n != 1 and i > 1 else s for n, i, s in zip(lengths, x.shape, scales, strict=True)
        ]
    if (
        transform == b"pytorch_half_pixel"
        and min(expected) == 1
        and any(o == 1 and i != 1 for o, i in zip(expected, x.shape, strict=True))
    ):
        raise Unmappable("pytorch_half_pixel onto a size of 1 reads coordinate 0, not a pixel centre")
    rounding: str | None = None
    if mode == b"nearest":
        if nearest == b"round_prefer_ceil":
            rounding = None  # DirectML's RESAMPLE rounds halves up
        elif nearest in (b"floor", b"ceil"):
            rounding = nearest.decode()
        elif _halves(expected, scales, offset):
            raise Unmappable("nearest_mode round_prefer_floor onto coordinates at .5: DirectML rounds halves up")
        # Else no output position reads a coordinate at .5 (it depends on the shapes alone): rounding halves
        # up or down picks the same elements.
    antialias = bool(node.attr("antialias", 0))
    if antialias and mode != b"linear":
        raise Unmappable("antialiased nearest")
    if antialias and any(0.5 <= s < 1 for s in scales):
        # RESAMPLE3's page: antialiasing applies to LINEAR downscaling with 1/Scale > 2 only; ONNX's below 1.
        raise Unmappable("antialiased downscaling by 1/2 to 1: DirectML antialiases only below 1/2")
    call = ops.resample(
        x,
        scales,
        mode="linear" if mode == b"linear" else "nearest",
        output_shape=list(expected),
        input_pixel_offsets=[offset] * x.ndim,
        output_pixel_offsets=[-offset] * x.ndim,
        rounding=rounding,
        antialiased=antialias,
    )
    return Mapped(call)


# ---------------------------------------------------------------------------------------------------------------
# Normalisations.


@_register("BatchNormalization")
def _batch_normalization(node: Node) -> Mapped:
    x, scale, bias, mean, var = (node.x(i) for i in range(5))
    _floats(node, x)
    if node.attr("training_mode", 0) or len(node.outputs) != 1:
        raise Unmappable("training BatchNormalization's running statistics")
    shape = (-1,) + (1,) * (x.ndim - 2)
    params = [p.reshape(shape) for p in (mean, var, scale, bias)]
    return Mapped(ops.batch_normalization(x, *params, epsilon=node.attr("epsilon", 1e-5)))


@_register("InstanceNormalization")
def _instance_normalization(node: Node) -> Mapped:
    x, scale, bias = node.x(0), node.x(1), node.x(2)
    _floats(node, x)
    shape = (-1,) + (1,) * (x.ndim - 2)
    call = ops.mean_variance_normalization(
        x,
        list(range(2, x.ndim)),
        scale=scale.reshape(shape),
        bias=bias.reshape(shape),
        epsilon=node.attr("epsilon", 1e-5),
    )
    return Mapped(call)


@_register("LayerNormalization")
def _layer_normalization(node: Node) -> Mapped:
    x, scale, bias = node.x(0), node.x(1), node.input(2)
    _floats(node, x)
    if len(node.outputs) != 1:
        raise Unmappable("LayerNormalization's Mean and InvStdDev outputs: MVN gives the normalised tensor only")
    axis = _axis(int(node.attr("axis", -1)), x.ndim)
    call = ops.mean_variance_normalization(
        x, list(range(axis, x.ndim)), scale=scale, bias=bias, epsilon=node.attr("epsilon", 1e-5)
    )
    return Mapped(call)


@_register("MeanVarianceNormalization")
def _mvn(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    # ONNX's formula has epsilon 1e-9 under the square root; DirectML's MVN adds epsilon to the variance: with
    # this data the two agree within the case's tolerance.
    axes = [int(a) for a in node.attr("axes", [0, 2, 3])]
    return Mapped(ops.mean_variance_normalization(x, axes, epsilon=1e-9))


@_register("LpNormalization")
def _lp_normalization(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    p = int(node.attr("p", 2))
    if p not in (1, 2):
        raise Unmappable("DirectML's LP_NORMALIZATION takes p 1 or 2")
    # ONNX gives 0 for a zero norm; DirectML divides by max(norm, epsilon), the same 0 for a tiny epsilon.
    return Mapped(ops.lp_normalization(x, int(node.attr("axis", -1)), p=p, epsilon=1e-12))


@_register("LRN")
def _lrn(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    return Mapped(
        ops.local_response_normalization(
            x,
            int(node.attr("size")),
            alpha=node.attr("alpha", 1e-4),
            beta=node.attr("beta", 0.75),
            bias=node.attr("bias", 1.0),
        )
    )


# ---------------------------------------------------------------------------------------------------------------
# Generators.


@_register("OneHot")
def _one_hot(node: Node) -> Mapped:
    indices, depth, values = node.x(0), node.x(1), node.x(2)
    if indices.dtype.kind == "f":
        if not np.all(indices == np.trunc(indices)):
            raise Unmappable("fractional float indices")
        indices = _index_array(indices, np.int64)
    _dml_dtype(values)
    return Mapped(ops.one_hot(indices, int(depth.reshape(-1)[0]), values, int(node.attr("axis", -1))))


@_register("Range")
def _range(node: Node) -> Mapped:
    start, limit, delta = node.x(0), node.x(1), node.x(2)
    _dml_dtype(start)
    count = max(math.ceil((limit.item() - start.item()) / delta.item()), 0)
    if count == 0:
        raise Unmappable("an empty range: DirectML has no zero-sized dimensions")
    return Mapped(ops.fill_value_sequence((count,), start.item(), delta.item(), start.dtype))


@_register("NonZero")
def _nonzero(node: Node) -> Mapped:
    x = node.x()
    _nonempty(x)
    # DirectML answers np.argwhere's rows of uint32; ONNX wants the int64 transpose of them.
    return Mapped(ops.nonzero_coordinates(x), lambda out: [np.ascontiguousarray(out[1].T).astype(np.int64)])


@_register("ConstantOfShape")
def _constant_of_shape(node: Node) -> Mapped:
    from onnx import numpy_helper

    shape = tuple(_ints(node.x()))
    given = node.attr("value")
    value = np.zeros(1, np.float32) if given is None else numpy_helper.to_array(given)
    _dml_dtype(value)
    if 0 in shape:
        raise Unmappable("an empty tensor: DirectML has no zero-sized dimensions")
    return Mapped(ops.fill_value_constant(shape or (1,), value.reshape(-1)[0].item(), value.dtype), _reshape(shape))


@_register("EyeLike")
def _eye_like(node: Node) -> Mapped:
    from onnx import helper

    x = node.x()
    given = node.attr("dtype")
    dtype = x.dtype if given is None else np.dtype(helper.tensor_dtype_to_np_dtype(given))
    _dml_dtype(np.empty(0, dtype), "output")
    return Mapped(ops.diagonal_matrix(x.shape, int(node.attr("k", 0)), 1, dtype))


@_register("Trilu")
def _trilu(node: Node) -> Mapped:
    x = _dml_dtype(node.x(0))
    _nonempty(x)
    if not 2 <= x.ndim <= 4:
        raise Unmappable("DirectML's DIAGONAL_MATRIX1 takes 2 to 4 dimensions")
    k = int(node.x(1).reshape(-1)[0]) if node.input(1) is not None else 0
    height, width = x.shape[-2:]
    # DIAGONAL_MATRIX1 writes 0 on the diagonals [begin, end) and keeps the input elsewhere: upper keeps j - i >= k
    # (zeros on every diagonal below k), lower keeps j - i <= k (zeros above).
    low, high = -height, width
    if node.attr("upper", 1):
        begin, end = low, max(low, min(k, high))
    else:
        begin, end = max(low, min(k + 1, high)), high
    if begin == end:
        return Mapped(ops.element_wise("identity", x))
    return Mapped(ops.diagonal_matrix(None, begin, 0, x.dtype, fill_end=end, input=x))


# ---------------------------------------------------------------------------------------------------------------
# Quantisation.


def _per_axis(node: Node, x: Array, parameter: Array) -> Array:
    """A per-tensor or per-axis quantisation parameter, shaped to broadcast over ``x`` along ONNX's ``axis``."""
    if parameter.ndim == 0 or parameter.size == 1:
        return parameter.reshape(())
    if node.attr("block_size", 0):
        raise Unmappable("blocked quantisation")
    axis = _axis(int(node.attr("axis", 1)), x.ndim)
    shape = [1] * x.ndim
    shape[axis] = parameter.size
    return parameter.reshape(shape)


@_register("QuantizeLinear")
def _quantize_linear(node: Node) -> Mapped:
    from onnx import helper

    x, scale, zero = node.x(0), node.x(1), node.input(2)
    given = node.attr("output_dtype", 0)
    dtype = zero.dtype if zero is not None else np.dtype(helper.tensor_dtype_to_np_dtype(given) if given else np.uint8)
    if dtype not in (np.int8, np.uint8):
        raise Unmappable(f"quantising to {dtype}: DirectML's QUANTIZE writes int8/uint8")
    _floats(node, x, scale)
    if scale.dtype != x.dtype:
        raise Unmappable("a scale of another float type than the input")
    call = ops.quantize(x, _per_axis(node, x, scale), None if zero is None else _per_axis(node, x, zero), dtype=dtype)
    return Mapped(call)


@_register("DequantizeLinear")
def _dequantize_linear(node: Node) -> Mapped:
    x, scale, zero = node.x(0), node.x(1), node.input(2)
    if x.dtype not in (np.int8, np.uint8):
        raise Unmappable(f"dequantising {x.dtype}: DirectML's DEQUANTIZE reads int8/uint8")
    _floats(node, scale)
    return Mapped(ops.dequantize(x, _per_axis(node, x, scale), None if zero is None else _per_axis(node, x, zero)))


@_register("DynamicQuantizeLinear")
def _dynamic_quantize_linear(node: Node) -> Mapped:
    x = node.x()
    _floats(node, x)
    # ONNX's scale and zero point are 0-d; DirectML's {1} tensors hold the same single value.
    return Mapped(
        ops.dynamic_quantize_linear(x, dtype=np.uint8),
        lambda out: [out[0], np.asarray(out[1]).reshape(()), np.asarray(out[2]).reshape(())],
    )


@_register("QLinearMatMul")
def _qlinear_matmul(node: Node) -> Mapped:
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (node.x(i) for i in range(8))
    _floats(node, a_scale, b_scale, y_scale)
    if a_scale.dtype != np.float32:
        raise Unmappable("float16 scales: DirectML's QUANTIZED_LINEAR_MATRIX_MULTIPLY takes FLOAT32 scales")
    call = ops.quantized_linear_matrix_multiply(
        a,
        a_scale.reshape(-1)[:1] if a_scale.size == 1 else a_scale,
        b,
        b_scale.reshape(-1)[:1] if b_scale.size == 1 else b_scale,
        y_scale,
        a_zero_point=a_zero,
        b_zero_point=b_zero,
        output_zero_point=y_zero,
    )
    return Mapped(call)


@_register("QLinearConv")
def _qlinear_conv(node: Node) -> Mapped:
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = (node.x(i) for i in range(8))
    bias = node.input(8)
    window = _window(node, x, w.shape[2:])
    call = ops.quantized_linear_convolution(
        x,
        x_scale,
        w,
        w_scale,
        y_scale,
        bias,
        input_zero_point=x_zero,
        filter_zero_point=w_zero,
        output_zero_point=y_zero,
        group_count=int(node.attr("group", 1)),
        **window,
    )
    return Mapped(call)


# ---------------------------------------------------------------------------------------------------------------
# Recurrent networks (the builders take ONNX's layouts).


def _recurrent_common(node: Node) -> dict[str, Any]:
    if node.attr("layout", 0):
        raise Unmappable("batch-major layout=1: DirectML's recurrent tensors are sequence-major")
    if node.attr("clip") is not None and node.op_type != "LSTM":
        raise Unmappable("a cell clip: only DirectML's LSTM has one")
    lengths = node.input(4)
    common: dict[str, Any] = {
        # ONNX's "reverse" is DirectML's BACKWARD.
        "direction": {"reverse": "backward"}.get(
            node.attr("direction", b"forward").decode(), node.attr("direction", b"forward").decode()
        ),
        "sequence_lengths": None if lengths is None else _index_array(lengths, np.uint32),
    }
    activations = node.attr("activations")
    if activations is not None:
        alphas = list(node.attr("activation_alpha", []))
        betas = list(node.attr("activation_beta", []))
        if alphas or betas:
            raise Unmappable("activation parameters")
        common["activations"] = [a.decode().lower() for a in activations]
    return common


def _recurrent_outputs(node: Node, names: Sequence[str]) -> list[Any]:
    return [names[slot] for slot in node.slots]


@_register("RNN")
def _rnn(node: Node) -> Mapped:
    x, w, r = node.x(0), node.x(1), node.x(2)
    _floats(node, x)
    outputs = _recurrent_outputs(node, ("sequence", "single"))
    call = ops.rnn(x, w, r, node.input(3), hidden_init=node.input(5), outputs=outputs, **_recurrent_common(node))
    return Mapped(call)


@_register("GRU")
def _gru(node: Node) -> Mapped:
    x, w, r = node.x(0), node.x(1), node.x(2)
    _floats(node, x)
    outputs = _recurrent_outputs(node, ("sequence", "single"))
    call = ops.gru(
        x,
        w,
        r,
        node.input(3),
        hidden_init=node.input(5),
        linear_before_reset=bool(node.attr("linear_before_reset", 0)),
        outputs=outputs,
        **_recurrent_common(node),
    )
    return Mapped(call)


@_register("LSTM")
def _lstm(node: Node) -> Mapped:
    x, w, r = node.x(0), node.x(1), node.x(2)
    _floats(node, x)
    outputs = _recurrent_outputs(node, ("sequence", "single", "cell_single"))
    clip = node.attr("clip")
    call = ops.lstm(
        x,
        w,
        r,
        node.input(3),
        hidden_init=node.input(5),
        cell_mem_init=node.input(6),
        peephole=node.input(7),
        clip_threshold=None if clip is None else float(clip),
        couple_input_forget=bool(node.attr("input_forget", 0)),
        outputs=outputs,
        **_recurrent_common(node),
    )
    return Mapped(call)


@_register("RoiAlign")
def _roi_align(node: Node) -> Mapped:
    x, rois, batch = node.x(0), node.x(1), node.x(2)
    _floats(node, x)
    if node.attr("mode", b"avg") == b"max":
        # ONNX's (and ONNX Runtime's) max mode takes the maximum of each sample's weighted corner terms, not of
        # the interpolated samples as DirectML's MAX reduction does.
        raise Unmappable("RoiAlign max mode: ONNX maximises weighted corner terms, DirectML interpolated samples")
    samples = int(node.attr("sampling_ratio", 0))
    half_pixel = node.attr("coordinate_transformation_mode", b"half_pixel") == b"half_pixel"
    call = ops.roi_align(
        x,
        rois,
        _index_array(batch, np.uint32),
        [int(node.attr("output_height", 1)), int(node.attr("output_width", 1))],
        reduction="max" if node.attr("mode", b"avg") == b"max" else "average",
        spatial_scale=float(node.attr("spatial_scale", 1.0)),
        # ONNX's half_pixel shifts the region by -0.5 (DirectML's input offset 0.5); output_half_pixel not.
        input_pixel_offset=0.5 if half_pixel else 0.0,
        output_pixel_offset=-0.5,
        minimum_samples=samples if samples else 1,
        maximum_samples=samples if samples else 2**32 - 1,
    )
    return Mapped(call)


@_register("Attention")
def _attention(node: Node) -> Mapped:
    q, k, v = node.x(0), node.x(1), node.x(2)
    _floats(node, q, k, v)
    for name in ("is_causal", "softcap", "qk_matmul_output_mode", "softmax_precision"):
        if node.attr(name, 0):
            raise Unmappable(f"Attention's {name}: MULTIHEAD_ATTENTION has no such setting")
    if node.attr("left_window_size", -1) != -1 or node.attr("right_window_size", -1) != -1:
        raise Unmappable("Attention's sliding window: MULTIHEAD_ATTENTION has no such setting")
    if node.input(6) is not None:
        raise Unmappable("Attention's nonpad_kv_seqlen")
    mask, past_key, past_value = node.input(3), node.input(4), node.input(5)
    if mask is not None and mask.dtype == np.bool_:
        # DirectML adds a finite MaskFilterValue to masked scores; ONNX's boolean mask adds -inf.
        raise Unmappable("a boolean attn_mask: DirectML adds a finite MaskFilterValue, ONNX -inf")
    if node.slots not in ([0], [0, 1, 2]):
        raise Unmappable("Attention's present key without present value (or QK output)")
    four_d = q.ndim == 4
    if four_d:
        # ONNX's (batch, heads, sequence, head size) as DirectML's (batch, sequence, heads * head size): the same
        # elements moved in the harness, and the output moved back.
        heads, kv_heads = q.shape[1], k.shape[1]
        q, k, v = (np.ascontiguousarray(a.transpose(0, 2, 1, 3)).reshape(a.shape[0], a.shape[2], -1) for a in (q, k, v))
    else:
        heads, kv_heads = int(node.attr("q_num_heads")), int(node.attr("kv_num_heads"))
    batch, sequence = q.shape[:2]
    total = k.shape[1] + (0 if past_key is None else past_key.shape[2])
    bias = None
    if mask is not None:
        # An additive float mask is DirectML's relative position bias: both are added to the scaled scores.
        bias = np.ascontiguousarray(np.broadcast_to(mask, (batch, heads, sequence, total)))
    present = node.slots == [0, 1, 2]
    call = ops.multihead_attention(
        q,
        k,
        v,
        head_count=heads,
        key_value_head_count=kv_heads,
        relative_position_bias=bias,
        past_key=past_key,
        past_value=past_value,
        scale=node.attr("scale"),
        present=present,
    )

    def convert(outputs: Outputs) -> Outputs:
        if four_d:
            y = np.asarray(outputs[0]).reshape(batch, sequence, heads, -1)
            outputs[0] = np.ascontiguousarray(y.transpose(0, 2, 1, 3))
        return outputs

    return Mapped(call, convert)


# ---------------------------------------------------------------------------------------------------------------
# Op types not collected, each with why (the ops above may still leave single cases out: ``skipped_cases``).

_NO_OPERATOR = "DirectML has no operator for it"
UNMAPPED_OPS: dict[str, str] = {
    # Types and structures DirectML has no tensors for.
    "StringConcat": "strings",
    "StringNormalizer": "strings",
    "StringSplit": "strings",
    "RegexFullMatch": "strings",
    "LabelEncoder": "strings (ai.onnx.ml)",
    "TfIdfVectorizer": "n-gram counting over strings/ids (ai.onnx.ml)",
    "SequenceInsert": "sequences",
    "SequenceMap": "sequences and a subgraph",
    "SplitToSequence": "sequences",
    "OptionalGetElement": "optional values",
    "OptionalHasElement": "optional values",
    "If": "control flow",
    "Loop": "control flow",
    "Scan": "control flow",
    "ImageDecoder": "encoded images",
    "BitCast": "reinterpreting bytes as another type: " + _NO_OPERATOR,
    # Metadata and constants: no computation for a DirectML operator to do.
    "Shape": "tensor metadata, not computed by an operator",
    "Size": "tensor metadata, not computed by an operator",
    "Constant": "a constant, not computed by an operator",
    # Random outputs.
    "Bernoulli": "random outputs ONNX's data cannot check",
    # Operators DirectML lacks.
    "AffineGrid": _NO_OPERATOR,
    "ArrayFeatureExtractor": _NO_OPERATOR + " (ai.onnx.ml)",
    "Binarizer": _NO_OPERATOR + " (ai.onnx.ml)",
    "TreeEnsemble": _NO_OPERATOR + " (ai.onnx.ml)",
    "BlackmanWindow": _NO_OPERATOR,
    "HammingWindow": _NO_OPERATOR,
    "HannWindow": _NO_OPERATOR,
    "MelWeightMatrix": _NO_OPERATOR,
    "DFT": _NO_OPERATOR,
    "STFT": _NO_OPERATOR,
    "Det": _NO_OPERATOR,
    "Compress": "a data-dependent output size: " + _NO_OPERATOR,
    "Unique": "a data-dependent output size: " + _NO_OPERATOR,
    "NonMaxSuppression": _NO_OPERATOR,
    "GridSample": _NO_OPERATOR,
    "DeformConv": _NO_OPERATOR,
    "Col2Im": "DirectML's FOLD matches only some of its cases; not mapped yet",
    "CenterCropPad": "a crop or pad per axis: no one DirectML operator",
    "Einsum": "DirectML has no EINSUM at feature level 6.4; and the cases are bfloat16/float64",
    "Mish": _NO_OPERATOR + " (no MISH activation)",
    "SwiGLU": _NO_OPERATOR,
    "GroupNormalization": "per-channel scale over group statistics: no one DirectML operator",
    "RMSNormalization": "the root mean square without centring: DirectML's MVN2 always centres (UseMean TRUE)",
    "RotaryEmbedding": _NO_OPERATOR,
    "TensorScatter": _NO_OPERATOR,
    "CausalConvWithState": _NO_OPERATOR,
    "LinearAttention": _NO_OPERATOR,
    "FlexAttention": _NO_OPERATOR,
    "NegativeLogLikelihoodLoss": _NO_OPERATOR,
    "SoftmaxCrossEntropyLoss": _NO_OPERATOR,
    "Adagrad": _NO_OPERATOR,
    "Adam": "ONNX's Adam (norm coefficients, no bias correction) differs from ADAM_OPTIMIZER",
    "Momentum": _NO_OPERATOR,
}


# ---------------------------------------------------------------------------------------------------------------
# Collecting the cases.


@functools.lru_cache(maxsize=1)
def _onnx_cases() -> tuple[Any, ...]:
    """ONNX's node test cases, once per process (collecting them runs every case's NumPy reference: seconds)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ONNX's generators overflow casts on purpose
        return tuple(collect_testcases(None))


def _node(case: Any) -> Node | None:
    from onnx import helper

    graph = case.model.graph
    if len(graph.node) != 1:
        return None
    node = graph.node[0]
    inputs, outputs = (_arrays(values) for values in case.data_sets[0])
    by_name = dict(zip((i.name for i in graph.input), inputs, strict=False))
    expected = dict(zip((o.name for o in graph.output), outputs, strict=False))
    opset = next((o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")), 0)
    return Node(
        op_type=node.op_type,
        opset=opset,
        attrs={a.name: helper.get_attribute_value(a) for a in node.attribute},
        inputs=[by_name.get(name) if name else None for name in node.input],
        outputs=[expected[name] for name in node.output if name and name in expected],
        slots=[i for i, name in enumerate(node.output) if name and name in expected],
    )


def _arrays(values: Sequence[Any]) -> list[Any]:
    """NumPy scalars as 0-d arrays (some cases give them) and TensorProtos of NumPy's types as arrays (the Cast
    and quantisation cases store theirs so); other values (float8/4-bit TensorProtos, lists, None) as they are."""
    from onnx import TensorProto, numpy_helper

    def array(value: Any) -> Any:
        if isinstance(value, np.generic):
            return np.asarray(value)
        if isinstance(value, TensorProto) and value.data_type in _NUMPY_TENSOR_TYPES:
            return numpy_helper.to_array(value)
        return value

    return [array(v) for v in values]


# TensorProto's data types that are NumPy's (the others, bfloat16, float8 and 4-bit, DirectML lacks too).
_NUMPY_TENSOR_TYPES = frozenset(range(1, 13)) - {8}  # FLOAT .. UINT64 less STRING


def _finish(call: Call, convert: Callable[[Outputs], Outputs] | None) -> Callable[[Outputs], Outputs]:
    def finish(outputs: Outputs) -> Outputs:
        # An optional output the desc leaves unset comes back as None: ONNX's case has no such output.
        results = [r for r in call.results(outputs) if r is not None]
        return convert(results) if convert is not None else results

    return finish


def _map(case: Any) -> NodeCase | str:
    """The case as a NodeCase, or why it is not collected."""
    node = _node(case)
    if node is None:
        return "a graph of several nodes (an expanded function)"
    mapper = MAPPERS.get(node.op_type)
    if mapper is None:
        return UNMAPPED_OPS.get(node.op_type, f"{node.op_type}: not mapped")
    if not all(isinstance(o, np.ndarray) for o in node.outputs) or not all(
        isinstance(i, np.ndarray) for i in node.inputs if i is not None
    ):
        return "non-tensor inputs or outputs (float8/4-bit types stored as TensorProto, sequences, None)"
    try:
        mapped = mapper(node)
    except Unmappable as error:
        return str(error)
    except (ArgumentTypeError, ArgumentValueError) as error:
        # The SDK refuses what DirectML cannot take (a dtype, a rank): not a mappable case.
        return f"the SDK refuses it: {error}"
    return NodeCase(
        id=case.name,
        op_type=node.op_type,
        operator_desc=mapped.call.operator_desc,
        inputs=mapped.call.inputs,
        expected=tuple(node.outputs),
        # ONNX's tolerances; a mapper loosens them only where DirectML documents a lower precision (none needs
        # to on the CPU provider today).
        rtol=max(case.rtol, mapped.rtol or 0.0),
        atol=max(case.atol, mapped.atol or 0.0),
        finish=_finish(mapped.call, mapped.convert),
        xfail=mapped.xfail or XFAIL.get(case.name),
    )


# Cases the server answers wrongly, with the finding (kept collected, marked xfail(strict=True) by the tests).
XFAIL: dict[str, str] = {}


@functools.lru_cache(maxsize=1)
def _all() -> tuple[tuple[NodeCase, ...], tuple[tuple[str, str, str], ...]]:
    mapped: list[NodeCase] = []
    skipped: list[tuple[str, str, str]] = []
    for case in _onnx_cases():
        result = _map(case)
        if isinstance(result, NodeCase):
            mapped.append(result)
        else:
            nodes = case.model.graph.node
            op_type = nodes[0].op_type if len(nodes) == 1 else "(expanded)"
            skipped.append((case.name, op_type, result))
    return tuple(mapped), tuple(skipped)


def mapped_cases() -> Iterator[NodeCase]:
    """Every ONNX node test case that maps onto a DirectML desc."""
    yield from _all()[0]


def skipped_cases() -> tuple[tuple[str, str, str], ...]:
    """(case name, op type, reason) of every case not collected."""
    return _all()[1]


def counts() -> tuple[Counter[str], Counter[str]]:
    """Mapped cases per op type, and skipped ones per op type."""
    return Counter(c.op_type for c in mapped_cases()), Counter(op for _, op, _ in skipped_cases())
