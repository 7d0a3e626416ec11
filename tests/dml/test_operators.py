"""Every executable operator on the real DirectML provider (Wine lane): the tests of tests/ops (doc examples, and
a sample of each property test) run against the server under Wine, with the same NumPy references."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from dmlrpc.v1 import operators_pb2
from tests.dml.conftest import WineServer
from tests.dml.lowering import fallback_cause
from tests.dml.test_element_wise import FALLBACK_LINE, RUN_FALLBACK_LINE
from tests.ops.test_element_wise import OPERATORS as ELEMENT_WISE
from tests.provider_cases import LaneClient, not_run, operator_tests

pytestmark = [pytest.mark.dml, pytest.mark.timeout(1200)]

#: Generated examples per property test: each new desc is a new DirectML session (about a second under lavapipe).
EXAMPLES = int(os.environ.get("DMLRPC_DML_OPERATOR_EXAMPLES", "1"))
#: Operator cases whose session this device could not build (or left nodes of to the host), and how often: the
#: server ran them on the CPU provider. Printed at the end; tests/dml/test_element_wise.py pins the known causes.
FALLBACKS: Counter[str] = Counter()
#: The same by cause (``lowering.fallback_cause``; ONNX Runtime's message where no known cause applies).
CAUSES: Counter[str] = Counter()


def _reason(lines: Sequence[str]) -> str:
    """The server's fallback WARNING, from the provider's message on."""
    line = next(line for line in lines if FALLBACK_LINE in line or RUN_FALLBACK_LINE in line or "leaves nodes" in line)
    return line.partition("(")[2][:200]


@pytest.fixture(scope="module")
def client(dml_server: WineServer) -> LaneClient:
    def execute(desc: operators_pb2.OperatorDesc, inputs: Sequence[np.ndarray | None], **options: Any) -> list[Any]:
        starts, seen = dml_server.starts, len(dml_server.log)
        outputs = dml_server.execute(desc, inputs, **options)
        time.sleep(0.05)  # the server's log lines arrive through a pipe, read by another thread
        new = dml_server.log[seen if dml_server.starts == starts else 0 :]
        if any(FALLBACK_LINE in line or RUN_FALLBACK_LINE in line or "leaves nodes" in line for line in new):
            FALLBACKS[desc.WhichOneof("desc") or ""] += 1
            reason = "" if (cause := fallback_cause(desc)) != "other" else f": {_reason(new)}"
            CAUSES[f"{desc.WhichOneof('desc')}: {cause}{reason}"] += 1
        return outputs

    return LaneClient(execute, dml_server.connected)


# The element-wise and activation operators have their own lane test (test_element_wise.py).
globals().update(operator_tests(EXAMPLES, exclude={"element_wise"}))


def test_every_executable_operator_ran_on_directml(client: LaneClient) -> None:
    # Collected last: by now every moved test has run its operator on the lane's server.
    print(f"\noperator cases run on DirectML: {dict(sorted(client.cases.items()))}")
    print(f"of those, run on the CPU provider instead (this device could not build them): {dict(FALLBACKS)}")
    print("by cause:\n" + "\n".join(f"  {count} x {cause}" for cause, count in sorted(CAUSES.items())))
    assert not not_run(client.cases, covered=ELEMENT_WISE)
