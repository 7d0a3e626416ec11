"""The lock files under deploy/requirements: fresh for pyproject.toml, satisfying it, and what the images install.

tools/lock.py re-resolves them from PyPI; these checks are offline (the recorded inputs digest and the pins).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("lock", Path(__file__).parent.parent / "tools/lock.py")
assert _SPEC is not None and _SPEC.loader is not None
lock = importlib.util.module_from_spec(_SPEC)
sys.modules["lock"] = lock
_SPEC.loader.exec_module(lock)


def text(name: str) -> str:
    return (lock.LOCKS / f"{name}.txt").read_text()


@pytest.mark.parametrize("name", list(lock.TARGETS))
def test_lock_is_fresh(name: str) -> None:
    assert lock.check(lock.TARGETS[name], text(name)) == []


@pytest.mark.parametrize("name", list(lock.TARGETS))
def test_every_pin_has_a_hash(name: str) -> None:
    """pip install --require-hashes needs a hash on every pin: the images install exactly these files."""
    digest, pins = lock.parse(text(name))
    assert digest and pins
    assert text(name).count("--hash=sha256:") == len(pins)


def test_targets_pin_their_runtime() -> None:
    assert lock.parse(text("linux-cpu"))[1]["onnxruntime"] == lock.ORT_VERSION
    assert lock.parse(text("linux-cuda"))[1]["onnxruntime-gpu"] == lock.ORT_VERSION
    assert "onnxruntime" not in lock.parse(text("linux-cuda"))[1]
    windows = lock.parse(text("windows"))[1]
    assert "onnxruntime" not in windows and windows["onnxruntime-directml"] == "1.24.4"
    assert int(windows["numpy"].split(".")[0]) < 2


def test_stale_inputs_are_found() -> None:
    target = lock.TARGETS["linux-cpu"]
    changed = dataclasses.replace(target, pins=[*target.pins, "numpy<2"])
    findings = lock.check(changed, text("linux-cpu"))
    assert any("stale" in f for f in findings) and any("numpy==" in f and "does not satisfy" in f for f in findings)


def test_missing_pins_are_found() -> None:
    broken = "\n".join(line for line in text("linux-cpu").splitlines() if not line.startswith("grpcio=="))
    assert any("grpcio is not locked" in f for f in lock.check(lock.TARGETS["linux-cpu"], broken))


def test_images_and_the_directml_lane_install_the_locks() -> None:
    root = lock.ROOT
    linux = (root / "deploy/docker/Dockerfile.linux").read_text()
    assert "deploy/requirements/linux-${ORT_FLAVOUR}.txt" in linux and "--require-hashes" in linux
    windows = (root / "deploy/docker/Dockerfile.windows").read_text()
    assert "deploy\\requirements\\windows.txt" in windows and "--require-hashes" in windows
    assert "deploy/requirements/windows.txt" in (root / "tools/dml-wine/build.sh").read_text()
    for ignore in ("Dockerfile.linux.dockerignore", "Dockerfile.windows.dockerignore"):
        assert "!deploy/requirements/" in (root / "deploy/docker" / ignore).read_text()
