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
        # Supervisor and worker with its warm-up session; a worker then adds at most its sessions' worth, and while
        # it hands over (the replacement listens before it stops, so that no call is lost) its replacement runs
        # beside it: another worker with its warm-up, and the session of the desc it serves meanwhile.
        started = server.resident_bytes()
        bound = 2 * started + (SESSIONS_PER_WORKER + 1) * SESSION_BYTES
        highest = started
        for index in range(DESCS):
            x = np.arange(8 + index, dtype=np.float32)
            call = ops.element_wise("add", x, x)
            (output,) = server.execute(call.operator_desc, call.inputs)
            assert output is not None and np.array_equal(output, x + x)
            held = server.resident_bytes()
            highest = max(highest, held)
            assert held <= bound, (
                f"after {index + 1} distinct descs (cache of {CACHE_SIZE}, a new worker every {SESSIONS_PER_WORKER} "
                f"sessions) the server's processes hold {held >> 20} MiB, {(held - started) >> 20} MiB more than at "
                "the start"
            )
        recycles = server.recycles
        print(
            f"{DESCS} distinct descs, {recycles} worker recycles, {started >> 20} MiB at the start, "
            f"{highest >> 20} MiB at most (bound {bound >> 20} MiB)"
        )
        assert recycles >= DESCS // SESSIONS_PER_WORKER - 1  # the bound held because workers were replaced
    finally:
        server.stop()
