"""This process's place among the server's worker processes, and the handle ids it makes (prefixed with it)."""

from __future__ import annotations

import re
import secrets

from dmlrpc_server.errors import FailedPrecondition

#: ``w{index}.`` then the random part (urlsafe base64, which has no ".", so the prefix cannot be mistaken).
_PREFIXED = re.compile(r"w(\d{1,4})\.[A-Za-z0-9_-]{22}")

# NOTE: which worker this process is, is a fact about the process (set once by the worker's entry point before
# the server is built), so it lives here instead of being threaded through every store's constructor.
_worker: int | None = None
_workers = 1


def set_worker(index: int | None, count: int = 1) -> None:
    """Make this process worker ``index`` of ``count`` (``None``: the only process, handles unprefixed)."""
    global _worker, _workers
    _worker, _workers = index, count


def worker_index() -> int | None:
    return _worker


def worker_count() -> int:
    """The server's worker processes: 1 unless this process is one of a supervisor's workers."""
    return _workers


def new_handle() -> str:
    """A fresh handle id: ``w{index}.<random>`` in a worker of several, else just the random part."""
    token = secrets.token_urlsafe(16)  # 128 random bits, 22 characters
    return token if _worker is None else f"w{_worker}.{token}"


def check_worker(handle: str, path: str, what: str) -> None:
    """Raise FAILED_PRECONDITION when ``handle`` (not found here) is well formed and names another live worker.

    A malformed or unknown handle is left to the caller's NOT_FOUND.
    """
    if _worker is None:
        return
    match = _PREFIXED.fullmatch(handle)
    if match is None:
        return
    maker = int(match.group(1))
    if maker == _worker or maker >= _workers:
        return
    raise FailedPrecondition(
        f"{path}: {what} {handle!r} was made by worker {maker} of this server and this call reached worker "
        f"{_worker}: send calls that use a handle on the channel (connection) that created it; behind a load "
        "balancer use connection affinity, or run --workers 1"
    )
