"""DML_REDUCE, DML_ARGMIN and DML_ARGMAX_OPERATOR_DESC: reductions over axes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from dmlrpc.codec import data_type_name
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.feature_levels import parse_feature_level
from dmlrpc_server.operators._graph import F16, F32, I16, I32, I64, U16, U32, U64, DType, Graph, Value
from dmlrpc_server.operators._support import (
    axis_direction,
    same_dimension_count,
    same_type,
)
from dmlrpc_server.operators.base import Operator, Plan, SupportTable, Tensors, require, support_table
from dmlrpc_server.operators.pages import page
from dmlrpc_server.tensors import TensorRule

RF = operators_pb2.ReduceFunction
DT = tensor_pb2.TensorDataType

#: ONNX Runtime's CPU kernels of ReduceMax/ReduceMin/ArgMax/ArgMin (other integer types widen exactly; UINT64 is
#: mapped order-preservingly onto INT64). FLOAT16 computes in FLOAT32: older ONNX Runtime builds lack it.
_ORDER_KERNEL: dict[DType, DType] = {F16: F32, I16: I32, U16: I32, U32: I64}
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

_FLOAT_REDUCE = {
    RF.REDUCE_FUNCTION_AVERAGE: "ReduceMean",
    RF.REDUCE_FUNCTION_L1: "ReduceL1",
    RF.REDUCE_FUNCTION_L2: "ReduceL2",
    RF.REDUCE_FUNCTION_LOG_SUM: "ReduceLogSum",
    RF.REDUCE_FUNCTION_LOG_SUM_EXP: "ReduceLogSumExp",
    RF.REDUCE_FUNCTION_MAX: "ReduceMax",
    RF.REDUCE_FUNCTION_MIN: "ReduceMin",
    RF.REDUCE_FUNCTION_MULTIPLY: "ReduceProd",
    RF.REDUCE_FUNCTION_SUM: "ReduceSum",
    RF.REDUCE_FUNCTION_SUM_SQUARE: "ReduceSumSquare",
}


def _function_tables() -> dict[int, list[tuple[int, SupportTable]]]:
    """REDUCE's tables per function, ascending by level; the page splits them by function (3.0: MIN MAX, ...)."""
    tables: dict[int, list[tuple[int, SupportTable]]] = {}
    for entry in page("REDUCE")["support"]:
        table = support_table(entry["tensors"])
        for name in entry.get("functions", ()):
            tables.setdefault(RF.Value(f"REDUCE_FUNCTION_{name}"), []).append(
                (parse_feature_level(entry["level"]), table)
            )
    return {function: sorted(entries, key=lambda entry: entry[0]) for function, entries in tables.items()}


_FUNCTION_TABLES = _function_tables()


def _function_table(function: int, feature_level: int) -> SupportTable | None:
    """The table of one reduce function at a level: a function group keeps its last table until a newer one."""
    chosen = None
    for level, table in _FUNCTION_TABLES[function]:
        if level <= feature_level:
            chosen = table
    return chosen


def _union_support() -> tuple[tuple[int, SupportTable], ...]:
    """Per level, the union over functions (the generic check); ``lower`` checks the desc's function's own row."""
    levels = sorted({level for entries in _FUNCTION_TABLES.values() for level, _ in entries})
    support = []
    for level in levels:
        union: dict[str, TensorRule] = {}
        for function in _FUNCTION_TABLES:
            table = _function_table(function, level)
            for field, rule in (table or {}).items():
                old = union.get(field)
                union[field] = (
                    rule
                    if old is None
                    else TensorRule(
                        min(old.min_dimension_count, rule.min_dimension_count),
                        max(old.max_dimension_count, rule.max_dimension_count),
                        old.data_types | rule.data_types,
                    )
                )
        support.append((level, union))
    return tuple(support)


def checked_axes(axes: Sequence[int], axis_count: int, rank: int, tensors: Tensors) -> list[int]:
    """The reduced axes, ascending, after DirectML's rules: AxisCount = len(Axes), each in [0, rank), unique."""
    require(
        axis_count == len(axes),
        tensors.field("axis_count"),
        f"axis_count {axis_count} must equal the number of axes ({len(axes)})",
    )
    # The page is silent on AxisCount = 0; DirectML's descs need a non-null Axes array, so we refuse it.
    require(len(axes) >= 1, tensors.field("axes"), "at least one axis must be reduced")
    for position, axis in enumerate(axes):
        require(
            axis < rank,
            f"{tensors.field('axes')}[{position}]",
            f"axis {axis} is out of range [0, {rank - 1}] (input_tensor has {rank} dimensions)",
        )
    require(len(set(axes)) == len(axes), tensors.field("axes"), f"axes {list(axes)} must be unique")
    return sorted(axes)


def check_output_sizes(tensors: Tensors, axes: Sequence[int]) -> None:
    """The output keeps the input's rank; reduced axes have size 1, the others the input's size."""
    source = tensors["input_tensor"]
    target = tensors["output_tensor"]
    expected = [1 if d in axes else size for d, size in enumerate(source.sizes)]
    require(
        list(target.sizes) == expected,
        f"{tensors.field('output_tensor')}.buffer.sizes",
        f"sizes {list(target.sizes)} must equal the input sizes with reduced axes {list(axes)} set to 1: {expected}",
    )


def reduced_axes(axes: Sequence[int], axis_count: int, tensors: Tensors) -> list[int]:
    """The reduced axes (``checked_axes``) of an output that keeps the input's DimensionCount and has the reduced
    sizes (``check_output_sizes``)."""
    same_dimension_count(tensors)
    checked = checked_axes(axes, axis_count, len(tensors["input_tensor"].sizes), tensors)
    check_output_sizes(tensors, checked)
    return checked


def flatten_reduced(g: Graph, x: Value, sizes: Sequence[int], axes: Sequence[int]) -> Value:
    """``x`` with the kept axes first and the reduced axes (ascending) flattened row-major into one last axis."""
    kept = [d for d in range(len(sizes)) if d not in axes]
    perm = kept + list(axes)
    if perm != list(range(len(sizes))):
        x = g.op("Transpose", x, perm=perm)
    count = int(np.prod([sizes[d] for d in axes]))
    shape = [sizes[d] for d in kept] + [count]
    return g.op("Reshape", x, g.const(shape, np.int64))


def to_order_kernel(g: Graph, x: Value) -> Value:
    """``x`` in a type the CPU order kernels (ReduceMax/Min, ArgMax/Min) take, in the same order."""
    if x.dtype == U64:
        # UINT64 -> INT64 keeps the bits; adding 2**63 (wrapping) flips the top bit: unsigned order onto signed.
        return g.op("Add", g.cast(x, I64), g.const(_INT64_MIN, I64))
    return g.cast(x, _ORDER_KERNEL.get(x.dtype, x.dtype))


def from_order_kernel(g: Graph, x: Value, dtype: DType) -> Value:
    if dtype == U64:
        return g.cast(g.op("Add", x, g.const(_INT64_MIN, I64)), U64)
    return g.cast(x, dtype)


def tree_reduce(g: Graph, x: Value, rank: int, count: int, op_type: str, identity: int) -> Value:
    """``op_type`` (Add, Mul, Max or Min) over the last of ``rank`` axes by halving, ``identity`` padding an odd
    half: exact, wrapping integer arithmetic (ONNX Runtime's CPU ReduceSum/ReduceProd for integers accumulate
    through floating point and saturate, and CUDA's ReduceMax/ReduceMin of 64-bit integers round likewise)."""
    n = count
    while n > 1:
        if n % 2:
            pads = g.const([0] * (2 * rank - 1) + [1], np.int64)
            x = g.op("Pad", x, pads, g.const(identity, x.dtype))
            n += 1
        half = n // 2
        axis = g.const([-1], np.int64)
        first = g.op("Slice", x, g.const([0], np.int64), g.const([half], np.int64), axis)
        second = g.op("Slice", x, g.const([half], np.int64), g.const([n], np.int64), axis)
        x = g.op(op_type, first, second)
        n = half
    return x


def arg_extreme(g: Graph, flat: Value, largest: bool, last: bool, index_dtype: DType) -> Value:
    """The index of the first (or last) maximum (or minimum) along the last axis, kept as a size-1 axis."""
    op_type = "ArgMax" if largest else "ArgMin"
    index = g.op(op_type, to_order_kernel(g, flat), dtype=I64, axis=-1, keepdims=1, select_last_index=int(last))
    return g.cast(index, index_dtype)


def check_index_type(tensors: Tensors, count: int) -> None:
    """Every index over the reduced elements must fit the output type (the page is silent; INT32 is the only one
    a tensor within the size limits can overflow)."""
    target = tensors["output_tensor"]
    top = int(np.iinfo(target.dtype.str).max)
    require(
        count - 1 <= top,
        f"{tensors.field('output_tensor')}.buffer.data_type",
        f"{data_type_name(target.data_type)} cannot hold index {count - 1} over the reduced axes",
    )


def plan_reduction(tensors: Tensors, axes: Sequence[int], body: Any) -> Plan:
    """The plan of a reduction: ``body(graph, flat, count, rank)`` reduces ``flat`` (kept axes, then the reduced
    ones flattened: ``rank`` axes) along its last axis, keeping it, in the output type."""
    source = tensors["input_tensor"]
    target = tensors["output_tensor"]
    g = Graph()
    x = g.input("input", source.dtype, source.sizes)
    count = int(np.prod([source.sizes[d] for d in axes]))
    rank = len(source.sizes) - len(axes) + 1
    reduced = body(g, flatten_reduced(g, x, source.sizes, axes), count, rank)
    result = g.op("Reshape", reduced, g.const(list(target.sizes), np.int64))
    g.output(result, "output", target.sizes)

    return Plan.direct((source,), (target,), g.model())


def _integer_reduce(g: Graph, flat: Value, rank: int, count: int, function: int) -> Value:
    """SUM, MULTIPLY, L1 and SUM_SQUARE of integers in INT64 (UINT64 by its bits): two's complement wrap-around,
    as DirectML's integer arithmetic; narrower types wrap when cast back."""
    dtype = flat.dtype
    wide = g.cast(flat, I64)
    if function == RF.REDUCE_FUNCTION_L1 and dtype.kind == "i":
        wide = g.op("Abs", wide)  # |INT_MIN| wraps to INT_MIN, as abs in the type's own arithmetic does
    elif function == RF.REDUCE_FUNCTION_SUM_SQUARE:
        wide = g.op("Mul", wide, wide)
    multiply = function == RF.REDUCE_FUNCTION_MULTIPLY
    total = tree_reduce(g, wide, rank, count, "Mul" if multiply else "Add", 1 if multiply else 0)
    return g.cast(total, dtype)


class Reduce(Operator[operators_pb2.ReduceOperatorDesc]):
    case: ClassVar[str] = "reduce"
    # The page's tables are per function group; the class table is their union per level so that the generic
    # check passes, and ``lower`` checks the desc's function against its own table.
    support = _union_support()

    def lower(self, desc: operators_pb2.ReduceOperatorDesc, tensors: Tensors) -> Plan:
        function = desc.function
        require(
            function in RF.values(),
            tensors.field("function"),
            f"{function} is not a DML_REDUCE_FUNCTION (0 = ARGMAX ... 11 = SUM_SQUARE)",
        )
        source = tensors["input_tensor"]
        target = tensors["output_tensor"]
        table = _function_table(function, tensors.feature_level)
        name = RF.Name(function).removeprefix("REDUCE_FUNCTION_")
        if table is None:  # every function exists from 1.0, but keep the lookup honest
            raise InvalidArgument(tensors.field("function"), f"{name} is not available at this feature level")
        for field, layout in (("input_tensor", source), ("output_tensor", target)):
            rule = table[field]
            require(
                layout.data_type in rule.data_types,
                f"{tensors.field(field)}.buffer.data_type",
                f"{data_type_name(layout.data_type)} is not supported by {name} at this feature level",
            )
            require(
                rule.min_dimension_count <= len(layout.sizes) <= rule.max_dimension_count,
                f"{tensors.field(field)}.buffer.dimension_count",
                f"{len(layout.sizes)} dimensions; {name} takes {rule.min_dimension_count}-{rule.max_dimension_count}",
            )
        axes = reduced_axes(desc.axes, desc.axis_count, tensors)
        arg = function in (RF.REDUCE_FUNCTION_ARGMAX, RF.REDUCE_FUNCTION_ARGMIN)
        if arg:
            check_index_type(tensors, int(np.prod([source.sizes[d] for d in axes])))
        else:
            same_type(tensors, ("output_tensor",))

        def body(g: Graph, flat: Value, count: int, rank: int) -> Value:
            if arg:
                # REDUCE's ARGMIN/ARGMAX pick the first extreme (the page's notes).
                return arg_extreme(g, flat, function == RF.REDUCE_FUNCTION_ARGMAX, False, target.dtype)
            if flat.dtype.kind == "f":
                # FLOAT16 computes in FLOAT32 and rounds once at the end.
                wide = g.cast(flat, F32)
                op_type = _FLOAT_REDUCE[function]
                if op_type == "ReduceSum":
                    reduced = g.op(op_type, wide, g.const([-1], np.int64), keepdims=1)
                else:
                    reduced = g.op(op_type, wide, axes=[-1], keepdims=1)
                return g.cast(reduced, flat.dtype)
            if function in (RF.REDUCE_FUNCTION_MAX, RF.REDUCE_FUNCTION_MIN):
                largest = function == RF.REDUCE_FUNCTION_MAX
                ordered = to_order_kernel(g, flat)
                if flat.dtype in (I64, U64):
                    # NOTE: CUDA's ReduceMax/ReduceMin of INT64 pass through floating point, wrong past 2**53 (where
                    # UINT64's order mapping puts every value): pairwise Max/Min by halving is exact everywhere.
                    identity = _INT64_MIN if largest else _INT64_MAX
                    reduced = tree_reduce(g, ordered, rank, count, "Max" if largest else "Min", identity)
                else:
                    reduced = g.op("ReduceMax" if largest else "ReduceMin", ordered, axes=[-1], keepdims=1)
                return from_order_kernel(g, reduced, flat.dtype)
            return _integer_reduce(g, flat, rank, count, function)

        return plan_reduction(tensors, axes, body)


ArgDesc = TypeVar("ArgDesc", operators_pb2.ArgminOperatorDesc, operators_pb2.ArgmaxOperatorDesc)


class _ArgBase(Operator[ArgDesc]):
    largest: ClassVar[bool]

    def lower(self, desc: ArgDesc, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        target = tensors["output_tensor"]
        axis_direction(desc.axis_direction, tensors)
        axes = reduced_axes(desc.axes, desc.axis_count, tensors)
        check_index_type(tensors, int(np.prod([source.sizes[d] for d in axes])))
        # INCREASING: the first extreme; DECREASING: the last one. With several axes the index is over the reduced
        # axes flattened row-major (the page's example 3), so "last" is the greatest flattened index.
        last = desc.axis_direction == tensor_pb2.AXIS_DIRECTION_DECREASING

        def body(g: Graph, flat: Value, count: int, rank: int) -> Value:
            return arg_extreme(g, flat, self.largest, last, target.dtype)

        return plan_reduction(tensors, axes, body)


class Argmin(_ArgBase[operators_pb2.ArgminOperatorDesc]):
    case: ClassVar[str] = "argmin"
    largest = False


class Argmax(_ArgBase[operators_pb2.ArgmaxOperatorDesc]):
    case: ClassVar[str] = "argmax"
    largest = True


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Reduce(), Argmin(), Argmax())
