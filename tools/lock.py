#!/usr/bin/env python3
"""Lock files of the images and the DirectML lane: every runtime package pinned, with hashes, per target.

    python tools/lock.py            # re-resolve every target from PyPI and rewrite deploy/requirements/*.txt
    python tools/lock.py --check    # offline: each lock is fresh (inputs unchanged) and satisfies pyproject.toml

A target is a platform (Linux x86-64 or Windows x86-64, CPython 3.11) plus the extra pins it needs. The inputs
(pyproject.toml's runtime requirements with markers evaluated for the target, and the target's pins) are hashed
into each file's header, so `--check` fails as soon as a requirement or pin changes without a re-lock. Resolving
uses pip's own resolver (`pip install --dry-run --report`) for the target's platform; markers of transitive
requirements are evaluated by pip for this machine, as `pip download --platform` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef, import-not-found]

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version
except ModuleNotFoundError:
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[assignment]
    from pip._vendor.packaging.version import Version  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "deploy/requirements"
# setuptools builds the project itself (pyproject's build-system) inside the image, without network access.
BUILD_REQUIREMENTS = ["setuptools>=69"]

_CP311 = {
    "python_version": "3.11",
    "python_full_version": "3.11.0",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "extra": "",
}
LINUX = {
    **_CP311, "os_name": "posix", "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
}  # fmt: skip
WINDOWS = {
    **_CP311, "os_name": "nt", "sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64",
    "platform_release": "10",
}  # fmt: skip
# Debian 12's glibc is 2.36: every manylinux tag up to it.
LINUX_PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(36, 16, -1)] + ["manylinux2014_x86_64"]


@dataclass(frozen=True)
class Target:
    """One lock file: where it installs, and the pins on top of pyproject.toml."""

    name: str
    description: str
    environment: dict[str, str]
    platforms: list[str]
    pins: list[str]
    # Runtime requirements of pyproject.toml replaced by another package (the CUDA build replaces onnxruntime).
    replaces: dict[str, str]
    # A lock that adds tools to another target's: its own top-level requirements instead of pyproject.toml's
    # runtime ones, resolved beside that target's pins, and holding only the packages that lock lacks.
    adds_to: str | None = None
    requires: tuple[str, ...] = ()


ORT_VERSION = "1.31.1"  # the newest release with both the CPU and the CUDA wheel
TARGETS = {
    "linux-cpu": Target(
        "linux-cpu", "Dockerfile.linux, ORT_FLAVOUR=cpu (CPython 3.11, Linux x86-64)", LINUX, LINUX_PLATFORMS,
        [f"onnxruntime=={ORT_VERSION}"], {},
    ),
    "linux-cuda": Target(
        "linux-cuda", "Dockerfile.linux, ORT_FLAVOUR=cuda (CPython 3.11, Linux x86-64; CUDA and cuDNN from pip)",
        LINUX, LINUX_PLATFORMS, [], {"onnxruntime": f"onnxruntime-gpu[cuda,cudnn]=={ORT_VERSION}"},
    ),
    "windows": Target(
        "windows", "Dockerfile.windows and the DirectML lane's Windows Python (CPython 3.11, Windows x86-64)",
        WINDOWS, ["win_amd64"],
        # onnxruntime-directml is in sustained engineering and stops at 1.24.x: move deliberately, after a run of
        # deploy/docker/smoke-windows.ps1 on a GPU host. NumPy 2 calls ucrtbase.crealf, which Wine lacks.
        ["onnxruntime-directml==1.24.4", "numpy<2"], {},
    ),
    # The DirectML lane runs the service's own test suites on that Windows Python (dml_wine_pytest.py), from a
    # directory beside its site-packages, so the image's packages stay exactly windows.txt. colorama is pytest's
    # win32-only requirement, which pip's resolver (evaluating markers for this machine) would leave out.
    "windows-tests": Target(
        "windows-tests", "The DirectML lane's test tools for its Windows Python, beside windows.txt (CPython 3.11, "
        "Windows x86-64)", WINDOWS, ["win_amd64"], [], {}, adds_to="windows",
        requires=("pytest>=8", "pytest-timeout>=2.3", "hypothesis>=6.100", "cryptography>=42", "colorama>=0.4"),
    ),
}  # fmt: skip


def requirements(target: Target) -> list[str]:
    """pyproject.toml's runtime requirements (dependencies and the server extra) as they apply to the target, or the
    target's own where it adds to another's lock."""
    if target.adds_to is not None:
        return sorted(target.requires)
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = []
    for text in [*project.get("dependencies", []), *project.get("optional-dependencies", {}).get("server", [])]:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate(target.environment):
            continue
        requirement.marker = None
        lines.append(target.replaces.get(requirement.name, str(requirement)))
    return sorted(lines)


def base_pins(target: Target) -> dict[str, str]:
    """{name: version} of the lock that the target adds to (none for a lock of its own)."""
    if target.adds_to is None:
        return {}
    return parse((LOCKS / f"{target.adds_to}.txt").read_text())[1]


def build_requirements(target: Target) -> list[str]:
    return [] if target.adds_to is not None else BUILD_REQUIREMENTS


def inputs_digest(target: Target) -> str:
    inputs = [target.description, target.platforms, target.pins, requirements(target), build_requirements(target)]
    if target.adds_to is not None:
        inputs.append(sorted(base_pins(target).items()))
    text = json.dumps(inputs)
    return hashlib.sha256(text.encode()).hexdigest()


def resolve(target: Target) -> list[tuple[str, str, str]]:
    """(name, version, sha256) of every package the target installs, from pip's resolver for its platform."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "requirements.txt").write_text("\n".join(requirements(target) + build_requirements(target)) + "\n")
        base = [f"{name}=={version}" for name, version in base_pins(target).items()]
        (Path(tmp) / "pins.txt").write_text("\n".join(target.pins + base) + "\n")
        platforms = [arg for platform in target.platforms for arg in ("--platform", platform)]
        command = [
            sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", "-",
            "--only-binary=:all:", *platforms, "--python-version", target.environment["python_version"],
            "--implementation", "cp", "--target", str(Path(tmp) / "target"),
            "-r", str(Path(tmp) / "requirements.txt"), "-c", str(Path(tmp) / "pins.txt"),
        ]  # fmt: skip
        report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    pins, base = [], base_pins(target)
    for item in report["install"]:
        if canonicalize_name(item["metadata"]["name"]) in base:
            continue
        hashes = item["download_info"].get("archive_info", {}).get("hashes", {})
        pins.append((canonicalize_name(item["metadata"]["name"]), item["metadata"]["version"], hashes["sha256"]))
    return sorted(pins)


def render(target: Target, pins: list[tuple[str, str, str]]) -> str:
    lines = [
        f"# {target.description}.",
        "# Generated by tools/lock.py from pyproject.toml; do not edit (re-run it, commit the result).",
        f"# inputs sha256: {inputs_digest(target)}",
    ]
    lines += [f"{name}=={version} \\\n    --hash=sha256:{digest}" for name, version, digest in pins]
    return "\n".join(lines) + "\n"


def parse(text: str) -> tuple[str | None, dict[str, str]]:
    """(the recorded inputs digest, {name: version}) of a lock file."""
    digest, pins = None, {}
    for line in text.splitlines():
        if line.startswith("# inputs sha256: "):
            digest = line.split(": ", 1)[1].strip()
        elif line and not line.startswith(("#", " ")):
            name, version = line.split(" ")[0].split("==")
            pins[canonicalize_name(name)] = version
    return digest, pins


def check(target: Target, text: str) -> list[str]:
    """Offline findings: stale inputs, and top-level requirements or pins the lock does not satisfy."""
    digest, pins = parse(text)
    errors = []
    if digest != inputs_digest(target):
        errors.append(f"{target.name}: stale (pyproject.toml or the target's pins changed): run tools/lock.py")
    for text_requirement in [*requirements(target), *build_requirements(target), *target.pins]:
        requirement = Requirement(text_requirement)
        version = pins.get(canonicalize_name(requirement.name))
        if version is None:
            errors.append(f"{target.name}: {requirement.name} is not locked")
        elif not requirement.specifier.contains(Version(version), prereleases=True):
            errors.append(f"{target.name}: {requirement.name}=={version} does not satisfy {requirement}")
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="check the locks offline instead of re-resolving")
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"some of {', '.join(TARGETS)} (default: all)")
    options = parser.parse_args()
    unknown = set(options.targets) - TARGETS.keys()
    if unknown:
        parser.error(f"unknown targets {sorted(unknown)}: choose from {list(TARGETS)}")
    errors = []
    for name in options.targets or TARGETS:
        target, path = TARGETS[name], LOCKS / f"{name}.txt"
        if options.check:
            errors += check(target, path.read_text() if path.exists() else "")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(target, resolve(target)))
            print(f"wrote {path.relative_to(ROOT)}")
    for error in errors:
        print(f"FAIL {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
