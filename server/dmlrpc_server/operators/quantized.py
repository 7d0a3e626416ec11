"""DML_QUANTIZE, DEQUANTIZE, DYNAMIC_QUANTIZE_LINEAR and the quantized-linear matrix, convolution and pooling descs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._batching import BatchRule
from dmlrpc_server.operators._graph import BOOL, F32, I64, Graph, Value
from dmlrpc_server.operators._support import equal_sizes, reshaping_feeder, same_rank, same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require
from dmlrpc_server.operators.convolution import integer_convolution, integer_geometry
from dmlrpc_server.operators.matrix import (
    _product_sizes,
    _zero_point_shape,
    integer_product,
    native_integer_product,
)
from dmlrpc_server.operators.pooling import _Pooling
from dmlrpc_server.operators.quantize import _dequantize, _quantize

# Every operator here computes in FLOAT32 what its page defines as dequantize -> operation -> quantize, with the
# quantize step of ELEMENT_WISE_QUANTIZE_LINEAR (round half to even, then saturation to the output type's range).
# ONNX's QLinearMatMul / QLinearConv / DynamicQuantizeLinear and the com.microsoft QLinearAveragePool /
# MatMulIntegerToFloat are not used: their CPU kernels requantize through fixed-point multipliers (not round half to
# even of the FLOAT32 quotient), take scales per tensor or along one ONNX axis rather than in DirectML's per-row /
# per-column / per-channel shapes, and the contrib ops do not exist on every provider. Integer products accumulate
# exactly (as MATRIX_MULTIPLY_INTEGER and CONVOLUTION_INTEGER do) before the FLOAT32 scaling.

QuantizationDesc = TypeVar("QuantizationDesc", operators_pb2.QuantizeOperatorDesc, operators_pb2.DequantizeOperatorDesc)

_TYPES = {
    operators_pb2.QUANTIZATION_TYPE_SCALE: ("SCALE", ("Scale",)),
    operators_pb2.QUANTIZATION_TYPE_SCALE_ZERO_POINT: ("SCALE_ZERO_POINT", ("Scale", "ZeroPoint")),
}


def _operand_shapes(shapes: dict[str, tuple[int, ...] | None]) -> list[tuple[int, ...] | None]:
    """The feed shapes of A, its scale and zero point, then B's: operands as they are, their parameters reshaped to
    broadcast against the product."""
    return [
        shape
        for prefix in ("a", "b")
        for shape in (None, shapes[f"{prefix}_scale_tensor"], shapes[f"{prefix}_zero_point_tensor"])
    ]


def _per_tensor(tensors: Tensors, name: str) -> None:
    """A scale or zero point the page gives as {1,1,1,1}: exactly one element."""
    layout = tensors.layouts[name]
    if layout is not None:
        require(
            layout.element_count == 1,
            f"{tensors.field(name)}.buffer.sizes",
            f"sizes {list(layout.sizes)} must be all 1 (one value for the tensor)",
        )


def _per_channel(tensors: Tensors, name: str, channels: int, rank: int) -> tuple[int, ...] | None:
    """The shape a per-tensor ({1,1,1,1}) or per-channel ({1,C,1,1}) scale or zero point broadcasts in against an
    NCHW(D) tensor of ``rank`` dimensions; None when the tensor is unset."""
    layout = tensors.layouts[name]
    if layout is None:
        return None
    sizes = list(layout.sizes)
    if all(size == 1 for size in sizes):
        return ()
    expected = [1, channels, *([1] * (rank - 2))]
    require(
        sizes == expected,
        f"{tensors.field(name)}.buffer.sizes",
        f"sizes {sizes} must be all 1 (per tensor) or {expected} (per channel)",
    )
    return tuple(expected)


def _same_parameter_rank(tensors: Tensors, names: Sequence[str]) -> None:
    """The page's rule that the scale and zero-point tensors share one DimensionCount."""
    present = [name for name in names if tensors.layouts[name] is not None]
    same_rank(tensors, present[1:], present[0])


class _Quantization(Operator[QuantizationDesc]):
    """QUANTIZE and DEQUANTIZE: QuantizationTensors = {Scale[, ZeroPoint]}, each with the input's sizes (a per-axis
    or blocked scale is a view with zero strides, as DirectML broadcasts), applied element by element."""

    batching = BatchRule()
    #: The field whose data type the zero point must have.
    integer_field: ClassVar[str]

    def lower(self, desc: QuantizationDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        pieces: tuple[TensorLayout, ...] = tensors.arrays["quantization_tensors"]
        kind = desc.quantization_type
        require(
            kind in _TYPES,
            tensors.field("quantization_type"),
            f"{kind} is not a quantization: must be 1 (SCALE) or 2 (SCALE_ZERO_POINT)",
        )
        name, expected = _TYPES[kind]
        require(
            desc.quantization_tensor_count == len(pieces),
            tensors.field("quantization_tensor_count"),
            f"{desc.quantization_tensor_count} differs from the {len(pieces)} tensor descs of quantization_tensors",
        )
        require(
            len(pieces) == len(expected),
            tensors.field("quantization_tensors"),
            f"{len(pieces)} tensor descs; QuantizationType {name} takes {len(expected)}: {', '.join(expected)}",
        )
        rank = len(source.sizes)
        checked = [("output_tensor", output)] + [(f"quantization_tensors[{i}]", p) for i, p in enumerate(pieces)]
        for field, layout in checked:
            path = f"{tensors.path}.{field}.buffer.sizes"
            require(len(layout.sizes) == rank, path, f"must have input_tensor's dimension count {rank}")
            require(
                layout.sizes == source.sizes,
                path,
                f"sizes {list(layout.sizes)} must equal input_tensor's {list(source.sizes)} (broadcast a scale or "
                "zero point through zero strides)",
            )
        scale_path = f"{tensors.field('quantization_tensors')}[0].buffer.data_type"
        require(pieces[0].dtype.kind == "f", scale_path, "the scale must be FLOAT32 or FLOAT16")
        if len(pieces) == 2:
            integer = tensors[self.integer_field]
            require(
                pieces[1].data_type == integer.data_type,
                f"{tensors.field('quantization_tensors')}[1].buffer.data_type",
                f"the zero point must have {self.integer_field}'s data type",
            )

        graph = Graph()
        x = graph.input("input", source.dtype, source.sizes)
        scale = graph.input("scale", pieces[0].dtype, pieces[0].sizes)
        zero = graph.input("zero_point", pieces[1].dtype, pieces[1].sizes) if len(pieces) == 2 else None
        graph.output(self.apply(graph, x, scale, zero, output.dtype), "output", output.sizes)
        feeds = ("input", "scale", "zero_point")[: 1 + len(pieces)]
        return Plan(
            (source, *pieces),
            (output,),
            graph.model(),
            reshaping_feeder(feeds, [None] * len(feeds)),
            direct_outputs=True,
            input_arrays=(None, len(pieces)),
        )

    def apply(self, graph: Graph, x: Value, scale: Value, zero: Value | None, dtype: np.dtype[Any]) -> Value:
        raise NotImplementedError


class Quantize(_Quantization[operators_pb2.QuantizeOperatorDesc]):
    case: ClassVar[str] = "quantize"
    integer_field = "output_tensor"

    def apply(self, graph: Graph, x: Value, scale: Value, zero: Value | None, dtype: np.dtype[Any]) -> Value:
        return _quantize(graph, x, scale, zero, dtype)


class Dequantize(_Quantization[operators_pb2.DequantizeOperatorDesc]):
    case: ClassVar[str] = "dequantize"
    integer_field = "input_tensor"

    def apply(self, graph: Graph, x: Value, scale: Value, zero: Value | None, dtype: np.dtype[Any]) -> Value:
        # 8-bit values: the difference is exact in INT32 on every provider.
        return graph.cast(_dequantize(graph, x, scale, zero, wide=False), dtype)


class DynamicQuantizeLinear(Operator[operators_pb2.DynamicQuantizeLinearOperatorDesc]):
    case: ClassVar[str] = "dynamic_quantize_linear"

    def lower(self, desc: operators_pb2.DynamicQuantizeLinearOperatorDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        scale_out, zero_out = tensors["output_scale_tensor"], tensors["output_zero_point_tensor"]
        same_rank(tensors, ("output_tensor", "output_scale_tensor", "output_zero_point_tensor"), "input_tensor")
        same_type(tensors, ("output_zero_point_tensor",), "output_tensor")
        equal_sizes(tensors, ("output_tensor",), "input_tensor")
        for name, layout in (("output_scale_tensor", scale_out), ("output_zero_point_tensor", zero_out)):
            require(
                layout.element_count == 1,
                f"{tensors.field(name)}.buffer.sizes",
                f"sizes {list(layout.sizes)}: the page expects exactly 1 element",
            )

        # The page's formula with ONNX DynamicQuantizeLinear's reading of it: the range always contains 0, the zero
        # point is rounded half to even and saturated. An all-zero input has scale 0: dividing by 1 instead gives
        # zero point Min and outputs Min, which dequantize back to 0 whatever the zero point.
        integer: np.dtype[Any] = output.dtype
        info = np.iinfo(integer)
        low, high = float(info.min), float(info.max)
        graph = Graph()
        x = graph.cast(graph.input("input", source.dtype, source.sizes), F32)
        zero = graph.const(0.0, F32)
        smallest = graph.op("Min", graph.op("ReduceMin", x, keepdims=0), zero)
        largest = graph.op("Max", graph.op("ReduceMax", x, keepdims=0), zero)
        scale = graph.op("Div", graph.op("Sub", largest, smallest), graph.const(high - low, F32))
        empty = graph.op("Equal", scale, zero, dtype=BOOL)
        divisor = graph.op("Where", empty, graph.const(1.0, F32), scale)
        bounds = (graph.const(low, F32), graph.const(high, F32))
        zero_point = graph.op(
            "Clip",
            graph.op("Round", graph.op("Sub", graph.const(low, F32), graph.op("Div", smallest, divisor))),
            *bounds,
        )
        quantized = graph.op("Add", graph.op("Round", graph.op("Div", x, divisor)), zero_point)
        graph.output(graph.cast(graph.op("Clip", quantized, *bounds), output.dtype), "output", output.sizes)
        graph.output(graph.op("Reshape", scale, graph.const(list(scale_out.sizes), I64)), "scale", scale_out.sizes)
        zero_value = graph.op("Reshape", graph.cast(zero_point, zero_out.dtype), graph.const(list(zero_out.sizes), I64))
        graph.output(zero_value, "zero_point", zero_out.sizes)

        return Plan(
            (source,),
            (output, scale_out, zero_out),
            graph.model(),
            reshaping_feeder(("input",), (None,)),
            direct_inputs=("input",),
            direct_outputs=True,
        )


def _scaled(graph: Graph, value: Value, *scales: Value | None) -> Value:
    """``value`` times each present scale, in FLOAT32, left to right."""
    result = graph.cast(value, F32)
    for scale in scales:
        if scale is not None:
            result = graph.op("Mul", result, graph.cast(scale, F32))
    return result


def _optional_input(
    graph: Graph, name: str, layout: TensorLayout | None, shape: tuple[int, ...] | None
) -> Value | None:
    return None if layout is None or shape is None else graph.input(name, layout.dtype, shape)


class QuantizedLinearMatrixMultiply(Operator[operators_pb2.QuantizedLinearMatrixMultiplyOperatorDesc]):
    case: ClassVar[str] = "quantized_linear_matrix_multiply"

    _FIELDS = (
        "a_scale_tensor",
        "a_zero_point_tensor",
        "b_scale_tensor",
        "b_zero_point_tensor",
        "output_scale_tensor",
        "output_zero_point_tensor",
    )

    def lower(self, desc: operators_pb2.QuantizedLinearMatrixMultiplyOperatorDesc, tensors: Tensors) -> Plan:
        same_rank(tensors, ("b_tensor", "output_tensor"), "a_tensor")
        same_type(tensors, ("a_zero_point_tensor",), "a_tensor")
        same_type(tensors, ("b_zero_point_tensor",), "b_tensor")
        same_type(tensors, ("output_zero_point_tensor",), "output_tensor")
        _same_parameter_rank(tensors, self._FIELDS)
        m, n = _product_sizes(tensors, "a_tensor", "b_tensor", (0, 1), (0, 1))
        output = tensors["output_tensor"]
        rank = len(output.sizes)
        shapes = {
            name: _zero_point_shape(tensors, name, n if name.startswith("b_") else m, not name.startswith("b_"), rank)
            for name in self._FIELDS
        }

        # sum_k (A - AZeroPoint)(B - BZeroPoint) (``integer_product``), then * AScale * BScale, the per-row and
        # per-column scales factoring out of the sum, then quantized.
        graph = Graph()
        zero_names = ("a_zero_point_tensor", "b_zero_point_tensor")
        native = native_integer_product(tensors, [shapes[name] for name in zero_names])
        if native:  # MatMulInteger takes zero points per tensor as scalars
            shapes |= {name: None if shapes[name] is None else () for name in zero_names}

        def operand(name: str, feed: str) -> tuple[Value, Value | None]:
            layout = tensors[name]
            zero_name = name.replace("_tensor", "_zero_point_tensor")
            zero = _optional_input(graph, f"{feed}_zero", tensors.layouts[zero_name], shapes[zero_name])
            return graph.input(feed, layout.dtype, layout.sizes), zero

        product = integer_product(graph, *operand("a_tensor", "a"), *operand("b_tensor", "b"), native)
        a_scale = graph.input("a_scale", F32, shapes["a_scale_tensor"] or ())
        b_scale = graph.input("b_scale", F32, shapes["b_scale_tensor"] or ())
        out_scale = graph.input("output_scale", F32, shapes["output_scale_tensor"] or ())
        out_zero = _optional_input(
            graph, "output_zero", tensors.layouts["output_zero_point_tensor"], shapes["output_zero_point_tensor"]
        )
        result = _quantize(graph, _scaled(graph, product, a_scale, b_scale), out_scale, out_zero, output.dtype)
        graph.output(result, "output", output.sizes)
        feeds = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "output_scale", "output_zero")
        feed_shapes = [*_operand_shapes(shapes), shapes["output_scale_tensor"], shapes["output_zero_point_tensor"]]
        layouts = tuple(tensors.layouts[f.name] for f in self.inputs)
        return Plan(layouts, (output,), graph.model(), reshaping_feeder(feeds, feed_shapes), direct_outputs=True)


class MatrixMultiplyIntegerToFloat(Operator[operators_pb2.MatrixMultiplyIntegerToFloatOperatorDesc]):
    case: ClassVar[str] = "matrix_multiply_integer_to_float"

    _FIELDS = ("a_scale_tensor", "a_zero_point_tensor", "b_scale_tensor", "b_zero_point_tensor")

    def lower(self, desc: operators_pb2.MatrixMultiplyIntegerToFloatOperatorDesc, tensors: Tensors) -> Plan:
        same_rank(tensors, ("b_tensor", "bias_tensor", "output_tensor"), "a_tensor")
        same_type(tensors, ("a_zero_point_tensor", "b_tensor", "b_zero_point_tensor"), "a_tensor")
        same_type(tensors, ("a_scale_tensor", "b_scale_tensor", "bias_tensor"), "output_tensor")
        _same_parameter_rank(tensors, self._FIELDS)
        m, n = _product_sizes(tensors, "a_tensor", "b_tensor", (0, 1), (0, 1))
        output = tensors["output_tensor"]
        equal_sizes(tensors, ("bias_tensor",), "output_tensor")
        bias = tensors.layouts["bias_tensor"]
        rank = len(output.sizes)
        shapes = {
            name: _zero_point_shape(tensors, name, n if name.startswith("b_") else m, name.startswith("a_"), rank)
            for name in self._FIELDS
        }

        # The page's form, dequantize both operands then multiply, in FLOAT32 (FLOAT16 too): the differences are
        # exact (INT32 for values up to 16 bits, INT64 for 32-bit ones where the provider has 64-bit integers).
        wide = not tensors.on_directml
        graph = Graph()

        def operand(prefix: str) -> Value:
            layout = tensors[f"{prefix}_tensor"]
            value = graph.input(prefix, layout.dtype, layout.sizes)
            scale_layout = tensors[f"{prefix}_scale_tensor"]
            scale = graph.input(f"{prefix}_scale", scale_layout.dtype, shapes[f"{prefix}_scale_tensor"] or ())
            zero_name = f"{prefix}_zero_point_tensor"
            zero = _optional_input(graph, f"{prefix}_zero", tensors.layouts[zero_name], shapes[zero_name])
            return _dequantize(graph, value, scale, zero, wide=wide)

        result = graph.op("MatMul", operand("a"), operand("b"))
        if bias is not None:
            result = graph.op("Add", result, graph.cast(graph.input("bias", bias.dtype, bias.sizes), F32))
        graph.output(graph.cast(result, output.dtype), "output", output.sizes)
        feeds = ("a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "bias")
        feed_shapes = [*_operand_shapes(shapes), None]
        layouts = tuple(tensors.layouts[f.name] for f in self.inputs)
        return Plan(layouts, (output,), graph.model(), reshaping_feeder(feeds, feed_shapes), direct_outputs=True)


class QuantizedLinearConvolution(Operator[operators_pb2.QuantizedLinearConvolutionOperatorDesc]):
    case: ClassVar[str] = "quantized_linear_convolution"

    def lower(self, desc: operators_pb2.QuantizedLinearConvolutionOperatorDesc, tensors: Tensors) -> Plan:
        geometry = integer_geometry(desc, tensors)
        same_type(tensors, ("output_zero_point_tensor",), "output_tensor")
        output = tensors["output_tensor"]
        rank = len(output.sizes)
        channels = geometry.output_channels
        for name in ("input_scale_tensor", "output_scale_tensor", "output_zero_point_tensor"):
            _per_tensor(tensors, name)
        filter_scale = _per_channel(tensors, "filter_scale_tensor", channels, rank)
        bias = tensors.layouts["bias_tensor"]
        if bias is not None:
            expected = [1, channels, *([1] * (rank - 2))]
            require(
                list(bias.sizes) == expected,
                f"{tensors.field('bias_tensor')}.buffer.sizes",
                f"sizes {list(bias.sizes)} must be {{1, output channels, 1, 1}} = {expected}",
            )

        # conv(Input - InputZeroPoint, Filter - FilterZeroPoint) exactly in INT32 (CONVOLUTION_INTEGER's lowering;
        # padding is the input zero point, a dequantized 0), plus the INT32 bias in the accumulator's domain (scale
        # InputScale * FilterScale, as ONNX QLinearConv), then * InputScale * FilterScale[c] and quantized.
        graph = Graph()
        accumulated, filter_zero_shape = integer_convolution(graph, tensors, geometry)
        if bias is not None:
            accumulated = graph.op("Add", accumulated, graph.input("bias", bias.dtype, bias.sizes))
        input_scale = graph.input("input_scale", F32, ())
        weight_scale = graph.input("filter_scale", F32, filter_scale or ())
        out_scale = graph.input("output_scale", F32, ())
        out_layout = tensors.layouts["output_zero_point_tensor"]
        out_zero = _optional_input(graph, "output_zero", out_layout, ())
        real = _scaled(graph, accumulated, input_scale, weight_scale)
        graph.output(_quantize(graph, real, out_scale, out_zero, output.dtype), "output", output.sizes)
        feeds = (
            "input",
            "input_scale",
            "input_zero",
            "filter",
            "filter_scale",
            "filter_zero",
            "bias",
            "output_scale",
            "output_zero",
        )
        feed_shapes = [None, (), (), None, filter_scale or (), filter_zero_shape, None, (), ()]
        layouts = tuple(tensors.layouts[f.name] for f in self.inputs)
        return Plan(layouts, (output,), graph.model(), reshaping_feeder(feeds, feed_shapes), direct_outputs=True)


class QuantizedLinearAveragePooling(_Pooling[operators_pb2.QuantizedLinearAveragePoolingOperatorDesc]):
    """AVERAGE_POOLING1's windows over the dequantized input, quantized back: padding is a dequantized 0."""

    case: ClassVar[str] = "quantized_linear_average_pooling"
    kind = "average"
    has_dilations = True
    same_type = False

    _FIELDS = ("input_scale_tensor", "input_zero_point_tensor", "output_scale_tensor", "output_zero_point_tensor")

    def include(self, desc: operators_pb2.QuantizedLinearAveragePoolingOperatorDesc) -> bool:
        return desc.include_padding

    def lower(self, desc: operators_pb2.QuantizedLinearAveragePoolingOperatorDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        same_type(tensors, ("input_zero_point_tensor",), "input_tensor")
        same_type(tensors, ("output_zero_point_tensor",), "output_tensor")
        windows, window = self.windows(desc, tensors)
        rank = len(source.sizes)
        shapes = {name: _per_channel(tensors, name, source.sizes[1], rank) for name in self._FIELDS}
        graph = Graph()

        def parameter(name: str, feed: str) -> Value | None:
            return _optional_input(graph, feed, tensors.layouts[name], shapes[name])

        x = graph.input("input", source.dtype, source.sizes)
        in_scale, in_zero = (
            parameter("input_scale_tensor", "input_scale"),
            parameter("input_zero_point_tensor", "input_zero"),
        )
        assert in_scale is not None
        value = _dequantize(graph, x, in_scale, in_zero, wide=False)
        pooled = self.pooled_sum(graph, value, windows, source.sizes, window, self.include(desc), 1)
        out_scale = parameter("output_scale_tensor", "output_scale")
        assert out_scale is not None
        out_zero = parameter("output_zero_point_tensor", "output_zero")
        graph.output(_quantize(graph, pooled, out_scale, out_zero, output.dtype), "output", output.sizes)
        feeds = ("input", "input_scale", "input_zero", "output_scale", "output_zero")
        feed_shapes = [None, *(shapes[name] for name in self._FIELDS)]
        layouts = tuple(tensors.layouts[f.name] for f in self.inputs)
        return Plan(layouts, (output,), graph.model(), reshaping_feeder(feeds, feed_shapes), direct_outputs=True)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    Quantize(),
    Dequantize(),
    DynamicQuantizeLinear(),
    QuantizedLinearMatrixMultiply(),
    MatrixMultiplyIntegerToFloat(),
    QuantizedLinearConvolution(),
    QuantizedLinearAveragePooling(),
)
