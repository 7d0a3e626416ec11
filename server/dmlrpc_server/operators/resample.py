"""Scaling and resampling: DML_VALUE_SCALE_2D, UPSAMPLE_2D and RESAMPLE(1/2/3)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

import numpy as np

from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.errors import ResourceExhausted
from dmlrpc_server.operators._graph import F32, I64, Graph, Value
from dmlrpc_server.operators._support import axis_direction
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

NEAREST = operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR
LINEAR = operators_pb2.INTERPOLATION_MODE_LINEAR
UINT_MAX = 2**32 - 1
#: The most (output position, tap) pairs one resampled dimension may have. Only antialiased downscaling by a tiny
#: scale reaches it (each output then averages 2/scale positions, most of them clamped onto the edges); such
#: descs are refused (RESOURCE_EXHAUSTED) rather than built.
MAX_TAPS = 1 << 24


class Rounding(Enum):
    """How NEAREST_NEIGHBOR turns an input coordinate into an element index."""

    #: RESAMPLE, RESAMPLE1 and UPSAMPLE_2D: the nearest element; a coordinate exactly halfway picks the higher index
    #: (floor(x + 0.5)), the behaviour of RESAMPLE2 with RoundingDirection DECREASING and the input shifted by half
    #: an element, which is how ONNX Runtime maps round_prefer_ceil onto DirectML.
    NEAREST = "nearest"
    #: RESAMPLE2/3 with DML_AXIS_DIRECTION_DECREASING: floor(x).
    FLOOR = "floor"
    #: RESAMPLE2/3 with DML_AXIS_DIRECTION_INCREASING: ceil(x).
    CEIL = "ceil"


@dataclass(frozen=True)
class AxisMap:
    """One dimension's mapping: input coordinate = (output coordinate - output_offset) / scale - input_offset."""

    scale: float
    input_offset: float
    output_offset: float


def input_coordinates(out_size: int, axis: AxisMap) -> np.ndarray:
    """The input coordinate of every output position, computed in FLOAT32 in the page's order of operations
    (DirectML's FLOAT fields are FLOAT32 and its shaders compute in it), returned as FLOAT64 for exact rounding."""
    positions = np.arange(out_size, dtype=np.float32)
    with np.errstate(over="ignore"):  # a tiny scale overflows to +-inf: the edge element, after clamping
        coordinates = (positions - np.float32(axis.output_offset)) / np.float32(axis.scale) - np.float32(
            axis.input_offset
        )
    return coordinates.astype(np.float64)


def nearest_indices(in_size: int, out_size: int, axis: AxisMap, rounding: Rounding) -> np.ndarray:
    """The input element each output position reads, clamped to the edges (edge replication), as INT64."""
    x = np.clip(input_coordinates(out_size, axis), -1.0, float(in_size))
    if rounding is Rounding.NEAREST:
        chosen = np.floor(x + 0.5)
    elif rounding is Rounding.FLOOR:
        chosen = np.floor(x)
    else:
        chosen = np.ceil(x)
    indices: np.ndarray = np.clip(chosen, 0, in_size - 1).astype(np.int64)
    return indices


def linear_taps(
    in_size: int, out_size: int, axis: AxisMap, antialiased: bool, field: str
) -> tuple[np.ndarray, np.ndarray]:
    """Per output position, the input elements it averages (INT64, clamped to the edges) and their weights
    (FLOAT32, summing to 1): two taps of a tent of half-width 1, or with antialiasing a tent stretched by 1/scale."""
    stretch = 1.0 / float(np.float32(axis.scale))
    if not (antialiased and stretch > 2.0):
        x = np.clip(input_coordinates(out_size, axis), -1.0, float(in_size))
        low = np.floor(x)
        fraction = x - low
        indices = np.stack([low, low + 1], axis=1)
        weights = np.stack([1.0 - fraction, fraction], axis=1)
        return np.clip(indices, 0, in_size - 1).astype(np.int64), weights.astype(np.float32)
    # Antialiased: every integer i with |i - x| < stretch weighs 1 - |i - x| / stretch; taps outside the input read
    # the edge element (DirectML clamps coordinates; it has no exclude-outside mode); weights are normalised.
    count = math.floor(2 * stretch) + 1
    if out_size * count > MAX_TAPS:
        raise ResourceExhausted(
            f"{field}: antialiased downscaling by {axis.scale} averages up to {count} input elements for each of "
            f"{out_size} outputs, over the limit of {MAX_TAPS} taps per dimension (fixed: split the call)"
        )
    x = np.clip(input_coordinates(out_size, axis), -stretch - 1.0, in_size + stretch)
    first = np.ceil(x - stretch)
    positions = first[:, None] + np.arange(count, dtype=np.float64)[None, :]
    tent = np.maximum(0.0, 1.0 - np.abs(positions - x[:, None]) / stretch)
    tent /= tent.sum(axis=1, keepdims=True)
    indices = np.clip(positions, 0, in_size - 1).astype(np.int64)
    if count > in_size:
        # Fold the clamped duplicates together, so the table is never wider than the input.
        dense = np.zeros((out_size, in_size), dtype=np.float64)
        np.add.at(dense, (np.repeat(np.arange(out_size), count), indices.ravel()), tent.ravel())
        return np.broadcast_to(np.arange(in_size, dtype=np.int64), (out_size, in_size)).copy(), dense.astype(np.float32)
    return indices, tent.astype(np.float32)


@dataclass(frozen=True)
class Resampling:
    """A whole resampling: per dimension its mapping, and the interpolation settings."""

    axes: tuple[AxisMap, ...]
    linear: bool
    rounding: Rounding = Rounding.NEAREST
    antialiased: bool = False


def lower_resampling(tensors: Tensors, resampling: Resampling) -> Plan:
    """The separable lowering: per resampled dimension, NEAREST_NEIGHBOR is one Gather by an index table;
    LINEAR is a Gather of the taps ({out, K} indices) weighted and summed over K, in FLOAT32.

    Integer data (INT8/UINT8) with LINEAR rounds the FLOAT32 result half to even and saturates (the page is
    silent); with NEAREST_NEIGHBOR every type only moves elements, bit-exactly.
    """
    source = tensors["input_tensor"]
    target = tensors["output_tensor"]
    in_sizes, out_sizes = list(source.sizes), list(target.sizes)
    rank = len(in_sizes)
    graph = Graph()
    value: Value = graph.input("input", source.dtype, in_sizes)
    if resampling.linear:
        value = graph.cast(value, F32)
    for d, axis in enumerate(resampling.axes):
        in_size, out_size = in_sizes[d], out_sizes[d]
        field = tensors.field(f"scales[{d}]")
        if not resampling.linear:
            indices = nearest_indices(in_size, out_size, axis, resampling.rounding)
            if in_size == out_size and np.array_equal(indices, np.arange(in_size)):
                continue  # this dimension maps each element onto itself
            value = graph.op("Gather", value, graph.const(indices, I64), axis=d)
            continue
        taps, weights = linear_taps(in_size, out_size, axis, resampling.antialiased, field)
        identity = np.arange(in_size)[:, None] if in_size == out_size else None
        if identity is not None and np.all((weights == 0) | (taps == identity)):
            continue  # every output reads its own element with weight 1
        gathered = graph.op("Gather", value, graph.const(taps, I64), axis=d)
        shaped = weights.reshape(weights.shape + (1,) * (rank - d - 1))
        weighted = graph.op("Mul", gathered, graph.const(shaped, F32))
        value = graph.op("ReduceSum", weighted, graph.const([d + 1], I64), keepdims=0)
    if resampling.linear and source.dtype != F32:
        if source.dtype.kind in "iu":
            integer: np.dtype[Any] = source.dtype
            info = np.iinfo(integer)
            value = graph.op("Round", value)
            value = graph.op("Clip", value, graph.const(info.min, F32), graph.const(info.max, F32))
        value = graph.cast(value, source.dtype)
    graph.output(value, "output", out_sizes)

    return Plan.direct((source,), (target,), graph.model())


def check_same_type_and_rank(
    tensors: Tensors, source_name: str = "input_tensor", target_name: str = "output_tensor"
) -> None:
    source, target = tensors[source_name], tensors[target_name]
    require(
        target.data_type == source.data_type,
        f"{tensors.field(target_name)}.buffer.data_type",
        f"must equal {source_name}'s data type",
    )
    require(
        len(target.sizes) == len(source.sizes),
        f"{tensors.field(target_name)}.buffer.sizes",
        f"{len(target.sizes)} dimensions; must equal {source_name}'s dimension count {len(source.sizes)}",
    )


def check_interpolation_mode(mode: int, tensors: Tensors) -> None:
    require(
        mode in operators_pb2.InterpolationMode.values(),
        tensors.field("interpolation_mode"),
        f"{mode} is not a DML_INTERPOLATION_MODE (0 = NEAREST_NEIGHBOR, 1 = LINEAR)",
    )


def rounding_direction(direction: int, tensors: Tensors) -> Rounding:
    """RESAMPLE2/3's (and RESAMPLE_GRAD1's) RoundingDirection, checked, as the nearest-neighbour rounding."""
    axis_direction(direction, tensors, "rounding_direction")
    return Rounding.CEIL if direction == tensor_pb2.AXIS_DIRECTION_INCREASING else Rounding.FLOOR


def check_array(name: str, values: Sequence[float], count: int, count_field: str, tensors: Tensors) -> None:
    require(
        len(values) == count,
        tensors.field(name),
        f"{len(values)} entries; {count_field} says {count}",
    )
    for i, value in enumerate(values):
        require(math.isfinite(value), f"{tensors.field(name)}[{i}]", f"{value} is not finite")
        if name == "scales":
            require(value > 0, f"{tensors.field(name)}[{i}]", f"{value} is not positive")


def offset_axes(desc: Any, tensors: Tensors, rank: int) -> tuple[AxisMap, ...]:
    """RESAMPLE1/2/3's (and RESAMPLE_GRAD/GRAD1's) per-dimension mapping: DimensionCount, Scales and the pixel
    offsets, checked against the tensors' dimension count ``rank``."""
    count = desc.dimension_count
    require(count == rank, tensors.field("dimension_count"), f"{count}; must equal the tensors' dimension count {rank}")
    for name in ("scales", "input_pixel_offsets", "output_pixel_offsets"):
        check_array(name, getattr(desc, name), count, "dimension_count", tensors)
    return tuple(
        AxisMap(scale, input_offset, output_offset)
        for scale, input_offset, output_offset in zip(
            desc.scales, desc.input_pixel_offsets, desc.output_pixel_offsets, strict=True
        )
    )


class ValueScale2d(Operator[operators_pb2.ValueScale2dOperatorDesc]):
    case: ClassVar[str] = "value_scale_2d"

    def lower(self, desc: operators_pb2.ValueScale2dOperatorDesc, tensors: Tensors) -> Plan:
        source, target = tensors["input_tensor"], tensors["output_tensor"]
        check_same_type_and_rank(tensors)
        require(
            list(target.sizes) == list(source.sizes),
            f"{tensors.field('output_tensor')}.buffer.sizes",
            f"sizes {list(target.sizes)} must equal input_tensor's sizes {list(source.sizes)}",
        )
        require(desc.channel_count in (1, 3), tensors.field("channel_count"), f"{desc.channel_count}; must be 1 or 3")
        require(
            desc.channel_count == source.sizes[1],
            tensors.field("channel_count"),
            f"{desc.channel_count}; must equal the input's channel size (sizes[1]) {source.sizes[1]}",
        )
        require(
            len(desc.bias) == desc.channel_count,
            tensors.field("bias"),
            f"{len(desc.bias)} entries; channel_count says {desc.channel_count}",
        )
        # FLOAT16 computes in FLOAT32 and rounds once at the end, as DirectML's shaders do.
        graph = Graph()
        x = graph.cast(graph.input("input", source.dtype, source.sizes), F32)
        scaled = graph.op("Mul", x, graph.const(np.float32(desc.scale), F32))
        bias = np.asarray(desc.bias, dtype=np.float32).reshape(1, desc.channel_count, 1, 1)
        result = graph.cast(graph.op("Add", scaled, graph.const(bias, F32)), source.dtype)
        graph.output(result, "output", target.sizes)

        return Plan.direct((source,), (target,), graph.model())


class Upsample2d(Operator[operators_pb2.Upsample2dOperatorDesc]):
    case: ClassVar[str] = "upsample_2d"

    def lower(self, desc: operators_pb2.Upsample2dOperatorDesc, tensors: Tensors) -> Plan:
        source, target = tensors["input_tensor"], tensors["output_tensor"]
        check_same_type_and_rank(tensors)
        check_interpolation_mode(desc.interpolation_mode, tensors)
        in_h, in_w = source.sizes[-2], source.sizes[-1]
        scale = desc.scale_size
        for name, value, size in (("height", scale.height, in_h), ("width", scale.width, in_w)):
            require(
                0 < value <= UINT_MAX // size,
                f"{tensors.field('scale_size')}.{name}",
                f"{value} is out of range: 0 < scale_size.{name} <= UINT_MAX / input {name} ({UINT_MAX // size})",
            )
        expected = [*source.sizes[:-2], in_h * scale.height, in_w * scale.width]
        require(
            list(target.sizes) == expected,
            f"{tensors.field('output_tensor')}.buffer.sizes",
            f"sizes {list(target.sizes)} must be the input's with height and width scaled: {expected}",
        )
        # Pixel centres map onto pixel centres (RESAMPLE's mapping); with integer scales no output centre falls
        # halfway between input centres, so NEAREST_NEIGHBOR replicates each element scale times.
        unit = AxisMap(1.0, 0.5, -0.5)
        axes = (
            *(unit for _ in source.sizes[:-2]),
            AxisMap(float(scale.height), 0.5, -0.5),
            AxisMap(float(scale.width), 0.5, -0.5),
        )
        return lower_resampling(tensors, Resampling(axes, linear=desc.interpolation_mode == LINEAR))


class Resample(Operator[operators_pb2.ResampleOperatorDesc]):
    case: ClassVar[str] = "resample"

    def lower(self, desc: operators_pb2.ResampleOperatorDesc, tensors: Tensors) -> Plan:
        check_same_type_and_rank(tensors)
        check_interpolation_mode(desc.interpolation_mode, tensors)
        rank = len(tensors["input_tensor"].sizes)
        require(
            desc.scale_count == rank,
            tensors.field("scale_count"),
            f"{desc.scale_count}; must equal the tensors' dimension count {rank}",
        )
        check_array("scales", desc.scales, desc.scale_count, "scale_count", tensors)
        # The output sizes are the output tensor's: DirectML does not derive them from the scales (a larger scaled
        # input is cropped, a smaller one clamps at the edges).
        axes = tuple(AxisMap(scale, 0.5, -0.5) for scale in desc.scales)
        return lower_resampling(tensors, Resampling(axes, linear=desc.interpolation_mode == LINEAR))


class _ResampleWithOffsets(Operator[Any]):
    """RESAMPLE1/2/3: per-dimension scales and pixel offsets."""

    def rounding(self, desc: Any, tensors: Tensors) -> Rounding:
        return Rounding.NEAREST

    def antialiased(self, desc: Any) -> bool:
        return False

    def lower(self, desc: Any, tensors: Tensors) -> Plan:
        check_same_type_and_rank(tensors)
        check_interpolation_mode(desc.interpolation_mode, tensors)
        rounding = self.rounding(desc, tensors)
        axes = offset_axes(desc, tensors, len(tensors["input_tensor"].sizes))
        linear = desc.interpolation_mode == LINEAR
        return lower_resampling(tensors, Resampling(axes, linear, rounding, self.antialiased(desc)))


class Resample1(_ResampleWithOffsets):
    case: ClassVar[str] = "resample1"


class Resample2(_ResampleWithOffsets):
    case: ClassVar[str] = "resample2"

    def rounding(self, desc: Any, tensors: Tensors) -> Rounding:
        return rounding_direction(desc.rounding_direction, tensors)


class Resample3(Resample2):
    case: ClassVar[str] = "resample3"

    def antialiased(self, desc: Any) -> bool:
        return bool(desc.antialiased)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (ValueScale2d(), Upsample2d(), Resample(), Resample1(), Resample2(), Resample3())
