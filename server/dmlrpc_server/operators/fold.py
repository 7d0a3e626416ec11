"""DML_FOLD_OPERATOR_DESC and DML_UNFOLD_OPERATOR_DESC: sliding blocks gathered into columns (im2col) and back."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import ResourceExhausted
from dmlrpc_server.operators._graph import F32, I64, Graph
from dmlrpc_server.operators._support import same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

#: Entries of a desc's constant position table beyond which it is refused before the table is built.
_MAX_TABLE = 1 << 24

FoldDesc = TypeVar("FoldDesc", operators_pb2.FoldOperatorDesc, operators_pb2.UnfoldOperatorDesc)


@dataclass(frozen=True)
class _Blocks:
    """The validated attributes: per spatial dimension its size, window, stride, dilation and start padding, and
    the number of blocks along it."""

    spatial: tuple[int, ...]
    window: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    start: tuple[int, ...]
    blocks: tuple[int, ...]

    @property
    def window_count(self) -> int:
        return math.prod(self.window)

    @property
    def block_count(self) -> int:
        return math.prod(self.blocks)

    def positions(self) -> np.ndarray:
        """(prod(window), BlockCount): the flat spatial position each window offset of each block reads, or
        prod(spatial) (one past the end) where it lies in the padding."""
        per_dim = []
        for w, s, d, a, b in zip(self.window, self.strides, self.dilations, self.start, self.blocks, strict=True):
            coords = np.arange(b)[None, :] * s - a + np.arange(w)[:, None] * d  # (w, b)
            per_dim.append(coords)
        flat = np.zeros((self.window_count, self.block_count), np.int64)
        inside = np.ones((self.window_count, self.block_count), np.bool_)
        # Window offsets and blocks are both row-major over the spatial dimensions (the first slowest).
        for d, coords in enumerate(per_dim):
            shape_k = [1] * (2 * len(per_dim))
            shape_k[d] = self.window[d]
            shape_k[len(per_dim) + d] = self.blocks[d]
            grid = np.broadcast_to(coords.reshape(shape_k), (*self.window, *self.blocks)).reshape(
                self.window_count, self.block_count
            )
            inside &= (grid >= 0) & (grid < self.spatial[d])
            flat = flat * self.spatial[d] + grid
        return np.where(inside, flat, math.prod(self.spatial))


class _Fold(Operator[FoldDesc]):
    """The shared attribute rules of FOLD and UNFOLD; ``folds`` says which way the columns go.

    Both lower to one Gather of constant positions from the input with one zero appended per (batch, channel)
    slab (the padding reads it), so every stride, dilation and padding shares one exact path; FOLD then sums the
    gathered contributions of each output position (ReduceSum in FLOAT32, as DirectML computes FLOAT16).
    """

    folds: ClassVar[bool]

    def blocks(self, desc: FoldDesc, tensors: Tensors) -> _Blocks:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        columns, image = (source, output) if self.folds else (output, source)
        columns_name, image_name = (
            ("input_tensor", "output_tensor") if self.folds else ("output_tensor", "input_tensor")
        )
        count = desc.dimension_count
        require(1 <= count <= 6, tensors.field("dimension_count"), f"{count}; must be in [1, 6]")
        require(
            len(image.sizes) == 2 + count,
            f"{tensors.field(image_name)}.buffer.sizes",
            f"{len(image.sizes)} dimensions; must be 2 + dimension_count ({2 + count}): {{N, C, spatial...}}",
        )
        # The page asks both tensors for one DimensionCount, which its own examples contradict: the column
        # tensor is {N, C*prod(WindowSizes), BlockCount}.
        require(
            len(columns.sizes) == 3,
            f"{tensors.field(columns_name)}.buffer.sizes",
            f"{len(columns.sizes)} dimensions; must be 3: {{N, C*prod(window_sizes), BlockCount}}",
        )
        same_type(tensors, ("output_tensor",))
        values: dict[str, list[int]] = {}
        for name in ("window_sizes", "strides", "dilations", "start_padding", "end_padding"):
            field = list(getattr(desc, name))
            require(
                len(field) == count, tensors.field(name), f"{len(field)} values; must have dimension_count ({count})"
            )
            if name in ("window_sizes", "strides", "dilations"):
                for i, value in enumerate(field):
                    require(value >= 1, f"{tensors.field(name)}[{i}]", f"{value}; must be at least 1")
            values[name] = field
        spatial = tuple(image.sizes[2:])
        blocks = []
        for d in range(count):
            extent = values["dilations"][d] * (values["window_sizes"][d] - 1) + 1
            padded = spatial[d] + values["start_padding"][d] + values["end_padding"][d]
            require(
                extent <= padded,
                f"{tensors.field('window_sizes')}[{d}]",
                f"the window spans {extent} elements, more than the padded size {padded} along spatial dimension {d}",
            )
            blocks.append((padded - extent) // values["strides"][d] + 1)
        result = _Blocks(
            spatial,
            tuple(values["window_sizes"]),
            tuple(values["strides"]),
            tuple(values["dilations"]),
            tuple(values["start_padding"]),
            tuple(blocks),
        )
        expected = [image.sizes[0], image.sizes[1] * result.window_count, result.block_count]
        require(
            list(columns.sizes) == expected,
            f"{tensors.field(columns_name)}.buffer.sizes",
            f"sizes {list(columns.sizes)} must be {expected} (N, C*prod(window_sizes), BlockCount of the "
            f"{list(blocks)} blocks per spatial dimension)",
        )
        return result

    @staticmethod
    def _check(entries: int, gathered: int, layout: TensorLayout, tensors: Tensors) -> None:
        """Refuse a desc whose position table or gathered tensor would be too large, before building either."""
        if entries > _MAX_TABLE:
            raise ResourceExhausted(
                f"{tensors.path}: the sliding blocks read {entries:,} positions, over the limit of {_MAX_TABLE:,} "
                "per call (fixed: split the call)"
            )
        limits = tensors.limits
        if limits is not None and (
            gathered * layout.dtype.itemsize > limits.max_tensor_bytes or gathered > limits.max_work
        ):
            raise ResourceExhausted(
                f"{tensors.path}: the sliding blocks gather {gathered:,} elements, over the limit of "
                f"{limits.max_tensor_bytes:,} bytes per tensor (--max-tensor-bytes) or the work limit of "
                f"{limits.max_work:,} (--max-work); split the call or raise the limit"
            )

    def lower(self, desc: FoldDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        blocks = self.blocks(desc, tensors)
        image = output if self.folds else source
        n, c = image.sizes[0], image.sizes[1]
        size = math.prod(blocks.spatial)
        positions = blocks.positions()
        graph = Graph()
        x = graph.input("input", source.dtype, source.sizes)
        value = graph.cast(x, F32)
        if self.folds:
            # Per output position, the (window offset, block) entries landing on it: at most one block per
            # window offset, so prod(window) slots, unused ones reading the appended zero.
            width = blocks.window_count
            self._check(size * width, n * c * size * width, source, tensors)
            sentinel = blocks.window_count * blocks.block_count
            table = np.full((size, width), sentinel, np.int64)
            k, b = np.nonzero(positions < size)
            table[positions[k, b], k] = k * blocks.block_count + b
            flat = graph.op("Reshape", value, graph.const([n, c, sentinel], I64))
        else:
            self._check(positions.size, math.prod(output.sizes), output, tensors)
            table = positions
            flat = graph.op("Reshape", value, graph.const([n, c, size], I64))
        padded = graph.op("Concat", flat, graph.const(np.zeros((n, c, 1), np.float32), F32), axis=2)
        gathered = graph.op("Gather", padded, graph.const(table, I64), axis=2)
        if self.folds:
            summed = graph.op("ReduceSum", gathered, graph.const([3], I64), keepdims=0)
            result = graph.op("Reshape", summed, graph.const(list(output.sizes), I64))
        else:
            result = graph.op("Reshape", gathered, graph.const(list(output.sizes), I64))
        graph.output(graph.cast(result, output.dtype), "output", output.sizes)

        return Plan((source,), (output,), graph.model(), direct_inputs=("input",))


class Fold(_Fold[operators_pb2.FoldOperatorDesc]):
    case: ClassVar[str] = "fold"
    folds = True


class Unfold(_Fold[operators_pb2.UnfoldOperatorDesc]):
    case: ClassVar[str] = "unfold"
    folds = False


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Fold(), Unfold())
