"""Command line: flags, DMLRPC_* variables and a config file -> ServerSettings -> build_server() -> serve."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence

from dmlrpc_server.logs import configure_logging
from dmlrpc_server.runtime.memory import tune_malloc
from dmlrpc_server.runtime.providers import ProviderUnavailableError
from dmlrpc_server.server import build_server
from dmlrpc_server.settings import ServerSettings, SettingsError, load_settings

_log = logging.getLogger("dmlrpc_server")


async def serve(settings: ServerSettings) -> None:
    """Run the server until SIGTERM or SIGINT, then drain and let in-flight calls finish within the grace period."""
    built = build_server(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):  # Windows event loops have no signal handlers
            loop.add_signal_handler(sig, stop.set)
    await built.start(ready=False)
    _log.info("dmlrpc server listening on %s:%d", settings.host, built.port)
    starting = asyncio.ensure_future(built.ready())
    waiter = asyncio.ensure_future(built.server.wait_for_termination())
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
    _log.info(
        "shutting down (drain %.1f s, grace %.1f s)", settings.shutdown_drain_seconds, settings.shutdown_grace_seconds
    )
    await built.stop(settings.shutdown_grace_seconds, drain=settings.shutdown_drain_seconds)
    stopper.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    _log.info("stopped")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings = load_settings(argv)
    except SettingsError as error:
        sys.stderr.write(f"dmlrpc-server: {error}\n")  # logging is not configured yet
        return 2
    configure_logging(settings.log_level, settings.log_format)
    if settings.tune_malloc:
        tune_malloc()
    try:
        asyncio.run(serve(settings))
    except (ProviderUnavailableError, OSError) as error:
        _log.error("%s", error)
        return 2
    except KeyboardInterrupt:  # pragma: no cover - signal handlers normally catch it
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
