"""Run pytest on the project's own test suites in the Windows CPython under Wine (tests/dml/test_windows_suites.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The project's copy in the chroot (run.sh's DML_WINE_CODE, this file's win/ beside tests/ and pyproject.toml).
CODE = Path(__file__).resolve().parent.parent
#: The test tools (env.sh's DML_WINE_TEST_TOOLS, beside the CPython's directory), kept out of its site-packages so
#: that it stays exactly the Windows image's lock.
TEST_TOOLS = Path(sys.executable).resolve().parent.parent / "wintest"

if __name__ == "__main__":
    sys.path.append(str(TEST_TOOLS))
    import pytest

    os.chdir(CODE)
    sys.exit(pytest.main(["-p", "no:cacheprovider", *sys.argv[1:]]))
