"""glibc malloc tuning and trimming: freed memory is kept for reuse up to a bound, the rest given back to the kernel."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_log = logging.getLogger(__name__)

# mallopt parameters from glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
#: The environment variable glibc reads for each of them as a process starts.
_ENVIRONMENT = {
    _M_TRIM_THRESHOLD: "MALLOC_TRIM_THRESHOLD_",
    _M_TOP_PAD: "MALLOC_TOP_PAD_",
    _M_MMAP_THRESHOLD: "MALLOC_MMAP_THRESHOLD_",
    _M_ARENA_MAX: "MALLOC_ARENA_MAX",
}

#: The padding added to each heap growth (and kept when the heap is trimmed), at most: enough for a few large
#: tensors; --heap-retain-bytes caps it.
TOP_PAD = 256 << 20
#: The largest mmap threshold glibc accepts (HEAP_MAX_SIZE / 2 on 64-bit): buffers up to this size come from the
#: heap and are reused, instead of being mapped and unmapped (and page-faulted in afresh) every time.
MMAP_THRESHOLD = 32 << 20
#: glibc's arenas at the most (its default: eight per core). NOTE: a thread's own arena keeps the free top of its
#: heap whatever the trim threshold (a heap is 64 MiB at most, under the threshold --heap-retain-bytes sets, and
#: malloc_trim trims only the main arena's top): on 16 cores, 8 operator threads at once left +210 MiB held after
#: their calls, against +19 MiB with two arenas and +3 MiB with one (docs/reliability.md); gRPC's threads keep
#: what they read requests into the same way (+288 MiB on 16 cores after 28 MiB requests, where an idle trim cannot
#: reach). Past the cap each new thread takes an existing arena in turn, so the event loop shares its arena with
#: gRPC's poller and event-engine threads: the parsing floor under the same settings serves 0.98-1.02x the tiny calls
#: it serves without them (docs/benchmarks.md, "The bound beside the goal").
ARENAS = 2


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ] + [("keepcost", ctypes.c_size_t)]


def _libc() -> ctypes.CDLL | None:
    """glibc, or ``None`` elsewhere (musl, macOS, Windows), where none of this applies."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:  # pragma: no cover - no usable libc
        return None


def malloc_settings(retain_bytes: int) -> dict[int, int]:
    """``tune_malloc``'s settings for ``retain_bytes``: each mallopt parameter's value."""
    threshold = min(retain_bytes, 2**31 - 1)
    return {
        _M_MMAP_THRESHOLD: MMAP_THRESHOLD,
        _M_TRIM_THRESHOLD: threshold,
        _M_TOP_PAD: min(TOP_PAD, threshold),
        _M_ARENA_MAX: ARENAS,
    }


def malloc_environment(retain_bytes: int) -> dict[str, str]:
    """``tune_malloc``'s settings as the environment variables glibc reads as a process starts (mallopt(3)): the
    same tuning for a process that does not tune itself (the benchmarks' floors, measured under our memory bound)."""
    return {_ENVIRONMENT[parameter]: str(value) for parameter, value in malloc_settings(retain_bytes).items()}


def tune_malloc(retain_bytes: int) -> bool:
    """Apply the settings on glibc (the equivalent of ``malloc_environment``); returns whether it did.

    Freed memory at the top of a heap is kept up to ``retain_bytes`` (glibc gives back what exceeds it as it frees),
    in at most ``ARENAS`` arenas.

    NOTE: measured on 64 MiB tensors, fresh pages cost a page fault each (about 2 GB/s) and glibc maps and unmaps
    every large buffer; keeping them in the heap made streamed round trips about 1.3x faster (docs/benchmarks.md).
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    applied = [mallopt(parameter, value) for parameter, value in malloc_settings(retain_bytes).items()]
    _log.debug("malloc tuning applied: %s", applied)
    return all(applied)


def resident_bytes() -> int | None:
    """This process's resident memory in bytes (Linux's VmRSS, Windows' working set), else ``None``."""
    if sys.platform == "win32":
        # NOTE: before /proc: Wine shows its host's /proc to Windows processes, where only Windows' answer is ours.
        return _working_set_bytes()
    try:
        fields = Path("/proc/self/statm").read_text().split()
    except OSError:
        return None
    return int(fields[1]) * os.sysconf("SC_PAGE_SIZE")


class _ProcessMemoryCounters(ctypes.Structure):
    """PROCESS_MEMORY_COUNTERS of psapi.h."""

    _fields_ = [("cb", ctypes.c_uint32), ("PageFaultCount", ctypes.c_uint32)] + [
        (name, ctypes.c_size_t)
        for name in (
            "PeakWorkingSetSize",
            "WorkingSetSize",
            "QuotaPeakPagedPoolUsage",
            "QuotaPagedPoolUsage",
            "QuotaPeakNonPagedPoolUsage",
            "QuotaNonPagedPoolUsage",
            "PagefileUsage",
            "PeakPagefileUsage",
        )
    ]


def peak_resident_bytes() -> int | None:
    """This process's peak resident memory in bytes (Linux's ru_maxrss, Windows' peak working set), else ``None``."""
    if sys.platform == "win32":
        counters = _process_memory()
        return None if counters is None else int(counters.PeakWorkingSetSize)
    try:
        import resource
    except ModuleNotFoundError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _working_set_bytes() -> int | None:
    counters = _process_memory()
    return None if counters is None else int(counters.WorkingSetSize)


def _process_memory() -> _ProcessMemoryCounters | None:
    """This Windows process's memory counters (K32GetProcessMemoryInfo, in kernel32 since Windows 7)."""
    if sys.platform != "win32":  # for mypy: WinDLL exists only there
        return None
    kernel32 = ctypes.WinDLL("kernel32")
    kernel32.GetCurrentProcess.restype = ctypes.c_void_p
    query = kernel32.K32GetProcessMemoryInfo
    query.argtypes = (ctypes.c_void_p, ctypes.POINTER(_ProcessMemoryCounters), ctypes.c_uint32)
    query.restype = ctypes.c_int
    counters = _ProcessMemoryCounters()
    counters.cb = ctypes.sizeof(counters)
    if not query(kernel32.GetCurrentProcess(), ctypes.byref(counters), counters.cb):
        return None
    return counters


@dataclass
class HeapStats:
    #: malloc_trim calls made.
    trims: int = 0
    #: Free heap bytes (glibc's count) seen at the last look; resident or already given back.
    free_bytes: int = 0
    #: Seconds spent trimming, in all.
    trim_seconds: float = 0.0


class Heap:
    """glibc's heap, seen from the server: how many bytes it holds free, and trimming it down.

    ``free_bytes`` counts free chunks whether their pages are resident or not (a trimmed chunk stays free to glibc),
    so a trim is due only when the heap has changed since the last one and holds more than ``retain_bytes`` free.
    Thread-safe as glibc is; does nothing off glibc.
    """

    def __init__(self, retain_bytes: int) -> None:
        self.retain_bytes = retain_bytes
        self.stats = HeapStats()
        libc = _libc()
        self._mallinfo2 = getattr(libc, "mallinfo2", None)  # glibc >= 2.33
        self._trim = getattr(libc, "malloc_trim", None)
        if self._mallinfo2 is not None:
            self._mallinfo2.restype = _MallInfo2
            self._mallinfo2.argtypes = ()
        if self._trim is not None:
            self._trim.argtypes = (ctypes.c_size_t,)
            self._trim.restype = ctypes.c_int
        self._after_trim: tuple[int, int] | None = None

    @property
    def available(self) -> bool:
        return self._mallinfo2 is not None and self._trim is not None

    def free_bytes(self) -> int:
        """Bytes of free chunks in every malloc arena (0 where unknown)."""
        if self._mallinfo2 is None:
            return 0
        info = self._mallinfo2()
        self.stats.free_bytes = int(info.fordblks)
        return self.stats.free_bytes

    def trim_due(self) -> bool:
        """Whether the heap holds more than ``retain_bytes`` free and changed since the last trim."""
        if self._mallinfo2 is None or self._trim is None:
            return False
        info = self._mallinfo2()
        self.stats.free_bytes = int(info.fordblks)
        return self.stats.free_bytes > self.retain_bytes and (info.uordblks, info.fordblks) != self._after_trim

    def trim(self) -> None:
        """Give every free heap page back to the kernel (malloc_trim(0): tops and whole pages inside free chunks).

        Blocks the arenas' allocations while it runs (milliseconds for hundreds of MiB): call off the event loop.
        """
        if self._trim is None or self._mallinfo2 is None:
            return
        started = time.perf_counter()
        self._trim(0)
        info = self._mallinfo2()
        self._after_trim = (info.uordblks, info.fordblks)
        self.stats.trims += 1
        self.stats.trim_seconds += time.perf_counter() - started
