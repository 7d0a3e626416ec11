"""The lane's chroot mounts (proc, dev, sys) live only in run.sh's private mount namespace: none reaches the host,
so none is left behind when the lane ends."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.dml.conftest import LANE

pytestmark = [pytest.mark.dml, pytest.mark.timeout(600)]


def _chroot_root() -> str:
    """DML_WINE_ROOT as env.sh computes it (DMLRPC_WINE_CACHE or the default cache)."""
    result = subprocess.run(
        ["bash", "-c", 'source "$1" && printf %s "$DML_WINE_ROOT"', "bash", str(LANE / "env.sh")],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def _mounts_under(mounts_file: Path, root: str) -> list[str]:
    targets = [line.split()[1] for line in mounts_file.read_text().splitlines()]
    return sorted(target for target in targets if target.startswith(root + "/"))


def test_run_sh_mounts_in_its_own_namespace_and_leaves_nothing(dml_environment: Path) -> None:
    root = _chroot_root()
    host = Path("/proc/self/mounts")
    before = _mounts_under(host, root)
    process = subprocess.Popen(
        [str(LANE / "run.sh"), "-c", "import time; print('up', flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 180
        for line in process.stdout:
            if line.strip() == "up" or time.monotonic() > deadline:
                break
        assert process.poll() is None, "the Windows python under run.sh ended early"
        # While Wine runs, the chroot's mounts exist in run.sh's namespace (the check is not vacuous) ...
        inside = _mounts_under(Path(f"/proc/{process.pid}/mounts"), root)
        assert {f"{root}/proc", f"{root}/dev", f"{root}/sys"} <= set(inside)
        # ... and not on the host.
        assert _mounts_under(host, root) == before
    finally:
        process.send_signal(signal.SIGTERM)  # run.sh ends the Windows process and its Xvfb
        process.wait(timeout=60)
        if process.stdout is not None:
            process.stdout.close()
    assert _mounts_under(host, root) == before
