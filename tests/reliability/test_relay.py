"""The relay (--worker-ports relayed) on real sockets: what a worker sent before its side ended reaches the client."""

from __future__ import annotations

import asyncio
import socket
import struct
import sys

import pytest

from dmlrpc_server.relay import Relay

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="waits on the worker's send queue (TIOCOUTQ)")

RESPONSE = bytes(range(256)) * 1536  # 384 KiB: more than the client's socket takes unread


async def _sent(sock: socket.socket) -> None:
    """Until the peer's kernel has acknowledged every byte written to ``sock`` (its send queue is empty)."""
    import fcntl
    import termios

    while struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]:
        await asyncio.sleep(0.005)


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
