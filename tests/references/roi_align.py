"""NumPy reference of DirectML's ROI_ALIGN1 (and ROI_ALIGN: offsets 0.5 / -0.5), written from the page's
pseudo-code as the page notes read it: one loop per region, output element and sample."""

from __future__ import annotations

import math

import numpy as np


def _sample(image: np.ndarray, x: float, y: float, nearest: bool, out_of_bounds: float) -> float:
    """interpolate2D on one (H, W) plane: OutOfBoundsInputValue outside [-1, W] x [-1, H], else clamped."""
    height, width = image.shape
    if not (-1 <= x <= width and -1 <= y <= height):
        return out_of_bounds
    x = min(max(x, 0.0), width - 1)
    y = min(max(y, 0.0), height - 1)
    if nearest:
        return float(image[min(math.floor(y + 0.5), height - 1), min(math.floor(x + 0.5), width - 1)])
    x0, y0 = math.floor(x), math.floor(y)
    x1, y1 = min(x0 + 1, width - 1), min(y0 + 1, height - 1)
    fx, fy = x - x0, y - y0
    top = (1 - fx) * float(image[y0, x0]) + fx * float(image[y0, x1])
    bottom = (1 - fx) * float(image[y1, x0]) + fx * float(image[y1, x1])
    return (1 - fy) * top + fy * bottom


def roi_align(
    x: np.ndarray,
    rois: np.ndarray,
    batch_indices: np.ndarray,
    out_size: tuple[int, int],
    *,
    average: bool,
    nearest: bool,
    scale: tuple[float, float] = (1.0, 1.0),
    offsets: tuple[float, float] = (0.5, -0.5),
    out_of_bounds: float = 0.0,
    samples: tuple[int, int] = (1, 2**32 - 1),
    align_corners: bool = False,
) -> np.ndarray:
    """out[r, c, oy, ox] in float64: ``scale`` = (SpatialScaleX, SpatialScaleY), ``offsets`` = (InputPixelOffset,
    OutputPixelOffset), ``samples`` = (MinimumSamplesPerOutput, MaximumSamplesPerOutput)."""
    out_h, out_w = out_size
    boxes = rois.reshape(-1, 4).astype(np.float64)
    ids = batch_indices.reshape(-1)
    in_offset, out_offset = offsets
    result = np.zeros((len(boxes), x.shape[1], out_h, out_w), np.float64)
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
        for c in range(x.shape[1]):
            image = x[int(ids[r]), c].astype(np.float64)
            for oy in range(out_h):
                for ox in range(out_w):
                    values = [
                        _sample(
                            image,
                            (sx - out_offset) * step_x + start_x - in_offset,
                            (sy - out_offset) * step_y + start_y - in_offset,
                            nearest,
                            out_of_bounds,
                        )
                        for sy in range(oy * per_y, oy * per_y + per_y)
                        for sx in range(ox * per_x, ox * per_x + per_x)
                    ]
                    result[r, c, oy, ox] = sum(values) / len(values) if average else max(values)
    return result
