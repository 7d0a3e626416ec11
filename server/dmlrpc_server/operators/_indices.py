"""Data-dependent checks shared by the scatter operators: index ranges, negative indices, overlapping writes."""

from __future__ import annotations

import numpy as np

from dmlrpc_server.errors import InvalidArgument

#: Index tensors up to this many elements are checked in plain Python.
_SMALL = 64


def checked_indices(
    indices: np.ndarray,
    bounds: np.ndarray,
    *,
    field: str,
    dimension_offset: int = 0,
    tuple_axis: bool = False,
    axis: int | None = None,
) -> np.ndarray:
    """Range-check index values and return them normalised to non-negative int64.

    Args:
        indices: the decoded index tensor (INT32, INT64, UINT32 or UINT64).
        bounds: the size of the addressed input dimension for each index, broadcastable to ``indices``.
        field: the request path that names the index buffer in errors.
        dimension_offset: input dimension addressed by the first tuple component (scatter-ND) .
        tuple_axis: whether the last axis of ``indices`` holds index tuples (scatter-ND).
        axis: the input dimension every index addresses (scatter-elements).

    Raises:
        InvalidArgument: naming the first out-of-range value and its position.
    """
    signed = indices.dtype.kind == "i"
    if indices.size <= _SMALL:
        # NOTE: for the handful of indices a typical request carries, plain Python beats a dozen NumPy calls.
        values = indices.reshape(-1).tolist()
        limits = np.broadcast_to(bounds, indices.shape).reshape(-1).tolist()
        if all(-b <= v < b if signed else v < b for v, b in zip(values, limits, strict=True)):
            normalised = [v + b if v < 0 else v for v, b in zip(values, limits, strict=True)]
            return np.array(normalised, np.int64).reshape(indices.shape)
    if signed:
        wide = indices.astype(np.int64)
        bad = (wide < -bounds) | (wide >= bounds)
    else:
        bad = indices >= bounds.astype(np.uint64)
    if bad.any():
        position = tuple(int(p) for p in np.argwhere(bad)[0])
        bound = int(np.broadcast_to(bounds, indices.shape)[position])
        dimension = dimension_offset + position[-1] if tuple_axis else axis
        accepted = f"[-{bound}, {bound})" if signed else f"[0, {bound})"
        raise InvalidArgument(
            field,
            f"index value {indices[position]} at indices_tensor position {list(position)} is out of range "
            f"{accepted} for input_tensor dimension {dimension}",
        )
    if signed:
        return np.where(wide < 0, wide + bounds, wide)
    return indices.astype(np.int64)


def reject_overlaps(targets: np.ndarray, *, field: str, what: str) -> None:
    """Refuse two writes to the same place: ``targets`` holds one flat target per write position.

    Raises:
        InvalidArgument: naming the first two positions that write the same place.
    """
    flat = targets.reshape(-1)
    if flat.size < 2:
        return
    if flat.size <= 256 and len(set(flat.tolist())) == flat.size:
        return  # NOTE: for the few indices of a typical request a set beats argsort by several times
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    if same.size:
        first, second = (
            [int(c) for c in np.unravel_index(int(order[i]), targets.shape)] for i in (same[0], same[0] + 1)
        )
        raise InvalidArgument(
            field,
            f"{what} {first} and {second} write the same output element; DirectML calls overlapping scatter "
            "targets invalid",
        )
