"""The compile cache: compiled descs kept by their canonical bytes, bounded by count, host bytes and device bytes."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from dmlrpc_server.errors import ServiceError
from dmlrpc_server.runtime.buffers import Lookups
from dmlrpc_server.runtime.compiler import Compiled

_log = logging.getLogger(__name__)


@dataclass
class CacheStats(Lookups):
    evictions: int = 0
    #: Descs compiled for their call only: their entry alone was over the cache's byte bound.
    uncached: int = 0
    #: Hits of ``CompileCache.peek_alias``, apart from ``hits``: only the event loop counts them, without the lock.
    alias_hits: int = 0
    #: Compiled descs that run on the CPU provider in part or whole, by (operator label, ``Compiled.fallback``).
    fallbacks: dict[tuple[str, str], int] = field(default_factory=dict)


class CompileCache:
    """A bounded LRU of compiled operators keyed by canonical desc bytes: at most ``capacity`` entries and
    ``max_bytes`` charged bytes (each entry's ``held_bytes`` plus its key; each alias its two keys), and where the
    provider has a device budget (--device-memory-bytes) entries whose ``device_bytes`` together stay within it.

    Concurrent misses on one key compile once: the first caller builds while the others wait for it. An evicted
    entry's session is released as soon as no call still runs it (nothing else refers to it).
    """

    def __init__(self, capacity: int, max_bytes: int) -> None:
        self._capacity = capacity
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, Compiled] = OrderedDict()
        #: Desc bytes as clients sent them -> the canonical key (clients may order fields differently), bounded.
        self._aliases: OrderedDict[bytes, bytes] = OrderedDict()
        self._entry_bytes = 0
        self._alias_bytes = 0
        #: Device bytes the entries are charged, and the budget they stay within (set by the first charged entry).
        self.device_bytes = 0
        self._device_budget: int | None = None
        self._building: dict[bytes, threading.Lock] = {}
        #: Canonical desc bytes -> the refusal its build raised (see ``get``).
        self._refused: OrderedDict[bytes, ServiceError] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = CacheStats()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def hits(self) -> int:
        """Lookups that found their entry compiled, by its canonical key or by the bytes a client sent."""
        return self.stats.hits + self.stats.alias_hits

    @property
    def held_bytes(self) -> int:
        """The bytes charged for what the cache holds now (entries and aliases)."""
        return self._entry_bytes + self._alias_bytes

    def peek(self, key: bytes) -> Compiled | None:
        """The entry for ``key`` if it is compiled already (a hit), else ``None``; builds nothing."""
        with self._lock:
            return self._lookup(key)

    def peek_alias(self, raw: bytes) -> Compiled | None:
        """The entry whose desc a client sent as ``raw`` (see ``alias``), if it is still cached. From the event loop
        thread only (every tiny call's stage 2).

        NOTE: no lock: each dictionary operation is one step under the GIL, and what a compile on a worker thread
        does between two of them is evict or add an entry. An entry evicted after it was found is a hit on what is
        leaving, as a call that found it just before runs it; its recency is then nothing to keep (``KeyError``).
        """
        key = self._aliases.get(raw)
        if key is None:
            return None
        entry = self._entries.get(key)
        if entry is None:
            return None
        try:
            self._aliases.move_to_end(raw)
            self._entries.move_to_end(key)
        except KeyError:
            pass
        self.stats.alias_hits += 1
        return entry

    def alias(self, raw: bytes, key: bytes) -> None:
        """Remember that the desc bytes ``raw`` compile to the entry of ``key``."""
        with self._lock:
            if key not in self._entries:
                return  # compiled for its call only, or evicted already: nothing to find later
            old = self._aliases.pop(raw, None)
            if old is not None:
                self._alias_bytes -= len(raw) + len(old)
            self._aliases[raw] = key
            self._alias_bytes += len(raw) + len(key)
            self._shrink()

    def get(self, key: bytes, build: Callable[[], Compiled]) -> Compiled:
        """Return the entry for ``key``, building it with ``build`` on a miss.

        A desc refused with a ``ServiceError`` is remembered (bounded, least recently refused go): asking again
        gets the same refusal without lowering the desc again, which for a hostile desc can cost seconds.
        """
        with self._lock:
            entry = self._lookup(key)
            if entry is not None:
                return entry
            self._raise_refused(key)
            key_lock = self._building.setdefault(key, threading.Lock())
        with self._key_lock(key, key_lock):
            with self._lock:
                entry = self._lookup(key)
                if entry is not None:
                    return entry
                self._raise_refused(key)
                self.stats.misses += 1
            try:
                entry = build()
            except ServiceError as error:
                with self._lock:
                    self._refused[key] = error
                    while len(self._refused) > self._capacity:
                        self._refused.popitem(last=False)
                raise
            charge = entry.held_bytes + len(key)
            entry.on_move = self._count_fallback
            with self._lock:
                if entry.fallback:
                    self._count(entry)
                if charge > self.max_bytes:
                    # NOTE: kept, it would evict everything else and still break the bound; its call runs it and
                    # then it is released.
                    self.stats.uncached += 1
                    _log.info("a compiled desc of %d bytes is over --compile-cache-bytes: not cached", charge)
                    return entry
                self._entries[key] = entry
                self._entry_bytes += charge
                if entry.device_bytes and entry.provider is not None:
                    self._device_budget = entry.provider.device_memory_bytes
                    self.device_bytes += entry.device_bytes
                self._shrink()
            return entry

    def _count_fallback(self, entry: Compiled) -> None:
        with self._lock:
            self._count(entry)

    def _count(self, entry: Compiled) -> None:
        counted = (entry.label, entry.fallback)
        self.stats.fallbacks[counted] = self.stats.fallbacks.get(counted, 0) + 1

    def _raise_refused(self, key: bytes) -> None:
        error = self._refused.get(key)
        if error is not None:
            self._refused.move_to_end(key)
            raise error.with_traceback(None)

    def _shrink(self) -> None:
        """Evict least recently used entries and aliases until both bounds hold (the lock is held)."""
        while len(self._entries) > self._capacity:
            self._evict_entry()
        while len(self._aliases) > self._capacity:
            self._evict_alias()
        # NOTE: the newest entry stays even alone over the budget: its call is running it (compile refused any
        # whose charge alone exceeds it).
        while self._device_budget is not None and self.device_bytes > self._device_budget and len(self._entries) > 1:
            self._evict_entry()
        while self.held_bytes > self.max_bytes:
            # Aliases go first only where they hold much of the budget (desc bytes of clients that vary a field
            # order); otherwise the compiled entries, whose sessions hold the memory.
            if self._aliases and (self._alias_bytes > self.max_bytes // 2 or not self._entries):
                self._evict_alias()
            elif self._entries:
                self._evict_entry()
            else:  # pragma: no cover - bytes > 0 implies an entry or an alias
                break

    def _evict_entry(self) -> None:
        key, entry = self._entries.popitem(last=False)
        self._entry_bytes -= entry.held_bytes + len(key)
        self.device_bytes -= entry.device_bytes
        self.stats.evictions += 1

    def _evict_alias(self) -> None:
        raw, key = self._aliases.popitem(last=False)
        self._alias_bytes -= len(raw) + len(key)

    def _lookup(self, key: bytes) -> Compiled | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            self.stats.hits += 1
        return entry

    @contextlib.contextmanager
    def _key_lock(self, key: bytes, key_lock: threading.Lock) -> Iterator[None]:
        with key_lock:
            try:
                yield
            finally:
                with self._lock:
                    if self._building.get(key) is key_lock:
                        del self._building[key]
