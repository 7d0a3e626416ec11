"""DML_CUMULATIVE_SUMMATION and DML_CUMULATIVE_PRODUCT_OPERATOR_DESC: running sums and products."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
import onnx

from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators._graph import F16, F32, I32, I64, DType, Graph, Value
from dmlrpc_server.operators._support import axis_direction, same_sizes, same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

ScanDesc = TypeVar(
    "ScanDesc", operators_pb2.CumulativeSummationOperatorDesc, operators_pb2.CumulativeProductOperatorDesc
)


def _compute_type(dtype: DType, on_directml: bool) -> DType:
    """FLOAT16 computes in FLOAT32; integers in INT64 (UINT64 by its bits), so that the results wrap around in two's
    complement as DirectML's integer arithmetic does (narrower types wrap when cast back). On DirectML, integers of
    up to 32 bits compute in INT32, which wraps there too and needs no 64-bit shader operations (ONNX Runtime's CPU
    CumSum has no UINT32 kernel, and its INT32 one would rely on signed overflow)."""
    if dtype == F16:
        return F32
    if dtype.kind not in "iu":
        return dtype
    return I32 if on_directml and dtype.itemsize <= 4 else I64


def _shifted(g: Graph, y: Value, sizes: Sequence[int], axis: int, shift: int, reverse: bool) -> Value:
    """``y`` moved ``shift`` places along ``axis`` (toward higher indices, or lower ones when ``reverse``), the
    vacated places holding 1."""
    n = sizes[axis]
    if shift >= n:
        one = onnx.numpy_helper.from_array(np.ones(1, y.dtype), "one")
        return g.op("ConstantOfShape", g.const(list(sizes), np.int64), dtype=y.dtype, value=one)
    start, end = (shift, n) if reverse else (0, n - shift)
    kept = g.op("Slice", y, g.const([start], np.int64), g.const([end], np.int64), g.const([axis], np.int64))
    pads = [0] * (2 * len(sizes))
    pads[axis + len(sizes) if reverse else axis] = shift
    return g.op("Pad", kept, g.const(pads, np.int64), g.const(1, y.dtype))


def product_scan(g: Graph, x: Value, sizes: Sequence[int], axis: int, reverse: bool, exclusive: bool) -> Value:
    """Running products by doubling (Hillis-Steele): after step k each place holds the product of the 2**k places
    ending at it; ceil(log2(n)) Mul nodes, exact for integers (multiplication modulo 2**64 is associative)."""
    y = _shifted(g, x, sizes, axis, 1, reverse) if exclusive else x
    shift = 1
    while shift < sizes[axis]:
        y = g.op("Mul", y, _shifted(g, y, sizes, axis, shift, reverse))
        shift *= 2
    return y


class _Scan(Operator[ScanDesc]):
    def lower(self, desc: ScanDesc, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        target = tensors["output_tensor"]
        rank = len(source.sizes)
        require(
            desc.axis < rank, tensors.field("axis"), f"axis {desc.axis} is not less than the dimension count {rank}"
        )
        axis_direction(desc.axis_direction, tensors)
        same_type(tensors, ("output_tensor",))
        same_sizes(tensors)
        reverse = desc.axis_direction == tensor_pb2.AXIS_DIRECTION_DECREASING
        axis = int(desc.axis)
        g = Graph()
        x = g.input("input", source.dtype, source.sizes)
        wide = g.cast(x, _compute_type(source.dtype, tensors.on_directml))
        if isinstance(desc, operators_pb2.CumulativeProductOperatorDesc):
            result = product_scan(g, wide, source.sizes, axis, reverse, desc.has_exclusive_product)
        else:
            result = g.op(
                "CumSum",
                wide,
                g.const(axis, np.int64),
                exclusive=int(desc.has_exclusive_sum),
                reverse=int(reverse),
            )
        g.output(g.cast(result, source.dtype), "output", target.sizes)

        return Plan.direct((source,), (target,), g.model())


class CumulativeSummation(_Scan[operators_pb2.CumulativeSummationOperatorDesc]):
    case: ClassVar[str] = "cumulative_summation"


class CumulativeProduct(_Scan[operators_pb2.CumulativeProductOperatorDesc]):
    case: ClassVar[str] = "cumulative_product"


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (CumulativeSummation(), CumulativeProduct())
