"""TensorChunk messages of ExecuteStream written and read on the wire directly, without copying through protobuf.

A chunk message (``ExecuteStreamRequest`` or ``ExecuteStreamResponse`` with ``chunk`` set: field 2 in both) is
``0x12 len(inner) inner``, where inner is ``0x08 varint(binding) 0x12 varint(len(data)) data``. Building it is one
copy of the data and reading it none, where protobuf's Python objects cost three or four copies of every chunk
(into the message, out of it on each access, and through serialization). Everything else on the stream (the
``start`` and ``outputs`` messages) goes through protobuf as usual; the bytes are the same either way.
"""

from __future__ import annotations

#: The most bytes of one chunk message: gRPC's default receive limit, so that a client or server with default
#: settings, in any language, reads every chunk (4 MiB: the fastest size measured for Python gRPC streams).
MESSAGE_BYTES = 4 << 20
#: The most bytes ``encode_chunk`` adds to a chunk's data: two tags and three varints (binding < 2**35,
#: data < 2**28).
CHUNK_FRAMING = 16
#: Data bytes per TensorChunk that the SDK and the server send: their messages, framing included, fit
#: ``MESSAGE_BYTES``.
CHUNK_BYTES = MESSAGE_BYTES - CHUNK_FRAMING

_CHUNK_FIELD = b"\x12"  # field 2 (chunk), wire type 2 (length-delimited)
_BINDING_TAG = 0x08  # TensorChunk.binding: field 1, varint
_DATA_TAG = 0x12  # TensorChunk.data: field 2, length-delimited


_SMALL = [bytes((value,)) for value in range(128)]


def varint(value: int) -> bytes:
    """A non-negative integer as a protobuf varint."""
    if value < 128:
        return _SMALL[value]
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_chunk(binding: int, data: bytes | memoryview) -> bytes:
    """The wire bytes of a stream message carrying ``TensorChunk(binding, data)``."""
    inner_head = bytes((_BINDING_TAG,)) + varint(binding) + bytes((_DATA_TAG,)) + varint(len(data))
    return b"".join((_CHUNK_FIELD, varint(len(inner_head) + len(data)), inner_head, data))


def fields(view: memoryview) -> list[tuple[int, int, int]]:
    """The fields of a message whose fields are all length-delimited with one-byte tags, in order: each one's tag and
    its data's start and stop offsets in ``view`` (a field begins where the one before it stops).

    Raises:
        ValueError: a field runs past the message, or a length is malformed.
        IndexError: the message ends inside a field's head.
    """
    found: list[tuple[int, int, int]] = []
    end = len(view)
    offset = 0
    while offset < end:
        tag = view[offset]
        # NOTE: one-byte lengths read inline (a tiny message's are all one byte); longer ones by read_varint.
        size, start = view[offset + 1], offset + 2
        if size > 0x7F:
            size, start = read_varint(view, offset + 1)
        offset = start + size
        if offset > end:
            raise ValueError("a field runs past the end of the message")
        found.append((tag, start, offset))
    return found


def read_varint(buffer: memoryview, offset: int) -> tuple[int, int]:
    """The varint at ``offset`` and the offset after it.

    Raises:
        ValueError: the buffer ends inside it, or it is longer than 64 bits.
    """
    if offset < len(buffer) and buffer[offset] < 0x80:
        return buffer[offset], offset + 1
    value = shift = 0
    while True:
        if offset >= len(buffer) or shift > 63:
            raise ValueError("truncated or oversized varint")
        byte = buffer[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, offset
        shift += 7


def decode_chunk(message: bytes | memoryview) -> tuple[int, memoryview] | None:
    """``(binding, data)`` of a chunk message (``data`` a view into ``message``), or ``None`` for any other part.

    Raises:
        ValueError: the message is malformed.
    """
    view = memoryview(message)
    if not view or view[0] != _CHUNK_FIELD[0]:
        return None
    length, offset = read_varint(view, 1)
    if offset + length != len(view):
        return None  # more than one field: let protobuf read it
    binding, data = 0, view[offset:offset]
    end = offset + length
    while offset < end:
        tag, offset = read_varint(view, offset)
        wire_type = tag & 7
        if wire_type == 0:
            value, offset = read_varint(view, offset)
            if tag >> 3 == 1:
                binding = value
        elif wire_type == 2:
            size, offset = read_varint(view, offset)
            if offset + size > end:
                raise ValueError("a length-delimited field runs past its message")
            if tag >> 3 == 2:
                data = view[offset : offset + size]
            offset += size
        elif wire_type == 1:
            offset += 8
        elif wire_type == 5:
            offset += 4
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
    if offset != end:
        raise ValueError("a field runs past its message")
    return binding, data
