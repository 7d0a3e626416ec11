"""DML_AVERAGE_POOLING(1), DML_MAX_POOLING(1/2) and DML_LP_POOLING(1): windowed pooling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument, ResourceExhausted
from dmlrpc_server.operators._graph import BOOL, F32, I16, I32, I64, U16, U32, U64, Graph, Value
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

#: Entries of one spatial dimension's window table (output positions x in-bounds window elements) beyond which a
#: desc is refused: the gathered windows would be that many times the other dimensions at run time.
_MAX_TABLE = 1 << 24

# ArgMax (the max pooling kernel here) on ONNX Runtime's CPU lacks 16-bit and unsigned 32/64-bit integers: these
# widen exactly; UINT64 maps order-preservingly onto INT64 (sign bit flipped) and back.
_ARGMAX_KEY: dict[np.dtype[Any], np.dtype[Any]] = {I16: I32, U16: I32, U32: I64, U64: I64}
_SIGN_BIT = np.iinfo(np.int64).min


@dataclass(frozen=True)
class _Windows:
    """The in-bounds input positions each output position's window reads along one spatial dimension.

    ``table[o]`` lists them in window order, padded at the end with repeats of the first (a repeat never changes
    a max nor which element is first); ``mask`` marks the real entries; ``counts`` their number.
    """

    table: np.ndarray
    mask: np.ndarray
    counts: np.ndarray


def _windows(size: int, start: int, window: int, stride: int, dilation: int, out: int) -> _Windows:
    firsts, lasts = [], []
    for o in range(out):
        base = o * stride - start
        first = max(0, -(base // dilation) if base < 0 else 0)  # smallest j with base + j*d >= 0
        last = min(window - 1, (size - 1 - base) // dilation) if size - 1 - base >= 0 else -1
        firsts.append(first)
        lasts.append(last)
    counts = np.array([max(0, last - first + 1) for first, last in zip(firsts, lasts, strict=True)], np.int64)
    width = max(1, int(counts.max(initial=0)))
    table = np.zeros((out, width), np.int64)
    mask = np.zeros((out, width), np.bool_)
    for o, (first, count) in enumerate(zip(firsts, counts.tolist(), strict=True)):
        base = o * stride - start
        if count:
            positions = base + (first + np.arange(count)) * dilation
            table[o, :count] = positions
            table[o, count:] = positions[0]
            mask[o, :count] = True
    return _Windows(table, mask, counts)


def pooling_geometry(
    desc: Any, tensors: Tensors, source_name: str, pooled_names: Sequence[str], *, has_dilations: bool
) -> list[list[int]]:
    """Strides, window_size, start_padding, end_padding and dilations (ones without the field), each validated per
    spatial dim, and the pooled tensors' sizes checked against the output-size formula.

    ``source_name`` is the tensor the window slides over (a pooling's input, a pooling gradient's output gradient);
    ``pooled_names`` are the tensors of the pooled sizes (a pooling's outputs, a pooling gradient's input gradient).
    """
    source = tensors[source_name]
    rank = len(source.sizes)
    spatial = rank - 2
    require(
        desc.dimension_count == spatial,
        tensors.field("dimension_count"),
        f"{desc.dimension_count}; must be {spatial} (the spatial dimensions of a {rank}-D {source_name})",
    )
    names = ["strides", "window_size", "start_padding", "end_padding"]
    if has_dilations:
        names.append("dilations")
    values: list[list[int]] = []
    for name in names:
        field = list(getattr(desc, name))
        require(
            len(field) == spatial,
            tensors.field(name),
            f"{len(field)} values; must have dimension_count ({spatial})",
        )
        if name in ("strides", "window_size", "dilations"):
            for i, value in enumerate(field):
                require(value >= 1, f"{tensors.field(name)}[{i}]", f"{value}; must be at least 1")
        values.append(field)
    if not has_dilations:
        values.append([1] * spatial)
    for name in pooled_names:
        require(
            len(tensors[name].sizes) == rank,
            f"{tensors.field(name)}.buffer.sizes",
            f"{len(tensors[name].sizes)} dimensions; must equal {source_name}'s {rank}",
        )
    strides, window, start, end, dilations = values
    expected = list(source.sizes[:2])
    for i in range(spatial):
        # The page's formula takes the window as WindowSize; with dilations the window spans
        # (WindowSize - 1) * Dilations + 1 input elements (as in ONNX and the other dilated DirectML operators).
        extent = (window[i] - 1) * dilations[i] + 1
        padded = source.sizes[2 + i] + start[i] + end[i]
        require(
            extent <= padded,
            f"{tensors.field('window_size')}[{i}]",
            f"the window spans {extent} elements, more than the padded input's {padded} along spatial dimension {i}",
        )
        expected.append((padded - extent) // strides[i] + 1)
    for name in pooled_names:
        require(
            list(tensors[name].sizes) == expected,
            f"{tensors.field(name)}.buffer.sizes",
            f"sizes {list(tensors[name].sizes)} must be {expected} (the pooling output-size formula)",
        )
    return values


def check_gathers(
    sizes: Sequence[int], out_sizes: Sequence[int], window: Sequence[int], itemsize: int, tensors: Tensors
) -> None:
    """Refuse a desc whose gathered windows (each spatial dimension in turn, the last first) would exceed the
    tensor limit or the work budget, before its window tables are built: the tables alone grow with the
    windows, and building them for a 100-byte desc would hold the interpreter for a long time."""
    limits = tensors.limits
    if limits is None:
        return
    current = list(sizes)
    for i in reversed(range(len(sizes) - 2)):
        size, out = sizes[2 + i], out_sizes[2 + i]
        gathered = math.prod(current) // max(size, 1) * out * min(window[i], size)
        if gathered * itemsize > limits.max_tensor_bytes or gathered > limits.max_work:
            raise ResourceExhausted(
                f"{tensors.path}: pooling spatial dimension {i} gathers {gathered:,} window elements (broadcast "
                f"inputs count at their logical size), over the limit of {limits.max_tensor_bytes:,} bytes per "
                f"tensor (--max-tensor-bytes) or the work limit of {limits.max_work:,} (--max-work); split the "
                "call or raise the limit"
            )
        current[2 + i] = out


def window_tables(
    sizes: Sequence[int],
    out_sizes: Sequence[int],
    strides: Sequence[int],
    window: Sequence[int],
    start: Sequence[int],
    dilations: Sequence[int],
    tensors: Tensors,
    refuse_empty: bool,
) -> list[_Windows]:
    """Each spatial dimension's window table; with ``refuse_empty`` a window entirely in the padding is refused,
    naming the padding (or dilations) field that puts it there."""
    windows = []
    for i in range(len(sizes) - 2):
        size, out = sizes[2 + i], out_sizes[2 + i]
        entries = out * min(window[i], size)
        if entries > _MAX_TABLE:
            raise ResourceExhausted(
                f"spatial dimension {i} pools {out} windows of up to {min(window[i], size)} elements, over the "
                f"limit of {_MAX_TABLE} window elements per dimension (fixed: split the call)"
            )
        table = _windows(size, start[i], window[i], strides[i], dilations[i], out)
        empty = np.flatnonzero(table.counts == 0)
        if empty.size and refuse_empty:
            o = int(empty[0])
            first = o * strides[i] - start[i]
            field = "start_padding" if first + (window[i] - 1) * dilations[i] < 0 else "end_padding"
            if first < 0 <= first + (window[i] - 1) * dilations[i]:
                field = "dilations"  # the dilated window steps over the whole input
            raise InvalidArgument(
                f"{tensors.field(field)}[{i}]",
                f"the window of output position {o} along spatial dimension {i} covers only padding; its "
                "result is undefined",
            )
        windows.append(table)
    return windows


PoolDesc = TypeVar(
    "PoolDesc",
    operators_pb2.AveragePoolingOperatorDesc,
    operators_pb2.AveragePooling1OperatorDesc,
    operators_pb2.QuantizedLinearAveragePoolingOperatorDesc,
    operators_pb2.MaxPoolingOperatorDesc,
    operators_pb2.MaxPooling1OperatorDesc,
    operators_pb2.MaxPooling2OperatorDesc,
    operators_pb2.LpPoolingOperatorDesc,
    operators_pb2.LpPooling1OperatorDesc,
)


class _Pooling(Operator[PoolDesc]):
    """The shared validation and window lowering of the sliding-window pooling operators.

    Every spatial dimension is pooled in turn (the last first) by a Gather of constant in-bounds window positions
    and a reduction over them, so padding, dilations, include_padding and every data type share one exact path
    that needs no padded copy of the input.
    """

    #: "max", "average" or "lp".
    kind: ClassVar[str]
    has_dilations: ClassVar[bool] = False
    #: Whether the output's data type must equal the input's.
    same_type: ClassVar[bool] = True

    def attributes(self, desc: PoolDesc, tensors: Tensors) -> list[list[int]]:
        """Strides, window_size, start_padding, end_padding and dilations, each validated per spatial dim."""
        pooled = ["output_tensor"]
        if tensors.layouts.get("output_indices_tensor") is not None:
            pooled.append("output_indices_tensor")
        require(
            not self.same_type or tensors["output_tensor"].data_type == tensors["input_tensor"].data_type,
            f"{tensors.field('output_tensor')}.buffer.data_type",
            "must equal input_tensor's data type",
        )
        return pooling_geometry(desc, tensors, "input_tensor", pooled, has_dilations=self.has_dilations)

    def p(self, desc: PoolDesc, tensors: Tensors) -> int:
        return 1

    def windows(self, desc: PoolDesc, tensors: Tensors) -> tuple[list[_Windows], list[int]]:
        """Validate the desc's attributes and sizes; the in-bounds window table of each spatial dimension and the
        window sizes."""
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        strides, window, start, _, dilations = self.attributes(desc, tensors)
        check_gathers(source.sizes, output.sizes, window, source.dtype.itemsize, tensors)
        # A window entirely in the padding has no defined max, nor an average without the padding in its
        # divisor: DirectML leaves it undefined, so it is refused (an average counting padding, and an Lp norm,
        # are 0 there).
        refuse_empty = self.kind == "max" or (self.kind == "average" and not self.include(desc))
        windows = window_tables(source.sizes, output.sizes, strides, window, start, dilations, tensors, refuse_empty)
        return windows, window

    def lower(self, desc: PoolDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        indices = tensors.layouts.get("output_indices_tensor")
        windows, window = self.windows(desc, tensors)
        p = self.p(desc, tensors)
        graph = Graph()
        x = graph.input("input", source.dtype, source.sizes)
        if self.kind == "max":
            self._max(graph, x, windows, source.sizes, output.sizes, indices)
        else:
            value = self.pooled_sum(graph, graph.cast(x, F32), windows, source.sizes, window, self.include(desc), p)
            graph.output(graph.cast(value, x.dtype), "output", output.sizes)
        model = graph.model()
        optional = "output_indices_tensor" in tensors.layouts

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            (data,) = arrays
            # Absent when bound in device memory as it is (``direct_inputs``).
            return {} if data is None else {"input": np.ascontiguousarray(data)}

        def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            results: list[np.ndarray | None] = list(outputs)
            if optional and indices is None:
                results.append(None)
            return results

        return Plan(
            (source,),
            (output, indices) if optional else (output,),
            model,
            prepare,
            finish,
            direct_inputs=("input",),
        )

    def include(self, desc: PoolDesc) -> bool:
        return False

    @staticmethod
    def _gather(graph: Graph, value: Value, table: np.ndarray, axis: int) -> Value:
        return graph.op("Gather", value, graph.const(table, I64), axis=axis)

    def pooled_sum(
        self,
        graph: Graph,
        value: Value,
        windows: list[_Windows],
        in_sizes: tuple[int, ...],
        window: list[int],
        include: bool,
        p: int,
    ) -> Value:
        """Average or Lp pooling of a FLOAT32 value: sums of the window elements or of |x|^P, in FLOAT32."""
        if self.kind == "lp":
            # The page writes x^P; like ONNX LpPool (which DirectML's ONNX Runtime provider maps onto this
            # operator) the norm takes absolute values, so odd P and negative inputs give a norm.
            value = graph.op("Abs", value)
            if p != 1:
                value = graph.op("Pow", value, graph.const(float(p), F32))
        for i in reversed(range(len(windows))):
            axis = 2 + i
            rest = (1,) * (len(in_sizes) - axis - 1)
            table = windows[i]
            gathered = self._gather(graph, value, table.table, axis)
            if not table.mask.all():
                mask = graph.const(table.mask.reshape(table.mask.shape + rest), BOOL)
                gathered = graph.op("Where", mask, gathered, graph.const(0.0, F32))
            value = graph.op("ReduceSum", gathered, graph.const([axis + 1], I64), keepdims=0)
            if self.kind == "average":
                divisor = np.full(table.counts.shape, window[i], np.float32) if include else table.counts
                value = graph.op("Div", value, graph.const(divisor.astype(np.float32).reshape((-1,) + rest), F32))
        if self.kind == "lp" and p != 1:
            value = graph.op("Pow", value, graph.const(1.0 / p, F32))
        return value

    @staticmethod
    def _max(
        graph: Graph,
        x: Value,
        windows: list[_Windows],
        in_sizes: tuple[int, ...],
        out_sizes: tuple[int, ...],
        indices: TensorLayout | None,
    ) -> None:
        values, flat = window_maxima(graph, x, windows, in_sizes, with_indices=indices is not None)
        graph.output(values, "output", out_sizes)
        if indices is not None and flat is not None:
            graph.output(graph.cast(flat, indices.dtype), "indices", out_sizes)


def window_maxima(
    graph: Graph, x: Value, windows: list[_Windows], in_sizes: Sequence[int], *, with_indices: bool
) -> tuple[Value, Value | None]:
    """Each window's maximum (``x``'s type) and, ``with_indices``, the INT64 flat index into the whole input (one
    contiguous array) of the first element attaining it.

    ArgMax over each dimension's windows, the last dimension first: the first maximum of a row, then the first row
    holding the maximum, is the first maximum in row-major window order (the pages' tie rule). The winners'
    positions accumulate into the flat input index.
    """
    key_type = _ARGMAX_KEY.get(x.dtype, x.dtype)
    key = graph.cast(x, key_type)
    if x.dtype == U64:
        key = graph.op("BitwiseXor", key, graph.const(_SIGN_BIT, I64), opset=18)
    flat: Value | None = None
    spatial_strides = [int(np.prod(in_sizes[2 + i + 1 :], dtype=np.int64)) for i in range(len(windows))]
    for i in reversed(range(len(windows))):
        axis = 2 + i
        rest = (1,) * (len(in_sizes) - axis - 1)
        table = windows[i]
        table_const = graph.const(table.table, I64)
        gathered = graph.op("Gather", key, table_const, axis=axis)
        winner = graph.op("ArgMax", gathered, dtype=I64, axis=axis + 1, keepdims=1)
        squeeze_axes = graph.const([axis + 1], I64)
        key = graph.op("Squeeze", graph.op("GatherElements", gathered, winner, axis=axis + 1), squeeze_axes)
        if not with_indices:
            continue
        chosen = graph.op("Squeeze", winner, squeeze_axes)
        offsets = graph.const((np.arange(table.table.shape[0]) * table.table.shape[1]).reshape((-1,) + rest), I64)
        position = graph.op("Gather", graph.const(table.table.reshape(-1), I64), graph.op("Add", chosen, offsets))
        contribution = graph.op("Mul", position, graph.const(spatial_strides[i], I64))
        if flat is not None:
            carried = graph.op(
                "GatherElements", graph.op("Gather", flat, table_const, axis=axis), winner, axis=axis + 1
            )
            contribution = graph.op("Add", contribution, graph.op("Squeeze", carried, squeeze_axes))
        flat = contribution
    if x.dtype == U64:
        key = graph.op("BitwiseXor", key, graph.const(_SIGN_BIT, I64), opset=18)
    if flat is not None:
        # Indices count over the whole input as one contiguous array: add each (batch, channel) slab's start.
        slab = int(np.prod(in_sizes[2:], dtype=np.int64))
        base = (np.arange(in_sizes[0] * in_sizes[1], dtype=np.int64) * slab).reshape(
            (in_sizes[0], in_sizes[1]) + (1,) * len(windows)
        )
        flat = graph.op("Add", flat, graph.const(base, I64))
    return graph.cast(key, x.dtype), flat


class AveragePooling(_Pooling[operators_pb2.AveragePoolingOperatorDesc]):
    case: ClassVar[str] = "average_pooling"
    kind = "average"

    def include(self, desc: operators_pb2.AveragePoolingOperatorDesc) -> bool:
        return desc.include_padding


class AveragePooling1(_Pooling[operators_pb2.AveragePooling1OperatorDesc]):
    case: ClassVar[str] = "average_pooling1"
    kind = "average"
    has_dilations = True

    def include(self, desc: operators_pb2.AveragePooling1OperatorDesc) -> bool:
        # IncludePadding counts prod(WindowSize) elements (the page's count), whatever the dilations.
        return desc.include_padding


class MaxPooling(_Pooling[operators_pb2.MaxPoolingOperatorDesc]):
    case: ClassVar[str] = "max_pooling"
    kind = "max"


class MaxPooling1(_Pooling[operators_pb2.MaxPooling1OperatorDesc]):
    case: ClassVar[str] = "max_pooling1"
    kind = "max"


class MaxPooling2(_Pooling[operators_pb2.MaxPooling2OperatorDesc]):
    case: ClassVar[str] = "max_pooling2"
    kind = "max"
    has_dilations = True


LpDesc = TypeVar("LpDesc", operators_pb2.LpPoolingOperatorDesc, operators_pb2.LpPooling1OperatorDesc)


class _LpPooling(_Pooling[LpDesc]):
    kind = "lp"

    def p(self, desc: LpDesc, tensors: Tensors) -> int:
        # P = 0 makes the 1/P root undefined.
        require(desc.p >= 1, tensors.field("p"), f"{desc.p}; must be at least 1")
        return desc.p


class LpPooling(_LpPooling[operators_pb2.LpPoolingOperatorDesc]):
    case: ClassVar[str] = "lp_pooling"


class LpPooling1(_LpPooling[operators_pb2.LpPooling1OperatorDesc]):
    case: ClassVar[str] = "lp_pooling1"
    has_dilations = True


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    AveragePooling(),
    AveragePooling1(),
    MaxPooling(),
    MaxPooling1(),
    MaxPooling2(),
    LpPooling(),
    LpPooling1(),
)
