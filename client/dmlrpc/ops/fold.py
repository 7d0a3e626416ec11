"""DML_FOLD and DML_UNFOLD (col2im and im2col) as NumPy-style builders."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentValueError
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call, _float_operand, _wrap
from dmlrpc.ops.spatial_grad import _shape, window_geometry
from dmlrpc.v1 import operators_pb2

__all__ = ["fold", "unfold"]


def _attributes(values: dict[str, list[int]]) -> dict[str, Any]:
    return {
        "dimension_count": len(values["window_size"]),
        "window_sizes": values["window_size"],
        "strides": values["strides"],
        "dilations": values["dilations"],
        "start_padding": values["start_padding"],
        "end_padding": values["end_padding"],
    }


@operator(sends=("unfold",))
def unfold(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
) -> Call:
    """DML_UNFOLD_OPERATOR_DESC (im2col, ``torch.nn.functional.unfold``): every sliding window of an
    (N, C, spatial..) ``input`` as a column: ``out[n, c * K + k, b]`` is the input element at window offset ``k``
    (row-major over ``window_size``, K elements) of block ``b`` (row-major over the blocks), 0 in the padding.

    DirectML's rules: the input has 2 + DimensionCount dimensions (1 to 6 spatial ones), the output is
    {N, C * prod(window_size), BlockCount} of the input's data type, FLOAT32 or FLOAT16; blocks per spatial
    dimension ``(size + start + end - dilation * (window - 1) - 1) // stride + 1``. Strides and dilations default
    to 1, padding to 0.

    Raises:
        ArgumentValueError, ArgumentTypeError: an input of fewer than 3 or more than 8 dimensions, window arguments
            of the wrong length or range, a window larger than the padded input, a dtype other than float32/float16.
    """
    where = "unfold"
    x = _float_operand(input, "input", where, where)
    if not 3 <= x.ndim <= 8:
        raise ArgumentValueError(
            "input", f"{where}: input has shape {x.shape}; it takes (N, C, spatial..) with 1 to 6 spatial dimensions"
        )
    values, blocks = window_geometry(where, x.shape[2:], window_size, strides, dilations, start_padding, end_padding)
    shape = (x.shape[0], x.shape[1] * math.prod(values["window_size"]), math.prod(blocks))
    desc = operators_pb2.UnfoldOperatorDesc(
        input_tensor=tensor_desc(x), output_tensor=tensor_desc((x.dtype, shape)), **_attributes(values)
    )
    return Call(_wrap(where, desc), (x,))


@operator(sends=("fold",))
def fold(
    input: npt.ArrayLike,
    output_size: Sequence[int],
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
) -> Call:
    """DML_FOLD_OPERATOR_DESC (col2im, ``torch.nn.functional.fold``): the columns of ``unfold`` summed back into
    an (N, C, *output_size) image: each element is the sum of every column entry that ``unfold`` would read from
    it.

    DirectML's rules: the input is {N, C * prod(window_size), BlockCount}, the output {N, C, spatial..} with 1 to 6
    spatial dimensions, one data type, FLOAT32 or FLOAT16; BlockCount is the product of the blocks per spatial
    dimension of ``output_size`` (``unfold``'s formula). ``output_size`` is the spatial sizes.

    Raises:
        ArgumentValueError, ArgumentTypeError: an input that is not 3-D, window arguments of the wrong length or
            range, an input whose columns or blocks do not match ``window_size`` and ``output_size``, a dtype other
            than float32/float16.
    """
    where = "fold"
    x = _float_operand(input, "input", where, where)
    if x.ndim != 3:
        raise ArgumentValueError(
            "input", f"{where}: input has shape {x.shape}; it takes (N, C * prod(window_size), block count)"
        )
    spatial = _shape(output_size, "output_size", where, range(1, 7))
    values, blocks = window_geometry(where, spatial, window_size, strides, dilations, start_padding, end_padding)
    windows = math.prod(values["window_size"])
    if x.shape[1] % windows or x.shape[2] != math.prod(blocks):
        raise ArgumentValueError(
            "input",
            f"{where}: input has shape {x.shape}; with window_size {values['window_size']} and output_size {spatial} "
            f"it must be (N, C * {windows}, {math.prod(blocks)}) ({blocks} blocks per spatial dimension)",
        )
    shape = (x.shape[0], x.shape[1] // windows, *spatial)
    desc = operators_pb2.FoldOperatorDesc(
        input_tensor=tensor_desc(x), output_tensor=tensor_desc((x.dtype, shape)), **_attributes(values)
    )
    return Call(_wrap(where, desc), (x,))
