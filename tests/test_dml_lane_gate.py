"""The real-DirectML lane (tests/dml) is opt-in: a plain pytest builds and mounts nothing; CI turns it on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.dml.conftest import LANE_VARIABLE

ROOT = Path(__file__).resolve().parents[1]


def _mounts() -> set[str]:
    return set(Path("/proc/self/mounts").read_text().splitlines())


def test_a_plain_pytest_skips_the_lane_without_building_or_mounting(tmp_path: Path) -> None:
    cache = tmp_path / "dml-wine"
    env = {key: value for key, value in os.environ.items() if key != LANE_VARIABLE}
    # Were the gate open, build.sh would create this cache (as root) or skip with its own "cannot build" reason.
    env["DMLRPC_WINE_CACHE"] = str(cache)
    before = _mounts()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/dml", "-q", "-p", "no:cacheprovider", "-rs"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert " skipped" in output and " passed" not in output and " failed" not in output, output
    assert f"set {LANE_VARIABLE}=1" in output, output
    assert not cache.exists(), output
    assert _mounts() - before == set()


def test_ci_and_the_readme_turn_the_lane_on() -> None:
    assert f"export {LANE_VARIABLE}=1" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert f"{LANE_VARIABLE}=1 python -m pytest tests/dml" in readme
