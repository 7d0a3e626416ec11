#!/usr/bin/env bash
# Installs a perf_analyzer that runs on Debian 12 into .perf-analyzer/ (bin/perf_analyzer, lib/): the binary that
# the tritonclient 2.41.0 manylinux1 wheel ships (newer perf-analyzer wheels need glibc 2.38), plus what it links:
# libb64 (Debian's libb64-0d) and libcudart.so.12 (PyPI's nvidia-cuda-runtime-cu12; it runs CPU-only without a GPU).
# Exit status 3: it could not be installed here (tests that need it then skip with a loud reason).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python}"
target=.perf-analyzer
if [ -x "$target/bin/perf_analyzer" ] && LD_LIBRARY_PATH="$target/lib" "$target/bin/perf_analyzer" --version >/dev/null 2>&1; then
    echo "perf_analyzer already installed"
    exit 0
fi
status="$(dpkg-query -W -f='${Status}' libb64-0d 2>/dev/null || true)"
if [ "$status" != "install ok installed" ]; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends libb64-0d >/dev/null; } || exit 3
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux1_x86_64 \
    tritonclient==2.41.0 -d "$work" || exit 3
"$python" -m pip download --quiet --no-deps --only-binary=:all: nvidia-cuda-runtime-cu12==12.9.79 -d "$work" || exit 3
rm -rf "$target" && mkdir -p "$target/bin" "$target/lib"
"$python" - "$work" "$target" <<'PY'
import pathlib, sys, zipfile
work, target = map(pathlib.Path, sys.argv[1:])
for wheel in work.glob("*.whl"):
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith("/bin/perf_analyzer"):
                (target / "bin" / "perf_analyzer").write_bytes(archive.read(name))
            elif name.endswith("/libcudart.so.12"):
                (target / "lib" / "libcudart.so.12").write_bytes(archive.read(name))
PY
chmod +x "$target/bin/perf_analyzer"
LD_LIBRARY_PATH="$target/lib" "$target/bin/perf_analyzer" --version >/dev/null 2>&1 || exit 3
echo "perf_analyzer installed in $target/bin"
