"""One tiny Execute traced through the real server: its functions and modules, and never a call back up."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pytest

import dmlrpc
import dmlrpc_server
from dmlrpc import ops
from tests.conftest import ServerThread, start_server

PACKAGE = Path(dmlrpc_server.__file__).parent
#: What the stages use rather than are: the metrics registry, and the error classes (built only when a call fails).
#: Subpackages (runtime/, operators/, oip/) are the libraries below the core and are not counted either.
NOT_CORE = {"metrics", "errors"}
MAX_FUNCTIONS = 8
MAX_MODULES = 6


def _core(frame: FrameType) -> str | None:
    """The core module of a frame's code (``None`` outside the serving core)."""
    path = Path(frame.f_code.co_filename)
    if path.parent != PACKAGE or path.stem in NOT_CORE:
        return None
    return path.stem


class Tracer:
    """Records, while on, each core function entered below ``DirectMLServicer.Execute`` and every call into a core
    module that is already further up the stack behind another module (a call back up)."""

    def __init__(self) -> None:
        self.on = False
        self.functions: dict[tuple[str, str], None] = {}
        self.climbs: list[str] = []

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.on or event != "call":
            return
        module = _core(frame)
        if module is None:
            return
        chain: list[str] = []
        below_execute = frame.f_code.co_qualname == "DirectMLServicer.Execute"
        caller = frame.f_back
        while caller is not None:
            if caller.f_code.co_qualname == "DirectMLServicer.Execute":
                below_execute = True
            above = _core(caller)
            if above is not None and (not chain or chain[-1] != above):
                chain.append(above)
            caller = caller.f_back
        if not below_execute:
            return
        self.functions[module, frame.f_code.co_qualname] = None
        # chain[0] is the nearest core module above: a call within it, or down from it, is fine; the callee's module
        # further up the stack, behind another module, is a call back up.
        if module in chain[1:] and (not chain or chain[0] != module):
            self.climbs.append(f"{chain[0] if chain else '?'} -> {module}.{frame.f_code.co_qualname}")


@pytest.fixture
def traced() -> Iterator[tuple[ServerThread, Tracer]]:
    tracer = Tracer()
    threading.setprofile(tracer)  # the server's event loop thread, started next, is profiled
    try:
        running = start_server()
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]
    try:
        yield running, tracer
    finally:
        running.stop()


def test_one_tiny_execute_passes_few_functions_in_few_modules_and_never_climbs(
    traced: tuple[ServerThread, Tracer],
) -> None:
    running, tracer = traced
    x = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
    call = ops.top_k(x, k=2, axis=3)
    with dmlrpc.Client(running.address) as client:
        client.execute(call.operator_desc, call.inputs)  # compiles: the traced call is the common one, a hit
        tracer.on = True
        values, _ = client.execute(call.operator_desc, call.inputs)
        tracer.on = False
    np.testing.assert_array_equal(values, [[[[11, 10], [9, 8], [7, 6]]]])
    functions = list(tracer.functions)
    modules = {module for module, _ in functions}
    assert ("servicer", "DirectMLServicer.Execute") in functions, functions
    assert len(functions) <= MAX_FUNCTIONS, functions
    assert len(modules) <= MAX_MODULES, modules
    assert tracer.climbs == []
