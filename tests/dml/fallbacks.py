"""Which lane calls the server ran on the host instead of DirectML, and why: read from the server's log."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc.v1 import operators_pb2
from tests.dml.conftest import WineServer
from tests.dml.lowering import fallback_cause
from tests.provider_cases import LaneClient

#: The server's WARNING when the device cannot build a desc's session (``Compiled`` runs it on the host).
FALLBACK_LINE = "could not build this operator's session"
#: The server's WARNING when a device session that built fails at run time (``Compiled._to_host``).
RUN_FALLBACK_LINE = "failed to run this operator's session"
#: The server's WARNING when the device takes only some of a session's nodes.
SPLIT_LINE = "leaves nodes"


def fell_back(lines: Sequence[str]) -> list[str]:
    """The server's lines saying that a call ran (wholly or partly) on the host."""
    return [line for line in lines if FALLBACK_LINE in line or RUN_FALLBACK_LINE in line or SPLIT_LINE in line]


class Fallbacks:
    """The descs a lane module's calls ran on the host: counted by operator and by cause (``lowering.fallback_cause``;
    ONNX Runtime's message where no known cause applies)."""

    def __init__(self) -> None:
        self.by_operator: Counter[str] = Counter()
        self.by_cause: Counter[str] = Counter()

    def client(self, dml_server: WineServer) -> LaneClient:
        """A client for the lane's server that counts the calls the server ran on the host."""

        def execute(desc: operators_pb2.OperatorDesc, inputs: Sequence[np.ndarray | None], **options: Any) -> list[Any]:
            starts, seen = dml_server.starts, len(dml_server.log)
            outputs = dml_server.execute(desc, inputs, **options)
            time.sleep(0.05)  # the server's log lines arrive through a pipe, read by another thread
            if lines := fell_back(dml_server.log[seen if dml_server.starts == starts else 0 :]):
                case = desc.WhichOneof("desc") or ""
                self.by_operator[case] += 1
                cause = fallback_cause(desc)
                reason = "" if cause != "other" else f": {lines[-1].partition('(')[2][:200]}"
                self.by_cause[f"{case}: {cause}{reason}"] += 1
            return outputs

        return LaneClient(execute, dml_server.connected)

    def report(self) -> str:
        """The counts, a line per cause."""
        return (
            f"run on the CPU provider instead (this device could not build them): {dict(self.by_operator)}\n"
            + "by cause:\n"
            + "\n".join(f"  {count} x {cause}" for cause, count in sorted(self.by_cause.items()))
        )
