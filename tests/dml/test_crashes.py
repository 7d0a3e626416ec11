"""A Windows process that crashes under the lane ends at once, its backtrace in the output: winedbg's crash dialog
would otherwise wait on run.sh's Xvfb for ever, and with it the suite that ran the process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dml.conftest import run_windows_status

pytestmark = [pytest.mark.dml, pytest.mark.timeout(600)]

#: A thread started at an address that holds no code: an unhandled page fault, as a native library's fault in a
#: thread of a test's process would be (Python's own handlers never see it).
CRASH = """
import ctypes, time
create = ctypes.windll.kernel32.CreateThread
create.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p]
create(None, 0, ctypes.c_void_p(16), None, 0, None)
time.sleep(30)
print("the process outlived its crash")
"""


def test_a_crashing_windows_process_ends_with_its_backtrace(dml_environment: Path) -> None:
    # The timeout is a hang guard: the report takes seconds, a dialog waits for ever.
    status, output = run_windows_status(["-c", CRASH], timeout=240)
    assert status != 0, output[-4000:]
    assert "Unhandled page fault" in output, output[-4000:]
    assert "Backtrace:" in output, output[-4000:]  # winedbg's report, not a bare exit
    assert "outlived" not in output, output[-4000:]
