"""DML_GEMM and DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC: matrix products."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.feature_levels import parse_feature_level
from dmlrpc_server.operators._elementwise import Context, ElementWise
from dmlrpc_server.operators._graph import F32, I32, I64, Graph, Value
from dmlrpc_server.operators._support import equal_sizes, reshaping_feeder, same_rank, same_type
from dmlrpc_server.operators.activation import ACTIVATIONS, apply_fused, check_fused
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require
from dmlrpc_server.operators.pages import FUSABLE_GEMM_ONLY


def _product_sizes(
    tensors: Tensors, a_name: str, b_name: str, a_rows: tuple[int, int], b_rows: tuple[int, int]
) -> tuple[int, int]:
    """Check A {batch.., M, K} x B {batch.., K, N} -> Output {batch.., M, N}; ``*_rows`` pick (M, K) / (K, N) out
    of the last two dimensions (transposed operands swap them). Returns (M, N)."""
    a, b, out = tensors[a_name].sizes, tensors[b_name].sizes, tensors["output_tensor"].sizes
    m, k = a[-2 + a_rows[0]], a[-2 + a_rows[1]]
    k_b, n = b[-2 + b_rows[0]], b[-2 + b_rows[1]]
    require(
        k_b == k,
        f"{tensors.field(b_name)}.buffer.sizes",
        f"the inner dimension K of {b_name} is {k_b}, of {a_name} {k}: they must be equal",
    )
    # DirectML does not broadcast the batch/channel dimensions through sizes: a shared operand broadcasts through
    # zero strides, so its sizes still equal the output's.
    expected = [*a[:-2], m, n]
    require(
        list(out) == expected,
        f"{tensors.field('output_tensor')}.buffer.sizes",
        f"sizes {list(out)} must be {{batch.., M, N}} = {expected}",
    )
    require(
        list(b[:-2]) == list(a[:-2]),
        f"{tensors.field(b_name)}.buffer.sizes",
        f"leading (batch, channel) sizes {list(b[:-2])} must equal {a_name}'s {list(a[:-2])}",
    )
    return m, n


_ACTIVATIONS = {operator.case: operator for operator in ACTIVATIONS}


def _gemm_softmax(desc: operators_pb2.GemmOperatorDesc, tensors: Tensors) -> tuple[ElementWise, Context] | None:
    """A fused ACTIVATION_SOFTMAX or ACTIVATION_SOFTMAX1, which GEMM alone accepts (from feature level 6.1): the
    activation and the context it runs in (its tensors are the GEMM output's); None for any other fused activation.
    SOFTMAX is over the last dimension (N) of every batched product, whatever the output's dimension count."""
    if not desc.HasField("fused_activation"):
        return None
    case = desc.fused_activation.WhichOneof("desc")
    if case is None or case.upper() not in FUSABLE_GEMM_ONLY:
        return None
    path = f"{tensors.field('fused_activation')}.{case}"
    level = FUSABLE_GEMM_ONLY[case.upper()]
    require(
        parse_feature_level(level) <= tensors.feature_level,
        path,
        f"DML_OPERATOR_{case.upper()} is fusable into GEMM from feature level {level}",
    )
    activation = _ACTIVATIONS[case]
    inner = getattr(desc.fused_activation, case)
    for field in (*activation.inputs, *activation.outputs):
        require(not inner.HasField(field.name), f"{path}.{field.name}", "must be unset in a fused activation")
    output = tensors["output_tensor"]
    # The activation's own rules (SOFTMAX1's axes) apply against the GEMM output it transforms.
    own = Tensors(path, {"input_tensor": output, "output_tensor": output}, tensors.provider, tensors.feature_level)
    context = Context(inner, own, output.dtype, tensors.feature_level, path)
    if case == "activation_softmax1":
        activation.check(inner, context)
    return activation, context


class Gemm(Operator[operators_pb2.GemmOperatorDesc]):
    case: ClassVar[str] = "gemm"

    def lower(self, desc: operators_pb2.GemmOperatorDesc, tensors: Tensors) -> Plan:
        names = ("b_tensor", "c_tensor", "output_tensor")
        same_type(tensors, names, "a_tensor")
        same_rank(tensors, names, "a_tensor")
        transforms = operators_pb2.MatrixTransform.values()
        for name in ("trans_a", "trans_b"):
            require(
                getattr(desc, name) in transforms,
                tensors.field(name),
                f"{getattr(desc, name)} is not a DML_MATRIX_TRANSFORM (0 = NONE, 1 = TRANSPOSE)",
            )
        trans_a = desc.trans_a == operators_pb2.MATRIX_TRANSFORM_TRANSPOSE
        trans_b = desc.trans_b == operators_pb2.MATRIX_TRANSFORM_TRANSPOSE
        _product_sizes(tensors, "a_tensor", "b_tensor", (1, 0) if trans_a else (0, 1), (1, 0) if trans_b else (0, 1))
        output = tensors["output_tensor"]
        c_layout = tensors.layouts["c_tensor"]
        equal_sizes(tensors, ("c_tensor",), "output_tensor", " (C broadcasts through zero strides, not through sizes)")
        context = Context(desc, tensors, output.dtype, tensors.feature_level, tensors.path)
        softmax = _gemm_softmax(desc, tensors)
        if softmax is None:
            check_fused(desc, context)

        # FLOAT16 computes in FLOAT32 (DirectML's shaders accumulate half in float); ONNX Gemm is 2-D only, so
        # the batched product is MatMul on explicitly transposed operands.
        graph = Graph()
        rank = len(output.sizes)
        swap = [*range(rank - 2), rank - 1, rank - 2]

        def operand(name: str, feed: str, transpose: bool) -> Value:
            layout = tensors[name]
            value = graph.cast(graph.input(feed, layout.dtype, layout.sizes), F32)
            return graph.op("Transpose", value, perm=swap) if transpose else value

        product = graph.op("MatMul", operand("a_tensor", "a", trans_a), operand("b_tensor", "b", trans_b))
        if desc.alpha != 1.0:
            product = graph.op("Mul", product, graph.const(desc.alpha, F32))
        # Beta is ignored without C (0 * NaN or 0 * inf is not added either).
        if c_layout is not None:
            c = operand("c_tensor", "c", False)
            product = graph.op("Add", product, graph.op("Mul", c, graph.const(desc.beta, F32)))
        if softmax is None:
            result = apply_fused(graph, product, context)
        else:
            activation, inner_context = softmax
            result = activation.function(graph, [product], inner_context)
        graph.output(graph.cast(result, output.dtype), "output", output.sizes)
        feeds = ("a", "b", "c")

        layouts = (tensors["a_tensor"], tensors["b_tensor"], c_layout)
        direct = tuple(name if layout is not None else None for name, layout in zip(feeds, layouts, strict=True))
        return Plan(layouts, (output,), graph.model(), direct_inputs=direct, direct_outputs=True)


def _zero_point_shape(tensors: Tensors, name: str, count: int, per_row: bool, rank: int) -> tuple[int, ...] | None:
    """The shape a zero point broadcasts in against the product ({1.., c, 1} per row of A, {1.., 1, c} per column
    of B), or None when it is unset. Accepted sizes, per the page's {[1], [1], AZeroPointCount, [1]} and
    {[1], [1], 1, BZeroPointCount} (bracketed dimensions optional): leading 1s of any number, then the count
    (1 or the row/column count) in its place; a 1-D A zero point is {AZeroPointCount}."""
    layout = tensors.layouts[name]
    if layout is None:
        return None
    sizes = list(layout.sizes)
    kind = "M (per row)" if per_row else "N (per column)"
    target = "{[1], [1], Count, [1]}" if per_row else "{[1], [1], 1, Count}"
    if per_row and len(sizes) == 1:
        found, fits = sizes[0], True
    elif per_row:
        found, fits = sizes[-2], sizes[-1] == 1 and all(size == 1 for size in sizes[:-2])
    else:
        found, fits = sizes[-1], all(size == 1 for size in sizes[:-1])
    require(
        fits and found in (1, count),
        f"{tensors.field(name)}.buffer.sizes",
        f"sizes {sizes} must be {target} with the count 1 (per tensor) or {count} = {kind}",
    )
    return (*([1] * (rank - 2)), found, 1) if per_row else (*([1] * (rank - 1)), found)


def native_integer_product(tensors: Tensors, zero_shapes: Sequence[tuple[int, ...] | None]) -> bool:
    """Whether ``integer_product`` runs as one ONNX MatMulInteger: on DirectML, with zero points per tensor (or
    none), which that node takes as scalars."""
    return tensors.on_directml and all(shape is None or math.prod(shape) == 1 for shape in zero_shapes)


def integer_product(
    graph: Graph, a: Value, a_zero: Value | None, b: Value, b_zero: Value | None, native: bool
) -> Value:
    """sum_k (A - AZeroPoint)(B - BZeroPoint) as INT32, wrapping modulo 2**32 where a huge K overflows it (DirectML
    accumulates in INT32). ``native`` (``native_integer_product``, its zero points scalars): one ONNX MatMulInteger,
    which DirectML's provider maps onto DML_MATRIX_MULTIPLY_INTEGER, with no 64-bit operation (which not every
    device has). Else exactly, the differences (at most 255 in magnitude) in INT32 and their products summed in
    INT64: ONNX Runtime's CPU integer kernels may saturate pairs of INT8 products to INT16 without VNNI (as its
    ConvInteger does, docs/directml-notes.md)."""
    if native:
        # An omitted optional input is an empty name; trailing ones are left out.
        zeros = [a_zero or Value("", a.dtype), b_zero or Value("", b.dtype)]
        while zeros and not zeros[-1].name:
            zeros.pop()
        return graph.op("MatMulInteger", a, b, *zeros, dtype=I32)

    def difference(value: Value, zero: Value | None) -> Value:
        wide = graph.cast(value, I32)
        if zero is not None:
            wide = graph.op("Sub", wide, graph.cast(zero, I32))
        return graph.cast(wide, I64)

    return graph.cast(graph.op("MatMul", difference(a, a_zero), difference(b, b_zero)), I32)


class MatrixMultiplyInteger(Operator[operators_pb2.MatrixMultiplyIntegerOperatorDesc]):
    case: ClassVar[str] = "matrix_multiply_integer"

    def lower(self, desc: operators_pb2.MatrixMultiplyIntegerOperatorDesc, tensors: Tensors) -> Plan:
        same_rank(tensors, ("b_tensor", "output_tensor"), "a_tensor")
        same_type(tensors, ("a_zero_point_tensor",), "a_tensor")
        same_type(tensors, ("b_zero_point_tensor",), "b_tensor")
        m, n = _product_sizes(tensors, "a_tensor", "b_tensor", (0, 1), (0, 1))
        output = tensors["output_tensor"]
        rank = len(output.sizes)
        a_zero = _zero_point_shape(tensors, "a_zero_point_tensor", m, True, rank)
        b_zero = _zero_point_shape(tensors, "b_zero_point_tensor", n, False, rank)

        graph = Graph()
        native = native_integer_product(tensors, (a_zero, b_zero))
        if native:  # MatMulInteger takes zero points per tensor as scalars
            a_zero, b_zero = (None if shape is None else () for shape in (a_zero, b_zero))

        def operand(name: str, feed: str, zero: tuple[int, ...] | None) -> tuple[Value, Value | None]:
            layout = tensors[name]
            value = graph.input(feed, layout.dtype, layout.sizes)
            return value, None if zero is None else graph.input(f"{feed}_zero", layout.dtype, zero)

        product = integer_product(graph, *operand("a_tensor", "a", a_zero), *operand("b_tensor", "b", b_zero), native)
        graph.output(product, "output", output.sizes)
        # The zero points are fed reshaped to broadcast; A and B may stay where they are.
        prepare = reshaping_feeder(("a", "a_zero", "b", "b_zero"), (None, a_zero, None, b_zero))
        layouts = tuple(tensors.layouts[f.name] for f in self.inputs)
        return Plan(
            layouts, (output,), graph.model(), prepare, direct_inputs=("a", None, "b", None), direct_outputs=True
        )


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Gemm(), MatrixMultiplyInteger())
