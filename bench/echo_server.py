"""A bare gRPC echo server on dmlrpc's Execute method path: the response is the request's bytes, unparsed; mode
``aio-onnx`` also runs one ONNX Runtime TopK per call (the floor of any per-call server on grpc.aio)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

SERVICE = "dmlrpc.v1.DirectMLService"
METHOD = "Execute"
#: Message size limits off (-1), as the baseline must accept the same payloads as the real server.
OPTIONS = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def _identity(data: bytes) -> bytes:
    return data


def _announce(port: int, mode: str) -> None:
    # The parent parses this line, as it parses the real server's "listening on" log line.
    sys.stderr.write(f"echo server ({mode}) listening on 127.0.0.1:{port}\n")
    sys.stderr.flush()


def _top_k_run() -> Callable[[], object]:
    """One TopK of [1, 1, 3, 4] (K=2, axis 3, the tiny scenario's operator) in a session made with the server's own
    session options for the CPU provider: a call that runs it once, on a fixed input."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from dmlrpc_server.runtime.providers import choose_provider

    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=3)
    graph = helper.make_graph(
        [node],
        "top_k",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 4])],
        [
            helper.make_tensor_value_info("values", TensorProto.FLOAT, [1, 1, 3, 2]),
            helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 1, 3, 2]),
        ],
        [helper.make_tensor("k", TensorProto.INT64, [1], [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    cpu = choose_provider("cpu")
    session = ort.InferenceSession(model.SerializeToString(), cpu.session_options(), providers=cpu.providers())
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)}
    run = session._sess.run  # as the server calls it: no wrapper-side validation
    values, indices = run(["values", "indices"], feeds, None)
    # A floor that ran nothing would be no floor: the session must really compute the top 2 of each row.
    if values.ravel().tolist() != [3, 2, 7, 6, 11, 10] or indices.ravel().tolist() != [3, 2, 3, 2, 3, 2]:
        raise RuntimeError(f"the floor's TopK returned {values.ravel()} / {indices.ravel()}")
    return lambda: run(["values", "indices"], feeds, None)


async def _serve_aio(port: int, onnx_run: bool = False) -> None:
    top_k = _top_k_run() if onnx_run else None

    async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        if top_k is not None:
            top_k()
        return request

    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        {METHOD: grpc.unary_unary_rpc_method_handler(echo, _identity, _identity)},
    )
    server = grpc.aio.server(options=OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    _announce(bound, "aio-onnx" if onnx_run else "aio")
    await server.wait_for_termination()


def _serve_sync(port: int, threads: int) -> None:
    def echo(request: bytes, context: grpc.ServicerContext) -> bytes:
        return request

    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        {METHOD: grpc.unary_unary_rpc_method_handler(echo, _identity, _identity)},
    )
    server = grpc.server(ThreadPoolExecutor(max_workers=threads), options=OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    _announce(bound, "sync")
    server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["aio", "aio-onnx", "sync"], default="aio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--threads", type=int, default=16, help="thread pool size of the sync server")
    args = parser.parse_args()
    try:
        if args.mode in ("aio", "aio-onnx"):
            asyncio.run(_serve_aio(args.port, onnx_run=args.mode == "aio-onnx"))
        else:
            _serve_sync(args.port, args.threads)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
