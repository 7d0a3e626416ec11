"""This worker's listeners on a shared port (found under gRPC): steering the port's new connections to a newly
started worker while an old one hands over, and closing the old one's listener."""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import struct
import sys
from collections.abc import Iterator

#: Linux's socket option that attaches a classic BPF program choosing the listener of a SO_REUSEPORT group
#: (``asm-generic/socket.h``; Python's socket module does not name it).
SO_ATTACH_REUSEPORT_CBPF = 51
#: ``BPF_RET | BPF_K``: the program's one instruction, "return the constant k".
_BPF_RETURN_CONSTANT = 0x06


def _port_listeners(port: int) -> Iterator[tuple[int, socket.socket]]:
    """(descriptor, a socket on a duplicate of it) for each TCP listener of this process on ``port`` (Linux only);
    each socket closes (the duplicate only) when the iteration moves on."""
    for name in os.listdir("/proc/self/fd"):
        try:
            copy = os.dup(int(name))
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
        try:
            sock = socket.socket(fileno=copy)
        except OSError:  # not a socket
            os.close(copy)
            continue
        with sock:
            try:
                address = sock.getsockname()
                listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
            except OSError:
                continue
            if listening and sock.type == socket.SOCK_STREAM and isinstance(address, tuple) and address[1] == port:
                yield int(name), sock


def steer_to_newest(port: int, workers: int) -> bool:
    """Make the port's SO_REUSEPORT group give every new connection to its newest listener while it holds more
    than ``workers`` (a replacement listening beside the worker it replaces), and balance them as before otherwise;
    whether a listener of this process was found (Linux only).

    NOTE: a listener that closes resets the connections still queued on it (unless ``net.ipv4.tcp_migrate_req``
    is 1, which needs privileges to set), and a client then fails every call it has waiting on that connection.
    The group keeps its listeners in an array, appends each new one, and fills a closed one's slot with the last;
    a classic BPF program returns the index of the listener that gets a new connection, and an index past the
    array's end leaves the choice to the usual hash. So "return ``workers``" is the replacement (the listener past
    the workers' own) exactly while a handover's two listeners are open, and nothing otherwise: a worker about to
    close its listener has received nothing since its replacement began listening, and its queue is empty. The
    program belongs to the group; each worker attaches the same one (the last attach replaces the others').
    """
    if not sys.platform.startswith("linux"):
        return False
    instructions = ctypes.create_string_buffer(struct.pack("=HBBI", _BPF_RETURN_CONSTANT, 0, 0, workers))
    program = struct.pack("@HP", 1, ctypes.addressof(instructions))  # struct sock_fprog {len, filter}
    found = False
    for _, sock in _port_listeners(port):
        sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, program)
        found = True
    return found


def stop_listening(port: int) -> bool:
    """Close this process's listener on ``port`` under gRPC, leaving its connections open; whether it was found
    (Linux only).

    NOTE: gRPC closes its listener only as part of its stop, which cancels calls (``BuiltServer._hand_over``).
    Here an unbound socket takes the listener's descriptor (``dup2``): the listener closes, so the kernel takes it
    out of the port's SO_REUSEPORT group, and gRPC's acceptor, which no longer hears from it, closes the stand-in at
    its stop. Shutting the listener down instead would make gRPC's acceptor log an error.
    """
    if not sys.platform.startswith("linux"):
        return False
    found = False
    for descriptor, sock in _port_listeners(port):
        with socket.socket(sock.family, socket.SOCK_STREAM) as stand_in, contextlib.suppress(OSError):
            os.dup2(stand_in.fileno(), descriptor)
            found = True
    return found
