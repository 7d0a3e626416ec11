"""Windows: the job object that ends a supervisor's worker processes with the supervisor, however it ends."""

from __future__ import annotations

import ctypes
import logging
import sys

_log = logging.getLogger("dmlrpc_server")

#: JOBOBJECT_BASIC_LIMIT_INFORMATION.LimitFlags: every process of the job ends once the job's last handle closes.
_KILL_ON_JOB_CLOSE = 0x2000
#: SetInformationJobObject's class for JOBOBJECT_EXTENDED_LIMIT_INFORMATION.
_EXTENDED_LIMIT_INFORMATION = 9


class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", ctypes.c_uint64 * 6),  # IO_COUNTERS: six ULONGLONGs
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def end_workers_with_this_process() -> None:
    """Put this process, and so every process it starts from now on, in a job that ends them all once this process
    has ended (its handle to the job is the only one, closed with it). Nothing off Windows; a WARNING if it fails.

    NOTE: a worker ends by itself when its stdin closes, but only once its Python runs: one that a killed supervisor
    left mid-start (Wine leaves such a process waiting for ever), or one hung in a long ONNX Runtime node, would
    outlive it, holding its memory, and the log pipe of whoever started the server.
    """
    if sys.platform != "win32":  # for mypy: WinDLL exists only there
        return
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.CreateJobObjectW.argtypes = (ctypes.c_void_p, ctypes.c_wchar_p)
    kernel32.CreateJobObjectW.restype = ctypes.c_void_p
    kernel32.SetInformationJobObject.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32)
    kernel32.AssignProcessToJobObject.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    kernel32.GetCurrentProcess.restype = ctypes.c_void_p
    kernel32.CloseHandle.argtypes = (ctypes.c_void_p,)
    # Not inheritable (no security attributes): a worker holding the handle would keep the job, and itself, alive.
    job = kernel32.CreateJobObjectW(None, None)
    if not job:
        _log.warning(
            "no job object for the workers (error %d): one may outlive a killed server",
            ctypes.get_last_error(),
        )
        return
    limits = _ExtendedLimits()
    limits.BasicLimitInformation.LimitFlags = _KILL_ON_JOB_CLOSE
    if not (
        kernel32.SetInformationJobObject(job, _EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits), ctypes.sizeof(limits))
        and kernel32.AssignProcessToJobObject(job, kernel32.GetCurrentProcess())
    ):
        _log.warning(
            "could not put the server in a job object for its workers (error %d): one may outlive a killed server",
            ctypes.get_last_error(),
        )
        kernel32.CloseHandle(job)
        return
    # NOTE: the handle is left open on purpose for the life of this process: its closing ends the workers.
