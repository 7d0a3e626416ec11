"""DML_ELEMENT_WISE_QUANTIZE_LINEAR, DEQUANTIZE_LINEAR and QUANTIZED_LINEAR_ADD: per-element and per-tensor
quantisation with round-half-to-even and saturation to the 8-bit output range."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._elementwise import Context, ElementWise, define
from dmlrpc_server.operators._graph import F32, I32, I64, Graph, Value
from dmlrpc_server.operators.base import require


def _quantize(g: Graph, value: Value, scale: Value, zero_point: Value | None, dtype: np.dtype[Any]) -> Value:
    """clamp(round_half_even(value / scale) + zero_point) as ``dtype``, computed in FLOAT32 as DirectML does."""
    scaled = g.op("Round", g.op("Div", g.cast(value, F32), g.cast(scale, F32)))
    if zero_point is not None:
        scaled = g.op("Add", scaled, g.cast(zero_point, F32))
    info = np.iinfo(dtype)
    clipped = g.op("Clip", scaled, g.const(float(info.min), F32), g.const(float(info.max), F32))
    return g.cast(clipped, dtype)


def _dequantize(g: Graph, value: Value, scale: Value, zero_point: Value | None, *, wide: bool) -> Value:
    """(value - zero_point) * scale in FLOAT32. The difference is exact: INT32 for 8- and 16-bit values, INT64 for
    32-bit ones (``wide``), or FLOAT32 for those where 64-bit integer shader operations may be missing (DirectML)."""
    difference_type = I32 if value.dtype.itemsize < 4 else (I64 if wide else F32)
    difference = g.cast(value, difference_type)
    if zero_point is not None:
        difference = g.op("Sub", difference, g.cast(zero_point, difference_type))
    return g.op("Mul", g.cast(difference, F32), g.cast(scale, F32))


def _wide(c: Context) -> bool:
    """Whether 64-bit integer operations are safe on the provider (DirectML devices may lack them)."""
    return c.tensors is None or not c.tensors.on_directml


def _inputs(xs: Sequence[Value], c: Context, names: Sequence[str]) -> dict[str, Value | None]:
    """The function's values by field name; absent optional tensors are None."""
    assert c.tensors is not None
    present = iter(xs)
    return {name: (next(present) if c.tensors.layouts[name] is not None else None) for name in names}


def _quantize_linear(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    v = _inputs(xs, c, ("input_tensor", "scale_tensor", "zero_point_tensor"))
    assert v["input_tensor"] is not None and v["scale_tensor"] is not None
    return _quantize(g, v["input_tensor"], v["scale_tensor"], v["zero_point_tensor"], c.output)


def _check_quantize_linear(desc: Any, c: Context) -> None:
    assert c.tensors is not None
    source, scale = c.tensors["input_tensor"], c.tensors["scale_tensor"]
    wanted = np.dtype("<f4") if source.dtype.kind == "i" else source.dtype
    require(
        scale.dtype == wanted,
        f"{c.field('scale_tensor')}.buffer.data_type",
        "must be FLOAT32 for an INT32 input, else the input's data type",
    )
    _zero_point_required_before_6_2(c)


def _zero_point_required_before_6_2(c: Context) -> None:
    assert c.tensors is not None
    if c.feature_level < operators_pb2.FEATURE_LEVEL_6_2:
        require(
            c.tensors.layouts["zero_point_tensor"] is not None,
            c.field("zero_point_tensor"),
            "is required before feature level 6.2",
        )


def _dequantize_linear(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    v = _inputs(xs, c, ("input_tensor", "scale_tensor", "zero_point_tensor"))
    assert v["input_tensor"] is not None and v["scale_tensor"] is not None
    return _dequantize(g, v["input_tensor"], v["scale_tensor"], v["zero_point_tensor"], wide=_wide(c))


def _check_dequantize_linear(desc: Any, c: Context) -> None:
    _zero_point_required_before_6_2(c)


_ADD_FIELDS = (
    "a_tensor",
    "a_scale_tensor",
    "a_zero_point_tensor",
    "b_tensor",
    "b_scale_tensor",
    "b_zero_point_tensor",
    "output_scale_tensor",
    "output_zero_point_tensor",
)
_PER_TENSOR = frozenset(name for name in _ADD_FIELDS if "scale" in name or "zero_point" in name)


def _quantized_linear_add(g: Graph, xs: Sequence[Value], c: Context) -> Value:
    v = _inputs(xs, c, _ADD_FIELDS)
    a = _dequantize(g, v["a_tensor"], v["a_scale_tensor"], v["a_zero_point_tensor"], wide=False)  # type: ignore[arg-type]
    b = _dequantize(g, v["b_tensor"], v["b_scale_tensor"], v["b_zero_point_tensor"], wide=False)  # type: ignore[arg-type]
    total = g.op("Add", a, b)
    return _quantize(g, total, v["output_scale_tensor"], v["output_zero_point_tensor"], c.output)  # type: ignore[arg-type]


def _check_quantized_linear_add(desc: Any, c: Context) -> None:
    assert c.tensors is not None
    rank = len(c.tensors["output_tensor"].sizes)
    for name in _PER_TENSOR:
        layout = c.tensors.layouts[name]
        if layout is None:
            continue
        path = f"{c.field(name)}.buffer.sizes"
        require(len(layout.sizes) == rank, path, f"must have the output's dimension count {rank}")
        require(layout.element_count == 1, path, "a per-tensor scale or zero point has exactly 1 element")


QUANTIZE: tuple[ElementWise, ...] = (
    define(
        "ELEMENT_WISE_QUANTIZE_LINEAR",
        _quantize_linear,
        check=_check_quantize_linear,
        same_type=(("zero_point_tensor", "output_tensor"),),
    ),
    define(
        "ELEMENT_WISE_DEQUANTIZE_LINEAR",
        _dequantize_linear,
        check=_check_dequantize_linear,
        same_type=(("input_tensor", "zero_point_tensor"), ("scale_tensor", "output_tensor")),
    ),
    define(
        "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
        _quantized_linear_add,
        check=_check_quantized_linear_add,
        same_type=(
            ("a_tensor", "a_zero_point_tensor"),
            ("b_tensor", "b_zero_point_tensor"),
            ("output_tensor", "output_zero_point_tensor"),
        ),
        free_sizes=_PER_TENSOR,
    ),
)
