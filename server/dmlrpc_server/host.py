"""What the host gives the server: its CPUs and memory (cgroup limits included), and the defaults that follow."""

from __future__ import annotations

import ctypes
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20


def available_cpus() -> int:
    """CPUs this process may use: its CPU affinity, capped by a cgroup v2 CPU quota (a container's CPU limit)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cpus


def physical_memory() -> int:
    """The host's physical memory in bytes, capped by a cgroup v2 memory limit (a container's)."""
    try:
        memory = _windows_physical_memory() if sys.platform == "win32" else _posix_physical_memory()
    except (AttributeError, OSError, ValueError):  # pragma: no cover - neither answers
        memory = 16384 * MiB
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            memory = min(memory, int(limit))
    except (OSError, ValueError):
        pass
    return memory


def default_workers(cpus: int, *, gpu: bool, shared_port: bool) -> int:
    """The worker processes --workers defaults to.

    NOTE: measured with bench/workers.py (docs/architecture.md, "Worker processes"): on 2 CPUs shared by client
    and server, 2 workers served 5-50% more tiny calls over several connections than 1. A GPU provider gets 1:
    every worker would hold its own device context and device-memory quotas. Where workers cannot share the port
    (Windows, macOS) it is 1 too, so that nobody gets extra ports without asking.
    """
    if gpu or not shared_port:
        return 1
    return max(1, min(cpus, 8))


#: The most --memory-bytes defaults to: on a host of 8 GiB or more, 4 GiB.
DEFAULT_MEMORY_BYTES_CAP = 4096 * MiB
#: The most --max-tensor-bytes defaults to.
DEFAULT_TENSOR_BYTES_CAP = 512 * MiB
#: Tensors of the --max-tensor-bytes default that one worker's call memory holds at once: an element-wise call of
#: two inputs and its output (its run's peak), and room for its response.
TENSORS_PER_CALL = 4


def _posix_physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


class _MemoryStatusEx(ctypes.Structure):
    """MEMORYSTATUSEX of sysinfoapi.h."""

    _fields_ = [("dwLength", ctypes.c_uint32), ("dwMemoryLoad", ctypes.c_uint32)] + [
        (name, ctypes.c_uint64)
        for name in (
            "ullTotalPhys",
            "ullAvailPhys",
            "ullTotalPageFile",
            "ullAvailPageFile",
            "ullTotalVirtual",
            "ullAvailVirtual",
            "ullAvailExtendedVirtual",
        )
    ]


def _windows_physical_memory() -> int:
    """Windows' physical memory (GlobalMemoryStatusEx): Windows Python has no os.sysconf."""
    if sys.platform != "win32":  # for mypy: WinDLL exists only there
        raise OSError("not Windows")
    status = _MemoryStatusEx()
    status.dwLength = ctypes.sizeof(status)
    if not ctypes.WinDLL("kernel32").GlobalMemoryStatusEx(ctypes.byref(status)):
        raise OSError("GlobalMemoryStatusEx failed")
    return int(status.ullTotalPhys)


def default_memory_bytes() -> int:
    """--memory-bytes's default: half the memory this process may use (a container's cgroup limit, else the host's),
    at most 4 GiB."""
    return min(DEFAULT_MEMORY_BYTES_CAP, physical_memory() // 2)


def default_tensor_bytes(call_memory: int) -> int:
    """--max-tensor-bytes's default for one worker's call memory: the largest tensor (whole MiB, at most 512 MiB)
    an element-wise call over which fits the call memory, so that no tensor the limits admit is then refused for
    the memory its call needs."""
    return max(MiB, min(DEFAULT_TENSOR_BYTES_CAP, call_memory // TENSORS_PER_CALL // MiB * MiB))


@dataclass(frozen=True)
class MemoryBudgets:
    """The resolved byte budgets: per worker process (its calls, cache, free buffers and heap) and server-wide
    totals (what callers keep on purpose, shared evenly among the workers)."""

    memory: int
    call_memory: int
    compile_cache: int
    buffer_pool: int
    heap_retain: int
    resident_total: int
    compiled_total: int
    workers: int
    #: The largest tensor (--max-tensor-bytes, or its default for the call memory).
    max_tensor: int

    @property
    def bound(self) -> int:
        """What the budgets let callers make the server hold beyond its baseline, all workers together."""
        per_worker = self.call_memory + self.compile_cache + self.buffer_pool + self.heap_retain
        return self.workers * per_worker + self.resident_total + self.compiled_total
