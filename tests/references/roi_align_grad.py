"""NumPy reference of DirectML's ROI_ALIGN_GRAD: ROI_ALIGN1's sampling (as its page notes read it) run backwards,
one loop per region, output element and sample, scattering the gradient through each sample's taps."""

from __future__ import annotations

import math

import numpy as np


def _taps(x: float, y: float, height: int, width: int, nearest: bool) -> list[tuple[int, int, float]]:
    """The (row, column, weight) taps of one sample, none outside [-1, W] x [-1, H] (a constant is read there)."""
    if not (-1 <= x <= width and -1 <= y <= height):
        return []
    x = min(max(x, 0.0), width - 1)
    y = min(max(y, 0.0), height - 1)
    if nearest:
        return [(min(math.floor(y + 0.5), height - 1), min(math.floor(x + 0.5), width - 1), 1.0)]
    x0, y0 = math.floor(x), math.floor(y)
    x1, y1 = min(x0 + 1, width - 1), min(y0 + 1, height - 1)
    fx, fy = x - x0, y - y0
    return [
        (y0, x0, (1 - fy) * (1 - fx)),
        (y0, x1, (1 - fy) * fx),
        (y1, x0, fy * (1 - fx)),
        (y1, x1, fy * fx),
    ]


def roi_align_grad(
    dy: np.ndarray,
    rois: np.ndarray,
    batch_indices: np.ndarray,
    input_shape: tuple[int, int, int, int],
    *,
    average: bool,
    nearest: bool,
    x: np.ndarray | None = None,
    scale: tuple[float, float] = (1.0, 1.0),
    offsets: tuple[float, float] = (0.0, 0.0),
    samples: tuple[int, int] = (1, 2**32 - 1),
    align_corners: bool = False,
) -> np.ndarray:
    """dx in float64 of ``input_shape``. MAX routes each output element's gradient to its largest in-bounds
    sample (the first in row-major sample order), out-of-bounds samples taking no part; it needs ``x``."""
    _, channels, height, width = input_shape
    out_h, out_w = dy.shape[2], dy.shape[3]
    boxes = rois.reshape(-1, 4).astype(np.float64)
    ids = batch_indices.reshape(-1)
    in_offset, out_offset = offsets
    dx = np.zeros(input_shape, np.float64)
    for r, (x1, y1, x2, y2) in enumerate(boxes):
        start_x, start_y = x1 * scale[0], y1 * scale[1]
        size_x, size_y = x2 * scale[0] - start_x, y2 * scale[1] - start_y
        per_x = min(max(math.ceil(size_x / out_w) if size_x > 0 else 0, samples[0]), samples[1])
        per_y = min(max(math.ceil(size_y / out_h) if size_y > 0 else 0, samples[0]), samples[1])
        total_x, total_y = out_w * per_x, out_h * per_y
        if align_corners:
            step_x = size_x / (total_x - 1) if total_x > 1 else 0.0
            step_y = size_y / (total_y - 1) if total_y > 1 else 0.0
        else:
            step_x, step_y = size_x / total_x, size_y / total_y
        b = int(ids[r])
        for c in range(channels):
            for oy in range(out_h):
                for ox in range(out_w):
                    g = float(dy[r, c, oy, ox])
                    taps = [
                        _taps(
                            (sx - out_offset) * step_x + start_x - in_offset,
                            (sy - out_offset) * step_y + start_y - in_offset,
                            height,
                            width,
                            nearest,
                        )
                        for sy in range(oy * per_y, oy * per_y + per_y)
                        for sx in range(ox * per_x, ox * per_x + per_x)
                    ]
                    if average:
                        for sample in taps:
                            for row, column, weight in sample:
                                dx[b, c, row, column] += g * weight / len(taps)
                        continue
                    assert x is not None
                    best, chosen = -math.inf, None
                    for sample in taps:
                        if not sample:
                            continue
                        value = sum(weight * float(x[b, c, row, column]) for row, column, weight in sample)
                        if chosen is None or value > best:
                            best, chosen = value, sample
                    for row, column, weight in chosen or []:
                        dx[b, c, row, column] += g * weight
    return dx
