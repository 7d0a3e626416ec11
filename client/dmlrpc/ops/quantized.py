"""DML_QUANTIZE, DEQUANTIZE, DYNAMIC_QUANTIZE_LINEAR, QUANTIZED_LINEAR_MATRIX_MULTIPLY, _CONVOLUTION,
_AVERAGE_POOLING and MATRIX_MULTIPLY_INTEGER_TO_FLOAT as NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._quantization import (
    _BYTES,
    _INTEGERS,
    _dtype,
    _elementwise_parameter,
    _integer,
    _matrices,
    _per,
    _per_channel,
    _per_tensor,
    _quantization,
    _scale_check,
    _zero_check,
)
from dmlrpc.ops._registry import TRIPLE, GraphFace, operator
from dmlrpc.ops.base import Call, _array, _count, _flag, _float_operand, _is_python_scalar, _wrap
from dmlrpc.ops.matrix import _broadcast
from dmlrpc.ops.spatial_grad import window_geometry
from dmlrpc.v1 import operators_pb2

__all__ = [
    "dequantize",
    "dynamic_quantize_linear",
    "matrix_multiply_integer_to_float",
    "quantize",
    "quantized_linear_average_pooling",
    "quantized_linear_convolution",
    "quantized_linear_matrix_multiply",
]


@operator(sends=("quantize",), graph=GraphFace(arrays={"quantization": ("scale", "zero_point")}))
def quantize(
    input: npt.ArrayLike,
    scale: npt.ArrayLike,
    zero_point: npt.ArrayLike | None = None,
    *,
    dtype: npt.DTypeLike | None = None,
) -> Call:
    """DML_QUANTIZE_OPERATOR_DESC: ``clip(round(input / scale) + zero_point)`` (round half to even, saturated to
    ``dtype``'s range), QUANTIZATION_TYPE_SCALE without a zero point, SCALE_ZERO_POINT with one.

    DirectML's rules: the input FLOAT32 or FLOAT16; the output INT8 or UINT8 (``dtype``: the zero point's, else
    uint8); the scale of a floating type, the zero point of the output's; every tensor the input's sizes (here
    ``scale`` and ``zero_point`` broadcast by NumPy's rule: per axis or per tensor, sent once through zero strides).

    Raises:
        ArgumentValueError, ArgumentTypeError: a parameter that does not broadcast to the input, dtypes the
            operator does not take, a zero point unlike ``dtype``.
    """
    where = "quantize"
    x = _float_operand(input, "input", where, where)
    scale_data = _float_operand(scale, "scale", where, where, x if _is_python_scalar(scale) else None)
    zero = None if zero_point is None else _integer(zero_point, "zero_point", where, _BYTES)
    output = _dtype(
        dtype if dtype is not None else (zero.dtype if zero is not None else np.uint8), "dtype", where, _BYTES
    )
    if zero is not None and zero.dtype != output:
        raise ArgumentTypeError(
            "zero_point", f"{where}: zero_point has dtype {zero.dtype} and dtype is {output}", allowed=(output.name,)
        )
    return _quantization(where, x, scale_data, zero, output)


@operator(sends=("dequantize",), graph=GraphFace(arrays={"quantization": ("scale", "zero_point")}))
def dequantize(
    input: npt.ArrayLike,
    scale: npt.ArrayLike,
    zero_point: npt.ArrayLike | None = None,
    *,
    dtype: npt.DTypeLike | None = None,
) -> Call:
    """DML_DEQUANTIZE_OPERATOR_DESC: ``(input - zero_point) * scale`` (SCALE without a zero point).

    DirectML's rules: the input INT8 or UINT8, the zero point of its type, the scale and output FLOAT32 or FLOAT16
    (``dtype``: the scale's by default); every tensor the input's sizes (``scale`` and ``zero_point`` broadcast by
    NumPy's rule, sent through zero strides).

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``quantize``.
    """
    where = "dequantize"
    x = _integer(input, "input", where, _BYTES)
    scale_data = (
        _array(scale, "scale", where, np.dtype(np.float32))
        if _is_python_scalar(scale)
        else _float_operand(scale, "scale", where, where)
    )
    zero = None if zero_point is None else _integer(zero_point, "zero_point", where, _BYTES, x)
    output = _dtype(dtype if dtype is not None else scale_data.dtype, "dtype", where, ("float32", "float16"))
    return _quantization(where, x, scale_data, zero, output)


@operator(sends=("dynamic_quantize_linear",), result=TRIPLE)
def dynamic_quantize_linear(input: npt.ArrayLike, *, dtype: npt.DTypeLike = np.uint8) -> Call:
    """DML_DYNAMIC_QUANTIZE_LINEAR_OPERATOR_DESC (ONNX DynamicQuantizeLinear): (output, scale, zero_point), the
    input quantized with a scale and zero point computed from its own range (widened to hold 0): ``scale =
    (max - min) / (qmax - qmin)``, ``zero_point = clip(round(qmin - min / scale))``.

    DirectML's rules: the input FLOAT32 or FLOAT16 (1 to 8 dimensions), the output of its sizes, INT8 or UINT8
    (``dtype``); OutputScale FLOAT32 and OutputZeroPoint of the output's type, one element each (returned 0-d).

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than float32/float16 input or int8/uint8 output, more
            than 8 dimensions.
    """
    where = "dynamic_quantize_linear"
    x = _float_operand(input, "input", where, where)
    output = _dtype(dtype, "dtype", where, _BYTES)
    data = x.reshape(x.shape or (1,))
    if data.ndim > 8:
        raise ArgumentValueError("input", f"{where}: input has shape {x.shape}; it takes 1 to 8 dimensions")
    ones = (1,) * data.ndim
    desc = operators_pb2.DynamicQuantizeLinearOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((output, data.shape)),
        output_scale_tensor=tensor_desc((np.float32, ones)),
        output_zero_point_tensor=tensor_desc((output, ones)),
    )
    return Call(_wrap(where, desc), (data,), (x.shape, (), ()))


@operator(sends=("quantized_linear_matrix_multiply",))
def quantized_linear_matrix_multiply(
    a: npt.ArrayLike,
    a_scale: npt.ArrayLike,
    b: npt.ArrayLike,
    b_scale: npt.ArrayLike,
    output_scale: npt.ArrayLike,
    *,
    a_zero_point: npt.ArrayLike | None = None,
    b_zero_point: npt.ArrayLike | None = None,
    output_zero_point: npt.ArrayLike | None = None,
    dtype: npt.DTypeLike | None = None,
) -> Call:
    """DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC (ONNX QLinearMatMul): ``quantize(dequantize(a) @
    dequantize(b))``, each operand dequantized with its scale and zero point, the product quantized with the
    output's (round half to even, saturated).

    DirectML's rules: A {[batch,] M, K} and B {.., K, N} INT8 or UINT8, the output {.., M, N} INT8 or UINT8
    (``dtype``: the output zero point's, else a's); scales FLOAT32, zero points of their tensor's type; A's and the
    output's parameters one value or one per row (M), B's one or one per column (N). Batch dimensions broadcast as
    ``np.matmul``'s; everything travels 4-D and the result has NumPy's shape.

    Raises:
        ArgumentValueError, ArgumentTypeError: dimension counts outside 2-4, inner dimensions that differ, batch
            dimensions that do not broadcast, parameters of another count, dtypes the operator does not take.
    """
    where = "quantized_linear_matrix_multiply"
    a_data, b_data, shape, wire = _matrices(where, a, b, _BYTES)
    m, n = shape[-2], shape[-1]
    floats = ("float32",)
    out_zero_dtype = (
        None if output_zero_point is None else _integer(output_zero_point, "output_zero_point", where, _BYTES)
    )
    output = _dtype(
        dtype if dtype is not None else (out_zero_dtype.dtype if out_zero_dtype is not None else a_data.dtype),
        "dtype",
        where,
        _BYTES,
    )
    like_output = np.zeros(1, output)
    parameters = [
        _per(a_scale, "a_scale", where, m, "row", 4, _scale_check(where, "a_scale", floats)),
        _per(a_zero_point, "a_zero_point", where, m, "row", 4, _zero_check(where, "a_zero_point", a_data)),
        _per(b_scale, "b_scale", where, n, "column", 4, _scale_check(where, "b_scale", floats)),
        _per(b_zero_point, "b_zero_point", where, n, "column", 4, _zero_check(where, "b_zero_point", b_data)),
        _per(output_scale, "output_scale", where, m, "row", 4, _scale_check(where, "output_scale", floats)),
        _per(
            output_zero_point,
            "output_zero_point",
            where,
            m,
            "row",
            4,
            _zero_check(where, "output_zero_point", like_output),
        ),
    ]
    a_desc, a_bound = _broadcast(a_data, (*wire[:-2], *a_data.shape[-2:]))
    b_desc, b_bound = _broadcast(b_data, (*wire[:-2], *b_data.shape[-2:]))
    desc = operators_pb2.QuantizedLinearMatrixMultiplyOperatorDesc(
        a_tensor=a_desc, b_tensor=b_desc, output_tensor=tensor_desc((output, wire))
    )
    names = ("a_scale", "a_zero_point", "b_scale", "b_zero_point", "output_scale", "output_zero_point")
    for name, data in zip(names, parameters, strict=True):
        if data is not None:
            getattr(desc, f"{name}_tensor").CopyFrom(tensor_desc(data))
    a_scale_data, a_zero, b_scale_data, b_zero, out_scale, out_zero = parameters
    inputs = (a_bound, a_scale_data, a_zero, b_bound, b_scale_data, b_zero, out_scale, out_zero)
    return Call(_wrap(where, desc), inputs, (shape,))


@operator(sends=("matrix_multiply_integer_to_float",))
def matrix_multiply_integer_to_float(
    a: npt.ArrayLike,
    a_scale: npt.ArrayLike,
    b: npt.ArrayLike,
    b_scale: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    a_zero_point: npt.ArrayLike | None = None,
    b_zero_point: npt.ArrayLike | None = None,
) -> Call:
    """DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT_OPERATOR_DESC (com.microsoft MatMulIntegerToFloat): ``dequantize(a) @
    dequantize(b) + bias`` in the scales' floating type.

    DirectML's rules: A {[batch,] M, K} and B {.., K, N} of one 8-32-bit integer type, zero points of it; scales
    and the output FLOAT32 or FLOAT16 (the output takes ``a_scale``'s dtype); A's parameters one value or one per
    row, B's one or one per column; the bias the output's sizes and type (here it broadcasts to the result by
    NumPy's rule).

    Raises:
        ArgumentValueError, ArgumentTypeError: as ``quantized_linear_matrix_multiply``; a bias that does not
            broadcast to the result.
    """
    where = "matrix_multiply_integer_to_float"
    a_data, b_data, shape, wire = _matrices(where, a, b, _INTEGERS)
    if b_data.dtype != a_data.dtype:
        raise ArgumentTypeError(
            "b",
            f"{where}: b has dtype {b_data.dtype} and a {a_data.dtype}: they must be one",
            allowed=(a_data.dtype.name,),
        )
    m, n = shape[-2], shape[-1]
    floats = ("float32", "float16")
    parameters = [
        _per(a_scale, "a_scale", where, m, "row", 4, _scale_check(where, "a_scale", floats)),
        _per(a_zero_point, "a_zero_point", where, m, "row", 4, _zero_check(where, "a_zero_point", a_data)),
        _per(b_scale, "b_scale", where, n, "column", 4, _scale_check(where, "b_scale", floats)),
        _per(b_zero_point, "b_zero_point", where, n, "column", 4, _zero_check(where, "b_zero_point", b_data)),
    ]
    assert parameters[0] is not None and parameters[2] is not None
    output = parameters[0].dtype
    if parameters[2].dtype != output:
        raise ArgumentTypeError(
            "b_scale", f"{where}: b_scale has dtype {parameters[2].dtype} and a_scale {output}", allowed=(output.name,)
        )
    a_desc, a_bound = _broadcast(a_data, (*wire[:-2], *a_data.shape[-2:]))
    b_desc, b_bound = _broadcast(b_data, (*wire[:-2], *b_data.shape[-2:]))
    desc = operators_pb2.MatrixMultiplyIntegerToFloatOperatorDesc(
        a_tensor=a_desc, b_tensor=b_desc, output_tensor=tensor_desc((output, wire))
    )
    for name, data in zip(("a_scale", "a_zero_point", "b_scale", "b_zero_point"), parameters, strict=True):
        if data is not None:
            getattr(desc, f"{name}_tensor").CopyFrom(tensor_desc(data))
    bias_bound = None
    if bias is not None:
        bias_data = _float_operand(bias, "bias", where, where, np.zeros(1, output))
        bias_desc, bias_bound = _elementwise_parameter(bias_data, "bias", where, shape)
        bias_desc, bias_bound = _broadcast(bias_bound.reshape(shape), wire)
        desc.bias_tensor.CopyFrom(bias_desc)
    a_scale_data, a_zero, b_scale_data, b_zero = parameters
    return Call(
        _wrap(where, desc), (a_bound, a_scale_data, a_zero, b_bound, b_scale_data, b_zero, bias_bound), (shape,)
    )


@operator(sends=("quantized_linear_convolution",))
def quantized_linear_convolution(
    input: npt.ArrayLike,
    input_scale: npt.ArrayLike,
    filter: npt.ArrayLike,
    filter_scale: npt.ArrayLike,
    output_scale: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    input_zero_point: npt.ArrayLike | None = None,
    filter_zero_point: npt.ArrayLike | None = None,
    output_zero_point: npt.ArrayLike | None = None,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    group_count: int = 1,
    dtype: npt.DTypeLike | None = None,
) -> Call:
    """DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC (ONNX QLinearConv): ``quantize(conv(dequantize(input),
    dequantize(filter)) + bias * input_scale * filter_scale)``, a forward cross-correlation over (N, C, H, W).

    DirectML's rules: input {N, C, H, W} and filter {M, C / group_count, kH, kW} INT8 or UINT8; the output
    {N, M, outH, outW} INT8 or UINT8 (``dtype``: the output zero point's, else the input's), ``(size + start + end -
    dilation * (k - 1) - 1) // stride + 1`` per spatial dimension; the input's and output's scale and zero point one
    value, the filter's one or one per output channel (M); scales FLOAT32, zero points of their tensor's type; the
    bias INT32, one per output channel (in the accumulator's domain). Strides and dilations default to 1, padding
    to 0.

    Raises:
        ArgumentValueError, ArgumentTypeError: tensors that are not 4-D, channels that do not divide into groups,
            window arguments of the wrong length or range, parameters of another count, dtypes the operator does
            not take.
    """
    where = "quantized_linear_convolution"
    x = _integer(input, "input", where, _BYTES)
    w = _integer(filter, "filter", where, _BYTES)
    for argument, data in (("input", x), ("filter", w)):
        if data.ndim != 4:
            raise ArgumentValueError(argument, f"{where}: {argument} has shape {data.shape}; it takes 4 dimensions")
    groups = _count(group_count, "group_count", where, 1)
    channels = w.shape[0]
    if x.shape[1] % groups or channels % groups or x.shape[1] // groups != w.shape[1]:
        raise ArgumentValueError(
            "filter",
            f"{where}: input has shape {x.shape} and filter {w.shape}: with group_count {groups} the filter takes "
            f"(M, C / group_count, kH, kW) with C and M divisible by group_count",
        )
    values, blocks = window_geometry(
        where, x.shape[2:], list(w.shape[2:]), strides, dilations, start_padding, end_padding
    )
    out_zero = None if output_zero_point is None else _integer(output_zero_point, "output_zero_point", where, _BYTES)
    output = _dtype(
        dtype if dtype is not None else (out_zero.dtype if out_zero is not None else x.dtype), "dtype", where, _BYTES
    )
    floats = ("float32",)
    parameters = {
        "input_scale": _per_tensor(input_scale, "input_scale", where, _scale_check(where, "input_scale", floats), 4),
        "input_zero_point": _per_tensor(
            input_zero_point, "input_zero_point", where, _zero_check(where, "input_zero_point", x), 4
        ),
        "filter_scale": _per_channel(
            filter_scale, "filter_scale", where, _scale_check(where, "filter_scale", floats), channels, 4
        ),
        "filter_zero_point": _per_channel(
            filter_zero_point, "filter_zero_point", where, _zero_check(where, "filter_zero_point", w), channels, 4
        ),
        "bias": None,
        "output_scale": _per_tensor(
            output_scale, "output_scale", where, _scale_check(where, "output_scale", floats), 4
        ),
        "output_zero_point": _per_tensor(
            output_zero_point,
            "output_zero_point",
            where,
            _zero_check(where, "output_zero_point", np.zeros(1, output)),
            4,
        ),
    }
    if bias is not None:
        bias_data = _integer(bias, "bias", where, ("int32",))
        if bias_data.size != channels:
            raise ArgumentValueError(
                "bias", f"{where}: bias has shape {bias_data.shape}; it takes one value per output channel ({channels})"
            )
        parameters["bias"] = bias_data.reshape(1, channels, 1, 1)
    shape = (x.shape[0], channels, *blocks)
    desc = operators_pb2.QuantizedLinearConvolutionOperatorDesc(
        input_tensor=tensor_desc(x),
        filter_tensor=tensor_desc(w),
        output_tensor=tensor_desc((output, shape)),
        dimension_count=2,
        strides=values["strides"],
        dilations=values["dilations"],
        start_padding=values["start_padding"],
        end_padding=values["end_padding"],
        group_count=groups,
    )
    for name, parameter in parameters.items():
        if parameter is not None:
            getattr(desc, f"{name}_tensor").CopyFrom(tensor_desc(parameter))
    p = parameters
    inputs = (
        x, p["input_scale"], p["input_zero_point"], w, p["filter_scale"], p["filter_zero_point"], p["bias"],
        p["output_scale"], p["output_zero_point"],
    )  # fmt: skip
    return Call(_wrap(where, desc), inputs)


@operator(sends=("quantized_linear_average_pooling",))
def quantized_linear_average_pooling(
    input: npt.ArrayLike,
    input_scale: npt.ArrayLike,
    output_scale: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    input_zero_point: npt.ArrayLike | None = None,
    output_zero_point: npt.ArrayLike | None = None,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
) -> Call:
    """DML_QUANTIZED_LINEAR_AVERAGE_POOLING_OPERATOR_DESC (com.microsoft QLinearAveragePool):
    ``quantize(average_pooling(dequantize(input)))``, the output in the input's type.

    DirectML's rules: the input {N, C, H, W} or {N, C, D, H, W}, INT8 or UINT8, the output of its type and
    ``(size + start + end - dilation * (window - 1) - 1) // stride + 1`` per spatial dimension; scales FLOAT32 and
    zero points of the input's type, each one value or one per channel (C); padding counts in the divisor only with
    ``include_padding``. Strides and dilations default to 1, padding to 0.

    Raises:
        ArgumentValueError, ArgumentTypeError: an input that is not 4-D or 5-D, window arguments of the wrong length
            or range, parameters of another count, dtypes the operator does not take.
    """
    where = "quantized_linear_average_pooling"
    x = _integer(input, "input", where, _BYTES)
    if x.ndim not in (4, 5):
        raise ArgumentValueError(
            "input", f"{where}: input has shape {x.shape}; it takes (N, C, H, W) or (N, C, D, H, W)"
        )
    values, blocks = window_geometry(where, x.shape[2:], window_size, strides, dilations, start_padding, end_padding)
    channels, rank = x.shape[1], x.ndim
    floats = ("float32",)
    parameters: dict[str, Any] = {
        "input_scale": _per_channel(
            input_scale, "input_scale", where, _scale_check(where, "input_scale", floats), channels, rank
        ),
        "input_zero_point": _per_channel(
            input_zero_point, "input_zero_point", where, _zero_check(where, "input_zero_point", x), channels, rank
        ),
        "output_scale": _per_channel(
            output_scale, "output_scale", where, _scale_check(where, "output_scale", floats), channels, rank
        ),
        "output_zero_point": _per_channel(
            output_zero_point, "output_zero_point", where, _zero_check(where, "output_zero_point", x), channels, rank
        ),
    }
    window: dict[str, Any] = values
    desc = operators_pb2.QuantizedLinearAveragePoolingOperatorDesc(
        input_tensor=tensor_desc(x),
        output_tensor=tensor_desc((x.dtype, (*x.shape[:2], *blocks))),
        dimension_count=len(blocks),
        include_padding=_flag(include_padding, "include_padding", where),
        **window,
    )
    for name, parameter in parameters.items():
        if parameter is not None:
            getattr(desc, f"{name}_tensor").CopyFrom(tensor_desc(parameter))
    p = parameters
    return Call(
        _wrap(where, desc), (x, p["input_scale"], p["input_zero_point"], p["output_scale"], p["output_zero_point"])
    )
