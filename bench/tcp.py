"""Raw TCP loopback baseline: a Python echo process and a client that sends N bytes and reads them back."""

from __future__ import annotations

import argparse
import contextlib
import socket
import struct
import sys
import time

_HEADER = struct.Struct("!Q")
_CHUNK = 1 << 20


def _recv_exact(sock: socket.socket, view: memoryview) -> None:
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:], min(len(view) - got, 16 * _CHUNK))
        if n == 0:
            raise ConnectionError("peer closed")
        got += n


def serve(port: int) -> None:
    """Echo length-prefixed messages back, one connection at a time (received into a reused buffer)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(4)
    sys.stderr.write(f"tcp echo listening on 127.0.0.1:{listener.getsockname()[1]}\n")
    sys.stderr.flush()
    buffer = bytearray()
    header = bytearray(_HEADER.size)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            try:
                while True:
                    _recv_exact(conn, memoryview(header))
                    (size,) = _HEADER.unpack(header)
                    if len(buffer) < size:
                        buffer = bytearray(size)
                    view = memoryview(buffer)[:size]
                    _recv_exact(conn, view)
                    conn.sendall(view)
            except ConnectionError:
                continue


class TcpClient:
    """Round trips of ``size`` bytes to a ``serve`` process; the receive buffer is allocated once."""

    def __init__(self, address: str) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = bytearray()

    def round_trip(self, payload: bytes) -> float:
        """Send ``payload`` and read it back; returns the seconds taken."""
        if len(self._buffer) < len(payload):
            self._buffer = bytearray(len(payload))
        view = memoryview(self._buffer)[: len(payload)]
        start = time.perf_counter()
        self.sock.sendall(_HEADER.pack(len(payload)))
        # The server echoes only after the whole message arrived, so sending all first cannot deadlock.
        self.sock.sendall(payload)
        _recv_exact(self.sock, view)
        return time.perf_counter() - start

    def close(self) -> None:
        self.sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    with contextlib.suppress(KeyboardInterrupt):
        serve(parser.parse_args().port)


if __name__ == "__main__":
    main()
