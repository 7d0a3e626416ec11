"""The shared port's steering, on real listeners of one SO_REUSEPORT group: while a handover has one listener more
than the workers, the newest gets every new connection, and a closing one is left with nothing queued."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator

import pytest

from dmlrpc_server.listeners import steer_to_newest, stop_listening

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_REUSEPORT groups: Linux's")
CONNECTIONS = 64


def _listener(port: int = 0) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(CONNECTIONS)
    sock.setblocking(False)
    return sock


def _queued(listener: socket.socket) -> int:
    """Accept (and close) what ``listener`` has queued; how many."""
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def _spread(port: int, listeners: list[socket.socket]) -> list[int]:
    """Open ``CONNECTIONS`` connections to ``port``; how many each of ``listeners`` received."""
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(CONNECTIONS)]
    try:
        return [_queued(listener) for listener in listeners]
    finally:
        for client in clients:
            client.close()


@pytest.fixture
def group() -> Iterator[list[socket.socket]]:
    """Two listeners of one port: two workers."""
    first = _listener()
    listeners = [first, _listener(first.getsockname()[1])]
    yield listeners
    for listener in listeners:
        listener.close()


def test_a_replacement_gets_every_new_connection_while_it_listens_beside_the_workers(
    group: list[socket.socket],
) -> None:
    port = group[0].getsockname()[1]
    assert steer_to_newest(port, workers=len(group))
    # Two workers: the kernel's hash spreads the connections (one of them getting all 64 would be chance: 2**-63).
    assert all(_spread(port, group))
    # A replacement listens beside them: it gets them all, and the worker it replaces nothing.
    group.append(_listener(port))
    assert _spread(port, group) == [0, 0, CONNECTIONS]
    # The old worker leaves the port (its slot takes the replacement): the kernel's hash again.
    group.pop(0).close()
    assert all(_spread(port, group))
    group.append(_listener(port))
    assert _spread(port, group) == [0, 0, CONNECTIONS]


def test_without_the_steering_a_listener_beside_the_workers_gets_its_share(group: list[socket.socket]) -> None:
    # What the test above would see without the program: the hash over all three.
    port = group[0].getsockname()[1]
    group.append(_listener(port))
    assert _spread(port, group)[:2] != [0, 0]


def test_a_listener_not_on_the_port_is_left_alone() -> None:
    other = _listener()
    try:
        with socket.socket() as unbound:
            unbound.bind(("127.0.0.1", 0))
            free_port = unbound.getsockname()[1]
        assert not steer_to_newest(free_port, workers=1)
        assert not stop_listening(free_port)
        assert other.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    finally:
        other.close()


def test_stop_listening_closes_the_listener_under_its_descriptor(group: list[socket.socket]) -> None:
    port = group[0].getsockname()[1]
    # Both listeners of this process on the port close; their descriptors stay open (gRPC's acceptor holds them).
    assert stop_listening(port)
    for listener in group:
        assert not listener.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port)).close()
