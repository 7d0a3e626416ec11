"""System shared memory regions that clients register by POSIX name: inputs read from them, outputs written."""

from __future__ import annotations

import mmap
import os
import sys
from dataclasses import dataclass
from typing import Any

from dmlrpc_server.errors import AlreadyExists, InvalidArgument, NotFound, Unimplemented
from dmlrpc_server.oip.protocol import service_pb2

#: Keys Triton reserves for its Python backend.
RESERVED_PREFIX = "triton_python_backend_shm_region_"
SHM_DIR = "/dev/shm"


@dataclass(frozen=True)
class Region:
    """A registered region: ``byte_size`` bytes from ``offset`` of the shared memory object ``key``."""

    name: str
    key: str
    offset: int
    byte_size: int
    view: memoryview  # the region's bytes (a slice of the mapping, which lives as long as a view of it does)

    def status(self) -> Any:
        return service_pb2.SystemSharedMemoryStatusResponse.RegionStatus(
            name=self.name, key=self.key, offset=self.offset, byte_size=self.byte_size
        )


class SharedMemory:
    """The registered system shared memory regions of one server process, by name.

    NOTE: the object is opened with ``os.open`` and mapped whole, not through ``multiprocessing.shared_memory``:
    attaching that way registers the segment with Python's resource tracker, which unlinks the client's segment
    when the server exits. A region unregistered while requests use it stays mapped until they are done (their
    views keep the mapping alive).
    """

    def __init__(self) -> None:
        self.regions: dict[str, Region] = {}

    def register(self, name: str, key: str, offset: int, byte_size: int) -> None:
        """Map ``byte_size`` bytes at ``offset`` of ``key`` as region ``name``.

        Raises:
            AlreadyExists: a region of that name is registered.
            InvalidArgument: a reserved or missing key, or a region past the end of the object.
        """
        if not sys.platform.startswith("linux"):  # pragma: no cover - POSIX shared memory under /dev/shm
            raise Unimplemented("system shared memory is served on Linux only")
        if name in self.regions:
            raise AlreadyExists(f"shared memory region '{name}' is already registered")
        if not name:
            raise InvalidArgument("name", "a region needs a name")
        bare = key.lstrip("/")
        if not bare or "/" in bare:
            raise InvalidArgument("key", f"'{key}' is not a POSIX shared memory name ('/name')")
        if bare.startswith(RESERVED_PREFIX):
            raise InvalidArgument("key", f"keys starting '{RESERVED_PREFIX}' are reserved")
        try:
            fd = os.open(os.path.join(SHM_DIR, bare), os.O_RDWR)
        except OSError as error:
            raise InvalidArgument("key", f"cannot open shared memory object '{key}': {error.strerror}") from None
        try:
            size = os.fstat(fd).st_size
            if offset + byte_size > size:
                raise InvalidArgument(
                    "byte_size",
                    f"offset {offset} + byte_size {byte_size} is past the end of '{key}' ({size} bytes)",
                )
            mapping = mmap.mmap(fd, size) if size else None
        finally:
            os.close(fd)
        view = memoryview(mapping)[offset : offset + byte_size] if mapping is not None else memoryview(b"")
        self.regions[name] = Region(name, key, offset, byte_size, view)

    def unregister(self, name: str) -> None:
        """Forget region ``name`` ("" forgets all); an unknown name is not an error."""
        if name:
            self.regions.pop(name, None)
        else:
            self.regions.clear()

    def status(self, name: str) -> list[Region]:
        """Region ``name``, or all of them for "".

        Raises:
            NotFound: no region has that name.
        """
        if not name:
            return list(self.regions.values())
        region = self.regions.get(name)
        if region is None:
            raise NotFound(f"Unable to find system shared memory region: '{name}'")
        return [region]

    def slice(self, name: str, offset: int, size: int, field: str) -> memoryview:
        """``size`` bytes at ``offset`` of a region, for a request's tensor (``field`` names its parameters).

        Raises:
            NotFound: the region is not registered.
            InvalidArgument: the bytes are past the region's end.
        """
        region = self.regions.get(name)
        if region is None:
            raise NotFound(f"Unable to find shared memory region: '{name}'")
        if offset < 0 or size < 0 or offset + size > region.byte_size:
            raise InvalidArgument(
                field,
                f"shared_memory_offset {offset} + shared_memory_byte_size {size} is past the end of region "
                f"'{name}' ({region.byte_size} bytes)",
            )
        return region.view[offset : offset + size]
