"""The operator tests of tests/ops as cases for another provider's lane: doc examples as they are, a sample of each
property test, against the same references, through the ``client`` fixture of the module that takes them."""

from __future__ import annotations

import importlib
import inspect
import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators import REGISTRY

OPS = Path(__file__).resolve().parent / "ops"
#: Tests of validation rules: refused before a session exists, so nothing in them depends on the provider.
_VALIDATION = re.compile(r"rules|validation|reject|refuse|invalid|needs_feature_level|mismatched|cannot|_count_ranges")
#: The separator between a family (tests/ops module) and the test's own name in the names given here.
SEPARATOR = "__"


def family_of(name: str) -> str:
    """The family (tests/ops module, e.g. ``matrix``) of a test name made by ``operator_tests``, else ``""``."""
    head, separator, _ = name.partition(SEPARATOR)
    return head.removeprefix("test_") if separator else ""


def operator_tests(examples: int, *, exclude: Collection[str] = ()) -> dict[str, Callable[..., Any]]:
    """Every test of tests/ops that needs nothing but ``client`` (and its parameters), by a new name
    ``test_<family>__<name>``: parametrized doc examples unchanged, property tests limited to ``examples`` examples.

    A lane module puts them in its namespace (``globals().update``) beside its own ``client`` fixture, so that
    operators and tests added later are covered without edits. ``exclude`` names families the lane covers itself.
    """
    tests: dict[str, Callable[..., Any]] = {}
    for path in sorted(OPS.glob("test_*.py")):
        family = path.stem.removeprefix("test_")
        if family in exclude:
            continue
        module = importlib.import_module(f"tests.ops.{path.stem}")
        for name, test in vars(module).items():
            if not name.startswith("test_") or not callable(test) or _VALIDATION.search(name):
                continue
            if getattr(test, "__module__", None) != module.__name__:
                continue  # imported from another module: counted there
            handle = getattr(test, "hypothesis", None)
            inner = handle.inner_test if handle is not None else test
            parameters = set(inspect.signature(inner).parameters)
            if "client" not in parameters:
                continue
            marks = list(getattr(test, "pytestmark", []))
            parametrized = {
                argument.strip()
                for mark in marks
                if mark.name == "parametrize"
                for argument in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
            }
            drawn = set(handle._given_kwargs) if handle is not None else set()
            if parameters - {"client"} - parametrized - drawn:
                continue  # needs another fixture (the in-process server's internals)
            if handle is not None:
                test = _sampled(test, handle, examples)
            tests[f"test_{family}{SEPARATOR}{name.removeprefix('test_')}"] = test
    return tests


def _sampled(test: Any, handle: Any, examples: int) -> Callable[..., Any]:
    """A property test again over at most ``examples`` generated examples: every new desc is a new session on a
    device provider, and shrinking would replay many."""
    sample = settings(
        test._hypothesis_internal_use_settings,
        max_examples=examples,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    wrapped: Any = sample(given(**handle._given_kwargs)(handle.inner_test))
    wrapped.pytestmark = [mark for mark in getattr(test, "pytestmark", [])]
    return wrapped  # type: ignore[no-any-return]


class LaneClient:
    """The ``client`` the moved tests get on a lane: ``execute`` through the lane's own call (its restarts, its
    fallback watch), anything else on ``connected()``'s client; it counts the operator cases it ran."""

    def __init__(self, execute: Callable[..., list[Any]], connected: Callable[[], Any]) -> None:
        self._execute = execute
        self._connected = connected
        self.cases: Counter[str] = Counter()

    def execute(self, operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[Any], **options: Any) -> list[Any]:
        self.cases[operator_desc.WhichOneof("desc") or ""] += 1
        return self._execute(operator_desc, inputs, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connected(), name)


def not_run(cases: Collection[str], *, covered: Collection[str] = ()) -> list[str]:
    """The executable operators (at the latest feature level) that no case ran, less those in ``covered`` (case
    names, or operator type names as tests/ops/test_element_wise.py lists them)."""
    executable = {case for case, operator in REGISTRY.items() if operator.support_at(LATEST) is not None}
    return sorted(executable - set(cases) - {case.lower() for case in covered})
