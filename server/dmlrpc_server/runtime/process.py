"""This process's place among the server's worker processes, and the handle ids it makes (prefixed with it)."""

from __future__ import annotations

import re
import secrets

from dmlrpc_server.errors import FailedPrecondition, NotFound

#: ``w{index}.`` (``w{index}r{generation}.`` from a worker's replacement on) then the random part (urlsafe base64,
#: which has no ".", so the prefix cannot be mistaken).
_PREFIXED = re.compile(r"w(\d{1,4})(?:r(\d{1,9}))?\.[A-Za-z0-9_-]{22}")

# NOTE: which worker this process is, is a fact about the process (set once by the worker's entry point before
# the server is built), so it lives here instead of being threaded through every store's constructor.
_worker: int | None = None
_workers = 1
#: Which process of its worker this is: 0 for the first, then one more for each replacement (recycled or restarted).
_generation = 0


def set_worker(index: int | None, count: int = 1, generation: int = 0) -> None:
    """Make this process worker ``index`` of ``count`` (``None``: the only process, handles unprefixed), its
    ``generation``-th process (0 = the first; a replacement after a recycle or a restart counts up)."""
    global _worker, _workers, _generation
    _worker, _workers, _generation = index, count, generation


def worker_index() -> int | None:
    return _worker


def worker_count() -> int:
    """The server's worker processes: 1 unless this process is one of a supervisor's workers."""
    return _workers


def new_handle() -> str:
    """A fresh handle id: ``w{index}.<random>`` in a worker of several, else just the random part."""
    token = secrets.token_urlsafe(16)  # 128 random bits, 22 characters
    if _worker is None:
        return token
    return f"w{_worker}.{token}" if _generation == 0 else f"w{_worker}r{_generation}.{token}"


def check_worker(handle: str, path: str, what: str) -> None:
    """Raise FAILED_PRECONDITION when ``handle`` (not found here) is well formed and names another live worker, and
    NOT_FOUND naming the replacement when an earlier process of this worker made it (what it held went with it).

    A malformed or unknown handle is left to the caller's NOT_FOUND.
    """
    if _worker is None:
        return
    match = _PREFIXED.fullmatch(handle)
    if match is None:
        return
    maker = int(match.group(1))
    if maker == _worker:
        made_in = int(match.group(2) or 0)
        if made_in < _generation:
            # NOTE: NOT_FOUND, as for a handle released when idle: it is gone for good, the same call on any
            # connection cannot succeed, and making it again (on this worker) is the remedy.
            raise NotFound(
                f"{path}: {what} {handle!r} was held by an earlier process of worker {maker}, which has since been "
                "replaced (recycled after --max-sessions-per-worker ONNX Runtime sessions, or restarted after it "
                "exited); what it held went with it: create it again"
            )
        return
    if maker >= _workers:
        return
    raise FailedPrecondition(
        f"{path}: {what} {handle!r} was made by worker {maker} of this server and this call reached worker "
        f"{_worker}: send calls that use a handle on the channel (connection) that created it; behind a load "
        "balancer use connection affinity, or run --workers 1 (where that channel was closed because its worker was "
        "recycled, the handle went with it: create it again)"
    )
