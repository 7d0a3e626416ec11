"""The KServe model server as a peer of bench/peers.py: ONNX models run by ONNX Runtime behind KServe's own gRPC
ModelInfer, its per-request logs off (run by the peer environment's Python, tools of bench/install-peers.sh)."""

from __future__ import annotations

import argparse
import logging
import socket
import sys
import threading
import time
from typing import Any

import numpy as np
import onnxruntime as ort
from kserve import Model, ModelServer
from kserve.protocol.infer_type import InferOutput, InferRequest, InferResponse

#: KServe's names of the NumPy types the TopK models answer with.
DATATYPES = {np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64"}


class OnnxModel(Model):  # type: ignore[misc] # the peer environment has no stubs
    """One ONNX model, run as KServe's documented custom model does: inputs as NumPy, outputs as raw bytes."""

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name)
        self.path = path
        self.session: ort.InferenceSession | None = None
        self.load()

    def load(self) -> bool:
        self.session = ort.InferenceSession(self.path, providers=["CPUExecutionProvider"])
        self.names = [output.name for output in self.session.get_outputs()]
        self.ready = True
        return True

    async def predict(self, payload: InferRequest, headers: Any = None, response_headers: Any = None) -> InferResponse:
        assert self.session is not None
        feeds = {tensor.name: tensor.as_numpy() for tensor in payload.inputs}
        results = self.session.run(self.names, feeds)
        outputs = []
        for name, array in zip(self.names, results, strict=True):
            output = InferOutput(name=name, shape=list(array.shape), datatype=DATATYPES[array.dtype])
            output.set_data_from_numpy(array, binary_data=True)
            outputs.append(output)
        return InferResponse(
            response_id=payload.id, model_name=self.name, infer_outputs=outputs, use_binary_outputs=True
        )


def _announce_when_listening(port: int) -> None:
    """Write the line bench/procs.py waits for once the gRPC port accepts connections."""
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.1)
    sys.stderr.write(f"kserve peer listening on 127.0.0.1:{port}\n")
    sys.stderr.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--grpc-port", type=int, required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--model", action="append", default=[], metavar="NAME=PATH", help="a model to serve")
    args = parser.parse_args()
    models = [OnnxModel(*spec.split("=", 1)) for spec in args.model]
    # Per-request logs off: KServe's gRPC logging interceptor logs every method at INFO.
    logging.getLogger("kserve").setLevel(logging.WARNING)
    logging.getLogger("kserve.trace").setLevel(logging.WARNING)
    threading.Thread(target=_announce_when_listening, args=(args.grpc_port,), daemon=True).start()
    ModelServer(grpc_port=args.grpc_port, http_port=args.http_port, enable_latency_logging=False, workers=1).start(
        models
    )


if __name__ == "__main__":
    main()
