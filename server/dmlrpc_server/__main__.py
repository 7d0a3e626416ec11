"""Command line: flags, DMLRPC_* variables and a config file -> ServerSettings -> build_server() -> serve."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
from collections.abc import Sequence

from prometheus_client import generate_latest

from dmlrpc_server.logs import configure_logging
from dmlrpc_server.runtime.compiler import SESSIONS
from dmlrpc_server.runtime.memory import tune_malloc
from dmlrpc_server.runtime.process import set_worker
from dmlrpc_server.runtime.providers import ProviderUnavailableError
from dmlrpc_server.server import build_server
from dmlrpc_server.settings import ServerSettings, SettingsError, load_settings
from dmlrpc_server.supervisor import WorkerLink, on_stop_signals, supervise

_log = logging.getLogger("dmlrpc_server")
#: How long the exit waits for handlers whose runs have returned to finish (they need only the loop).
_SETTLE_SECONDS = 0.5


async def serve(settings: ServerSettings, worker: WorkerLink | None = None) -> None:
    """Run the server until SIGTERM or SIGINT, then drain and let in-flight calls finish within the grace period;
    what still runs then is cancelled, and an operator run that ignores it is left behind: the process exits.

    As a ``worker`` of a supervisor it also stops when its supervisor asks or dies, and tells it where it listens;
    with --max-sessions-per-worker it asks its supervisor to replace it once it has created that many sessions, and
    serves on until the supervisor stops it (its replacement serving by then where the port is shared).
    """
    built = build_server(settings)
    stop = asyncio.Event()
    recycling = asyncio.Event()
    loop = asyncio.get_running_loop()

    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        # A second Ctrl-C: whoever sends it will not wait for the drain and the grace period. NOTE: a worker does
        # not count: it gets the terminal's SIGINT and its supervisor's SIGTERM for one Ctrl-C, and the supervisor
        # kills it on the second.
        if signals > 1 and worker is None:
            _log.warning("second stop signal: exiting now, without waiting for calls in flight")
            logging.shutdown()
            os._exit(1)
        stop.set()

    on_stop_signals(loop, on_signal)
    if worker is not None:
        # The Open Inference Protocol answers for the server: its statistics, loads and unloads go through the
        # supervisor to the other workers; a process started later first repeats the loads they made.
        inference = built.inference
        if inference is not None:
            inference.peers = worker
            worker.answer_with(inference.answer_peer)
            for action in worker.models:
                await inference.answer_peer(action["kind"], action["body"])
        worker.watch(loop, stop.set)
        limit, budget = settings.sessions_per_worker, settings.worker_memory_budget
        if limit or budget:

            def recycle(why: str) -> None:
                if recycling.is_set():  # the other limit was reached first
                    return
                recycling.set()
                _log.info("worker %d %s: asking for its replacement; it serves until then", worker.index, why)
                worker.send("recycle", sessions=SESSIONS.created)

            def spent(why: str) -> None:
                # NOTE: called on whichever thread made the session, and marked there, before the call that made it
                # answers: a compile whose session was the worker's last sees it (Scheduler.room_for_handle). The
                # event loop sends the request.
                built.service.scheduler.sessions_spent = True
                loop.call_soon_threadsafe(recycle, why)

            def reached(created: int) -> None:
                spent(f"created {created} ONNX Runtime sessions (--max-sessions-per-worker {limit})")

            def over(resident: int) -> None:
                spent(f"holds {resident} bytes after a new session (--worker-memory-bytes {budget})")

            if limit:
                SESSIONS.watch(limit, reached)
            if budget:
                SESSIONS.watch_memory(budget, over)
    # NOTE: a replacement warms up before it listens: callers reaching it through the shared port find it SERVING.
    await built.start(ready=False, warm_first=worker is not None and worker.generation > 0)
    if worker is None:
        _log.info("dmlrpc server listening on %s:%d", settings.host, built.port)
    else:
        # NOTE: not "listening on": the supervisor logs that line once for the whole server (tools parse it).
        _log.info("worker %d serving on %s:%d (pid %d)", worker.index, settings.host, built.port, os.getpid())
        worker.send("listening", port=built.port, metrics_port=built.metrics_port)
    starting = asyncio.ensure_future(built.ready())
    # NOTE: what exists once the provider has warmed up (modules, sessions, settings) lives as long as the process;
    # frozen, the collector stops walking it whenever it collects the objects that calls make.
    starting.add_done_callback(lambda _: gc.freeze())
    waiter = asyncio.ensure_future(built.server.wait_for_termination())
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
    # NOTE: a recycled worker skips the drain (NOT_SERVING while serving on): its replacement already listens, and
    # the handover moves every connection to it at once (BuiltServer.stop).
    handoff = recycling.is_set()
    drain = 0.0 if handoff else settings.shutdown_drain_seconds
    # NOTE: with consecutive ports a recycled worker's port is unanswered until it exits: the shutdown's grace.
    recycled_beside = handoff and settings.worker_ports != "consecutive"
    grace = settings.recycle_grace_seconds if recycled_beside else settings.shutdown_grace_seconds
    _log.info(
        "%s (drain %.1f s, grace %.1f s)",
        "recycling: handing over to the replacement" if handoff else "shutting down",
        drain,
        grace,
    )
    await built.stop(grace, drain=drain, handoff=handoff)
    if worker is not None and built.metrics is not None:
        # Its calls are over: the supervisor carries these counters on in the summed /metrics after it exits.
        worker.send("final_metrics", text=generate_latest(built.metrics.registry).decode())
    stopper.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    running = built.running_operators()
    if not running:
        # NOTE: the handlers whose runs just returned finish once the loop hands them their results; left to
        # asyncio.run's clean-up they would be cancelled mid-way, and gRPC would log each as an unhandled error.
        others = asyncio.all_tasks() - {asyncio.current_task()}
        if others:
            await asyncio.wait(others, timeout=_SETTLE_SECONDS)
    if running:
        _log.warning(
            "exiting without waiting for %d operator run(s) that ignore their cancellation (one long ONNX Runtime "
            "node); the grace period is over",
            running,
        )
    _log.info("stopped")
    if running:
        # NOTE: returning would not end the process: asyncio.run's clean-up waits for the calls it cancels, which
        # wait for their runs, and the interpreter joins the operator threads at exit. Nothing is left to flush
        # but the log.
        logging.shutdown()
        sys.stdout.flush()
        os._exit(0)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings = load_settings(argv)
    except SettingsError as error:
        sys.stderr.write(f"dmlrpc-server: {error}\n")  # logging is not configured yet
        return 2
    worker = WorkerLink.from_environ()
    configure_logging(settings.log_level, settings.log_format, worker=None if worker is None else worker.index)
    if worker is None and (
        settings.worker_processes > 1 or settings.sessions_per_worker > 0 or settings.worker_memory_budget > 0
    ):
        return supervise(settings, argv)
    if worker is not None:
        set_worker(worker.index, settings.worker_processes, worker.generation)
    if settings.tune_malloc:
        tune_malloc(settings.budgets(settings.worker_processes).heap_retain)
    try:
        asyncio.run(serve(settings, worker))
    except (ProviderUnavailableError, OSError) as error:
        _log.error("%s", error)
        if worker is not None:
            worker.send("error", message=str(error))
        return 2
    except KeyboardInterrupt:  # pragma: no cover - signal handlers normally catch it
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
