"""NumPy references of GEMM and MATRIX_MULTIPLY_INTEGER, written from DirectML's pages, independent of the server."""

from __future__ import annotations

import numpy as np


def gemm(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray | None,
    trans_a: bool,
    trans_b: bool,
    alpha: float,
    beta: float,
) -> np.ndarray:
    """Alpha * TransA(A) x TransB(B) + Beta * C over the leading (batch, channel) dimensions, in FLOAT64."""
    a64 = np.swapaxes(a.astype(np.float64), -1, -2) if trans_a else a.astype(np.float64)
    b64 = np.swapaxes(b.astype(np.float64), -1, -2) if trans_b else b.astype(np.float64)
    result: np.ndarray = np.float64(alpha) * np.matmul(a64, b64)
    if c is not None:
        result = result + np.float64(beta) * c.astype(np.float64)
    return result


def matrix_multiply_integer(
    a: np.ndarray, a_zero: np.ndarray | None, b: np.ndarray, b_zero: np.ndarray | None
) -> np.ndarray:
    """sum_k (A[.., m, k] - AZeroPoint[m]) * (B[.., k, n] - BZeroPoint[n]) in INT32 (wrapping modulo 2**32).

    A zero point holds 1 value (per tensor) or M values (per row); B's 1 or N (per column), in any leading-1 shape.
    """
    m, n = a.shape[-2], b.shape[-1]
    za = np.zeros(1, np.int64) if a_zero is None else a_zero.astype(np.int64).reshape(-1)
    zb = np.zeros(1, np.int64) if b_zero is None else b_zero.astype(np.int64).reshape(-1)
    left = a.astype(np.int64) - np.broadcast_to(za, (m,))[:, None]
    right = b.astype(np.int64) - np.broadcast_to(zb, (n,))[None, :]
    total: np.ndarray = np.matmul(left, right)
    wrapped: np.ndarray = ((total + 2**31) % 2**32 - 2**31).astype(np.int32)
    return wrapped
