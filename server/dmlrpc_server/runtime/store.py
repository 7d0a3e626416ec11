"""The owner-scoped store that resident tensors and compiled handles live in: quotas per owner and in total, expiry."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from dmlrpc_server.errors import NotFound, ResourceExhausted
from dmlrpc_server.runtime.process import check_worker


class Owned(Protocol):
    """What the store needs of an entry: its id, its owner, the bytes it is charged and when it was last used."""

    @property
    def handle(self) -> str: ...

    @property
    def owner(self) -> str: ...

    @property
    def nbytes(self) -> int: ...

    last_used: float


E = TypeVar("E", bound=Owned)
R = TypeVar("R", bound="Reservation[Any]")


@dataclass(frozen=True)
class Quota:
    """A store's bounds: entries and bytes per owner and for everyone, and how long an idle entry lives."""

    per_owner: int
    bytes_per_owner: int
    total: int
    bytes_total: int
    idle_seconds: float


@dataclass(frozen=True)
class Words:
    """How a store's refusals name what it holds and the flags that bound it (``--{flag}-{counted}-per-caller``,
    ``--{flag}-bytes-per-caller``, ``--{flag}-{counted}-total``, ``--{flag}-bytes-total``)."""

    #: The flags' prefix, and what one entry is: "resident" and "tensor" (errors say "resident tensor").
    flag: str
    noun: str
    #: The subject of the server-wide bytes refusal, where it is not the entries ("resident tensor memory").
    memory: str = ""
    #: What a caller's bytes and everyone's bytes consist of, where the number alone would not say.
    bytes_detail: str = ""
    total_bytes_detail: str = ""
    #: How an entry comes to exist: "created", "compiled".
    made: str = "created"

    @property
    def entry(self) -> str:
        """One entry, as errors name it: "resident tensor"."""
        return f"{self.flag} {self.noun}"

    @property
    def counted(self) -> str:
        """The flags' word for entries: "tensors"."""
        return f"{self.noun}s"

    @property
    def entries(self) -> str:
        """The subject of the server-wide count refusal: "resident tensors"."""
        return f"{self.entry}s"


class OwnedStore(Generic[E]):
    """Entries by handle, each visible only to its owner, within per-owner count and byte quotas and the
    server-wide totals (without auth an owner is a client-chosen id, so only the totals bound what many ids hold).

    Room is checked before anything is allocated (``check_room``) or claimed for later (``reserve``); an idle entry
    expires after ``idle_seconds`` (swept on every access and by the server's periodic sweep). Thread-safe: calls
    run on the event loop and on workers.
    """

    #: How this store's refusals name what it holds (each kind of store says).
    words: ClassVar[Words]

    def __init__(self, quota: Quota) -> None:
        self.quota = quota
        self._entries: dict[str, E] = {}
        self._reserved: dict[str, tuple[int, int]] = {}  # owner -> (entries, bytes) reserved, not yet kept
        self._lock = threading.Lock()

    @property
    def idle_seconds(self) -> float:
        return self.quota.idle_seconds

    # -- accounting ---------------------------------------------------------------------------------------------

    def check_room(self, owner: str, nbytes: int, count: int = 1) -> None:
        """Refuse (RESOURCE_EXHAUSTED naming the quota) when ``owner`` has no room for ``count`` more entries of
        ``nbytes`` in total."""
        with self._lock:
            self._sweep_locked(time.monotonic())
            self._check_locked(owner, nbytes, count)

    def _check_locked(self, owner: str, nbytes: int, count: int) -> None:
        quota, words = self.quota, self.words
        mine = held = used = everyone = 0
        for entry in self._entries.values():
            held += 1
            everyone += entry.nbytes
            if entry.owner == owner:
                mine += 1
                used += entry.nbytes
        reserved_count, reserved_bytes = self._reserved.get(owner, (0, 0))
        mine, used = mine + reserved_count, used + reserved_bytes
        held += sum(c for c, _ in self._reserved.values())
        everyone += sum(b for _, b in self._reserved.values())
        # Each bound: what it would hold with this request, its limit, and the refusal naming the flag that sets it.
        bounds = (
            (
                mine + count,
                quota.per_owner,
                f"{words.entry} quota: this caller holds {mine} of {quota.per_owner} "
                f"(--{words.flag}-{words.counted}-per-caller); release some or raise it",
            ),
            (
                used + nbytes,
                quota.bytes_per_owner,
                f"{words.entry} quota: {used} + {nbytes} bytes{words.bytes_detail} is over this caller's "
                f"{quota.bytes_per_owner} (--{words.flag}-bytes-per-caller); release some or raise it",
            ),
            (
                held + count,
                quota.total,
                f"{words.entries}: the server holds {held} for all callers, the most --{words.flag}-{words.counted}-"
                f"total ({quota.total}) allows; release some or raise it to allow more",
            ),
            (
                everyone + nbytes,
                quota.bytes_total,
                f"{words.memory or words.entries}: {everyone} + {nbytes} bytes{words.total_bytes_detail} is over "
                f"--{words.flag}-bytes-total ({quota.bytes_total}) for all callers; release some or raise it to allow "
                "more",
            ),
        )
        for wanted, limit, refusal in bounds:
            if wanted > limit:
                raise ResourceExhausted(refusal)

    def reserve(self, owner: str, nbytes: int, count: int = 1) -> Reservation[E]:
        """Claim room for ``count`` entries of ``nbytes`` in total, or raise RESOURCE_EXHAUSTED naming the quota."""
        with self._lock:
            self._sweep_locked(time.monotonic())
            self._check_locked(owner, nbytes, count)
            reserved_count, reserved_bytes = self._reserved.get(owner, (0, 0))
            self._reserved[owner] = (reserved_count + count, reserved_bytes + nbytes)
        return Reservation(self, owner, count, nbytes)

    def _unreserve(self, owner: str, count: int, nbytes: int) -> None:
        with self._lock:
            reserved_count, reserved_bytes = self._reserved.get(owner, (0, 0))
            remaining = (reserved_count - count, reserved_bytes - nbytes)
            if remaining == (0, 0):
                self._reserved.pop(owner, None)
            else:
                self._reserved[owner] = remaining

    # -- entries ------------------------------------------------------------------------------------------------

    def keep(self, entry: E) -> E:
        """Add ``entry`` if its owner still has room (checked again: another call may have taken it meanwhile)."""
        with self._lock:
            self._check_locked(entry.owner, entry.nbytes, 1)
            self._entries[entry.handle] = entry
        return entry

    def _put(self, entry: E) -> E:
        with self._lock:
            self._entries[entry.handle] = entry
        return entry

    def get(self, owner: str, handle: str, path: str = "handle") -> E:
        """The caller's entry, touched; NOT_FOUND for an unknown, released, expired or another caller's handle."""
        now = time.monotonic()
        with self._lock:
            self._sweep_locked(now)
            entry = self._entries.get(handle)
            if entry is None or entry.owner != owner:
                # The same answer for another caller's handle: existence is not disclosed.
                raise self._not_found(handle, path)
            entry.last_used = now
            return entry

    def touch(self, handle: str, *, use: bool = True) -> bool:
        """Whether a handle is still held (not released, not expired); with ``use`` its idle time restarts: a model
        published from a compiled handle (``PublishModel``) is in use while clients call it."""
        now = time.monotonic()
        with self._lock:
            self._sweep_locked(now)
            entry = self._entries.get(handle)
            if entry is None:
                return False
            if use:
                entry.last_used = now
            return True

    def release(self, owner: str, handle: str) -> None:
        with self._lock:
            entry = self._entries.get(handle)
            if entry is None or entry.owner != owner:
                raise self._not_found(handle, "handle")
            del self._entries[handle]

    def _not_found(self, handle: str, path: str) -> NotFound:
        """NOT_FOUND for a handle unknown here, or FAILED_PRECONDITION (raised) when another worker made it."""
        check_worker(handle, path, self.words.entry)
        return NotFound(f"{path}: no {self.words.entry} {handle!r} (released, expired or never {self.words.made})")

    def sweep(self) -> int:
        """Release every entry idle for longer than ``idle_seconds``; returns how many."""
        with self._lock:
            return self._sweep_locked(time.monotonic())

    def _sweep_locked(self, now: float) -> int:
        idle = self.quota.idle_seconds
        expired = [h for h, e in self._entries.items() if now - e.last_used > idle]
        for handle in expired:
            del self._entries[handle]
        return len(expired)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def usage(self) -> tuple[int, int]:
        """(entries, bytes) held by everyone."""
        with self._lock:
            return len(self._entries), sum(e.nbytes for e in self._entries.values())

    def __iter__(self) -> Iterator[E]:
        with self._lock:
            return iter(list(self._entries.values()))


@dataclass
class Reservation(Generic[E]):
    """Room claimed in a store: ``keep`` turns it into entries; leaving the ``with`` block frees what was not used."""

    store: OwnedStore[E]
    owner: str
    count: int
    nbytes: int

    def keep(self, entry: E) -> E:
        nbytes = entry.nbytes
        self.store._put(entry)
        self.store._unreserve(self.owner, 1, nbytes)
        self.count -= 1
        self.nbytes -= nbytes
        return entry

    def __enter__(self: R) -> R:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.count or self.nbytes:
            self.store._unreserve(self.owner, self.count, self.nbytes)
            self.count = self.nbytes = 0
