"""Print the server's runtime requirements as they resolve on Windows (CPython 3.11, x86-64), from pyproject.toml."""

# Run by build.sh with the host's python3, so it takes what that interpreter has: tomllib (3.11+) or tomli, and
# packaging (or pip's vendored copy) to evaluate environment markers for the Windows target.

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef, import-not-found]

try:
    from packaging.requirements import Requirement
except ModuleNotFoundError:
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment]

WINDOWS_CP311: dict[str, str] = {
    "os_name": "nt",
    "sys_platform": "win32",
    "platform_system": "Windows",
    "platform_machine": "AMD64",
    "platform_release": "10",
    "python_version": "3.11",
    "python_full_version": "3.11.0",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "extra": "",
}


def requirements(pyproject: Path) -> list[str]:
    project: dict[str, Any] = tomllib.loads(pyproject.read_text())["project"]
    lines = []
    for text in [*project.get("dependencies", []), *project.get("optional-dependencies", {}).get("server", [])]:
        requirement = Requirement(text)
        if requirement.name == project["name"]:
            continue  # a self-reference such as dmlrpc[server]
        if requirement.marker is not None and not requirement.marker.evaluate(WINDOWS_CP311):
            continue
        requirement.marker = None
        lines.append(str(requirement))
    return sorted(lines)


if __name__ == "__main__":
    print("\n".join(requirements(Path(sys.argv[1]))))
