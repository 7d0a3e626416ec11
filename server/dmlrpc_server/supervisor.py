"""--workers N: a supervisor process that runs N server processes on one port (shared or relayed) or N ports."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dmlrpc_server.relay import WORKER_HOST, Relay
from dmlrpc_server.settings import ServerSettings
from dmlrpc_server.windows_job import end_workers_with_this_process

_log = logging.getLogger("dmlrpc_server")

#: Set (to the worker's index) in a worker's environment: the process serves as that worker of a supervisor.
WORKER_ENV = "_DMLRPC_WORKER"
#: Set in a worker's environment to which process of that worker it is (0, then one more per replacement).
GENERATION_ENV = "_DMLRPC_WORKER_GENERATION"
#: Set in a worker's environment to the model loads and unloads the server's other workers made (JSON), which a
#: process started later repeats before it listens.
MODELS_ENV = "_DMLRPC_WORKER_MODELS"
#: A worker's control lines on its stdout start with this; anything else there is not ours and is ignored.
_MARK = "dmlrpc-worker "
#: The longest control line a worker sends: its final metrics fit on one.
_CONTROL_LINE_BYTES = 16 << 20
#: What a worker answers a question of another worker with (see WorkerLink.answer_with).
Answerer = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
#: A worker that exits within this long of its start counts as failing to start (it is not serving).
_QUICK_EXIT_SECONDS = 10.0
#: Quick exits in a row after which the supervisor gives up on a worker and stops the server.
_MAX_QUICK_EXITS = 5
_MAX_BACKOFF_SECONDS = 10.0
#: What a worker gets beyond the drain and grace periods to exit after a stop before it is killed.
_EXIT_MARGIN_SECONDS = 10.0


# -- the worker's side ------------------------------------------------------------------------------------------


class WorkerLink:
    """A worker's line to its supervisor: events out as JSON lines on stdout; on stdin, the supervisor's JSON lines
    (questions from the other workers, and the answers to this worker's questions), whose end means "stop".

    Through it the Open Inference Protocol answers for the server rather than the worker (``ask``): statistics are
    summed over every worker, and a model load or unload is made by every worker before it is answered.

    NOTE: stdin and stdout work the same on every platform (no fd passing, no signals on Windows); stdin closes
    when the supervisor asks the worker to stop and also when the supervisor dies, so workers never outlive it.
    """

    def __init__(self, index: int, generation: int = 0, models: list[dict[str, Any]] | None = None) -> None:
        self.index = index
        self.generation = generation
        #: The model loads and unloads the other workers made before this process started, oldest first.
        self.models = models or []
        self._answerer: Answerer | None = None
        self._asked: dict[int, asyncio.Future[list[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)
        self._answering: set[asyncio.Task[None]] = set()

    @classmethod
    def from_environ(cls) -> WorkerLink | None:
        value = os.environ.get(WORKER_ENV)
        if not value:
            return None
        models = json.loads(os.environ.get(MODELS_ENV) or "[]")
        return cls(int(value), int(os.environ.get(GENERATION_ENV) or 0), models)

    def answer_with(self, answerer: Answerer) -> None:
        """Answer the other workers' questions with ``answerer(kind, body)`` (on the event loop)."""
        self._answerer = answerer

    async def ask(self, kind: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        """Ask every other worker of the server (those serving now, and those starting); their answers."""
        asked = next(self._ids)
        future: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        self._asked[asked] = future
        try:
            self.send("ask", id=asked, kind=kind, body=body)
            return await future
        finally:
            self._asked.pop(asked, None)

    def _received(self, message: dict[str, Any]) -> None:
        event = message.get("event")
        if event == "reply":
            future = self._asked.get(message.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result([a for a in message.get("answers") or [] if isinstance(a, dict)])
        elif event == "question":
            task = asyncio.ensure_future(self._answer(message))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)

    async def _answer(self, message: dict[str, Any]) -> None:
        answer: dict[str, Any] = {}
        if self._answerer is not None:
            try:
                answer = await self._answerer(str(message.get("kind")), dict(message.get("body") or {}))
            except Exception as error:  # the asking worker reports it; this worker serves on
                _log.warning("could not answer another worker's %s: %s", message.get("kind"), error)
                answer = {"error": str(error) or type(error).__name__}
        self.send("answer", id=message.get("id"), body=answer)

    def send(self, event: str, **fields: Any) -> None:
        line = _MARK + json.dumps({"event": event, **fields}) + "\n"
        with contextlib.suppress(OSError):  # the supervisor is gone: stdin's end stops this worker anyway
            sys.stdout.write(line)
            sys.stdout.flush()

    def watch(self, loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
        """Hand the supervisor's lines to ``loop``, and call ``stop`` on it once stdin ends (the supervisor asks for
        a stop, or died)."""

        def wait_for_end() -> None:
            with contextlib.suppress(OSError, ValueError):
                for raw in sys.stdin.buffer:
                    message = _parse(raw.decode(errors="replace"))
                    if message is not None:
                        with contextlib.suppress(RuntimeError):  # the loop has closed: the worker is exiting
                            loop.call_soon_threadsafe(self._received, message)
            with contextlib.suppress(RuntimeError):  # the loop has closed: the worker is exiting already
                loop.call_soon_threadsafe(stop)

        threading.Thread(target=wait_for_end, name="dmlrpc-supervisor-link", daemon=True).start()


# -- the supervisor -----------------------------------------------------------------------------------------------


class WorkerFailed(RuntimeError):
    """A worker could not start (or kept dying at start); the message is the worker's own error where it sent one."""


@dataclass
class _Process:
    """One process of a worker, and what it said on its control line."""

    process: asyncio.subprocess.Process
    started: float
    listening: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set when the process asks to be replaced (--max-sessions-per-worker); it serves until it is stopped.
    recycle: asyncio.Event = field(default_factory=asyncio.Event)
    #: The port it serves on, once it listens.
    port: int | None = None
    metrics_port: int | None = None
    error: str | None = None
    #: Its exit code, once its output has ended and it has exited.
    exited: asyncio.Task[int] | None = None
    #: The other workers' questions it has not answered yet (answered with nothing if it exits first).
    questions: set[int] = field(default_factory=set)


@dataclass
class _Worker:
    index: int
    port: int
    #: The process that serves as this worker now (a recycled one that drains beside its replacement is not it).
    current: _Process | None = None
    listening: asyncio.Event = field(default_factory=asyncio.Event)
    restarts: int = 0
    recycles: int = 0
    #: Processes started for this worker so far; the next one's generation (its handles name it).
    started: int = 0
    #: A replacement warming up beside the current process (recycling): it gets the other workers' loads too.
    replacement: _Process | None = None

    @property
    def metrics_port(self) -> int | None:
        current = self.current
        return None if current is None else current.metrics_port


class Supervisor:
    """Starts the workers, restarts the ones that die, replaces the ones that ask to be recycled, forwards
    SIGTERM/SIGINT and serves their summed metrics."""

    def __init__(self, settings: ServerSettings, argv: Sequence[str]) -> None:
        self.settings = settings
        self.argv = list(argv)
        self.count = settings.worker_processes
        self._stopping = asyncio.Event()
        self._workers: list[_Worker] = []
        self._holder: socket.socket | None = None
        #: --worker-ports relayed: the listener on --port whose connections go to the workers' own ports.
        self._port_relay: Relay | None = None
        self._relay_port = 0
        #: Set whenever a process starts listening (the relay waits on it while no worker serves).
        self._listening = asyncio.Event()
        self._next_route = itertools.count()
        self._metrics: Any = None
        #: Whether every worker has listened once (the server served); failures before it end the start.
        self._served = False
        #: Every worker process started and not yet exited, in the order they started.
        self._running: list[_Process] = []
        #: Recycled processes still finishing their calls beside their replacements.
        self._retiring: set[asyncio.Task[int]] = set()
        #: The recycled processes still finishing their calls (``_retire``).
        self._retired: set[asyncio.subprocess.Process] = set()
        #: The last model load or unload per model name that a worker made for the server (JSON-ready): a process
        #: started later repeats them (MODELS_ENV), so that every worker serves the same models.
        self._models: dict[str, dict[str, Any]] = {}
        #: Questions relayed to workers, by id: their answers.
        self._answers: dict[int, asyncio.Future[dict[str, Any] | None]] = {}
        self._ids = itertools.count(1)
        self._relaying: set[asyncio.Task[None]] = set()

    # NOTE: workers are fresh interpreters started as `python -m dmlrpc_server` with the same flags (not forked,
    # not multiprocessing): gRPC's core does not survive fork, settings need no pickling (secrets included), and
    # a worker is exactly the single-process server, reading its flags, variables and config file as it does.
    def _command(self, worker: _Worker) -> list[str]:
        flags = ["--port", str(worker.port)]
        if self._port_relay is not None:
            flags += ["--host", WORKER_HOST]  # its port is private: the relay is the way in
        if self.settings.metrics:
            # Each worker's metrics stay private; the supervisor serves --metrics-port with their sum.
            flags += ["--metrics-host", "127.0.0.1", "--metrics-port", "0"]
        return [sys.executable, "-m", _entry_module(), *self.argv, *flags]

    async def run(self) -> int:
        on_stop_signals(asyncio.get_running_loop(), self._on_signal)
        ports = await self._reserve_ports()
        self._workers = [_Worker(index, port) for index, port in enumerate(ports)]
        if self.settings.metrics:
            await self._serve_metrics()
        tasks = [asyncio.create_task(self._keep(worker)) for worker in self._workers]
        try:
            up = asyncio.gather(*(worker.listening.wait() for worker in self._workers))
            first = await _first(up, *tasks, asyncio.ensure_future(self._stopping.wait()))
            if first is up:
                self._served = True
                public = self._relay_port if self._port_relay is not None else ports[0]
                _log.info("dmlrpc server listening on %s:%d", self.settings.host, public)
                if self.settings.worker_ports == "consecutive":
                    _log.info("worker i listens on port %d + i (ports %d to %d)", ports[0], ports[0], ports[-1])
                elif self._port_relay is not None:
                    _log.info("each connection is relayed to a worker's own port on %s", WORKER_HOST)
                _log.info("%d workers serving", self.count)
                await _first(*tasks, asyncio.ensure_future(self._stopping.wait()))
            else:
                up.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await up
            failed = [task for task in tasks if task.done() and task.exception() is not None]
            if failed:
                _log.error("%s; giving up", failed[0].exception())
        finally:
            self._stopping.set()
            codes = await asyncio.gather(*tasks, return_exceptions=True)
            await self._end_retiring()
            self._close()
        if any(isinstance(code, BaseException) for code in codes):
            return 2
        _log.info("stopped")
        # A worker that had not yet set up its signal handlers when the stop came ends by SIGTERM itself: that is
        # a clean stop too.
        return 0 if all(code in (0, -signal.SIGTERM) for code in codes) else 1

    def _on_signal(self) -> None:
        """The first SIGTERM/SIGINT stops the server (workers drain); a second one kills the workers at once."""
        if self._stopping.is_set():
            _log.warning("second stop signal: killing the workers, without waiting for calls in flight")
            for process in (p for w in self._workers for p in (w.current, w.replacement) if p is not None):
                if process.process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.process.kill()
        self._stopping.set()

    async def _reserve_ports(self) -> list[int]:
        """Each worker's --port: its own consecutive one, the shared one (held here until the workers listen), or
        0 behind the relay, which listens on --port from now on (a connection waits there for a worker)."""
        host, port = self.settings.host.strip("[]"), self.settings.port
        if self.settings.worker_ports == "consecutive":
            return _consecutive_ports(host, port, self.count)
        if self.settings.worker_ports == "relayed":
            self._port_relay = Relay(self._route)
            self._relay_port = await self._port_relay.listen(host, port)
            return [0] * self.count
        self._holder = _hold_shared_port(host, port)
        return [int(self._holder.getsockname()[1])] * self.count

    async def _route(self) -> int | None:
        """The port of a worker's current process for a relayed connection (round robin over those listening);
        waits while none is (a start, a restart); ``None`` once the server stops."""
        while not self._stopping.is_set():
            ports = [
                process.port
                for worker in self._workers
                if (process := worker.current) is not None and process.listening.is_set() and process.port
            ]
            if ports:
                return ports[next(self._next_route) % len(ports)]
            self._listening.clear()
            stop = asyncio.ensure_future(self._stopping.wait())
            listening = asyncio.ensure_future(self._listening.wait())
            try:
                await _first(stop, listening)
            finally:
                stop.cancel()
                listening.cancel()
        return None

    async def _keep(self, worker: _Worker) -> int:
        """Run one worker until the stop, restarting it after a backoff when it dies and replacing it at once when
        it asks to be recycled; returns its exit code."""
        quick_exits = 0
        current = await self._start(worker)
        while True:
            assert current.exited is not None
            stop = asyncio.ensure_future(self._stopping.wait())
            recycle = asyncio.ensure_future(current.recycle.wait())
            try:
                first = await _first(current.exited, recycle, stop)
            finally:
                stop.cancel()
                recycle.cancel()
            if self._stopping.is_set():
                return await current.exited
            if first is recycle:
                current = await self._recycle(worker, current)
                quick_exits = 0
                continue
            code = await first
            quick = time.monotonic() - current.started < _QUICK_EXIT_SECONDS or not current.listening.is_set()
            quick_exits = quick_exits + 1 if quick else 0
            reason = current.error or f"exited with status {code}"
            if not self._served and not current.listening.is_set():
                # NOTE: a worker that fails before the server ever served (the provider is missing, the port is
                # busy) fails the same way again: stop now with its error instead of retrying.
                raise WorkerFailed(f"worker {worker.index} could not start: {reason}")
            if quick_exits >= _MAX_QUICK_EXITS:
                raise WorkerFailed(f"worker {worker.index} keeps exiting ({quick_exits} times in a row): {reason}")
            worker.listening.clear()
            delay = min(_MAX_BACKOFF_SECONDS, 0.5 * 2 ** max(0, quick_exits - 1))
            _log.warning("worker %d %s; restarting it in %.1f s", worker.index, reason, delay)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
            if self._stopping.is_set():
                return 0
            worker.restarts += 1
            current = await self._start(worker)

    async def _recycle(self, worker: _Worker, old: _Process) -> _Process:
        """Replace a worker that asked to be recycled; the process that serves as the worker from now on.

        On a shared port, or behind the relay, the replacement starts first (warming up before it listens) and the
        old process is asked to stop only once it listens (and the relay sends it no new connection), so the port
        never goes unanswered; the old one then refuses new calls
        (UNAVAILABLE, which clients retry) while it finishes those in flight. With consecutive ports the
        replacement can bind only once the old process has exited: its port is unanswered meanwhile.
        """
        assert old.exited is not None
        worker.recycles += 1
        if self.settings.worker_ports == "consecutive":
            _log.info(
                "recycling worker %d (pid %d): stopping it; its replacement starts once it has exited (port %d is "
                "unanswered meanwhile)",
                worker.index,
                old.process.pid,
                worker.port,
            )
            # Its port is unanswered until it exits: the shutdown's periods bound that, not --recycle-grace-seconds.
            await self._ask_to_stop(old.process)
            await old.exited
            worker.listening.clear()
            return await self._start(worker)
        _log.info("recycling worker %d (pid %d): starting its replacement", worker.index, old.process.pid)
        failures = 0
        while True:
            new = worker.replacement = await self._start(worker, current=False)
            assert new.exited is not None
            listening = asyncio.ensure_future(new.listening.wait())
            stop = asyncio.ensure_future(self._stopping.wait())
            try:
                await _first(listening, new.exited, stop)
            finally:
                listening.cancel()
                stop.cancel()
            if new.listening.is_set() or self._stopping.is_set() or old.exited.done():
                break
            failures += 1
            code = new.exited.result() if new.exited is not None else None
            reason = new.error or f"exited with status {code}"
            if failures >= _MAX_QUICK_EXITS:
                raise WorkerFailed(f"worker {worker.index}'s replacement keeps failing ({failures} times): {reason}")
            delay = min(_MAX_BACKOFF_SECONDS, 0.5 * 2 ** (failures - 1))
            _log.warning(
                "worker %d's replacement %s; the worker serves on, another replacement starts in %.1f s",
                worker.index,
                reason,
                delay,
            )
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
        worker.current, worker.replacement = new, None
        if new.listening.is_set():
            worker.listening.set()
        retiring = asyncio.create_task(self._retire(worker, old))
        self._retiring.add(retiring)
        retiring.add_done_callback(self._retiring.discard)
        return new

    async def _retire(self, worker: _Worker, old: _Process) -> int:
        """Stop a recycled process (it finishes its calls in flight) and wait for it to exit."""
        assert old.exited is not None
        self._retired.add(old.process)
        try:
            await self._ask_to_stop(old.process, recycled=True)
            code = await old.exited
        finally:
            self._retired.discard(old.process)
        _log.info("worker %d's recycled process (pid %d) exited with status %d", worker.index, old.process.pid, code)
        return code

    async def _start(self, worker: _Worker, *, current: bool = True) -> _Process:
        """Start a process of ``worker`` (as its current one unless it replaces a process still serving)."""
        generation = worker.started
        worker.started += 1
        process = await asyncio.create_subprocess_exec(
            *self._command(worker),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={
                **os.environ,
                WORKER_ENV: str(worker.index),
                GENERATION_ENV: str(generation),
                MODELS_ENV: json.dumps(list(self._models.values())),
            },
            limit=_CONTROL_LINE_BYTES,
        )
        started = _Process(process, time.monotonic())
        self._running.append(started)
        if current:
            worker.current = started
        started.exited = asyncio.create_task(self._follow(worker, started))
        _log.debug("worker %d started (pid %d, process %d of it)", worker.index, process.pid, generation)
        return started

    async def _follow(self, worker: _Worker, started: _Process) -> int:
        """Read a process's control lines until it exits (asking it to stop on the server's stop); its exit code."""
        process = started.process
        stopper = asyncio.create_task(self._stop_on_request(process))
        try:
            assert process.stdout is not None
            async for raw in process.stdout:
                self._on_line(worker, started, raw.decode(errors="replace"))
            return await process.wait()
        finally:
            stopper.cancel()
            started.metrics_port = None
            self._running.remove(started)
            for question in started.questions:
                waiting = self._answers.get(question)
                if waiting is not None and not waiting.done():
                    waiting.set_result(None)

    def _on_line(self, worker: _Worker, started: _Process, line: str) -> None:
        message = _parse(line)
        if message is None:
            return
        event = message.get("event")
        if event == "listening":
            started.metrics_port = message.get("metrics_port")
            port = message.get("port")
            started.port = port if isinstance(port, int) else None
            started.listening.set()
            self._listening.set()
            if worker.current is started:
                worker.listening.set()
        elif event == "recycle":
            started.recycle.set()
        elif event == "error":
            started.error = str(message.get("message"))
        elif event == "final_metrics" and self._metrics is not None:
            self._metrics.retire(started.process.pid, str(message.get("text", "")))
        elif event == "ask":
            task = asyncio.create_task(self._relay(started, message))
            self._relaying.add(task)
            task.add_done_callback(self._relaying.discard)
        elif event == "answer":
            waiting = self._answers.get(message.get("id"))  # type: ignore[arg-type]
            if waiting is not None and not waiting.done():
                body = message.get("body")
                waiting.set_result(body if isinstance(body, dict) else {})

    # -- questions between workers ----------------------------------------------------------------------------

    async def _relay(self, asker: _Process, message: dict[str, Any]) -> None:
        """Put a worker's question to every other worker's current process, and reply with their answers."""
        kind, body = str(message.get("kind")), message.get("body")
        body = body if isinstance(body, dict) else {}
        if kind in ("load", "unload"):
            # NOTE: recorded before it is relayed: a process started from now on repeats it at its start, and one
            # started earlier gets the question (it reads its stdin once it has built its server).
            self._models.pop(str(body.get("name")), None)
            self._models[str(body.get("name"))] = {"kind": kind, "body": body}
        others = [
            process
            for w in self._workers
            for process in (w.current, w.replacement)
            if process is not None and process is not asker and not (process.exited and process.exited.done())
        ]
        answers = await asyncio.gather(*(self._question(other, kind, body) for other in others))
        _tell(asker.process, {"event": "reply", "id": message.get("id"), "answers": [a for a in answers if a]})

    async def _question(self, process: _Process, kind: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """One process's answer to a question (None if it exits before it answers)."""
        question = next(self._ids)
        waiting: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._answers[question] = waiting
        process.questions.add(question)
        try:
            if not _tell(process.process, {"event": "question", "id": question, "kind": kind, "body": body}):
                return None
            return await waiting
        finally:
            self._answers.pop(question, None)
            process.questions.discard(question)

    async def _stop_on_request(self, process: asyncio.subprocess.Process) -> None:
        """On the stop: ask the worker to stop (it drains as a lone server does), then kill it if it outstays."""
        await self._stopping.wait()
        await self._ask_to_stop(process)

    async def _end_retiring(self) -> None:
        """At the server's stop: recycled processes still finishing their calls get the shutdown's own periods
        (not --recycle-grace-seconds, which would hold the stop up), then are killed."""
        if not self._retiring:
            return
        limit = self.settings.shutdown_drain_seconds + self.settings.shutdown_grace_seconds + _EXIT_MARGIN_SECONDS
        _, outstaying = await asyncio.wait(self._retiring, timeout=limit)
        if outstaying:
            for process in list(self._retired):
                _log.warning("recycled worker pid %d still runs %.0f s after the stop; killing it", process.pid, limit)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
        await asyncio.gather(*self._retiring, return_exceptions=True)

    async def _ask_to_stop(self, process: asyncio.subprocess.Process, *, recycled: bool = False) -> None:
        """SIGTERM the process (and close its stdin: on Windows the only way to ask); kill it if it outstays its
        drain and grace periods (a ``recycled`` one: --recycle-grace-seconds, with no drain)."""
        if process.returncode is not None:
            return
        if sys.platform != "win32":
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        if process.stdin is not None:  # on Windows the only way to ask; elsewhere it changes nothing
            with contextlib.suppress(OSError):
                process.stdin.close()
        settings = self.settings
        periods = (
            settings.recycle_grace_seconds
            if recycled
            else settings.shutdown_drain_seconds + settings.shutdown_grace_seconds
        )
        limit = periods + _EXIT_MARGIN_SECONDS
        try:
            await asyncio.wait_for(process.wait(), limit)
        except asyncio.TimeoutError:
            _log.warning("worker pid %d did not exit %.0f s after the stop; killing it", process.pid, limit)
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    # -- metrics ----------------------------------------------------------------------------------------------

    async def _serve_metrics(self) -> None:
        from dmlrpc_server.metrics import WorkerMetrics

        self._metrics = WorkerMetrics(
            self._metrics_of,
            lambda: sum(w.restarts for w in self._workers),
            recycles=lambda: sum(w.recycles for w in self._workers),
        )
        host = self.settings.metrics_host or self.settings.host
        await self._metrics.serve(host, self.settings.metrics_port)

    def _metrics_of(self) -> list[tuple[int, int, bool]]:
        """(pid, metrics port, whether it is a worker's current process) of every process that serves metrics: a
        recycled one finishing its calls beside its replacement too."""
        # NOTE: read from the thread that collects a scrape: a copy of the list, each process's port read once.
        current = {id(w.current) for w in self._workers}
        return [
            (p.process.pid, port, id(p) in current) for p in list(self._running) if (port := p.metrics_port) is not None
        ]

    def _close(self) -> None:
        if self._metrics is not None:
            self._metrics.close()
        if self._holder is not None:
            self._holder.close()
        if self._port_relay is not None:
            self._port_relay.close()


def _parse(line: str) -> dict[str, Any] | None:
    """A control line's message (None for a line that is not one)."""
    if not line.startswith(_MARK):
        return None
    try:
        message = json.loads(line[len(_MARK) :])
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _tell(process: asyncio.subprocess.Process, message: dict[str, Any]) -> bool:
    """Write a control line to a worker's stdin; False if it can no longer read one (stopping or gone)."""
    stdin = process.stdin
    if stdin is None or stdin.is_closing() or process.returncode is not None:
        return False
    try:
        stdin.write((_MARK + json.dumps(message) + "\n").encode())
    except (OSError, RuntimeError):
        return False
    return True


#: The signals that stop the server: SIGTERM, Ctrl-C (SIGINT) and, on Windows, Ctrl-Break (SIGBREAK).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGBREAK") if hasattr(signal, name))


def on_stop_signals(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    """Run ``callback`` on ``loop`` at each stop signal: through the loop's own signal handlers, or, where event
    loops have none (Windows), a process signal handler that hands over to the loop."""
    for sig in STOP_SIGNALS:
        try:
            loop.add_signal_handler(sig, callback)
        except NotImplementedError:
            signal.signal(sig, lambda *_: loop.call_soon_threadsafe(callback))


def _entry_module() -> str:
    """The module workers run as (``python -m`` it): the one this process was started as where that is a wrapper
    that calls the server's ``main`` (it prepares each process first, as the DirectML lane's does), else
    ``dmlrpc_server``."""
    entry = sys.modules.get("dmlrpc_server.__main__")  # absent under `python -m dmlrpc_server` (it is __main__)
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if entry is not None and spec is not None and getattr(main, "main", None) is getattr(entry, "main", None):
        return str(spec.name).removesuffix(".__main__")
    return "dmlrpc_server"


async def _first(*waitables: asyncio.Future[Any]) -> asyncio.Future[Any]:
    done, _ = await asyncio.wait(waitables, return_when=asyncio.FIRST_COMPLETED)
    return next(iter(done))


def _address(host: str, port: int) -> tuple[socket.AddressFamily, tuple[Any, ...]]:
    found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, address = found[0]
    return family, address


def _hold_shared_port(host: str, port: int) -> socket.socket:
    """Bind (without listening) a SO_REUSEPORT socket on the port the workers will share, and return it.

    It keeps the port ours while workers start and restart; it never listens, so no connection is queued on it.
    """
    family, address = _address(host, port)
    # NOTE: a plain bind first fails if anything holds the port, SO_REUSEPORT or not; the SO_REUSEPORT bind alone
    # would silently join another server of the same user on it (what --workers 1 refuses with grpc.so_reuseport 0).
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(address)
        except OSError as error:
            raise OSError(f"could not bind {host}:{port} (--port): {error.strerror or error}") from None
        chosen = probe.getsockname()[1]
    holder = socket.socket(family, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        holder.bind((address[0], chosen, *address[2:]))
    except OSError as error:
        holder.close()
        raise OSError(f"could not bind {host}:{chosen} (--port): {error.strerror or error}") from None
    return holder


def _consecutive_ports(host: str, port: int, count: int) -> list[int]:
    """``count`` ports from ``port``; with port 0, a free run of them (free now: a worker's bind may still race)."""
    if port:
        return list(range(port, port + count))
    family, address = _address(host, 0)
    for _ in range(50):
        with socket.socket(family, socket.SOCK_STREAM) as first:
            first.bind(address)
            start = int(first.getsockname()[1])
            if start + count - 1 > 65535:
                continue
            if all(_free(family, (address[0], start + offset, *address[2:])) for offset in range(1, count)):
                return list(range(start, start + count))
    raise OSError(f"could not find {count} consecutive free ports on {host}")


def _free(family: socket.AddressFamily, address: tuple[Any, ...]) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(address)
        except OSError:
            return False
    return True


def supervise(settings: ServerSettings, argv: Sequence[str] | None) -> int:
    """Run ``settings.worker_processes`` workers until SIGTERM/SIGINT; the exit code of the server."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Linux workers end on their stdin's end; on Windows a job object also ends those that could not see it.
    end_workers_with_this_process()
    try:
        return asyncio.run(Supervisor(settings, args).run())
    except OSError as error:
        _log.error("%s", error)
        return 2
