"""Generated tensors: DML_ONE_HOT, FILL_VALUE_*, DIAGONAL_MATRIX(1) and NONZERO_COORDINATES."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from dmlrpc.codec import TensorLayout, data_type_name
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._graph import BOOL, F32, F64, I32, I64, U32, U64, Graph, Value
from dmlrpc_server.operators._support import scalar_value
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

# Generated values never come from a large initializer: every graph builds its output with Range, Equal, Where and
# Expand from a handful of scalars, so a model stays small whatever the output's size. The Range limits (and
# FILL_VALUE_CONSTANT's value) are fed at run time rather than stored as constants: ONNX Runtime folds a subgraph of
# constants into an initializer when it builds the session, so a graph of constants only would keep a copy of the
# whole output in every cached session.

#: Types ONNX Runtime's CPU Equal and comparison kernels take (others widen exactly).
_COMPARABLE = frozenset({F32, F64, I32, I64})
#: Types ONNX Runtime's CPU Mul/Add kernels take in unsigned (wrapping) arithmetic.
_WRAPPING = {1: U32, 2: U32, 4: U32, 8: U64}


Feeds = dict[str, np.ndarray]
Prepare = Callable[[Sequence[np.ndarray | None]], Feeds]
Finish = Callable[[Sequence[np.ndarray]], list[np.ndarray | None]]


def _feeding(feeds: Feeds) -> Prepare:
    """A ``prepare`` for an operator without inputs: the run-time scalars of its graph."""

    def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
        return dict(feeds)

    return prepare


def _generated(g: Graph, result: Value, output: TensorLayout, feeds: Feeds) -> Plan:
    """The plan of a generator without inputs: ``result`` as its output, ``feeds`` (its run-time scalars) fed."""
    g.output(result, "output", output.sizes)
    return Plan((), (output,), g.model(), _feeding(feeds), _reshaped(output), direct_outputs=True)


def _reshaped(*layouts: TensorLayout | None) -> Finish:
    """A ``finish`` that reshapes each model output to its output tensor's sizes and dtype."""

    def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        results: list[np.ndarray | None] = []
        for result, layout in zip(outputs, layouts, strict=True):
            results.append(
                None if layout is None else np.asarray(result).astype(layout.dtype, copy=False).reshape(layout.sizes)
            )
        return results

    return finish


def _shape(graph: Graph, value: Value, shape: Sequence[int]) -> Value:
    return graph.op("Reshape", value, graph.const(list(shape), np.int64))


def _iota(graph: Graph, count: int, feeds: Feeds, dtype: np.dtype[Any] = I64) -> Value:
    """0, 1, ..., count - 1 as INT64 (or INT32) (Range up to a fed limit, so nothing of the output's size is stored
    in the model or folded into its session)."""
    name = f"limit_{len(feeds)}"
    feeds[name] = np.array(count, dtype)
    return graph.op("Range", graph.const(0, dtype), graph.input(name, dtype, []), graph.const(1, dtype))


def _values(desc: Any, tensors: Tensors, *fields: str) -> list[Any]:
    """The desc's DML_SCALAR_UNION ``fields``, read as its ValueDataType, after the rule the fills share: that type
    is the output's."""
    output = tensors["output_tensor"]
    require(
        desc.value_data_type == output.data_type,
        tensors.field("value_data_type"),
        f"{data_type_name(desc.value_data_type)} must equal output_tensor's data type "
        f"{data_type_name(output.data_type)}",
    )
    return [scalar_value(getattr(desc, field), desc.value_data_type, tensors.field(field)) for field in fields]


class OneHot(Operator[operators_pb2.OneHotOperatorDesc]):
    case: ClassVar[str] = "one_hot"

    def lower(self, desc: operators_pb2.OneHotOperatorDesc, tensors: Tensors) -> Plan:
        indices, values, output = tensors["indices_tensor"], tensors["values_tensor"], tensors["output_tensor"]
        rank = len(output.sizes)
        for name in ("indices_tensor", "values_tensor"):
            require(
                len(tensors[name].sizes) == rank,
                f"{tensors.field(name)}.buffer.sizes",
                f"{len(tensors[name].sizes)} dimensions; must equal output_tensor's {rank}",
            )
        require(
            desc.axis < rank, tensors.field("axis"), f"axis {desc.axis} is not less than the dimension count {rank}"
        )
        require(
            output.data_type == values.data_type,
            f"{tensors.field('output_tensor')}.buffer.data_type",
            "must equal values_tensor's data type",
        )
        expected = list(output.sizes)
        expected[desc.axis] = 1
        require(
            list(indices.sizes) == expected,
            f"{tensors.field('indices_tensor')}.buffer.sizes",
            f"sizes {list(indices.sizes)} must equal output_tensor's with size 1 along axis {desc.axis}: {expected}",
        )
        require(
            values.element_count >= 2,
            f"{tensors.field('values_tensor')}.buffer.sizes",
            f"sizes {list(values.sizes)} hold {values.element_count} element; OffValue and OnValue need at least 2",
        )

        depth = output.sizes[desc.axis]
        g = Graph()
        feeds: Feeds = {}
        # NOTE: 32-bit indices compare at 32 bits (UINT32 against an INT32 Range cast to UINT32): a graph without
        # 64-bit integers compiles on every DirectML device, where one with them needs 64-bit shader operations.
        narrow = indices.dtype in (I32, U32) and depth <= np.iinfo(np.int32).max
        compute = I32 if narrow else I64
        k = g.input("indices", indices.dtype, indices.sizes)
        if not narrow:
            k = g.cast(k, I64)
        if indices.dtype.kind == "i":
            # Negative indices count from the end (from 3.0). One that stays out of [0, depth) after that, like
            # any index >= depth, matches no position: its whole sequence is OffValue, as the page says. (k + depth
            # of a negative k cannot overflow.)
            negative = g.op("Less", k, g.const(0, compute), dtype=BOOL)
            k = g.op("Where", negative, g.op("Add", k, g.const(depth, compute)), k, dtype=compute)
        # Unsigned indices need no normalising: a UINT64 above INT64's range becomes negative in INT64 and, like
        # every other out-of-range index, matches no position.
        iota = g.cast(_iota(g, depth, feeds, compute), k.dtype)  # UINT32 indices: the INT32 Range as UINT32
        positions = [1] * rank
        positions[desc.axis] = depth
        hot = g.op("Equal", k, _shape(g, iota, positions), dtype=BOOL)
        # OffValue and OnValue: elements 0 and 1 of ValuesTensor in logical row-major order (element 1 is element 1
        # along the last dimension of size > 1, the page's "fastest-changing" one); the other elements are unused.
        flat = _shape(g, g.input("values", values.dtype, values.sizes), [-1])
        off = g.op("Gather", flat, g.const([0], np.int64), axis=0)
        on = g.op("Gather", flat, g.const([1], np.int64), axis=0)
        g.output(g.where(hot, on, off), "output", output.sizes)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            # ``None``: bound in device memory as it is (``direct_inputs``).
            bound = zip(("indices", "values"), arrays, strict=True)
            return {**feeds, **{name: np.ascontiguousarray(array) for name, array in bound if array is not None}}

        return Plan(
            (indices, values),
            (output,),
            g.model(),
            prepare,
            _reshaped(output),
            direct_inputs=("indices", "values"),
            direct_outputs=True,
        )


class FillValueConstant(Operator[operators_pb2.FillValueConstantOperatorDesc]):
    case: ClassVar[str] = "fill_value_constant"

    def lower(self, desc: operators_pb2.FillValueConstantOperatorDesc, tensors: Tensors) -> Plan:
        output = tensors["output_tensor"]
        (value,) = _values(desc, tensors, "value")
        g = Graph()
        feeds: Feeds = {"value": np.array([value], dtype=output.dtype)}
        filled = g.op("Expand", g.input("value", output.dtype, [1]), g.const(list(output.sizes), np.int64))
        return _generated(g, filled, output, feeds)


class FillValueSequence(Operator[operators_pb2.FillValueSequenceOperatorDesc]):
    case: ClassVar[str] = "fill_value_sequence"

    def lower(self, desc: operators_pb2.FillValueSequenceOperatorDesc, tensors: Tensors) -> Plan:
        output = tensors["output_tensor"]
        start, delta = _values(desc, tensors, "value_start", "value_delta")
        g = Graph()
        feeds: Feeds = {}
        if output.dtype.kind == "f":
            # An INT32 index where it holds every index: the run's largest intermediate is then the output's size,
            # not twice it (FLOAT32(i) is the same from either type).
            index = _iota(g, output.element_count, feeds, I32 if output.element_count < 1 << 31 else I64)
            # The page states out[i] = ValueStart + i * ValueDelta and sketches it as a running sum; a GPU computes
            # each element on its own, so we do: FLOAT32(i) * delta + start, each step rounded to FLOAT32 (FLOAT16
            # values computed in FLOAT32 and rounded once to FLOAT16). No error accumulates along the sequence, and
            # both readings agree wherever the partial sums are exact.
            term = g.op("Mul", g.cast(index, F32), g.const(delta, F32))
            result = g.cast(g.op("Add", term, g.const(start, F32)), output.dtype)
        else:
            # Integers wrap (two's complement), as the page's UINT8 example with ValueDelta -2 implies: unsigned
            # arithmetic modulo 2^32 (2^64 for 64-bit types) is exact modulo 2^bits, and the final Cast keeps the
            # low bits. Indices fit UINT32, a tensor having fewer than 2^32 elements; up to 32 bits they count in
            # INT32 wherever that holds every index (no 64-bit integer operation, which not every device has).
            compute = _WRAPPING[output.dtype.itemsize]
            narrow = compute == U32 and output.element_count < 1 << 31
            index = _iota(g, output.element_count, feeds, I32 if narrow else I64)
            bits = 8 * compute.itemsize
            term = g.op("Mul", g.cast(index, compute), g.const(int(delta) % (1 << bits), compute))
            result = g.cast(g.op("Add", term, g.const(int(start) % (1 << bits), compute)), output.dtype)
        return _generated(g, _shape(g, result, output.sizes), output, feeds)


def _diagonals(g: Graph, height: int, width: int, feeds: Feeds) -> Value:
    """topX = x - y of every element of a height x width matrix, compared with INT32 desc values (Offset, Begin,
    End): in INT32, which holds every difference of two sizes below 2**31 and which every DirectML device computes
    (INT64 needs 64-bit shader operations), else in INT64."""
    dtype = I32 if max(height, width) < 1 << 31 else I64
    rows = _shape(g, _iota(g, height, feeds, dtype), [height, 1])
    return g.op("Sub", _iota(g, width, feeds, dtype), rows)


def _fill_plan(
    g: Graph, use_value: Value, value: Any, source: TensorLayout | None, output: TensorLayout
) -> tuple[Value, bool]:
    """Value where ``use_value`` (a height x width mask) holds, else the input's element or 0, output-shaped."""
    filled = g.const(value, output.dtype)
    if source is not None:
        return g.where(use_value, filled, g.input("input", source.dtype, source.sizes)), True
    matrix = g.where(use_value, filled, g.const(0, output.dtype))
    return g.op("Expand", matrix, g.const(list(output.sizes), np.int64)), False


class DiagonalMatrix(Operator[operators_pb2.DiagonalMatrixOperatorDesc]):
    case: ClassVar[str] = "diagonal_matrix"

    def lower(self, desc: operators_pb2.DiagonalMatrixOperatorDesc, tensors: Tensors) -> Plan:
        # The dimension rules ({[Batch1, Batch2,] Height, Width}, 2 to 4 dimensions, any height and width) are the
        # support table's dimension counts; every batch matrix is filled the same way.
        output = tensors["output_tensor"]
        value: Any = np.float32(desc.value)
        if output.dtype.kind != "f":
            # Value is a FLOAT; for integer outputs the page truncates it (10.6 -> 10). It is silent on values no
            # integer of the type holds (NaN, infinities, out of range): we refuse them rather than wrap or clamp.
            field = tensors.field("value")
            require(math.isfinite(desc.value), field, f"{desc.value} has no {data_type_name(output.data_type)} value")
            integer: np.dtype[Any] = output.dtype
            info = np.iinfo(integer)
            truncated = int(desc.value)
            require(
                info.min <= truncated <= info.max,
                field,
                f"{desc.value} truncates to {truncated}, outside {data_type_name(output.data_type)}'s range "
                f"[{info.min}, {info.max}]",
            )
            value = truncated
        g = Graph()
        feeds: Feeds = {}
        height, width = output.sizes[-2:]
        top_x = _diagonals(g, height, width, feeds)
        on = g.op("Equal", top_x, g.const(int(desc.offset), top_x.dtype), dtype=BOOL)
        result, _ = _fill_plan(g, on, value, None, output)
        return _generated(g, result, output, feeds)


class DiagonalMatrix1(Operator[operators_pb2.DiagonalMatrix1OperatorDesc]):
    case: ClassVar[str] = "diagonal_matrix1"

    def lower(self, desc: operators_pb2.DiagonalMatrix1OperatorDesc, tensors: Tensors) -> Plan:
        output = tensors["output_tensor"]
        source = tensors.layouts["input_tensor"]
        if source is not None:
            field = f"{tensors.field('input_tensor')}.buffer"
            require(source.data_type == output.data_type, f"{field}.data_type", "must equal output_tensor's data type")
            require(
                len(source.sizes) == len(output.sizes),
                f"{field}.sizes",
                f"{len(source.sizes)} dimensions; must equal output_tensor's {len(output.sizes)}",
            )
            # The page gives out[..., y, x] = InputTensor[..., y, x] off the filled diagonals, so the sizes must
            # match too (the page does not say so, but nothing else has a meaning).
            require(
                source.sizes == output.sizes,
                f"{field}.sizes",
                f"sizes {list(source.sizes)} must equal output_tensor's {list(output.sizes)}",
            )
        (value,) = _values(desc, tensors, "value")
        begin, end = int(desc.diagonal_fill_begin), int(desc.diagonal_fill_end)
        g = Graph()
        feeds: Feeds = {}
        height, width = output.sizes[-2:]
        top_x = _diagonals(g, height, width, feeds)
        # useValue = (End >= Begin) XOR (topX >= Begin) XOR (topX < End); the first term is known here.
        inside = g.op(
            "Xor",
            g.op("GreaterOrEqual", top_x, g.const(begin, top_x.dtype), dtype=BOOL),
            g.op("Less", top_x, g.const(end, top_x.dtype), dtype=BOOL),
        )
        use_value = g.op("Not", inside) if end >= begin else inside
        result, has_input = _fill_plan(g, use_value, value, source, output)
        g.output(result, "output", output.sizes)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data = arrays[0]
            return dict(feeds) if data is None else {**feeds, "input": np.ascontiguousarray(data)}

        return Plan(
            (source,),
            (output,),
            g.model(),
            prepare,
            _reshaped(output),
            direct_inputs=("input" if has_input else None,),
            direct_outputs=True,
        )


class NonzeroCoordinates(Operator[operators_pb2.NonzeroCoordinatesOperatorDesc]):
    case: ClassVar[str] = "nonzero_coordinates"

    def lower(self, desc: operators_pb2.NonzeroCoordinatesOperatorDesc, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        count_out, coordinates_out = tensors["output_count_tensor"], tensors["output_coordinates_tensor"]
        require(
            all(size == 1 for size in count_out.sizes),
            f"{tensors.field('output_count_tensor')}.buffer.sizes",
            f"sizes {list(count_out.sizes)}: the count is a scalar, every size must be 1",
        )
        rank = len(source.sizes)
        effective = rank - next((i for i, size in enumerate(source.sizes) if size != 1), rank)
        total = source.element_count
        field = f"{tensors.field('output_coordinates_tensor')}.buffer.sizes"
        sizes = coordinates_out.sizes
        require(
            all(size == 1 for size in sizes[:-2]),
            field,
            f"sizes {list(sizes)}: the dimensions before the last two must be 1",
        )
        require(
            sizes[-2] == total,
            field,
            f"sizes {list(sizes)}: the second-to-last size must be input_tensor's element count {total}",
        )
        columns = sizes[-1]
        require(
            effective <= columns <= rank,
            field,
            f"sizes {list(sizes)}: the last size must be in [{effective}, {rank}] (input_tensor's effective rank to "
            "its dimension count)",
        )

        g = Graph()
        x = g.input("input", source.dtype, source.sizes)
        # +0.0 and -0.0 both compare equal to zero, as the page wants; NaN compares unequal, so it counts as
        # non-zero (the page does not mention NaN).
        is_zero = g.kernel("Equal", _COMPARABLE, x, g.const(0, source.dtype), dtype=BOOL)
        found = g.op("NonZero", g.op("Not", is_zero), dtype=I64)  # {rank, count}, ascending row-major order
        count = g.op("Shape", found, start=1, end=2, opset=15)
        rows = g.op(
            "Slice",
            g.op("Transpose", found, perm=[1, 0]),
            g.const([rank - columns], np.int64),
            g.const([rank], np.int64),
            g.const([1], np.int64),
        )
        # The page leaves the rows after the count undefined; we write zeros there (a deterministic response).
        pads = g.op(
            "Concat",
            g.const([0, 0], np.int64),
            g.op("Sub", g.const([total], np.int64), count),
            g.const([0], np.int64),
            axis=0,
        )
        padded = g.op("Pad", rows, pads)
        g.output(_shape(g, g.cast(count, U32), count_out.sizes), "count", count_out.sizes)
        g.output(_shape(g, g.cast(padded, U32), sizes), "coordinates", sizes)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data = arrays[0]
            return {} if data is None else {"input": np.ascontiguousarray(data)}

        return Plan(
            (source,),
            (count_out, coordinates_out),
            g.model(),
            prepare,
            _reshaped(count_out, coordinates_out),
            direct_inputs=("input",),
            direct_outputs=True,
        )


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    OneHot(),
    FillValueConstant(),
    FillValueSequence(),
    DiagonalMatrix(),
    DiagonalMatrix1(),
    NonzeroCoordinates(),
)
