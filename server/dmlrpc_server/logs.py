"""Log set-up: plain text lines or one JSON object per line, with the call fields the interceptor attaches."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

#: Fields the server attaches to log records with ``extra=`` (request id, method, operator, status code, ...).
CALL_FIELDS = ("request_id", "method", "operator", "code", "duration_ms")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the worker (with --workers), the call fields present,
    and any traceback."""

    def __init__(self, worker: int | None = None) -> None:
        super().__init__()
        self.worker = worker

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.worker is not None:
            entry["worker"] = self.worker
        for name in CALL_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str, fmt: str, *, worker: int | None = None) -> None:
    """Send the log to stderr at ``level`` as ``text`` or ``json`` lines (replacing earlier handlers); a ``worker``
    process of a supervisor marks its lines with its index."""
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter(worker))
    else:
        tag = "" if worker is None else f" w{worker}"
        handler.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s{tag} %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
