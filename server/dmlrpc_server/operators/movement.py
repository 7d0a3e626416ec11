"""Data movement: DML_SLICE(1), PADDING(1), TILE and REVERSE_SUBSEQUENCES."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators._graph import I16, I32, I64, U16, U32, Graph, Value
from dmlrpc_server.operators._support import scalar_value
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

FL = operators_pb2.FeatureLevel
_INT64_MIN = -(1 << 63)
# ONNX Runtime's CPU Pad kernel lacks the 16-bit integers; they pad exactly in the 32-bit type of their sign.
_PAD_WIDENED = {I16: I32, U16: U32}


# --- shared checks ----------------------------------------------------------------------------------------------


def _same_data_type(tensors: Tensors, source: str = "input_tensor", target: str = "output_tensor") -> None:
    require(
        tensors[target].data_type == tensors[source].data_type,
        f"{tensors.field(target)}.buffer.data_type",
        f"must equal {source}'s data type",
    )


def _output_sizes(tensors: Tensors, expected: Sequence[int], rule: str, name: str = "output_tensor") -> None:
    sizes = list(tensors[name].sizes)
    require(
        sizes == list(expected),
        f"{tensors.field(name)}.buffer.sizes",
        f"sizes {sizes} must equal {list(expected)} ({rule})",
    )


def _dimension_count(count: int, tensors: Tensors, source: str = "input_tensor", target: str = "output_tensor") -> int:
    """Checks DimensionCount against the tensors' dimension count (input and output alike) and returns it."""
    rank = len(tensors[source].sizes)
    out_rank = len(tensors[target].sizes)
    require(
        out_rank == rank,
        f"{tensors.field(target)}.buffer.sizes",
        f"has {out_rank} dimensions; the {source.removesuffix('_tensor').replace('_', ' ')} tensor has {rank}",
    )
    require(
        count == rank,
        tensors.field("dimension_count"),
        f"{count} must equal the tensors' dimension count {rank}",
    )
    return rank


def _array(values: Sequence[int], count: int, tensors: Tensors, name: str, count_name: str) -> list[int]:
    require(
        len(values) == count,
        tensors.field(name),
        f"has {len(values)} entries; {count_name} is {count}",
    )
    return list(values)


def _slice_plan(
    source: TensorLayout, output: TensorLayout, starts: Sequence[int], ends: Sequence[int], steps: Sequence[int]
) -> Plan:
    graph = Graph()
    x = graph.input("input", source.dtype, source.sizes)
    axes = list(range(len(starts)))
    result = graph.op(
        "Slice",
        x,
        graph.const(starts, I64),
        graph.const(ends, I64),
        graph.const(axes, I64),
        graph.const(steps, I64),
    )
    graph.output(result, "output", output.sizes)
    return Plan.direct((source,), (output,), graph.model())


# --- SLICE, SLICE1 -------------------------------------------------------------------------------------------------


class Slice(Operator[operators_pb2.SliceOperatorDesc]):
    case: ClassVar[str] = "slice"

    def lower(self, desc: operators_pb2.SliceOperatorDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        _same_data_type(tensors)
        rank = _dimension_count(desc.dimension_count, tensors)
        offsets = _array(desc.offsets, rank, tensors, "offsets", "dimension_count")
        sizes = _array(desc.sizes, rank, tensors, "sizes", "dimension_count")
        strides = _array(desc.strides, rank, tensors, "strides", "dimension_count")
        for i, stride in enumerate(strides):
            require(stride >= 1, f"{tensors.field('strides')}[{i}]", "must be at least 1 (see SLICE1 for others)")
        for i, size in enumerate(sizes):
            require(size >= 1, f"{tensors.field('sizes')}[{i}]", "must be at least 1")
        _output_sizes(tensors, sizes, "the desc's sizes")
        for i, (offset, size, stride, bound) in enumerate(zip(offsets, sizes, strides, source.sizes, strict=True)):
            last = offset + stride * (size - 1)
            if last < bound:
                continue
            # Name the field that puts the last read out of the input: the offset itself, else the stride.
            field = "offsets" if offset >= bound or stride == 1 else "strides"
            raise InvalidArgument(
                f"{tensors.field(field)}[{i}]",
                f"reads input element {last} of dimension {i}, whose size is {bound}: offsets[{i}] + "
                f"strides[{i}] * (sizes[{i}] - 1) must be less than it",
            )
        ends = [offset + stride * (size - 1) + 1 for offset, size, stride in zip(offsets, sizes, strides, strict=True)]
        return _slice_plan(source, output, offsets, ends, strides)


class Slice1(Operator[operators_pb2.Slice1OperatorDesc]):
    case: ClassVar[str] = "slice1"

    def lower(self, desc: operators_pb2.Slice1OperatorDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        starts, ends, strides = slice1_window(desc, tensors, "input_tensor", "output_tensor")
        return _slice_plan(source, output, starts, ends, strides)


def slice1_window(
    desc: Any, tensors: Tensors, source_name: str, output_name: str
) -> tuple[list[int], list[int], list[int]]:
    """SLICE1's window rules (also SLICE_GRAD's, whose output gradient is the sliced tensor and whose input
    gradient is the slice): the ONNX Slice starts, ends and steps that read the window from ``source_name`` into
    ``output_name``'s sizes."""
    source, output = tensors[source_name], tensors[output_name]
    what = source_name.removesuffix("_tensor").replace("_", " ")
    _same_data_type(tensors, source_name, output_name)
    rank = _dimension_count(desc.dimension_count, tensors, source_name, output_name)
    offsets = _array(desc.input_window_offsets, rank, tensors, "input_window_offsets", "dimension_count")
    sizes = _array(desc.input_window_sizes, rank, tensors, "input_window_sizes", "dimension_count")
    strides = _array(desc.input_window_strides, rank, tensors, "input_window_strides", "dimension_count")
    starts, ends = [], []
    for i in range(rank):
        offset, size, stride, bound = offsets[i], sizes[i], strides[i], source.sizes[i]
        require(stride != 0, f"{tensors.field('input_window_strides')}[{i}]", "must not be 0")
        require(size >= 1, f"{tensors.field('input_window_sizes')}[{i}]", "the window must not be empty")
        require(
            offset < bound,
            f"{tensors.field('input_window_offsets')}[{i}]",
            f"{offset} is outside dimension {i} of the {what} (size {bound})",
        )
        require(
            offset + size <= bound,
            f"{tensors.field('input_window_sizes')}[{i}]",
            f"the window [{offset}, {offset + size}) does not fit in dimension {i} of the {what} (size {bound})",
        )
        # The page divides by the stride; its magnitude is meant (a negative stride walks the window backward).
        most = 1 + (size - 1) // abs(stride)
        count = output.sizes[i]
        require(
            1 <= count <= most,
            f"{tensors.field(output_name)}.buffer.sizes",
            f"sizes[{i}] = {count} must be in [1, {most}]: 1 + (input_window_sizes[{i}] - 1) / "
            f"|input_window_strides[{i}]|",
        )
        start = offset if stride > 0 else offset + size - 1
        end = start + stride * (count - 1) + (1 if stride > 0 else -1)
        starts.append(start)
        # A negative end counts from the back in ONNX; "before element 0" is the most negative one.
        ends.append(end if end >= 0 else _INT64_MIN)
    return starts, ends, strides


# --- PADDING, PADDING1 -----------------------------------------------------------------------------------------------

PaddingDesc = TypeVar("PaddingDesc", operators_pb2.PaddingOperatorDesc, operators_pb2.Padding1OperatorDesc)


def _float_to(value: float, dtype: np.dtype[Any]) -> Any:
    """PADDING's FLOAT PaddingValue in the tensor's type.

    The page only says integers truncate (10.6 -> 10). Chosen here: toward zero, saturated to the type's range,
    NaN -> 0; FLOAT16 rounds to nearest (overflowing to infinity), FLOAT64 is exact.
    """
    if dtype.kind == "f":
        with np.errstate(over="ignore"):  # beyond FLOAT16's range: infinity, as documented above
            return np.float32(value).astype(dtype)
    if math.isnan(value):
        return dtype.type(0)
    info = np.iinfo(dtype)
    if math.isinf(value):
        return dtype.type(info.max if value > 0 else info.min)
    return dtype.type(min(max(math.trunc(value), int(info.min)), int(info.max)))


def _source_indices(graph: Graph, mode: int, size: int, start: int, count: int) -> Value:
    """For each of ``count`` output positions along a padded dimension, the input position it copies (INT64)."""
    position = graph.op("Range", graph.const(0, I64), graph.const(count, I64), graph.const(1, I64))
    shifted = graph.op("Sub", position, graph.const(start, I64))
    if mode == operators_pb2.PADDING_MODE_WRAP:
        return graph.op("Mod", shifted, graph.const(size, I64))  # fmod=0: the divisor's sign, so in [0, size)
    if mode == operators_pb2.PADDING_MODE_EDGE or size == 1:
        # A dimension of one element mirrors onto itself in every mode (numpy.pad's behaviour, which the page cites).
        return graph.op("Max", graph.op("Min", shifted, graph.const(size - 1, I64)), graph.const(0, I64))
    # Mirroring is periodic (the page: padding beyond the input size re-folds over earlier padding): REFLECTION
    # has period 2(n-1) (edges not repeated), SYMMETRIC period 2n (edges repeated); fold each period onto [0, n).
    period = 2 * (size - 1) if mode == operators_pb2.PADDING_MODE_REFLECTION else 2 * size
    last = period if mode == operators_pb2.PADDING_MODE_REFLECTION else period - 1
    phase = graph.op("Mod", shifted, graph.const(period, I64))
    return graph.op("Min", phase, graph.op("Sub", graph.const(last, I64), phase))


class _PaddingBase(Operator[PaddingDesc]):
    def padding_value(self, desc: PaddingDesc, tensors: Tensors) -> Any:
        """The CONSTANT-mode value in the output's type."""
        raise NotImplementedError

    def check_value_type(self, desc: PaddingDesc, tensors: Tensors) -> None:
        """Rules of the padding value's type that hold in every mode."""

    def lower(self, desc: PaddingDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        _same_data_type(tensors)
        rank = _dimension_count(desc.dimension_count, tensors)
        starts = _array(desc.start_padding, rank, tensors, "start_padding", "dimension_count")
        ends = _array(desc.end_padding, rank, tensors, "end_padding", "dimension_count")
        mode = desc.padding_mode
        require(
            mode in operators_pb2.PaddingMode.values(),
            tensors.field("padding_mode"),
            f"{mode} is not a DML_PADDING_MODE (0 = CONSTANT .. 4 = WRAP)",
        )
        require(
            mode != operators_pb2.PADDING_MODE_SYMMETRIC or tensors.feature_level >= FL.FEATURE_LEVEL_3_0,
            tensors.field("padding_mode"),
            "DML_PADDING_MODE_SYMMETRIC needs feature level 3.0",
        )
        require(
            mode != operators_pb2.PADDING_MODE_WRAP or tensors.feature_level >= FL.FEATURE_LEVEL_6_4,
            tensors.field("padding_mode"),
            "DML_PADDING_MODE_WRAP needs feature level 6.4",
        )
        self.check_value_type(desc, tensors)
        expected = [n + s + e for n, s, e in zip(source.sizes, starts, ends, strict=True)]
        _output_sizes(tensors, expected, "input sizes + start_padding + end_padding")

        graph = Graph()
        x = graph.input("input", source.dtype, source.sizes)
        if mode == operators_pb2.PADDING_MODE_CONSTANT:
            value = self.padding_value(desc, tensors)
            compute = _PAD_WIDENED.get(source.dtype, source.dtype)
            padded = graph.op(
                "Pad", graph.cast(x, compute), graph.const(starts + ends, I64), graph.const(value, compute)
            )
            result = graph.cast(padded, source.dtype)
        else:
            # Every other mode is a gather per padded dimension of computed source positions: exact for every
            # type, and it covers what ONNX Pad lacks (SYMMETRIC, padding beyond the input size).
            result = x
            for axis, (size, start, end) in enumerate(zip(source.sizes, starts, ends, strict=True)):
                if start or end:
                    indices = _source_indices(graph, mode, size, start, size + start + end)
                    result = graph.op("Gather", result, indices, axis=axis)
        graph.output(result, "output", output.sizes)
        return Plan.direct((source,), (output,), graph.model())


class Padding(_PaddingBase[operators_pb2.PaddingOperatorDesc]):
    case: ClassVar[str] = "padding"

    def padding_value(self, desc: operators_pb2.PaddingOperatorDesc, tensors: Tensors) -> Any:
        return _float_to(desc.padding_value, tensors["output_tensor"].dtype)


class Padding1(_PaddingBase[operators_pb2.Padding1OperatorDesc]):
    case: ClassVar[str] = "padding1"

    def check_value_type(self, desc: operators_pb2.Padding1OperatorDesc, tensors: Tensors) -> None:
        # Listed unconditionally on the page, so checked in every mode (the value itself only matters in CONSTANT).
        require(
            desc.padding_value_data_type == tensors["output_tensor"].data_type,
            tensors.field("padding_value_data_type"),
            "must equal output_tensor's data type",
        )

    def padding_value(self, desc: operators_pb2.Padding1OperatorDesc, tensors: Tensors) -> Any:
        return scalar_value(desc.padding_value, desc.padding_value_data_type, tensors.field("padding_value"))


# --- TILE --------------------------------------------------------------------------------------------------------


class Tile(Operator[operators_pb2.TileOperatorDesc]):
    case: ClassVar[str] = "tile"

    def lower(self, desc: operators_pb2.TileOperatorDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        _same_data_type(tensors)
        rank = len(source.sizes)
        require(
            desc.repeats_count == rank,
            tensors.field("repeats_count"),
            f"{desc.repeats_count} must equal the input's dimension count {rank}",
        )
        repeats = _array(desc.repeats, rank, tensors, "repeats", "repeats_count")
        for i, repeat in enumerate(repeats):
            require(repeat > 0, f"{tensors.field('repeats')}[{i}]", "must be greater than 0")
        expected = [size * repeat for size, repeat in zip(source.sizes, repeats, strict=True)]
        _output_sizes(tensors, expected, "input sizes * repeats")
        graph = Graph()
        x = graph.input("input", source.dtype, source.sizes)
        graph.output(graph.op("Tile", x, graph.const(repeats, I64)), "output", output.sizes)
        return Plan.direct((source,), (output,), graph.model())


# --- REVERSE_SUBSEQUENCES ---------------------------------------------------------------------------------------


class ReverseSubsequences(Operator[operators_pb2.ReverseSubsequencesOperatorDesc]):
    case: ClassVar[str] = "reverse_subsequences"

    def lower(self, desc: operators_pb2.ReverseSubsequencesOperatorDesc, tensors: Tensors) -> Plan:
        source, lengths, output = (
            tensors["input_tensor"],
            tensors["sequence_lengths_tensor"],
            tensors["output_tensor"],
        )
        _same_data_type(tensors)
        rank = len(source.sizes)
        axis = desc.axis
        require(axis < rank, tensors.field("axis"), f"{axis} is not less than the dimension count {rank}")
        _output_sizes(tensors, source.sizes, "the input's sizes")
        expected = list(source.sizes)
        expected[axis] = 1
        _output_sizes(tensors, expected, "the input's sizes with 1 along axis", name="sequence_lengths_tensor")

        # ONNX ReverseSequence takes [time, batch]: the axis moves first and the other dimensions become the batch.
        steps = source.sizes[axis]
        perm = [axis, *(d for d in range(rank) if d != axis)]
        moved_sizes = [source.sizes[d] for d in perm]
        batch = math.prod(moved_sizes[1:])
        graph = Graph()
        x = graph.input("input", source.dtype, source.sizes)
        sequence_lengths = graph.input("lengths", I64, [batch])
        moved = graph.op("Transpose", x, perm=perm) if axis else x
        flat = graph.op("Reshape", moved, graph.const([steps, batch], I64))
        reversed_ = graph.op("ReverseSequence", flat, sequence_lengths, batch_axis=1, time_axis=0)
        result = graph.op("Reshape", reversed_, graph.const(moved_sizes, I64))
        if axis:
            result = graph.op("Transpose", result, perm=[perm.index(d) for d in range(rank)])
        graph.output(result, "output", output.sizes)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data, values = arrays
            assert values is not None
            # The page reads a length above the axis size as clamped to it; such a length is refused here instead,
            # as every out-of-range index is (it is almost always a caller's bug).
            too_long = np.argwhere(values > steps)
            if too_long.size:
                position = tuple(int(i) for i in too_long[0])
                raise InvalidArgument(
                    "inputs[1].buffer.data",
                    f"sequence length {int(values[position])} at sequence_lengths_tensor position {position} is out "
                    f"of range: it must not exceed the input size {steps} along axis {axis}",
                )
            feeds = {"lengths": np.moveaxis(values, axis, 0).reshape(batch).astype(np.int64)}
            if data is not None:
                feeds["input"] = np.ascontiguousarray(data)
            return feeds

        def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            return [outputs[0]]

        return Plan(
            (source, lengths),
            (output,),
            graph.model(),
            prepare,
            finish,
            direct_inputs=("input", None),
            direct_outputs=True,
        )


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    Slice(),
    Slice1(),
    Padding(),
    Padding1(),
    Tile(),
    ReverseSubsequences(),
)
