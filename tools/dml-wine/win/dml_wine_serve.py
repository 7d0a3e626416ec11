"""Run the real dmlrpc server (dmlrpc_server's own CLI) under Wine, with the vkd3d metacommand shim applied first."""

from __future__ import annotations

import sys

import dml_wine_shim

from dmlrpc_server.__main__ import main

if __name__ == "__main__":
    dml_wine_shim.apply()
    sys.exit(main())
