"""Memory held between calls on the real DirectML provider (Wine lane): worker recycling bounds what sessions keep."""

from __future__ import annotations

import os

import numpy as np
import pytest

from dmlrpc import ops
from tests.dml.conftest import WineServer, stop_running

pytestmark = [pytest.mark.dml, pytest.mark.timeout(1200)]

#: Sessions the server's compile cache keeps; every desc after them evicts one.
CACHE_SIZE = 2
#: Sessions a worker process creates before its supervisor replaces it (--max-sessions-per-worker).
SESSIONS_PER_WORKER = 3
#: Distinct descs sent, each a DirectML session of its own: a recycle every third (about 2.3 s per desc here, a
#: recycle included; measured with consecutive ports, the old worker stopped before its replacement started: 90
#: descs in 3.4 minutes, 30 recycles, at most 2,783 MiB against a bound of 3,003).
DESCS = int(os.environ.get("DMLRPC_DML_MEMORY_DESCS", "15"))
#: What one DirectML session costs under lavapipe, at most (measured: 488 MiB of shared memory, a shader-visible
#: descriptor heap, plus about 33 MiB of anonymous memory).
SESSION_BYTES = 600 << 20

# NOTE: measured with tools/dml-wine/win/dml_wine_memory.py: plain ONNX Runtime sessions on DmlExecutionProvider
# (onnxruntime-directml 1.24.4), created, released and collected one after another, keep 488 MiB of shared memory
# each, exactly what one shader-visible descriptor heap costs under vkd3d + lavapipe; a descriptor heap (or device)
# created and released by hand gives its memory back. So the provider never releases a session's descriptor heap
# (or what holds it), whatever the server does with the session: evicting sessions cannot bound a process's memory
# (the server drops them at once anyway), only ending the process can. --max-sessions-per-worker does that: the
# supervisor replaces a worker once it has created that many sessions.


def test_distinct_descs_past_the_compile_cache_keep_memory_bounded(dml_environment: object) -> None:
    stop_running()  # the lane's own server, which may hold a full worker's 13 GB
    server = WineServer(cache_size=CACHE_SIZE, sessions_per_worker=SESSIONS_PER_WORKER)
    server.start()
    try:
        # NOTE: per process, not the sum: how many processes overlap while one hands over (the old worker waits for
        # its connections' age, its replacement serves meanwhile, and may be replaced in turn) depends on how fast
        # descs come, so a bound on the sum measured the machine's speed. What recycling bounds, whatever the pace, is
        # a worker process: its warm-up, and at most its sessions and the one a call waiting at its handover makes.
        started = server.resident_by_process()
        bound = max(started.values()) + (SESSIONS_PER_WORKER + 1) * SESSION_BYTES
        highest, most_processes = sum(started.values()), len(started)
        for index in range(DESCS):
            x = np.arange(8 + index, dtype=np.float32)
            call = ops.element_wise("add", x, x)
            (output,) = server.execute(call.operator_desc, call.inputs)
            assert output is not None and np.array_equal(output, x + x)
            held = server.resident_by_process()
            highest, most_processes = max(highest, sum(held.values())), max(most_processes, len(held))
            largest = max(held.values())
            assert largest <= bound, (
                f"after {index + 1} distinct descs (cache of {CACHE_SIZE}, a new worker every {SESSIONS_PER_WORKER} "
                f"sessions) one of the server's processes holds {largest >> 20} MiB, more than {bound >> 20} MiB"
            )
        recycles = server.recycles
        print(
            f"{DESCS} distinct descs, {recycles} worker recycles, {sum(started.values()) >> 20} MiB at the start, "
            f"{highest >> 20} MiB at most over {most_processes} processes at most (a process's bound {bound >> 20} MiB)"
        )
        assert recycles >= DESCS // SESSIONS_PER_WORKER - 1  # the bound held because workers were replaced
    finally:
        server.stop()
