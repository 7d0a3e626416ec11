"""Command line: flags -> ServerSettings -> build_server() -> serve until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence

from dmlrpc_server.feature_levels import LATEST, feature_level_name, parse_feature_level
from dmlrpc_server.runtime.providers import PROVIDERS, ProviderUnavailableError
from dmlrpc_server.server import build_server
from dmlrpc_server.settings import ServerSettings

_log = logging.getLogger("dmlrpc_server")


def _feature_level_argument(text: str) -> int:
    try:
        return parse_feature_level(text)
    except ValueError as error:  # argparse shows ArgumentTypeError messages only
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_args(argv: Sequence[str] | None = None) -> tuple[ServerSettings, str]:
    """Parse command-line flags into settings and a log level."""
    defaults = ServerSettings()
    parser = argparse.ArgumentParser(
        prog="dmlrpc-server", description="Serve DirectML operator descs over gRPC (ONNX Runtime backend)."
    )
    parser.add_argument("--host", default=defaults.host, help="address to listen on (default: %(default)s)")
    parser.add_argument(
        "--port", type=int, default=defaults.port, help="TCP port, 0 for any free one (default: %(default)s)"
    )
    parser.add_argument(
        "--provider",
        choices=["auto", *PROVIDERS],
        default=defaults.provider,
        help="execution provider; auto = DirectML if present, else CUDA, else CPU (default: %(default)s)",
    )
    parser.add_argument(
        "--device-id", type=int, default=defaults.device_id, help="DirectML adapter or CUDA device index"
    )
    parser.add_argument(
        "--feature-level",
        type=_feature_level_argument,
        default=defaults.feature_level,
        help=f"DML feature level whose rules to apply, e.g. 3.0 (default: {feature_level_name(LATEST)})",
    )
    parser.add_argument("--max-message-bytes", type=int, default=defaults.max_message_bytes)
    parser.add_argument("--max-tensor-bytes", type=int, default=defaults.max_tensor_bytes)
    parser.add_argument("--max-request-bytes", type=int, default=defaults.max_request_bytes)
    parser.add_argument("--compile-cache-size", type=int, default=defaults.compile_cache_size)
    parser.add_argument("--intra-op-threads", type=int, default=defaults.intra_op_threads)
    parser.add_argument("--worker-threads", type=int, default=defaults.worker_threads)
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(argv)
    settings = ServerSettings(
        host=args.host,
        port=args.port,
        provider=args.provider,
        device_id=args.device_id,
        feature_level=args.feature_level,
        max_message_bytes=args.max_message_bytes,
        max_tensor_bytes=args.max_tensor_bytes,
        max_request_bytes=args.max_request_bytes,
        compile_cache_size=args.compile_cache_size,
        intra_op_threads=args.intra_op_threads,
        worker_threads=args.worker_threads,
    )
    return settings, args.log_level


async def serve(settings: ServerSettings) -> None:
    """Run the server until SIGTERM or SIGINT, then let in-flight calls finish within the grace period."""
    built = build_server(settings)
    await built.start()
    _log.info("dmlrpc server listening on %s:%d", settings.host, built.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):  # Windows event loops have no signal handlers
            loop.add_signal_handler(sig, stop.set)
    waiter = asyncio.ensure_future(built.server.wait_for_termination())
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    _log.info("shutting down (grace %.1f s)", settings.shutdown_grace_seconds)
    await built.stop(settings.shutdown_grace_seconds)
    stopper.cancel()


def main(argv: Sequence[str] | None = None) -> int:
    settings, log_level = parse_args(argv)
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
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
