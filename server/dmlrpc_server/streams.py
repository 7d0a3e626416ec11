"""Chunked streams (ExecuteStream, CreateTensor, ReadTensor): the start message, declared lengths, chunks in and out."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import numpy as np
import onnxruntime as ort
from google.protobuf.message import DecodeError, Message

from dmlrpc.codec import TensorLayout, decode
from dmlrpc.v1 import service_pb2
from dmlrpc.wire import decode_chunk, encode_chunk
from dmlrpc_server.errors import DeadlineExceeded, InvalidArgument, ResourceExhausted
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.resident import ResidentStore

T = TypeVar("T")


def idle_error(seconds: float) -> DeadlineExceeded:
    return DeadlineExceeded(
        f"no message from the client for {seconds:g} s (--stream-idle-seconds); the stream was ended: send without "
        "pausing, or raise --stream-idle-seconds"
    )


async def next_part(parts: AsyncIterator[T], idle: float | None) -> T | None:
    """The stream's next message, or ``None`` at its end.

    Raises:
        DeadlineExceeded: ``idle`` seconds passed without one (a caller that stops sending holds no more than this).
    """
    if idle is None:
        return await anext(parts, None)
    try:
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(idle):  # NOTE: no task per message, unlike wait_for
                return await anext(parts, None)
        return await asyncio.wait_for(anext(parts, None), idle)  # pragma: no cover - Python 3.10
    except (TimeoutError, asyncio.TimeoutError):
        raise idle_error(idle) from None


async def parse_stream_start(
    parts: AsyncIterator[bytes], message: type[Message], method: str, idle: float | None = None
) -> Any:
    """The ``start`` part of a stream's first message (a ``message``), or INVALID_ARGUMENT."""
    raw = await next_part(parts, idle)
    try:
        first: Any = None if raw is None else message.FromString(raw)
    except DecodeError:
        raise InvalidArgument("start", f"a {method} message is not a valid {message.__name__}") from None
    if first is None or first.WhichOneof("part") != "start":
        raise InvalidArgument("start", f"the first message of {method} must be `start`")
    return first.start


def declared_lengths(compiled: Compiled, declared: Sequence[int], limits: Limits) -> list[int]:
    """ExecuteStreamStart.input_bytes checked against the desc's layouts and the size limits."""
    layouts = compiled.plan.inputs
    if len(declared) != len(layouts):
        raise InvalidArgument(
            "start.input_bytes",
            f"{len(declared)} lengths for {len(layouts)} input buffers; give each in order (a tensor-array field "
            "takes one per tensor)",
        )
    for i, (length, layout) in enumerate(zip(declared, layouts, strict=True)):
        field = f"start.input_bytes[{i}]"
        if layout is None and length:
            raise InvalidArgument(field, "the tensor desc is unset, so its length must be 0")
        if layout is not None and length < layout.total_bytes:
            raise InvalidArgument(
                field,
                f"{length} bytes is shorter than the tensor's total_tensor_size_in_bytes ({layout.total_bytes})",
            )
        if length > limits.max_tensor_bytes:
            raise ResourceExhausted(
                f"{field} = {length} exceeds the limit of {limits.max_tensor_bytes} bytes per tensor (the server's "
                "--max-tensor-bytes)"
            )
    if sum(declared) > limits.max_request_bytes:
        raise ResourceExhausted(
            f"start.input_bytes total {sum(declared)} bytes, over the limit of {limits.max_request_bytes} (the "
            "server's --max-request-bytes)"
        )
    return list(declared)


async def stream_outputs(views: Sequence[memoryview | None], chunk_bytes: int) -> AsyncIterator[bytes]:
    """Each output view's bytes as TensorChunk messages of at most ``chunk_bytes``."""
    for index, view in enumerate(views):
        if view is None:
            continue
        for offset in range(0, len(view), chunk_bytes):
            yield encode_chunk(index, view[offset : offset + chunk_bytes])


def upload(store: ResidentStore, buffer: np.ndarray, layout: TensorLayout) -> np.ndarray | ort.OrtValue:
    """A received buffer as a packed tensor on the resident store's device."""
    return store.device.upload(np.array(decode(buffer, layout)))


def _parse_request(raw: bytes) -> service_pb2.ExecuteStreamRequest:
    try:
        return service_pb2.ExecuteStreamRequest.FromString(raw)
    except DecodeError:
        raise InvalidArgument("start", "an ExecuteStream message is not a valid ExecuteStreamRequest") from None


def _chunk_of(raw: bytes) -> tuple[int, memoryview]:
    try:
        chunk = decode_chunk(raw)
    except ValueError as error:
        raise InvalidArgument("chunk", f"a malformed chunk message: {error}") from None
    if chunk is not None:
        return chunk
    part = _parse_request(raw)  # a chunk protobuf wrote differently, or a second start
    if part.WhichOneof("part") != "chunk":
        raise InvalidArgument("start", "`start` may come only once, first")
    return part.chunk.binding, memoryview(part.chunk.data)


async def receive(
    parts: AsyncIterator[bytes],
    buffers: Sequence[np.ndarray | None],
    declared: str = "start.input_bytes",
    idle: float | None = None,
) -> None:
    """Fill each binding's buffer from the chunks, checking every chunk lands inside its declared length
    (``declared``: the field that declared the lengths, for errors); ``idle``: the longest wait for a chunk."""
    filled = [0] * len(buffers)
    while (raw := await next_part(parts, idle)) is not None:
        index, data = _chunk_of(raw)
        if index >= len(buffers) or buffers[index] is None:
            raise InvalidArgument("chunk.binding", f"binding {index} takes no bytes (see {declared})")
        target = buffers[index]
        assert target is not None
        end = filled[index] + len(data)
        if end > len(target):
            raise InvalidArgument(
                "chunk.data",
                f"binding {index} receives more than the {len(target)} bytes declared in {declared}",
            )
        target[filled[index] : end] = np.frombuffer(data, np.uint8)  # the one copy of the data on this side
        filled[index] = end
    for index, (count, buffer) in enumerate(zip(filled, buffers, strict=True)):
        if buffer is not None and count != len(buffer):
            field = f"{declared}[{index}]" if declared == "start.input_bytes" else declared
            raise InvalidArgument(field, f"the stream ended after {count} of the {len(buffer)} bytes declared")
