"""--worker-ports relayed: the supervisor holds --port and relays each connection to a worker's private port."""

# NOTE: where SO_REUSEPORT is missing (Windows), no two processes can listen on one port, so a recycled worker's
# replacement cannot take over its port while it finishes its calls: the port would go unanswered (refused
# connections) between the two. The supervisor, which never recycles, holds the port instead; a worker listens on
# a loopback port of its own, and each accepted connection goes to a worker's current process. A recycled process
# gets no new connection once its replacement listens, and ends its own ones with GOAWAY, as on a shared port.

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

_log = logging.getLogger(__name__)

#: The loopback address workers listen on behind the relay.
WORKER_HOST = "127.0.0.1"
#: How long a connection whose other side has gone waits for its own peer to end it, before the relay closes it.
_LINGER_SECONDS = 10.0


class Relay:
    """A TCP listener whose connections are each joined to a worker port that ``route`` picks (``None``: none is
    serving; the connection is closed)."""

    def __init__(self, route: Callable[[], Awaitable[int | None]]) -> None:
        self.route = route
        self._server: asyncio.Server | None = None
        #: The connections joined or being joined.
        self.joins: set[_Join] = set()

    async def listen(self, host: str, port: int) -> int:
        """Listen on ``host``:``port`` (0: any free port); the port bound.

        Raises:
            OSError: the port cannot be bound (the message names --port).
        """
        loop = asyncio.get_running_loop()
        try:
            self._server = await loop.create_server(lambda: _Join(self).client, host or None, port)
        except OSError as error:
            raise OSError(f"could not bind {host}:{port} (--port): {error.strerror or error}") from None
        return int(self._server.sockets[0].getsockname()[1])

    def close(self) -> None:
        """Stop listening and drop the connections still joined."""
        if self._server is not None:
            self._server.close()
        for join in list(self.joins):
            join.abort()


# NOTE: protocols, not streams: a socket's bytes reach the other socket in the callback that received them, before
# the callback that says the connection was lost (a stream reader raises its error ahead of the bytes it still
# buffers, which dropped the last responses of a worker that reset its side after its GOAWAY). No task per
# direction either: a relayed message costs two callbacks.
class _Side(asyncio.Protocol):
    """One socket of a relayed connection: what it receives is written to its peer's socket."""

    def __init__(self, join: _Join, peer: _Side | None = None) -> None:
        self.join = join
        self.peer = peer
        self.transport: asyncio.Transport | None = None
        #: Whether its remote end has ended its direction (EOF).
        self.ended = False
        self.lost = False
        #: Bytes received before its peer was connected (a client's, while the worker's port is being found).
        self.held: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self is self.join.client:
            self.join.accepted()

    def data_received(self, data: bytes) -> None:
        peer = self.peer
        if peer is None:
            self.held.append(data)
        elif not peer.lost:
            assert peer.transport is not None
            peer.transport.write(data)
        # else: the peer has gone and this side is lingering (_Join.lost): nobody is left to read it.

    def eof_received(self) -> bool:
        self.ended = True
        self.join.ended(self)
        return True  # its own direction stays open: what the peer still sends is written to it

    def pause_writing(self) -> None:
        # Its socket takes bytes slower than the peer sends them: stop reading the peer until it catches up.
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.join.lost(self)


class _Join:
    """One relayed connection: the client's socket, joined to a worker's once ``route`` has picked its port."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.client = _Side(self)
        self.worker: _Side | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._linger: asyncio.TimerHandle | None = None

    def accepted(self) -> None:
        self.relay.joins.add(self)
        assert self.client.transport is not None
        self.client.transport.pause_reading()  # the client's bytes wait in its socket until the worker's is joined
        self._connecting = asyncio.ensure_future(self._connect())

    async def _connect(self) -> None:
        port = await self.relay.route()
        if port is None or self.client.lost:
            self._close(self.client)
            return
        loop = asyncio.get_running_loop()
        try:
            _, worker = await loop.create_connection(lambda: _Side(self, peer=self.client), WORKER_HOST, port)
        except OSError as error:
            # NOTE: the worker exited between the route and the connect (it died: a recycled one stops taking
            # connections before it exits); its replacement is routed to once it listens.
            _log.warning("relay: worker port %d refused a connection (%s); closing the client's", port, error)
            self._close(self.client)
            return
        self.worker = worker
        self.client.peer = worker
        assert worker.transport is not None
        if self.client.lost:
            self.lost(self.client)
            return
        for data in self.client.held:
            worker.transport.write(data)
        self.client.held.clear()
        assert self.client.transport is not None
        self.client.transport.resume_reading()
        if self.client.ended:
            self.ended(self.client)

    def ended(self, side: _Side) -> None:
        """``side``'s remote end has ended its direction: end it towards the peer too, behind everything sent
        before; once both have, the connection is over."""
        peer = side.peer
        if peer is None:
            return  # the worker's socket is being connected: _connect passes the end on
        if peer.lost:
            self._close(side)  # it was lingering for this end
        elif side.ended and peer.ended:
            self._close(side)
            self._close(peer)
        else:
            assert peer.transport is not None
            if peer.transport.can_write_eof():
                peer.transport.write_eof()

    def lost(self, side: _Side) -> None:
        """``side``'s socket has closed (ended or reset): its peer gets what was sent before, then an end."""
        peer = side.peer
        if peer is None or peer.lost:
            if self._linger is not None:
                self._linger.cancel()
            if self._connecting is not None and side is self.client and self.worker is None:
                self._connecting.cancel()
            self.relay.joins.discard(self)
            return
        assert peer.transport is not None
        if peer.ended:
            self._close(peer)
            return
        # NOTE: closing the peer now would close a socket with bytes unread (a client's window updates and pings,
        # a stream a GOAWAY refused): TCP then resets it, and the peer's stack may drop the last responses it has
        # not read. So its direction is ended instead, and it is closed once it ends its own, or after a while.
        if peer.transport.can_write_eof():
            peer.transport.write_eof()
        self._linger = asyncio.get_running_loop().call_later(_LINGER_SECONDS, self._close, peer)

    def _close(self, side: _Side) -> None:
        """Close ``side``'s socket once what is buffered for it is written."""
        if side.transport is not None:
            side.transport.close()

    def abort(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
        for side in (self.client, self.worker):
            if side is not None and side.transport is not None:
                side.transport.abort()
