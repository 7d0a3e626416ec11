"""DML_SLICE(1), DML_PADDING(1), DML_TILE, DML_SPACE_TO_DEPTH(1), DML_DEPTH_TO_SPACE(1) and
DML_REVERSE_SUBSEQUENCES as NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import (
    Call,
    _array,
    _axis,
    _count,
    _dimensioned,
    _fits,
    _input,
    _is_python_scalar,
    _named,
    _padded,
    _per_axis,
    _typed,
    _version,
    _wrap,
)
from dmlrpc.v1 import operators_pb2

__all__ = ["depth_to_space", "pad", "reverse_subsequences", "slice", "space_to_depth", "tile"]


#: DML_PADDING_MODE by name: NumPy's ``np.pad`` modes ("reflect" is DirectML's REFLECTION).
_PADDING_MODES = {
    "constant": operators_pb2.PADDING_MODE_CONSTANT,
    "edge": operators_pb2.PADDING_MODE_EDGE,
    "reflect": operators_pb2.PADDING_MODE_REFLECTION,
    "symmetric": operators_pb2.PADDING_MODE_SYMMETRIC,
    "wrap": operators_pb2.PADDING_MODE_WRAP,
}


#: The DML_SCALAR_UNION member holding each dtype (FLOAT16's travels as float32; bool as UINT8).
_SCALAR_MEMBERS = {
    "bool": "uint8",
    "int8": "int8",
    "uint8": "uint8",
    "int16": "int16",
    "uint16": "uint16",
    "int32": "int32",
    "uint32": "uint32",
    "int64": "int64",
    "uint64": "uint64",
    "float16": "float32",
    "float32": "float32",
    "float64": "float64",
}


# Named as NumPy's users expect; below this line the builtin ``slice`` is shadowed in this module (use
# ``builtins.slice`` there).
@operator(sends=("slice", "slice1"))
def slice(
    input: npt.ArrayLike,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
    *,
    version: int | None = None,
) -> Call:
    """DML_SLICE1_OPERATOR_DESC: per dimension, a window of ``sizes[i]`` elements starting at ``offsets[i]``,
    stepped by ``strides[i]`` (default 1).

    A positive stride takes ``x[offset : offset + size : stride]``; a negative one walks the same window
    backward from its last element, ``x[offset + size - 1 : offset - 1 : stride]`` (so ``strides=-1`` over the
    whole of a dimension is ``np.flip``). Each output dimension has ``1 + (size - 1) // abs(stride)`` elements.
    DirectML's rules: one offset, size and stride per input dimension (1 to 8 dimensions); offsets and sizes are
    non-negative, the window is not empty and lies inside the input (``offset + size <= input.shape[i]``), a
    stride is not 0. The output has the input's dtype (any DirectML type: FLOAT64 and 64-bit integers from
    feature level 4.1).

    ``version=0`` sends DML_SLICE_OPERATOR_DESC instead (feature level 1.0): the same window, strides at least 1
    (its Sizes are the output's sizes); ``None`` or 1: SLICE1.

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, a count of offsets, sizes or strides other than the
            input's dimension count, a window outside the input or empty, a zero stride (a negative one with
            ``version=0``), a version other than 0 or 1.
    """
    where = "slice"
    data = _dimensioned(input, "slice1", where, "slice")
    starts = _per_axis(offsets, "offsets", where, data.ndim, 0)
    windows = _per_axis(sizes, "sizes", where, data.ndim, 1)
    steps = [1] * data.ndim if strides is None else _per_axis(strides, "strides", where, data.ndim, None)
    for i, (offset, size, bound) in enumerate(zip(starts, windows, data.shape, strict=True)):
        if offset + size > bound:
            raise ArgumentValueError(
                "sizes",
                f"{where}: the window [{offset}, {offset + size}) does not fit dimension {i} of the input "
                f"(size {bound})",
            )
    if 0 in steps:
        raise ArgumentValueError("strides", f"{where}: strides[{steps.index(0)}] is 0; a stride must not be 0")
    shape = tuple(1 + (size - 1) // abs(step) for size, step in zip(windows, steps, strict=True))
    if _version(version, where, (0, 1)) == 0:
        if any(step < 0 for step in steps):
            raise ArgumentValueError(
                "strides", f"{where}: strides {steps} has a negative stride; DML_SLICE takes strides >= 1 (version=1)"
            )
        old = operators_pb2.SliceOperatorDesc(
            input_tensor=tensor_desc(data),
            output_tensor=tensor_desc((data.dtype, shape)),
            dimension_count=data.ndim,
            offsets=starts,
            sizes=list(shape),
            strides=steps,
        )
        return Call(operators_pb2.OperatorDesc(slice=old), (data,), (), (data.dtype,))
    desc = operators_pb2.Slice1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, shape)),
        dimension_count=data.ndim,
        input_window_offsets=starts,
        input_window_sizes=windows,
        input_window_strides=steps,
    )
    return Call(operators_pb2.OperatorDesc(slice1=desc), (data,), (), (data.dtype,))


@operator(sends=("padding", "padding1"))
def pad(
    input: npt.ArrayLike,
    start_padding: int | Sequence[int],
    end_padding: int | Sequence[int],
    mode: str = "constant",
    value: float = 0,
    *,
    version: int | None = None,
) -> Call:
    """DML_PADDING1_OPERATOR_DESC: ``input`` with ``start_padding[i]`` elements before and ``end_padding[i]``
    after each dimension, as ``np.pad(input, list(zip(start_padding, end_padding)), mode)``.

    Modes (NumPy's names): "constant" (``value``, cast to the input's dtype as ``np.pad``'s constant_values),
    "edge" (the edge element repeated), "reflect" (mirrored without repeating the edge: DirectML's REFLECTION),
    "symmetric" (mirrored repeating it; feature level 3.0) and "wrap" (periodic; feature level 6.4). Padding
    wider than the input folds again, as NumPy's. DirectML's rules: input and output have one dtype (any DirectML
    type) and dimension count, one start and one end padding per dimension (an int: the same for all).

    ``version=0`` sends DML_PADDING_OPERATOR_DESC instead, whose PaddingValue is a FLOAT32 (truncated toward
    zero for integer inputs); ``None`` or 1: PADDING1, whose value has the input's type.

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, a padding count other than the input's dimension
            count, a negative padding, an unknown mode, a ``value`` that does not fit the input's dtype, a version
            other than 0 or 1.
    """
    where = "pad"
    data = _dimensioned(input, "padding1", where, "pad")
    starts = _per_axis(start_padding, "start_padding", where, data.ndim, 0)
    ends = _per_axis(end_padding, "end_padding", where, data.ndim, 0)
    if not isinstance(mode, str) or mode not in _PADDING_MODES:
        raise ArgumentValueError(
            "mode", f"{where}: mode {mode!r} is not a padding mode", allowed=tuple(repr(m) for m in _PADDING_MODES)
        )
    if not _is_python_scalar(value) and not isinstance(value, np.generic):
        raise ArgumentTypeError("value", f"{where}: value must be a number; got {type(value).__name__}")
    fill = _array(value, "value", where, data.dtype)
    member = _SCALAR_MEMBERS[data.dtype.name]
    scalar = fill.astype(np.float32 if data.dtype == np.float16 else np.uint8 if data.dtype == np.bool_ else fill.dtype)
    out_shape = tuple(n + s + e for n, s, e in zip(data.shape, starts, ends, strict=True))
    if _version(version, where, (0, 1)) == 0:
        old = operators_pb2.PaddingOperatorDesc(
            input_tensor=tensor_desc(data),
            output_tensor=tensor_desc((data.dtype, out_shape)),
            padding_mode=_PADDING_MODES[mode],
            padding_value=float(value),
            dimension_count=data.ndim,
            start_padding=starts,
            end_padding=ends,
        )
        return Call(operators_pb2.OperatorDesc(padding=old), (data,), (), (data.dtype,))
    desc = operators_pb2.Padding1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, out_shape)),
        padding_mode=_PADDING_MODES[mode],
        padding_value_data_type=DATA_TYPE_BY_DTYPE[data.dtype],  # type: ignore[arg-type]
        padding_value=operators_pb2.ScalarUnion(**{member: scalar.item()}),
        dimension_count=data.ndim,
        start_padding=starts,
        end_padding=ends,
    )
    return Call(operators_pb2.OperatorDesc(padding1=desc), (data,), (), (data.dtype,))


@operator(sends=("tile",))
def tile(input: npt.ArrayLike, repetitions: int | Sequence[int]) -> Call:
    """DML_TILE_OPERATOR_DESC: ``input`` repeated ``repetitions[i]`` times along each dimension, as
    ``np.tile(input, repetitions)``.

    As NumPy: with fewer repetitions than the input has dimensions, 1s are prepended to them; with more, the
    input is promoted with leading 1s. DirectML's rules: one repeat per dimension (1 to 8), each greater than 0
    (NumPy's 0 is refused: DirectML has no empty tensors); input and output have one dtype, one of FLOAT32,
    FLOAT16, 8/16/32-bit integers, and 64-bit integers from feature level 5.0 (not FLOAT64).

    Raises:
        ArgumentValueError, ArgumentTypeError: a repetition below 1, more than 8 dimensions, float64 input.
    """
    where = "tile"
    data = _input(input, "input", "tile", where)
    if isinstance(repetitions, int | np.integer) and not isinstance(repetitions, bool):
        repetitions = [int(repetitions)]
    if isinstance(repetitions, bool | str | bytes) or not isinstance(repetitions, Sequence | np.ndarray):
        raise ArgumentTypeError(
            "repetitions", f"{where}: repetitions must be an int or a sequence of ints; got {repetitions!r}"
        )
    rank = max(data.ndim, len(repetitions), 1)
    _fits(rank, "repetitions", where)
    repeats = _per_axis([1] * (rank - len(repetitions)) + list(repetitions), "repetitions", where, rank, 1)
    data = _padded(data, rank)
    shape = tuple(n * r for n, r in zip(data.shape, repeats, strict=True))
    desc = operators_pb2.TileOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, shape)),
        repeats_count=rank,
        repeats=repeats,
    )
    return Call(operators_pb2.OperatorDesc(tile=desc), (data,), (), (data.dtype,))


#: DML_DEPTH_SPACE_ORDER by name: where a block's elements go along the depth (channel) dimension.
_DEPTH_SPACE_ORDERS = _named(operators_pb2.DepthSpaceOrder, "DEPTH_SPACE_ORDER_")


@operator(sends=("space_to_depth", "space_to_depth1"))
def space_to_depth(input: npt.ArrayLike, block_size: int, order: str | None = None) -> Call:
    """DML_SPACE_TO_DEPTH_OPERATOR_DESC (1): each ``block_size`` x ``block_size`` block of an (N, C, H, W) array
    moved into the channels, giving (N, C * block_size**2, H / block_size, W / block_size) (ONNX SpaceToDepth).

    ``order`` (DML_DEPTH_SPACE_ORDER) says how a block's elements are laid out along the new channels:
    "depth_column_row" (ONNX's DCR: channel ``(bh * block + bw) * C + c``) or "column_row_depth" (CRD: ``c *
    block**2 + bh * block + bw``). ``None`` sends SPACE_TO_DEPTH (DCR); a named order sends SPACE_TO_DEPTH1
    (feature level 2.1). DirectML's rules: 4 dimensions, H and W multiples of ``block_size`` (at least 1); the
    output has the input's dtype (any DirectML type, FLOAT64 included from feature level 4.1).

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count other than 4, a block size below 1 or not
            dividing H and W, an unknown order.
    """
    where = "space_to_depth"
    data, block, case = _depth_space(input, block_size, order, where)
    n, c, h, w = data.shape
    if h % block or w % block:
        raise ArgumentValueError(
            "block_size",
            f"{where}: input of shape {data.shape}: height {h} and width {w} must be multiples of block_size {block}",
        )
    return _depth_space_call(case, data, (n, c * block * block, h // block, w // block), block, order)


@operator(sends=("depth_to_space", "depth_to_space1"))
def depth_to_space(input: npt.ArrayLike, block_size: int, order: str | None = None) -> Call:
    """DML_DEPTH_TO_SPACE_OPERATOR_DESC (1): the inverse of ``space_to_depth``: an (N, C, H, W) array's channels
    spread into ``block_size`` x ``block_size`` blocks, giving (N, C / block_size**2, H * block_size, W *
    block_size) (ONNX DepthToSpace, its mode "DCR" = "depth_column_row", "CRD" = "column_row_depth").

    ``None`` sends DEPTH_TO_SPACE (DCR); a named order DEPTH_TO_SPACE1. DirectML's rules: 4 dimensions, C a
    multiple of ``block_size**2``; the output has the input's dtype.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count other than 4, a block size below 1 or whose
            square does not divide C, an unknown order.
    """
    where = "depth_to_space"
    data, block, case = _depth_space(input, block_size, order, where)
    n, c, h, w = data.shape
    if c % (block * block):
        raise ArgumentValueError(
            "block_size",
            f"{where}: input of shape {data.shape}: its {c} channels are not a multiple of block_size**2 = "
            f"{block * block}",
        )
    return _depth_space_call(case, data, (n, c // (block * block), h * block, w * block), block, order)


def _depth_space(input: npt.ArrayLike, block_size: object, order: object, where: str) -> tuple[np.ndarray, int, str]:
    data = _input(input, "input", where, where)
    if data.ndim != 4:
        raise ArgumentValueError(
            "input", f"{where}: input has shape {data.shape}; {where.upper()} takes (N, C, H, W)", allowed=("4",)
        )
    if order is not None and (not isinstance(order, str) or order not in _DEPTH_SPACE_ORDERS):
        raise ArgumentValueError(
            "order",
            f"{where}: order {order!r} is not a DML_DEPTH_SPACE_ORDER",
            allowed=tuple(repr(o) for o in _DEPTH_SPACE_ORDERS),
        )
    return data, _count(block_size, "block_size", where, 1), where if order is None else f"{where}1"


def _depth_space_call(case: str, data: np.ndarray, shape: tuple[int, ...], block: int, order: str | None) -> Call:
    fields = {"input_tensor": tensor_desc(data), "output_tensor": tensor_desc((data.dtype, shape)), "block_size": block}
    message = {
        "space_to_depth": operators_pb2.SpaceToDepthOperatorDesc,
        "space_to_depth1": operators_pb2.SpaceToDepth1OperatorDesc,
        "depth_to_space": operators_pb2.DepthToSpaceOperatorDesc,
        "depth_to_space1": operators_pb2.DepthToSpace1OperatorDesc,
    }[case]
    desc = message(**fields) if order is None else message(**fields, order=_DEPTH_SPACE_ORDERS[order])
    return Call(_wrap(case, desc), (data,), (), (data.dtype,))


_LENGTH_TYPES = ("uint32", "uint64")


@operator(sends=("reverse_subsequences",))
def reverse_subsequences(input: npt.ArrayLike, sequence_lengths: npt.ArrayLike, axis: int = 0) -> Call:
    """DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC: along ``axis``, the first ``sequence_lengths[...]`` elements of
    each sequence reversed and the rest kept (ONNX ReverseSequence): for every other index ``j``,
    ``out[..., :n, ...] = x[..., n-1::-1, ...]`` with ``n = sequence_lengths[j]``.

    DirectML's rules: ``sequence_lengths`` is uint32/uint64 with the input's shape but 1 along ``axis`` (given
    without that axis, it is inserted); each length is at most the input's size along ``axis``; the output has
    the input's shape and dtype (any DirectML type); 1 to 8 dimensions.

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, lengths of another shape or of
            another dtype, a length above the axis's size.
    """
    where = case = "reverse_subsequences"
    data = _dimensioned(input, case, where, "reverse along")
    position = _axis(axis, data.ndim, where)
    lengths = _typed(
        _array(sequence_lengths, "sequence_lengths", where),
        "sequence_lengths",
        where,
        _LENGTH_TYPES,
        "DirectML takes uint32 or uint64, e.g. np.asarray(lengths, np.uint32)",
    )
    expected = data.shape[:position] + (1,) + data.shape[position + 1 :]
    if lengths.ndim == data.ndim - 1:
        lengths = np.expand_dims(lengths, position)
    if lengths.shape != expected:
        raise ArgumentValueError(
            "sequence_lengths",
            f"{where}: sequence_lengths has shape {lengths.shape}; input of shape {data.shape} needs "
            f"{expected} (or that without axis {position})",
        )
    longest = int(lengths.max()) if lengths.size else 0
    if longest > data.shape[position]:
        raise ArgumentValueError(
            "sequence_lengths",
            f"{where}: a sequence length {longest} exceeds input's size {data.shape[position]} along axis {position}",
        )
    desc = operators_pb2.ReverseSubsequencesOperatorDesc(
        input_tensor=tensor_desc(data),
        sequence_lengths_tensor=tensor_desc(lengths),
        output_tensor=tensor_desc(data),
        axis=position,
    )
    return Call(_wrap(case, desc), (data, lengths), (), (data.dtype,))
