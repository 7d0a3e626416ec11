"""The model repository: Triton's layout read, versions chosen by policy, models loaded and unloaded, and their
states (READY, or UNAVAILABLE with the reason) for RepositoryIndex. A bad model never stops the server."""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.capi.onnxruntime_pybind11_state import EPFail

from dmlrpc_server.catalog import Catalog
from dmlrpc_server.errors import AlreadyExists, InvalidArgument, NotFound, Unavailable
from dmlrpc_server.oip import graphs
from dmlrpc_server.oip.config import (
    ModelConfig,
    ModelError,
    check,
    complete,
    fill_instance_group,
    onnx_io,
    read_config,
)
from dmlrpc_server.oip.models import Feeds, ModelVersion, Runner, item_work
from dmlrpc_server.oip.protocol import service_pb2
from dmlrpc_server.runtime.compiler import CPU, UNSTOPPED
from dmlrpc_server.runtime.handles import HandleStore
from dmlrpc_server.runtime.providers import Provider
from dmlrpc_server.scheduler import Scheduler

_log = logging.getLogger(__name__)

READY = "READY"
UNAVAILABLE = "UNAVAILABLE"
#: RepositoryIndex's reason beside READY for a model published from a compiled handle (it has no directory).
PUBLISHED = "published from a compiled handle"
#: The largest max_batch_size PublishModel accepts.
MAX_PUBLISHED_BATCH = 1024
_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


@dataclass
class Model:
    """One model name as last loaded: its completed config, its ready versions, and why others are not."""

    name: str
    config: Any | None
    versions: dict[int, ModelVersion] = field(default_factory=dict)
    #: Versions that failed to load, and why.
    failed: dict[int, str] = field(default_factory=dict)
    #: Why the model as a whole is not served ("" when it loaded), or "unloaded".
    reason: str = ""


@dataclass
class Published:
    """A model published from a compiled handle (``PublishModel``): served while the handle is held."""

    owner: str
    handle: str
    model: Model


def versions_of(directory: Path) -> list[int]:
    """The version directories of a model: numeric names not starting with 0, ascending."""
    found = []
    for child in directory.iterdir():
        if child.is_dir() and child.name.isdigit() and not child.name.startswith("0"):
            found.append(int(child.name))
    return sorted(found)


def chosen_versions(config: Any, available: list[int]) -> list[int]:
    """The versions the config's version policy serves (latest 1 when it sets none)."""
    policy = config.version_policy
    which = policy.WhichOneof("policy_choice")
    if which == "all":
        return available
    if which == "specific":
        return [v for v in available if v in set(policy.specific.versions)]
    count = policy.latest.num_versions if which == "latest" and policy.latest.num_versions > 0 else 1
    return available[-count:]


def model_file(directory: Path, config: Any) -> Path:
    """The ONNX file of one version directory (``default_model_filename``, a file or a directory holding it)."""
    name = config.default_model_filename or "model.onnx"
    path = directory / name
    if path.is_dir():
        path = path / "model.onnx"
    return path


class Repository:
    """The models of one repository directory, by name. Loading runs off the event loop (``prepare``); the
    tables change only on the loop (``install``), so requests always see a whole model."""

    def __init__(
        self,
        root: Path | None,
        provider: Provider,
        scheduler: Scheduler,
        *,
        default_max_batch_size: int,
        explicit: bool,
        catalog: Catalog | None = None,
        max_graph_nodes: int = 0,
        handles: HandleStore | None = None,
    ) -> None:
        self.root = root
        #: Compiles ``model.dmlgraph`` entries (as CompileGraph does, within ``max_graph_nodes``).
        self.catalog = catalog
        self.max_graph_nodes = max_graph_nodes
        self.provider = provider
        self.scheduler = scheduler
        self.default_max_batch_size = default_max_batch_size
        self.explicit = explicit
        self.models: dict[str, Model] = {}
        #: Compiled handles published as models, by model name (``PublishModel``).
        self.published: dict[str, Published] = {}
        self.handles = handles
        self._loading = threading.Lock()

    def names(self) -> list[str]:
        """The model directories of the repository (read now: models added since start are listed)."""
        if self.root is None or not self.root.is_dir():
            return []
        return sorted(child.name for child in self.root.iterdir() if child.is_dir() and not child.name.startswith("."))

    # -- load and unload ----------------------------------------------------------------------------------------

    def prepare(self, name: str, override: Any | None = None) -> Model:
        """Read, complete and check one model's config and create its versions' sessions (blocking: run it on a
        worker thread). Never raises for a bad model: the returned Model says why it is not served."""
        with self._loading:
            if self.root is None:
                return Model(name, None, reason="this server has no model repository (--model-repository DIR)")
            directory = self.root / name
            try:
                return self._prepare(directory, override)
            except ModelError as error:
                _log.warning("model %s is not served: %s", name, error)
                return Model(name, None, reason=str(error))
            except Exception as error:  # a model file ONNX or ONNX Runtime rejects
                reason = str(error).splitlines()[0][:500] if str(error) else type(error).__name__
                _log.warning("model %s is not served: %s", name, reason)
                return Model(name, None, reason=reason)

    def _prepare(self, directory: Path, override: Any | None) -> Model:
        if not directory.is_dir():
            raise ModelError(f"no directory '{directory.name}' in the model repository")
        if override is not None:
            config = ModelConfig()
            config.CopyFrom(override)
            if config.name and config.name != directory.name:
                raise ModelError(f"the config names model '{config.name}', not '{directory.name}'")
            config.name = directory.name
        else:
            config = read_config(directory)
        available = versions_of(directory)
        if not available:
            raise ModelError("the model has no version directory (a positive integer name)")
        chosen = chosen_versions(config, available)
        if not chosen:
            raise ModelError(f"the version policy selects none of the versions {available}")
        if graphs.is_graph(config, directory / str(chosen[-1])):
            return self._prepare_graph(directory, config, chosen)
        # Completed once, from the newest version, as Triton does; every version is then checked against it.
        newest = onnx.load(str(model_file(directory / str(chosen[-1]), config)), load_external_data=False)
        complete(config, *onnx_io(newest), self.default_max_batch_size)
        fill_instance_group(config)
        model = Model(directory.name, config)
        for version in chosen:
            try:
                model.versions[version] = self._version(directory, version, config)
            except Exception as error:
                reason = str(error).splitlines()[0][:500] if str(error) else type(error).__name__
                _log.warning("model %s version %d is not served: %s", directory.name, version, reason)
                model.failed[version] = reason
        if not model.versions:
            model.reason = "no version of the model could be loaded"
        return model

    def _prepare_graph(self, directory: Path, config: Any, chosen: list[int]) -> Model:
        """A DirectML graph: each version's ``model.dmlgraph`` compiled as CompileGraph compiles it; the config
        completed from the newest version's descs, every version checked against it."""
        if self.catalog is None:  # pragma: no cover - build_server always passes one
            raise ModelError("this repository cannot compile DirectML graphs")
        catalog = self.catalog
        pool = self.scheduler.pool

        def load(version: int) -> graphs.CompiledModel:
            return graphs.load_graph(
                graphs.graph_file(directory / str(version), config), catalog, pool, self.max_graph_nodes
            )

        newest = load(chosen[-1])
        graphs.complete(config, newest, self.default_max_batch_size)
        fill_instance_group(config)
        model = Model(directory.name, config)
        for version in chosen:
            try:
                compiled = newest if version == chosen[-1] else load(version)
                graphs.check(config, compiled)
                model.versions[version] = graph_version(directory.name, version, config, compiled, self.scheduler)
            except ModelError as error:
                _log.warning("model %s version %d is not served: %s", directory.name, version, error)
                model.failed[version] = str(error)
        if not model.versions:
            model.reason = "no version of the model could be loaded"
        return model

    def _version(self, directory: Path, version: int, config: Any) -> ModelVersion:
        path = model_file(directory / str(version), config)
        if not path.is_file():
            raise ModelError(f"version {version} has no model file '{path.name}'")
        model = onnx.load(str(path), load_external_data=False)
        check(config, *onnx_io(model))
        options = self.provider.session_options()
        # Whole models gain from ONNX Runtime's full graph optimisation (operator descs are single nodes).
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(path), sess_options=options, providers=self.provider.providers())
        run = session_runner(session, self.provider)
        work = item_work(model, config.max_batch_size > 0)  # where its batches run: the loop when tiny
        on_device = self.provider.name != CPU
        return ModelVersion(directory.name, version, config, run, self.scheduler, work=work, on_device=on_device)

    def install(self, model: Model) -> None:
        """Serve ``model`` from now on (requests already running finish on the version they started on)."""
        self.models[model.name] = model
        if model.versions:
            _log.info("model %s: version(s) %s ready", model.name, sorted(model.versions))

    def unload(self, name: str) -> None:
        """Stop serving ``name``; RepositoryIndex then reports it UNAVAILABLE, "unloaded"."""
        self.models[name] = Model(name, None, reason="unloaded")

    # -- lookups ------------------------------------------------------------------------------------------------

    def get(self, name: str, version: str) -> ModelVersion:
        """The version a request names (empty: the highest ready one), with Triton's status codes.

        Raises:
            InvalidArgument: an unknown model, or a version that is not an integer.
            NotFound: a known model with no ready version.
            Unavailable: the version named is not ready.
        """
        model = self.model(name)
        if model is None:
            self._no_repository(name)
            raise InvalidArgument("model_name", f"Request for unknown model: '{name}' is not found")
        if version:
            if not version.isdigit():
                raise InvalidArgument("model_version", f"'{version}' is not a version number")
            ready = model.versions.get(int(version))
            if ready is None:
                raise Unavailable(f"Request for unknown model: '{name}' version {int(version)} is not at ready state")
            return ready
        if not model.versions:
            raise NotFound(f"Request for unknown model: '{name}' has no available versions ({model.reason})")
        return model.versions[max(model.versions)]

    def _no_repository(self, name: str) -> None:
        if self.root is None:
            raise Unavailable(
                f"no model '{name}': this server has no model repository (start it with --model-repository DIR) and "
                "serves only models published from compiled handles"
            )

    def is_ready(self, name: str, version: str) -> bool:
        model = self.model(name, use=False)  # a readiness probe is no use of a published handle
        if model is None or not model.versions:
            return False
        if not version:
            return True
        return version.isdigit() and int(version) in model.versions

    def config(self, name: str) -> Any:
        """The completed config of a model that loaded (Triton answers for a model with a ready version only).

        Raises:
            InvalidArgument / NotFound: as ``get``.
        """
        model = self.model(name)
        if model is None:
            self._no_repository(name)
            raise InvalidArgument("name", f"Request for unknown model: '{name}' is not found")
        if model.config is None or not model.versions:
            raise NotFound(f"Request for unknown model: '{name}' has no available versions ({model.reason})")
        return model.config

    def index(self, ready_only: bool) -> list[Any]:
        """One entry per model version (and per model that is not served), as RepositoryIndex lists them."""
        entries = []
        index = service_pb2.RepositoryIndexResponse.ModelIndex
        for name in sorted(set(self.names()) | set(self.models)):
            model = self.models.get(name)
            if model is None:
                if not ready_only:
                    entries.append(index(name=name))  # in the repository, never loaded
                continue
            for version in sorted(model.versions):
                entries.append(index(name=name, version=str(version), state=READY))
            if ready_only:
                continue
            for version, reason in sorted(model.failed.items()):
                entries.append(index(name=name, version=str(version), state=UNAVAILABLE, reason=reason))
            if not model.versions:
                entries.append(index(name=name, state=UNAVAILABLE, reason=model.reason))
        for name in sorted(self.published):
            if name not in self.models and self.model(name, use=False) is not None:
                entries.append(index(name=name, version="1", state=READY, reason=PUBLISHED))
        return entries

    def model(self, name: str, *, use: bool = True) -> Model | None:
        """The model a name serves: loaded from the repository, else published from a handle still held (one whose
        handle was released or expired is forgotten here; with ``use`` the handle's idle time restarts)."""
        model = self.models.get(name)
        if model is not None:
            return model
        published = self.published.get(name)
        if published is None:
            return None
        if self.handles is None or not self.handles.touch(published.handle, use=use):
            del self.published[name]
            _log.info("model %s unpublished: its compiled handle was released or expired", name)
            return None
        return published.model

    def served(self) -> list[Model]:
        """Every model with a name (loaded or published), in name order."""
        names = sorted(set(self.models) | set(self.published))
        return [model for name in names if (model := self.model(name, use=False)) is not None]

    def sweep_published(self) -> int:
        """Forget the published models whose handles are gone (released or expired); how many."""
        handles = self.handles
        gone = [n for n, p in self.published.items() if handles is None or not handles.touch(p.handle, use=False)]
        for name in gone:
            del self.published[name]
            _log.info("model %s unpublished: its compiled handle was released or expired", name)
        return len(gone)

    # -- published handles --------------------------------------------------------------------------------------

    def publish(self, owner: str, handle: str, name: str, max_batch_size: int) -> int:
        """Serve the caller's compiled handle as model ``name`` (version 1) while the handle is held; the version.

        Raises:
            NotFound: the handle is unknown, released, expired or another caller's.
            InvalidArgument: a model name that cannot be one, or a max_batch_size over the server's.
            AlreadyExists: the name is the repository's or published already.
            Unavailable: the server cannot publish (no catalog).
        """
        if self.handles is None or self.catalog is None:
            raise Unavailable("this server cannot publish compiled handles as models")
        entry = self.handles.get(owner, handle)
        if not _NAME.fullmatch(name) or name in {".", ".."}:
            raise InvalidArgument(
                "model_name", f"{name!r} is not a model name (letters, digits, '_', '-', '.'; 1 to 128 characters)"
            )
        if max_batch_size > MAX_PUBLISHED_BATCH:
            raise InvalidArgument("max_batch_size", f"{max_batch_size} is over {MAX_PUBLISHED_BATCH}")
        if name in self.models or name in self.names():
            raise AlreadyExists(f"model_name: '{name}' is a model of the repository")
        if self.model(name) is not None:
            raise AlreadyExists(f"model_name: '{name}' is published already")
        compiled = graphs.compiled_model(self.scheduler.pool, entry.compiled, entry.owned, graph=entry.label == "graph")
        config = ModelConfig(name=name, max_batch_size=max_batch_size)
        if max_batch_size > 1:
            config.dynamic_batching.SetInParent()
        graphs.complete(config, compiled, 0)
        fill_instance_group(config)
        model = Model(name, config)
        model.versions[1] = graph_version(name, 1, config, compiled, self.scheduler)
        self.published[name] = Published(owner, handle, model)
        _log.info("model %s published from a compiled %s", name, entry.label)
        return 1


def graph_version(
    name: str, version: int, config: Any, model: graphs.CompiledModel, scheduler: Scheduler
) -> ModelVersion:
    """A compiled operator or graph as a served version: requests are prepared per item on the loop (the plan's
    data-dependent checks), batches run on the scheduler's worker threads."""
    batching = config.max_batch_size > 0

    def run(feeds: Feeds, options: ort.RunOptions | None) -> dict[str, np.ndarray]:
        return model.run(feeds, options, batching)

    def prepare(feeds: Feeds) -> Feeds:
        return model.prepare(feeds, batching)

    compiled = model.compiled
    return ModelVersion(
        name,
        version,
        config,
        run,
        scheduler,
        label=model.platform,
        prepare=prepare,
        work=compiled.work,
        on_device=compiled.on_device,
    )


def session_runner(session: ort.InferenceSession, provider: Provider) -> Runner:
    """Run ``session`` on a batch's feeds: its outputs by name (one run at a time where the provider needs it)."""
    names = [output.name for output in session.get_outputs()]
    binding = session._sess

    def run(feeds: Feeds, options: ort.RunOptions | None) -> dict[str, np.ndarray]:
        # NOTE: the binding, not the session's wrapper, which checks the feeds again in Python on every run (the
        # codec has checked them); where a provider fails, the wrapper's own retry on its fallback providers.
        try:
            outputs = binding.run(names, feeds, UNSTOPPED if options is None else options)
        except EPFail:
            outputs = session.run(names, feeds, options)
        return dict(zip(names, outputs, strict=True))

    if not provider.serialize_runs:
        return run
    lock = threading.Lock()

    def serialized(feeds: Feeds, options: ort.RunOptions | None) -> dict[str, np.ndarray]:
        with lock:
            return run(feeds, options)

    return serialized


__all__ = [
    "PUBLISHED",
    "READY",
    "UNAVAILABLE",
    "Model",
    "Published",
    "Repository",
    "chosen_versions",
    "graph_version",
    "session_runner",
    "versions_of",
]
