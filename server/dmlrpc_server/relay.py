"""--worker-ports relayed: the supervisor holds --port and relays each connection to a worker's private port."""

# NOTE: where SO_REUSEPORT is missing (Windows), no two processes can listen on one port, so a recycled worker's
# replacement cannot take over its port while it finishes its calls: the port would go unanswered (refused
# connections) between the two. The supervisor, which never recycles, holds the port instead; a worker listens on
# a loopback port of its own, and each accepted connection goes to a worker's current process. A recycled process
# gets no new connection once its replacement listens, and ends its own ones with GOAWAY, as on a shared port.

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

_log = logging.getLogger(__name__)

#: The loopback address workers listen on behind the relay.
WORKER_HOST = "127.0.0.1"
#: Bytes read from one side before they are written to the other (a tensor of MiB crosses in a few reads).
_READ_BYTES = 1 << 18
#: How long a connection one side has ended waits for the other side to end too, before the relay closes it.
_LINGER_SECONDS = 10.0


class Relay:
    """A TCP listener whose connections are each joined to a worker port that ``route`` picks (``None``: none is
    serving; the connection is closed)."""

    def __init__(self, route: Callable[[], Awaitable[int | None]]) -> None:
        self._route = route
        self._server: asyncio.Server | None = None
        self._joined: set[asyncio.Task[None]] = set()

    async def listen(self, host: str, port: int) -> int:
        """Listen on ``host``:``port`` (0: any free port); the port bound.

        Raises:
            OSError: the port cannot be bound (the message names --port).
        """
        try:
            self._server = await asyncio.start_server(self._accepted, host or None, port)
        except OSError as error:
            raise OSError(f"could not bind {host}:{port} (--port): {error.strerror or error}") from None
        return int(self._server.sockets[0].getsockname()[1])

    async def _accepted(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._joined.add(task)
        try:
            await self._join(client_reader, client_writer)
        finally:
            self._joined.discard(task)
            _close(client_writer)

    async def _join(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        port = await self._route()
        if port is None:
            return
        try:
            worker_reader, worker_writer = await asyncio.open_connection(WORKER_HOST, port)
        except OSError as error:
            # NOTE: the worker exited between the route and the connect (it died: a recycled one stops taking
            # connections before it exits); its replacement is routed to once it listens.
            _log.warning("relay: worker port %d refused a connection (%s); closing the client's", port, error)
            return
        try:
            pumps = [
                asyncio.ensure_future(_pump(client_reader, worker_writer)),
                asyncio.ensure_future(_pump(worker_reader, client_writer)),
            ]
            done, pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            if pending and all(pump.result() for pump in done):
                # NOTE: one side ended cleanly (a worker closing after its GOAWAY, or a client leaving): the other
                # learnt it behind everything sent before, and ends its side in turn. Closing at once would close a
                # socket with bytes unread (the client's window updates, pings, a stream the GOAWAY refused): TCP
                # then resets the connection, and the peer's stack may drop the last responses it has not yet read.
                _, pending = await asyncio.wait(pending, timeout=_LINGER_SECONDS)
            for pump in pending:
                pump.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        finally:
            _close(worker_writer)

    def close(self) -> None:
        """Stop listening and drop the connections still joined."""
        if self._server is not None:
            self._server.close()
        for task in list(self._joined):
            task.cancel()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """Copy ``reader`` to ``writer`` until ``reader`` ends, then end ``writer``'s direction (a half-close): True;
    False if either side failed."""
    try:
        while data := await reader.read(_READ_BYTES):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        return False
    return True


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()
