"""Other processes the tests watch or end, the same way on Linux and Windows."""

from __future__ import annotations

import os
import signal
import sys

_SYNCHRONIZE = 0x00100000
_WAIT_TIMEOUT = 0x102


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
