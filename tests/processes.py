"""Other processes the tests watch or end, the same way on Linux and Windows."""

from __future__ import annotations

import os
import signal
import sys

_SYNCHRONIZE = 0x00100000
_WAIT_TIMEOUT = 0x102
_SUSPEND_RESUME = 0x0800


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (on Windows, os.kill(pid, 0) would terminate it)."""
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined, unused-ignore]
        handle = kernel32.OpenProcess(_SYNCHRONIZE, False, pid)
        if not handle:
            return False
        try:
            return bool(kernel32.WaitForSingleObject(handle, 0) == _WAIT_TIMEOUT)
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def kill(pid: int) -> None:
    """End process ``pid`` at once, as a crash would (SIGKILL; on Windows os.kill is TerminateProcess)."""
    os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))


def suspend(pid: int) -> None:
    """Freeze process ``pid``: it runs no code of its own (it cannot see its stdin end) until it is ended
    (SIGSTOP; on Windows NtSuspendProcess, which suspends every thread)."""
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined, unused-ignore]
        kernel32.OpenProcess.restype = ctypes.c_void_p
        handle = kernel32.OpenProcess(_SUSPEND_RESUME, False, pid)
        assert handle, f"cannot open process {pid}"
        try:
            status = ctypes.WinDLL("ntdll").NtSuspendProcess(ctypes.c_void_p(handle))  # type: ignore[attr-defined, unused-ignore]
            assert status == 0, f"NtSuspendProcess({pid}) returned {status:#x}"
        finally:
            kernel32.CloseHandle(ctypes.c_void_p(handle))
        return
    os.kill(pid, signal.SIGSTOP)
