#!/usr/bin/env bash
# Installs h2load (Debian's nghttp2-client) for bench/native.py, the compiled load generator of the serving-core
# benchmarks, and its test: a Python client needs about a core of its own, which bounds what the bench can measure
# on a few cores. apt-get runs only when h2load is missing.
# Exit status 3: it could not be installed here (the test that needs it then skips with a loud reason).
set -euo pipefail
if command -v h2load >/dev/null 2>&1; then
    echo "h2load already installed ($(h2load --version 2>&1 | head -1))"
    exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "h2load: no apt-get here" >&2; exit 3; }
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "h2load: not root and no sudo" >&2; exit 3; }
    sudo=(sudo)
fi
{ "${sudo[@]}" apt-get update -qq && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends nghttp2-client >/dev/null; } || exit 3
h2load --version >/dev/null 2>&1 || exit 3
echo "h2load installed ($(h2load --version 2>&1 | head -1))"
