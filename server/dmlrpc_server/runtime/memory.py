"""glibc malloc tuning for large tensors: keep freed memory for reuse instead of returning it to the kernel."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import platform

_log = logging.getLogger(__name__)

# mallopt parameters from glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

#: Free memory at the top of the heap kept before it is given back to the kernel, and the padding added to each
#: heap growth: large enough for a few multi-hundred-MiB tensors.
TRIM_THRESHOLD = 4 << 30
TOP_PAD = 256 << 20
#: The largest mmap threshold glibc accepts (HEAP_MAX_SIZE / 2 on 64-bit): buffers up to this size come from the
#: heap and are reused, instead of being mapped and unmapped (and page-faulted in afresh) every time.
MMAP_THRESHOLD = 32 << 20


def tune_malloc() -> bool:
    """Apply the settings on glibc (the equivalent of MALLOC_TRIM_THRESHOLD_ etc.); returns whether it did.

    NOTE: measured on 64 MiB tensors, fresh pages cost a page fault each (about 2 GB/s) and glibc maps and unmaps
    every large buffer; keeping them in the heap made streamed round trips about 1.3x faster (docs/benchmarks.md).
    """
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # pragma: no cover - no usable libc
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    applied = [
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        mallopt(_M_TRIM_THRESHOLD, min(TRIM_THRESHOLD, 2**31 - 1)),
        mallopt(_M_TOP_PAD, TOP_PAD),
    ]
    _log.debug("malloc tuning applied: %s", applied)
    return all(applied)
