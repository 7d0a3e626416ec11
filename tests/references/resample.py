"""NumPy references of VALUE_SCALE_2D, UPSAMPLE_2D and RESAMPLE(1/2/3), written from the DirectML pages."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np


def value_scale_2d(x: np.ndarray, scale: float, bias: Sequence[float]) -> np.ndarray:
    """f(x)[n, c, h, w] = Scale * x[n, c, h, w] + Bias[c], exact (FLOAT64)."""
    per_channel = np.asarray(bias, dtype=np.float64).reshape(1, -1, 1, 1)
    return float(np.float32(scale)) * x.astype(np.float64) + per_channel


def upsample_2d_nearest(x: np.ndarray, height: int, width: int) -> np.ndarray:
    """UPSAMPLE_2D NEAREST_NEIGHBOR with integer scales: each element repeated scale times in H and W."""
    return np.repeat(np.repeat(x, height, axis=-2), width, axis=-1)


def input_coordinate(position: int, scale: float, input_offset: float, output_offset: float) -> float:
    """inX = (outX - OutputPixelOffset) / Scale - InputPixelOffset, evaluated in FLOAT32 like DirectML's fields."""
    value = (np.float32(position) - np.float32(output_offset)) / np.float32(scale) - np.float32(input_offset)
    return float(value)


def axis_taps(
    position: int,
    in_size: int,
    scale: float,
    input_offset: float,
    output_offset: float,
    *,
    linear: bool,
    rounding: str,
    antialiased: bool,
) -> list[tuple[int, float]]:
    """The (input index, weight) pairs one output position of one dimension reads, indices clamped to the edges.

    rounding: "nearest" (halfway goes up), "floor" or "ceil" (NEAREST_NEIGHBOR only).
    """
    x = input_coordinate(position, scale, input_offset, output_offset)

    def clamp(i: int) -> int:
        return min(max(i, 0), in_size - 1)

    if not linear:
        chosen = {"nearest": math.floor(x + 0.5), "floor": math.floor(x), "ceil": math.ceil(x)}[rounding]
        return [(clamp(chosen), 1.0)]
    stretch = 1.0 / float(np.float32(scale))
    if antialiased and stretch > 2.0:
        # A triangle filter of half-width 1/scale; out-of-range taps read the edge element; normalised.
        taps = [
            (clamp(i), 1.0 - abs(i - x) / stretch)
            for i in range(math.ceil(x - stretch), math.floor(x + stretch) + 1)
            if abs(i - x) < stretch
        ]
        total = sum(w for _, w in taps)
        return [(i, w / total) for i, w in taps]
    low = math.floor(x)
    fraction = x - low
    return [(clamp(low), 1.0 - fraction), (clamp(low + 1), fraction)]


def resample(
    x: np.ndarray,
    out_shape: Sequence[int],
    scales: Sequence[float],
    input_offsets: Sequence[float],
    output_offsets: Sequence[float],
    *,
    linear: bool,
    rounding: str = "nearest",
    antialiased: bool = False,
) -> np.ndarray:
    """RESAMPLE1/2/3 in FLOAT64: each output element is the weighted sum over the product of its per-dimension
    taps (2 per dimension for LINEAR, up to 16 in 4-D; one for NEAREST_NEIGHBOR)."""
    values = x.astype(np.float64)
    out = np.zeros(tuple(out_shape), dtype=np.float64)
    per_axis = [
        [
            axis_taps(
                o,
                x.shape[d],
                scales[d],
                input_offsets[d],
                output_offsets[d],
                linear=linear,
                rounding=rounding,
                antialiased=antialiased,
            )
            for o in range(out_shape[d])
        ]
        for d in range(x.ndim)
    ]
    for position in itertools.product(*(range(s) for s in out_shape)):
        total = 0.0
        for combination in itertools.product(*(per_axis[d][o] for d, o in enumerate(position))):
            weight = math.prod(w for _, w in combination)
            total += weight * values[tuple(i for i, _ in combination)]
        out[position] = total
    return out


def to_dtype(real: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A FLOAT64 result in the tensor's type: floats round to nearest, integers round half to even and saturate."""
    if dtype.kind == "f":
        return real.astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.round(real), info.min, info.max).astype(dtype)
