"""DML_JOIN and DML_SPLIT as NumPy-style builders (np.concatenate, np.split)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import ARRAYS, operator
from dmlrpc.ops.base import Call, _axis, _count, _fits, _input, _per_axis
from dmlrpc.v1 import operators_pb2

__all__ = ["join", "split"]


@operator(sends=("join",))
def join(inputs: Sequence[npt.ArrayLike], axis: int = 0) -> Call:
    """DML_JOIN_OPERATOR_DESC: ``inputs`` joined along ``axis``, as ``np.concatenate(inputs, axis)``.

    DirectML's rules: the inputs and the output have one data type (no promotion: cast first where NumPy would
    promote; any DirectML type, FLOAT64 and 64-bit integers from feature level 4.1) and one dimension count (1 to
    8 from feature level 4.1, 4 or 5 before: sent as given, the server names the rule), sizes equal in every
    dimension but ``axis``, and the output's size along ``axis`` is their sum. (A graph node takes no tensor
    arrays, so there is no ``Graph.join``.)

    Raises:
        ArgumentValueError, ArgumentTypeError: no inputs, a 0-d input, dimension counts, dtypes or off-axis sizes
            that differ, an axis out of range.
    """
    where = "join"
    if isinstance(inputs, np.ndarray | str | bytes) or not isinstance(inputs, Sequence):
        raise ArgumentTypeError("inputs", f"{where}: inputs must be a list of arrays; got {type(inputs).__name__}")
    if not inputs:
        raise ArgumentValueError("inputs", f"{where}: inputs is empty; join needs at least one array")
    pieces = [_input(value, f"inputs[{i}]", "join", where) for i, value in enumerate(inputs)]
    first = pieces[0]
    if first.ndim == 0:
        raise ArgumentValueError("inputs", f"{where}: inputs[0] is 0-d; arrays to join need at least 1 dimension")
    _fits(first.ndim, "inputs", where)
    axis = _axis(axis, first.ndim, where)
    for i, piece in enumerate(pieces[1:], 1):
        if piece.dtype != first.dtype:
            raise ArgumentTypeError(
                f"inputs[{i}]",
                f"{where}: inputs[{i}] has dtype {piece.dtype} and inputs[0] {first.dtype}: DirectML joins one data "
                f"type; cast first, e.g. np.asarray(x, np.{first.dtype})",
                allowed=(first.dtype.name,),
            )
        if piece.ndim != first.ndim or any(d != axis and size != first.shape[d] for d, size in enumerate(piece.shape)):
            raise ArgumentValueError(
                f"inputs[{i}]",
                f"{where}: inputs[{i}] has shape {piece.shape} and inputs[0] {first.shape}: they must have one "
                f"dimension count and equal sizes in every dimension but axis {axis}",
            )
    shape = list(first.shape)
    shape[axis] = sum(piece.shape[axis] for piece in pieces)
    desc = operators_pb2.JoinOperatorDesc(
        input_count=len(pieces),
        input_tensors=[tensor_desc(piece) for piece in pieces],
        output_tensor=tensor_desc((first.dtype, shape)),
        axis=axis,
    )
    return Call(operators_pb2.OperatorDesc(join=desc), (pieces,), (), (first.dtype,))


@operator(sends=("split",), result=ARRAYS)
def split(input: npt.ArrayLike, sizes: int | Sequence[int], axis: int = 0) -> Call:
    """DML_SPLIT_OPERATOR_DESC: ``input`` cut along ``axis`` into pieces of ``sizes[i]`` elements, in order (an
    int ``n``: ``n`` equal pieces, as ``np.split(input, n, axis)``); one output per piece.

    DirectML's rules: every piece has the input's data type (any DirectML type, FLOAT64 and 64-bit integers from
    feature level 4.1) and dimension count (1 to 8) and its sizes but along ``axis``; the sizes are at least 1
    (DirectML has no empty tensors) and sum to ``input.shape[axis]``. (A graph node takes no tensor arrays, so
    there is no ``Graph.split``.)

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, a size below 1, sizes that do
            not sum to the axis' size, an ``n`` that does not divide it.
    """
    where = "split"
    data = _input(input, "input", "split", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to split")
    _fits(data.ndim, "input", where)
    axis = _axis(axis, data.ndim, where)
    total = data.shape[axis]
    if isinstance(sizes, int | np.integer) and not isinstance(sizes, bool):
        count = _count(sizes, "sizes", where, 1)
        if total % count:
            raise ArgumentValueError(
                "sizes", f"{where}: {count} equal pieces do not divide axis {axis} of size {total}"
            )
        pieces = [total // count] * count
    else:
        if isinstance(sizes, bool | str | bytes) or not isinstance(sizes, Sequence | np.ndarray):
            raise ArgumentTypeError("sizes", f"{where}: sizes must be an int or a list of ints; got {sizes!r}")
        pieces = _per_axis(sizes, "sizes", where, len(sizes), 1)
        if not pieces or sum(pieces) != total:
            raise ArgumentValueError(
                "sizes", f"{where}: sizes {pieces} sum to {sum(pieces)}; axis {axis} of the input has {total}"
            )
    shapes = [data.shape[:axis] + (size,) + data.shape[axis + 1 :] for size in pieces]
    desc = operators_pb2.SplitOperatorDesc(
        input_tensor=tensor_desc(data),
        output_count=len(pieces),
        output_tensors=[tensor_desc((data.dtype, shape)) for shape in shapes],
        axis=axis,
    )
    return Call(operators_pb2.OperatorDesc(split=desc), (data,), (), (data.dtype,) * len(pieces))
