"""glibc's malloc tuning: applied in process (tune_malloc) or through the environment (malloc_environment) alike."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from dmlrpc_server.runtime.memory import ARENAS, malloc_environment

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only"
)

#: Threads alive at once, each allocating: more than the cap, fewer than glibc's own limit (eight arenas a core).
THREADS = 6

#: A process whose threads all allocate while alive together, then prints glibc's malloc statistics: one
#: "Arena N:" block per arena (to stderr).
_PROGRAM = textwrap.dedent(
    f"""
    import ctypes, sys, threading
    if sys.argv[1] == "tune":
        from dmlrpc_server.runtime.memory import tune_malloc
        assert tune_malloc(64 << 20)
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    together = threading.Barrier({THREADS})
    def allocate():
        assert libc.malloc(4096)  # a thread takes its arena at its first allocation
        together.wait()
    threads = [threading.Thread(target=allocate) for _ in range({THREADS})]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    libc.malloc_stats()
    """
)


def _arenas(mode: str, env: dict[str, str]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, mode],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.count("Arena ")


def test_the_environment_caps_arenas_as_tune_malloc_does() -> None:
    # Without tuning every thread allocating at once gets an arena of its own: what the cap is there to bound.
    assert _arenas("plain", {}) > ARENAS
    assert _arenas("tune", {}) == ARENAS
    # The benchmarks' floors take the same tuning through the environment (bench/procs.server_malloc_environment).
    assert _arenas("plain", malloc_environment(64 << 20)) == ARENAS


def test_the_environment_names_each_setting_as_glibc_reads_it() -> None:
    env = malloc_environment(64 << 20)
    assert env == {
        "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
        "MALLOC_TRIM_THRESHOLD_": str(64 << 20),
        "MALLOC_TOP_PAD_": str(64 << 20),
        "MALLOC_ARENA_MAX": str(ARENAS),
    }
    # A retain past what mallopt's int takes is clamped, as tune_malloc clamps it.
    assert malloc_environment(1 << 40)["MALLOC_TRIM_THRESHOLD_"] == str(2**31 - 1)
