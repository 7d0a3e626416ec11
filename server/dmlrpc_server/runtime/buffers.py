"""A pool of reusable host buffers, keyed by size class and bounded in total bytes."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

MiB = 1 << 20
#: Below this, classes are powers of two; above it, multiples of it (at most 1/16 of the size wasted).
_FINE = 16 * MiB
_SMALLEST = 4096
#: A bound buffer's bytes, from a unary binding or reassembled from a stream.
Buffer = bytes | bytearray | memoryview | np.ndarray


def size_class(nbytes: int) -> int:
    """The buffer size that serves ``nbytes``: a power of two up to 16 MiB, then the next multiple of 1 MiB."""
    if nbytes <= _SMALLEST:
        return _SMALLEST
    if nbytes <= _FINE:
        return 1 << (nbytes - 1).bit_length()
    return -(-nbytes // MiB) * MiB


@dataclass
class Lookups:
    """How many lookups a pool or cache served from what it holds (hits), and how many it could not (misses)."""

    hits: int = 0
    misses: int = 0


@dataclass
class PoolStats(Lookups):
    #: Bytes of free buffers held for reuse.
    held_bytes: int = 0
    #: Bytes of buffers handed out and not yet returned.
    lent_bytes: int = 0


class BufferPool:
    """Hands out uint8 arrays of at least the asked size; returned ones are kept for reuse up to ``max_bytes``.

    A buffer comes back dirty: every user fully overwrites the bytes it exposes, or asks for ``zeroed=True``
    (strided layouts, whose gaps must never show another request's bytes). Thread-safe.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.stats = PoolStats()
        self._free: dict[int, list[np.ndarray]] = defaultdict(list)
        self._lock = threading.Lock()

    def acquire(self, nbytes: int, *, zeroed: bool = False) -> np.ndarray:
        """A buffer of exactly ``nbytes`` (a view of a pooled one); return it with ``release``."""
        size = size_class(nbytes)
        with self._lock:
            free = self._free.get(size)
            buffer = free.pop() if free else None
            if buffer is not None:
                self.stats.hits += 1
                self.stats.held_bytes -= size
            else:
                self.stats.misses += 1
            self.stats.lent_bytes += size
        if buffer is None:
            buffer = np.empty(size, np.uint8)
        view = buffer[:nbytes]
        if zeroed:
            view.fill(0)
        return view

    def release(self, view: np.ndarray) -> None:
        """Give back a buffer from ``acquire`` (kept if the pool has room, else freed)."""
        buffer = view.base if view.base is not None else view
        assert isinstance(buffer, np.ndarray)
        size = buffer.nbytes
        with self._lock:
            self.stats.lent_bytes -= size
            if size_class(size) == size and self.stats.held_bytes + size <= self.max_bytes:
                self._free[size].append(buffer)
                self.stats.held_bytes += size
