#!/usr/bin/env bash
# Installs the toolchains of the C++ and Node examples on Debian/Ubuntu (only what is missing), then their npm deps.
set -euo pipefail
cd "$(dirname "$0")/.."

# The C++ client: a compiler, CMake, and Debian's gRPC C++ library with its code generators.
packages=(g++ cmake pkg-config libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev)
missing=()
for package in "${packages[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
    [ "$status" = "install ok installed" ] || missing+=("$package")
done
# The Node client needs node and npm; Debian's packages only for the commands not on PATH already.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "example toolchains already installed"
fi

# The Node client's packages, exactly as locked in package-lock.json.
(cd examples/node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
