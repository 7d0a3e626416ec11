#!/usr/bin/env bash
# Run the Windows CPython under Wine in the lane's chroot, with the project's current code:
#   tools/dml-wine/run.sh -m dml_wine_serve --provider directml --port 50100    (the real server)
#   tools/dml-wine/run.sh -m dml_wine_probe                                    (the Windows-side checks)
# Arguments go to python.exe. Starts a private Xvfb (vkd3d needs a display) and stops it on exit; SIGTERM or
# SIGINT end the Windows process too. Exit status 3: the environment is not built (run build.sh). The chroot's
# mounts live in this script's own mount namespace: the host never sees them, and they end with the script.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck source=tools/dml-wine/env.sh
source "$HERE/env.sh"

if [ ! -f "$DML_WINE_STAMP" ] || [ ! -f "$DML_WINE_PYTHON" ]; then
    echo "dml-wine: environment not built in $DML_WINE_CACHE; run tools/dml-wine/build.sh" >&2
    exit 3
fi
dml_wine_private_mounts "$@"
dml_wine_mount

# What the chroot gets: the code, and the tests with what they read (pytest's settings, the docs they check against)
# for dml_wine_pytest.
CODE_PATHS=(client server tests pyproject.toml README.md docs)

# Copy the project's code into the chroot when it changed; the swap is a rename, so a process started from the
# previous copy keeps a complete tree.
sync_code() {
    local digest target="$DML_WINE_ROOT$DML_WINE_CODE" staging
    # The operator data (JSON, TOML) is code too: the server reads its tables at import.
    digest=$(cd "$REPO" && find "${CODE_PATHS[@]}" tools/dml-wine/win \( -name '*.py' -o -name '*.json' -o -name '*.toml' -o -name '*.md' \) \
        -not -path '*/__pycache__/*' -print0 \
        | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
    [ "$(cat "$target/.digest" 2>/dev/null)" = "$digest" ] && return 0
    staging=$(mktemp -d "$DML_WINE_ROOT/opt/dmlrpc.XXXXXX")
    (cd "$REPO" && tar cf - --exclude=__pycache__ --exclude='*.egg-info' "${CODE_PATHS[@]}") | tar xf - -C "$staging"
    cp -r "$HERE/win" "$staging/win"
    rm -rf "$staging/win/__pycache__"
    echo "$digest" >"$staging/.digest"
    chmod 755 "$staging"
    if [ -d "$target" ]; then
        mv "$target" "$staging.old" && mv "$staging" "$target" && rm -rf "$staging.old"
    else
        mv "$staging" "$target"
    fi
}
sync_code

xvfb_pid="" wine_pid="" display_file=""
cleanup() {
    [ -n "$wine_pid" ] && kill "$wine_pid" 2>/dev/null || true
    [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
    [ -n "$display_file" ] && rm -f "$display_file"
    return 0
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# Xvfb picks a free display itself and writes its number to the file.
display_file=$(mktemp)
chroot "$DML_WINE_ROOT" /usr/bin/Xvfb -displayfd 1 -screen 0 640x480x24 -nolisten tcp >"$display_file" 2>/dev/null &
xvfb_pid=$!
for _ in $(seq 100); do
    [ -s "$display_file" ] && break
    kill -0 "$xvfb_pid" 2>/dev/null || { echo "dml-wine: Xvfb failed to start" >&2; exit 1; }
    sleep 0.1
done
[ -s "$display_file" ] || { echo "dml-wine: Xvfb did not report a display" >&2; exit 1; }
DISPLAY=":$(head -1 "$display_file")"
export DISPLAY

# Wine's stdout must be a pipe (the console path garbles it); drop the 32-bit-loader noise of a 64-bit-only Wine.
DML_WINE_NOISE='wine32|multiarch|i386|^it looks like|^Could not find Wine Gecko'
exec 4> >(sed -u -E -e 's/\x00//g' -e "/$DML_WINE_NOISE/d")
filter_pid=$!
dml_wine_prefix
"${DML_WINE_CMD[@]}" wine "$(dml_wine_winpath "$DML_WINE_WINPY/python.exe")" "$@" >&4 2>&1 4>&- &
wine_pid=$!
set +e
wait "$wine_pid"
status=$?
set -e
wine_pid=""
exec 4>&-
wait "$filter_pid" 2>/dev/null || true
exit "$status"
