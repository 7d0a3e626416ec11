"""The relay (--worker-ports relayed) on real sockets: what a worker sent before its side ended reaches the client,
and the calls it accepted and left unanswered are sent again by the client itself."""

from __future__ import annotations

import asyncio
import socket
import struct
import sys
from concurrent import futures

import grpc
import pytest

from dmlrpc_server.relay import Relay

RESPONSE = bytes(range(256)) * 1536  # 384 KiB: more than the client's socket takes unread


async def _sent(sock: socket.socket) -> None:
    """Until the peer's kernel has acknowledged every byte written to ``sock`` (its send queue is empty)."""
    import fcntl
    import termios

    while struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]:
        await asyncio.sleep(0.005)


@pytest.mark.skipif(sys.platform != "linux", reason="waits on the worker's send queue (TIOCOUTQ)")
@pytest.mark.timeout(60)
@pytest.mark.parametrize("worker_ends", ["reset", "close"])
def test_a_client_gets_every_byte_a_worker_sent_before_its_side_ended(worker_ends: str) -> None:
    # The worker leaves the client's later bytes unread, as a gRPC server does with a stream its GOAWAY refused, so
    # its close resets the connection (or it resets it outright); the relay must still deliver what came before.
    async def scenario() -> tuple[bytes, str]:
        worker_ended = asyncio.Event()

        async def worker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readexactly(5)
            writer.write(RESPONSE)
            await writer.drain()
            sock = writer.get_extra_info("socket")
            await _sent(sock)
            if worker_ends == "reset":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.close()
            worker_ended.set()

        worker_server = await asyncio.start_server(worker, "127.0.0.1", 0)
        worker_port = worker_server.sockets[0].getsockname()[1]

        async def route() -> int:
            return int(worker_port)

        relay = Relay(route)
        port = await relay.listen("127.0.0.1", 0)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"hello" + b"unread" * 1000)
        # The client reads nothing until the worker's side has ended: the relay holds the rest meanwhile.
        await worker_ended.wait()
        received = bytearray()
        ending = "end of stream"
        try:
            while chunk := await reader.read(1 << 16):
                received += chunk
        except ConnectionResetError:
            ending = "reset"
        writer.close()
        relay.close()
        worker_server.close()
        return bytes(received), ending

    received, ending = asyncio.run(scenario())
    assert len(received) == len(RESPONSE) and received == RESPONSE
    assert ending == "end of stream"


def _frame(kind: int, stream: int, payload: bytes = b"", flags: int = 0) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload


async def _read_until_headers(reader: asyncio.StreamReader) -> int:
    """Read a client's preface and frames until its first HEADERS; that stream's id."""
    await reader.readexactly(24)
    while True:
        header = await reader.readexactly(9)
        await reader.readexactly(int.from_bytes(header[:3], "big"))
        if header[3] == 1:
            return int.from_bytes(header[5:9], "big") & 0x7FFFFFFF


@pytest.mark.timeout(60)
@pytest.mark.parametrize("goaway", ["final", "graceful only"])
def test_calls_a_worker_accepted_and_left_unanswered_are_sent_again_by_a_plain_client(
    goaway: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The first worker accepts the call (its GOAWAY names its stream) and ends the connection without answering,
    # as gRPC's Windows transport was seen to after a connection's age. The relay sends the client a GOAWAY below
    # that call, and a plain gRPC channel (no retry policy) sends it again by itself, on a new connection, which the
    # relay gives to a live worker. A GOAWAY that names every stream (gRPC's first, graceful one) accepts nothing
    # in particular: nothing is refused, and the call fails as it would without the relay; the relay's log says why.
    echo = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    echo.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("t.T", {"Echo": grpc.unary_unary_rpc_method_handler(lambda r, c: r)})]
    )
    echo_port = echo.add_insecure_port("127.0.0.1:0")
    echo.start()
    routed: list[int] = []

    async def scenario() -> bytes | str:
        async def dropping_worker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(_frame(0x4, 0))  # SETTINGS
            stream = await _read_until_headers(reader)
            last = stream if goaway == "final" else (1 << 31) - 1
            writer.write(_frame(0x7, 0, last.to_bytes(4, "big") + (0).to_bytes(4, "big")))
            await writer.drain()
            writer.close()

        dropping = await asyncio.start_server(dropping_worker, "127.0.0.1", 0)

        async def route() -> int:
            routed.append(len(routed))
            return int(dropping.sockets[0].getsockname()[1]) if len(routed) == 1 else echo_port

        relay = Relay(route)
        port = await relay.listen("127.0.0.1", 0)

        def call() -> bytes | str:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                try:
                    answer: bytes = channel.unary_unary("/t.T/Echo")(b"again", timeout=20)
                except grpc.RpcError as error:
                    return f"{error.code()} {error.details()}"
                return answer

        try:
            return await asyncio.get_running_loop().run_in_executor(None, call)
        finally:
            relay.close()
            dropping.close()

    try:
        outcome = asyncio.run(scenario())
    finally:
        echo.stop(None)
    if goaway == "final":
        assert outcome == b"again" and len(routed) == 2
    else:
        assert isinstance(outcome, str) and outcome.startswith("StatusCode.UNAVAILABLE"), outcome
        assert len(routed) == 1
        assert "1 calls (streams 1-1) left unanswered: the worker sent only a graceful GOAWAY" in caplog.text
