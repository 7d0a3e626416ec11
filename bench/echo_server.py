"""A bare gRPC echo server on dmlrpc's Execute method path: the response is the request's bytes, unparsed; mode
``aio-onnx`` also runs one ONNX Runtime TopK per call (the floor of any per-call server on grpc.aio), mode
``aio-parse`` parses the ExecuteRequest with protobuf, runs that TopK on its input and answers a real
ExecuteResponse built and serialized by protobuf (the floor of any per-call Execute server on grpc.aio), and mode
``aio-top-k`` answers the top-k of a [1, C] row read from the request, alone per call or in dynamic batches (the
floor of batching on grpc.aio; with ``--parse`` it parses each ExecuteRequest and answers a real ExecuteResponse, both
by protobuf, as the per-call floor does)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
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


def top_k_model(shape: list[int | str], axis: int, k: int) -> Any:
    """An ONNX TopK model (K = ``k`` along ``axis``) of a FLOAT32 input ``x`` of ``shape`` (a name: a symbolic
    dimension): outputs ``values`` and (INT64) ``indices``."""
    from onnx import TensorProto, helper

    out = [*shape[:axis], k, *shape[axis + 1 :]]
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis)
    graph = helper.make_graph(
        [node],
        "top_k",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [
            helper.make_tensor_value_info("values", TensorProto.FLOAT, out),
            helper.make_tensor_value_info("indices", TensorProto.INT64, out),
        ],
        [helper.make_tensor("k", TensorProto.INT64, [1], [k])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _top_k_session(shape: list[int | str], axis: int, k: int, provider: str) -> Callable[[Any], tuple[Any, Any]]:
    """``top_k_model`` in a session made with the server's own session options for ``provider``; the callable runs
    it as the server runs its sessions (no wrapper-side validation) and returns the values and the indices."""
    import onnxruntime as ort

    from dmlrpc_server.runtime.providers import choose_provider

    model = top_k_model(shape, axis, k)
    chosen = choose_provider(provider)
    session = ort.InferenceSession(model.SerializeToString(), chosen.session_options(), providers=chosen.providers())
    run = session._sess.run

    def top_k(x: Any) -> tuple[Any, Any]:
        values, indices = run(["values", "indices"], {"x": x}, None)
        return values, indices

    return top_k


def _top_k_run() -> Callable[[], object]:
    """One TopK of [1, 1, 3, 4] (K=2, axis 3, the tiny scenario's operator) on the CPU provider: a call that runs it
    once, on a fixed input."""
    import numpy as np

    top_k = _top_k_session([1, 1, 3, 4], 3, 2, "cpu")
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    values, indices = top_k(x)
    # A floor that ran nothing would be no floor: the session must really compute the top 2 of each row.
    if values.ravel().tolist() != [3, 2, 7, 6, 11, 10] or indices.ravel().tolist() != [3, 2, 3, 2, 3, 2]:
        raise RuntimeError(f"the floor's TopK returned {values.ravel()} / {indices.ravel()}")
    return lambda: top_k(x)


async def _serve_aio(port: int, onnx_run: bool = False) -> None:
    top_k = _top_k_run() if onnx_run else None

    async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        if top_k is not None:
            top_k()
        return request

    await _serve_unary(port, echo, "aio-onnx" if onnx_run else "aio")


def response_writer() -> Callable[[Any, Any], bytes]:
    """The ExecuteResponse of a top-k's values and indices, built and serialized by protobuf (indices as DirectML's
    UINT32), its names looked up once."""
    import numpy as np

    from dmlrpc.v1 import service_pb2

    response, binding, buffer = service_pb2.ExecuteResponse, service_pb2.BindingDesc, service_pb2.BufferBinding
    uint32 = np.uint32

    def write(values: Any, indices: Any) -> bytes:
        return response(
            outputs=[
                binding(buffer=buffer(data=values.tobytes())),
                binding(buffer=buffer(data=indices.astype(uint32).tobytes())),
            ]
        ).SerializeToString()

    return write


def tiny_response_bytes(x: Any) -> int:
    """The length of the parsing floor's answer to the tiny top-k (K = 2 on the last axis) of ``x``: what proves
    that its calls under load were answered."""
    import numpy as np

    order = np.argsort(-x, axis=-1, kind="stable")[..., :2]
    return len(response_writer()(np.take_along_axis(x, order, axis=-1), order))


def top_k_response_bytes(k: int, parse: bool = False) -> int:
    """The length of the top-k floor's (``aio-top-k``) answer: its row's K values (FLOAT32) and indices (INT64), or
    with ``parse`` the ExecuteResponse of them (``response_writer``'s)."""
    if not parse:
        return 12 * k
    import numpy as np

    return len(response_writer()(np.zeros(k, np.float32), np.zeros(k, np.int64)))


def parsing_floor() -> Callable[[bytes, Any], Awaitable[bytes]]:
    """The parsing floor's handler: protobuf parses the ExecuteRequest, the prebuilt tiny TopK session runs on the
    loop, protobuf builds and serializes the ExecuteResponse (``bench/stages.py`` times it in process)."""
    import numpy as np

    from dmlrpc.v1 import service_pb2

    _top_k_run()  # checks the session computes
    top_k = _top_k_session([1, 1, 3, 4], 3, 2, "cpu")
    parse = service_pb2.ExecuteRequest.FromString
    write = response_writer()
    frombuffer, float32 = np.frombuffer, np.float32

    async def answer(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        parsed = parse(request)
        values, indices = top_k(frombuffer(parsed.inputs[0].buffer.data, float32).reshape(1, 1, 3, 4))
        return write(values, indices)

    return answer


async def _serve_parsing(port: int) -> None:
    await _serve_unary(port, parsing_floor(), "aio-parse")


def infer_floor(path: str) -> Callable[[bytes, Any], Awaitable[bytes]]:
    """The Open Inference Protocol floor's handler: ModelInfer parsed by protobuf, the model (the file a repository
    serves, in a session made as the repository makes its sessions) run on the loop on the raw input, a
    ModelInferResponse with raw outputs written by protobuf (``bench/stages.py`` times it in process)."""
    import numpy as np
    import onnxruntime as ort

    from dmlrpc_server.oip.protocol import service_pb2
    from dmlrpc_server.runtime.providers import choose_provider

    options = choose_provider("cpu").session_options()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
    run = session._sess.run
    names = [output.name for output in session.get_outputs()]
    types = {"FP32": np.float32}
    parse, response = service_pb2.ModelInferRequest.FromString, service_pb2.ModelInferResponse
    tensor = service_pb2.ModelInferResponse.InferOutputTensor
    datatypes = {np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64"}

    async def answer(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        parsed = parse(request)
        first = parsed.inputs[0]
        x = np.frombuffer(parsed.raw_input_contents[0], types[first.datatype]).reshape(tuple(first.shape))
        outputs = run(names, {first.name: x}, None)
        return response(
            model_name=parsed.model_name,
            id=parsed.id,
            outputs=[
                tensor(name=name, datatype=datatypes[array.dtype], shape=array.shape)
                for name, array in zip(names, outputs, strict=True)
            ],
            raw_output_contents=[array.tobytes() for array in outputs],
        ).SerializeToString()

    return answer


async def _serve_infer(port: int, path: str) -> None:
    """The Open Inference Protocol's floor (``infer_floor``) on the loop."""
    await _serve_unary(
        port, infer_floor(path), "aio-infer", service="inference.GRPCInferenceService", method="ModelInfer"
    )


async def _serve_unary(
    port: int, answer: Callable[..., Awaitable[bytes]], mode: str, *, service: str = SERVICE, method: str = METHOD
) -> None:
    """An aio server answering ``method`` (Execute) with ``answer`` (raw bytes in and out) until it is stopped."""
    handler = grpc.method_handlers_generic_handler(
        service,
        {method: grpc.unary_unary_rpc_method_handler(answer, _identity, _identity)},
    )
    server = grpc.aio.server(options=OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    _announce(bound, mode)
    await server.wait_for_termination()


@dataclass(frozen=True)
class TopK:
    """The top-k floor's operator: TOP_K1 of a [1, ``columns``] FLOAT32 row, K = ``k``, on ``provider``."""

    columns: int
    k: int
    provider: str


def _top_k_rows(spec: TopK) -> tuple[Callable[[Any], tuple[Any, Any]], int]:
    """A session running ONNX TopK over [rows, columns] on the provider (``_top_k_session``) and the byte offset
    of the row's data in the Execute request the benchmarks send (ExecuteRequest of ``ops.top_k``)."""
    import numpy as np

    from dmlrpc import ops
    from dmlrpc._base import prepare_execute

    top_k = _top_k_session(["rows", spec.columns], 1, spec.k, spec.provider)
    # The row's bytes sit at one offset in every request of this shape: found once, on a marked row.
    marker = np.arange(spec.columns, dtype=np.float32)
    call = ops.top_k(marker[None], spec.k)
    message = prepare_execute(call.operator_desc, call.inputs).request.SerializeToString()
    offset = message.find(marker.tobytes())
    check = np.random.default_rng(0).standard_normal((3, spec.columns), dtype=np.float32)
    values, indices = top_k(check)
    # A floor that ran nothing would be no floor: the session must really compute each row's top K.
    expected = -np.sort(-check, axis=1)[:, : spec.k]
    picked = np.take_along_axis(check, indices, axis=1)
    if offset < 0 or not (np.array_equal(values, expected) and np.array_equal(picked, expected)):
        raise RuntimeError(f"the top-k floor is wrong (offset {offset})")
    return top_k, offset


class _Batches:
    """Dynamic batching at its barest: rows that arrive while a run is under way wait, then run as one (up to
    ``size``); each row's answer (``answer`` of its values and indices) is made with the run, and the answers go
    back to the event loop once per batch."""

    def __init__(
        self,
        top_k: Callable[[Any], tuple[Any, Any]],
        answer: Callable[[Any, Any], bytes],
        size: int,
        threads: ThreadPoolExecutor,
    ) -> None:
        self.top_k = top_k
        self.answer = answer
        self.size = size
        self.threads = threads
        self.waiting: list[tuple[Any, asyncio.Future[bytes]]] = []
        self.busy = False
        self.loop = asyncio.get_running_loop()
        import numpy as np

        self._stack = np.stack

    def submit(self, row: Any) -> asyncio.Future[bytes]:
        future: asyncio.Future[bytes] = self.loop.create_future()
        self.waiting.append((row, future))
        if not self.busy:
            self._start()
        return future

    def _start(self) -> None:
        batch = self.waiting[: self.size]
        del self.waiting[: self.size]
        self.busy = True
        work = self.threads.submit(self._run, [row for row, _ in batch])
        work.add_done_callback(lambda done: self.loop.call_soon_threadsafe(self._finished, batch, done))

    def _run(self, rows: list[Any]) -> list[bytes]:
        values, indices = self.top_k(self._stack(rows))
        answer = self.answer
        return [answer(values[i], indices[i]) for i in range(len(rows))]

    def _finished(self, batch: list[tuple[Any, asyncio.Future[bytes]]], done: Future[list[bytes]]) -> None:
        self.busy = False
        error = done.exception()
        for index, (_, future) in enumerate(batch):
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(done.result()[index])
        if self.waiting:
            self._start()


def _raw_answer(values: Any, indices: Any) -> bytes:
    """The bare top-k floor's answer: the row's values and indices, their bytes joined."""
    return values.tobytes() + indices.tobytes()


async def _serve_top_k(port: int, spec: TopK, batch_size: int, threads: int, parse: bool) -> None:
    import numpy as np

    from dmlrpc.v1 import service_pb2

    top_k, offset = _top_k_rows(spec)
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="floor")
    loop = asyncio.get_running_loop()
    respond = response_writer() if parse else _raw_answer
    batches = _Batches(top_k, respond, batch_size, pool)
    row_bytes = 4 * spec.columns
    parse_request = service_pb2.ExecuteRequest.FromString

    def alone(row: Any) -> bytes:
        values, indices = top_k(row[None])
        return respond(values[0], indices[0])

    async def answer(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        if parse:
            # The row is the parsed request's first input, as protobuf hands it over (a copy of its bytes).
            data = parse_request(request).inputs[0].buffer.data
            if len(data) != row_bytes:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a top-k request of this floor's shape")
            row = np.frombuffer(data, dtype=np.float32)
        else:
            if len(request) < offset + row_bytes:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a top-k request of this floor's shape")
            row = np.frombuffer(request, dtype=np.float32, count=spec.columns, offset=offset)
        if batch_size > 1:
            return await batches.submit(row)
        return await loop.run_in_executor(pool, alone, row)

    await _serve_unary(port, answer, f"aio-top-k, batch {batch_size}{', parsing' if parse else ''}")


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
    modes = ["aio", "aio-onnx", "aio-parse", "aio-infer", "aio-top-k", "sync"]
    parser.add_argument("--mode", choices=modes, default="aio")
    parser.add_argument("--model", help="aio-infer: the ONNX model file")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--threads", type=int, help="thread pool size (default: 16 for sync, the CPU count for aio-top-k)"
    )
    parser.add_argument("--provider", default="cpu", help="aio-top-k: the ONNX Runtime provider (cpu, cuda, ...)")
    parser.add_argument("--columns", type=int, default=32000, help="aio-top-k: the row length")
    parser.add_argument("--k", type=int, default=8, help="aio-top-k: K")
    parser.add_argument("--batch-size", type=int, default=64, help="aio-top-k: rows a run may batch (1: off)")
    parser.add_argument(
        "--parse",
        action="store_true",
        help="aio-top-k: parse each ExecuteRequest and answer a real ExecuteResponse (protobuf both ways)",
    )
    args = parser.parse_args()
    try:
        if args.mode == "aio-top-k":
            spec = TopK(args.columns, args.k, args.provider)
            asyncio.run(_serve_top_k(args.port, spec, args.batch_size, args.threads or os.cpu_count() or 1, args.parse))
        elif args.mode == "aio-infer":
            asyncio.run(_serve_infer(args.port, args.model))
        elif args.mode == "aio-parse":
            asyncio.run(_serve_parsing(args.port))
        elif args.mode in ("aio", "aio-onnx"):
            asyncio.run(_serve_aio(args.port, onnx_run=args.mode == "aio-onnx"))
        else:
            _serve_sync(args.port, args.threads or 16)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
