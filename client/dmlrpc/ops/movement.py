"""DML_SLICE1, DML_PADDING1 and DML_TILE as NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops.base import Call, _array, _fits, _input, _is_python_scalar, _padded, _per_axis
from dmlrpc.v1 import operators_pb2

__all__ = ["pad", "slice", "tile"]


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
def slice(
    input: npt.ArrayLike,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
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

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, a count of offsets, sizes or strides other than the
            input's dimension count, a window outside the input or empty, a zero stride.
    """
    where = "slice"
    data = _input(input, "input", "slice1", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to slice")
    _fits(data.ndim, "input", where)
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
    desc = operators_pb2.Slice1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc((data.dtype, shape)),
        dimension_count=data.ndim,
        input_window_offsets=starts,
        input_window_sizes=windows,
        input_window_strides=steps,
    )
    return Call(operators_pb2.OperatorDesc(slice1=desc), (data,), (), (data.dtype,))


def pad(
    input: npt.ArrayLike,
    start_padding: int | Sequence[int],
    end_padding: int | Sequence[int],
    mode: str = "constant",
    value: float = 0,
) -> Call:
    """DML_PADDING1_OPERATOR_DESC: ``input`` with ``start_padding[i]`` elements before and ``end_padding[i]``
    after each dimension, as ``np.pad(input, list(zip(start_padding, end_padding)), mode)``.

    Modes (NumPy's names): "constant" (``value``, cast to the input's dtype as ``np.pad``'s constant_values),
    "edge" (the edge element repeated), "reflect" (mirrored without repeating the edge: DirectML's REFLECTION),
    "symmetric" (mirrored repeating it; feature level 3.0) and "wrap" (periodic; feature level 6.4). Padding
    wider than the input folds again, as NumPy's. DirectML's rules: input and output have one dtype (any DirectML
    type) and dimension count, one start and one end padding per dimension (an int: the same for all).

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, a padding count other than the input's dimension
            count, a negative padding, an unknown mode, a ``value`` that does not fit the input's dtype.
    """
    where = "pad"
    data = _input(input, "input", "padding1", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it has no dimension to pad")
    _fits(data.ndim, "input", where)
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
