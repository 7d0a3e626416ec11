"""--worker-ports relayed: the supervisor holds --port and relays each connection to a worker's private port."""

# NOTE: where SO_REUSEPORT is missing (Windows), no two processes can listen on one port, so a recycled worker's
# replacement cannot take over its port while it finishes its calls: the port would go unanswered (refused
# connections) between the two. The supervisor, which never recycles, holds the port instead; a worker listens on
# a loopback port of its own, and each accepted connection goes to a worker's current process. A recycled process
# gets no new connection once its replacement listens, and ends its own ones with GOAWAY, as on a shared port.

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Awaitable, Callable

_log = logging.getLogger(__name__)

#: The loopback address workers listen on behind the relay.
WORKER_HOST = "127.0.0.1"
#: How long a connection whose other side has gone waits for its own peer to end it, before the relay closes it.
_LINGER_SECONDS = 10.0
#: HTTP/2's connection preface, which a cleartext gRPC client sends first (RFC 9113, 3.4).
_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: HTTP/2 frame types (RFC 9113, 6) and the error code the relay reads or writes.
_HEADERS, _RST_STREAM, _GOAWAY = 0x1, 0x3, 0x7
_NO_ERROR = 0x0
#: The GOAWAY's debug data (what a client logs).
_UNANSWERED = b"relay: calls the worker left unanswered; not processed"
#: A frame's header less its flags: the payload's length and the type as one word, then the stream id.
_FRAME_HEADER = struct.Struct(">I1xI")
#: A GOAWAY's last stream id that says nothing yet (gRPC's first, graceful one): every stream.
_EVERY_STREAM = (1 << 31) - 1


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


class _FrameReader:
    """The frame boundaries of one direction of an HTTP/2 connection, read across the chunks that carry it."""

    def __init__(self) -> None:
        #: Bytes of the current frame's payload still to come (in later chunks).
        self.skip = 0
        #: The start of a frame cut by a chunk's end: its header, or a GOAWAY up to its last stream id.
        self.head = b""

    @property
    def at_frame_end(self) -> bool:
        return not (self.skip or self.head)

    def frames(self, data: bytes) -> list[tuple[int, int, int]]:
        """The HEADERS, RST_STREAM and GOAWAY frames whose headers ``data`` completes: (type, stream id, a GOAWAY's
        last stream id or else 0)."""
        if self.head:
            data = self.head + data
            self.head = b""
        found = []
        unpack = _FRAME_HEADER.unpack_from
        at, size = self.skip, len(data)
        while at + 9 <= size:
            word, stream = unpack(data, at)  # word: the payload's length (24 bits), then the type
            kind = word & 0xFF
            if kind == _GOAWAY:
                if at + 13 > size:
                    break
                found.append((kind, 0, int.from_bytes(data[at + 9 : at + 13], "big") & _EVERY_STREAM))
            elif kind in (_HEADERS, _RST_STREAM):
                found.append((kind, stream & _EVERY_STREAM, 0))
            at += 9 + (word >> 8)
        if at > size:
            self.skip = at - size
        else:
            self.skip = 0
            self.head = data[at:]
        return found


class _Calls:
    """The calls of one relayed connection, read from its HTTP/2 frames as they pass (the bytes are not changed):
    those its client has opened that the worker has not begun to answer, and the last stream id of the worker's
    latest GOAWAY.

    NOTE: why. gRPC's Windows transport was seen to end a connection after the GOAWAY of its age with calls that this
    GOAWAY had accepted never answered (under the DirectML lane, behind this relay: 5 such calls at once, about one
    connection in a thousand); the client then fails them (UNAVAILABLE, "Stream removed"), having no way to know
    that they never ran. ``refusals`` then tells the client so with a GOAWAY of its own whose last stream id falls
    below them: gRPC clients send the calls of streams past a GOAWAY's last one again, on another connection, by
    themselves (transparent retries, gRFC A6), and a later GOAWAY may lower that id (RFC 9113, 6.8). A
    REFUSED_STREAM would say the same per stream, but gRPC's clients do not retry on it.
    """

    def __init__(self) -> None:
        #: False once the client's first bytes are not cleartext HTTP/2 (TLS, say): nothing is read then.
        self.watching = True
        self._preface = b""
        self._client = _FrameReader()
        self._worker = _FrameReader()
        self.unanswered: set[int] = set()
        self.last_stream = _EVERY_STREAM
        #: Whether the worker has sent a GOAWAY: ``last_stream`` names every stream both before any and after a
        #: graceful one.
        self.goaway_seen = False

    def from_client(self, data: bytes) -> None:
        if not self.watching:
            return
        if len(self._preface) < len(_PREFACE):
            missing = len(_PREFACE) - len(self._preface)
            self._preface += data[:missing]
            if not _PREFACE.startswith(self._preface):
                self.watching = False
                self.unanswered.clear()
                return
            data = data[missing:]
        for kind, stream, _ in self._client.frames(data):
            if kind == _HEADERS:
                self.unanswered.add(stream)  # a new call: gRPC clients send no trailers
            elif kind == _RST_STREAM:
                self.unanswered.discard(stream)  # cancelled by its client

    def from_worker(self, data: bytes) -> None:
        if not self.watching:
            return
        for kind, stream, value in self._worker.frames(data):
            if kind == _GOAWAY:
                self.last_stream = value
                self.goaway_seen = True
            else:
                self.unanswered.discard(stream)  # its answer has begun (its headers), or it was refused

    def refusals(self) -> tuple[bytes, int, str]:
        """Once the worker has ended the connection: a GOAWAY whose last stream id falls below every call that its
        own last GOAWAY accepted and it never began to answer, and how many those are; nothing if there are none, if
        it ended mid-frame, or without such a GOAWAY. Then why calls its GOAWAY accepted are left unanswered, if
        any are (their clients get UNAVAILABLE): what to look at when one is lost."""
        if not self.watching:
            return b"", 0, ""
        accepted = sorted(stream for stream in self.unanswered if stream <= self.last_stream)
        self.unanswered.clear()
        if not accepted:
            return b"", 0, ""
        left = f"{len(accepted)} calls (streams {accepted[0]}-{accepted[-1]}) left unanswered"
        if not self._worker.at_frame_end:
            return b"", 0, f"{left}: the worker's bytes ended mid-frame"
        if self.last_stream == _EVERY_STREAM:
            return b"", 0, f"{left}: the worker sent {'only a graceful' if self.goaway_seen else 'no'} GOAWAY"
        payload = (accepted[0] - 1).to_bytes(4, "big") + _NO_ERROR.to_bytes(4, "big") + _UNANSWERED
        return len(payload).to_bytes(3, "big") + bytes((_GOAWAY, 0)) + bytes(4) + payload, len(accepted), ""


# NOTE: protocols, not streams: a socket's bytes reach the other socket in the callback that received them, before
# the callback that says the connection was lost (a stream reader raises its error ahead of the bytes it still
# buffers, so a worker's last responses before a reset could be dropped). No task per direction either: a relayed
# message costs two callbacks.
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
        if self is self.join.client:
            self.join.calls.from_client(data)
        else:
            self.join.calls.from_worker(data)
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
        self.calls = _Calls()
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
        self._refuse_unanswered(side)
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
        self._refuse_unanswered(side)
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

    def _refuse_unanswered(self, side: _Side) -> None:
        """Once the worker has ended its side: the calls it accepted and never answered are handed back to the
        client, which sends them again elsewhere (``_Calls``)."""
        client = self.client.transport
        if side is self.client or client is None or client.is_closing():
            return
        goaway, refused, left = self.calls.refusals()
        if left:
            _log.warning("relay: a worker ended a connection: %s; their clients get UNAVAILABLE", left)
        if refused:
            client.write(goaway)
            _log.warning(
                "relay: a worker ended a connection leaving %d calls it had accepted unanswered; its client sends "
                "them again (a GOAWAY below them)",
                refused,
            )

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
