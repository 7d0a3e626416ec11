# Shared settings and helpers of the real-DirectML lane (sourced by build.sh and run.sh).
# shellcheck shell=bash

DML_WINE_CACHE="${DMLRPC_WINE_CACHE:-$HOME/.cache/dmlrpc/dml-wine}"
DML_WINE_ROOT="$DML_WINE_CACHE/root"
DML_WINE_WHEELS="$DML_WINE_CACHE/wheels"
DML_WINE_STAMP="$DML_WINE_CACHE/stamp"
# Paths inside the chroot.
DML_WINE_WINPY=/opt/winpy
DML_WINE_PREFIX=/opt/wpfx
DML_WINE_CODE=/opt/dmlrpc
# The test tools (deploy/requirements/windows-tests.txt), beside the Windows CPython's site-packages, which stays
# exactly the image's lock: only tools/dml-wine/win/dml_wine_pytest.py puts this directory on its path.
DML_WINE_TEST_TOOLS=/opt/wintest
DML_WINE_PYTHON="$DML_WINE_ROOT$DML_WINE_WINPY/python.exe"

# A chroot path as Wine's Z: drive sees it.
dml_wine_winpath() { printf 'Z:%s' "${1//\//\\}"; }

# Re-run the calling script ("$0" "$@") in a mount namespace of its own, once. Every mount the lane makes (proc,
# dev and sys inside the chroot) is made there, so the host never sees one and they all vanish with the script's
# last process, even after a kill: nothing is left to unmount. Slave propagation: the host's later mounts still
# show inside, nothing made inside reaches the host. unshare execs without forking, so the pid (which callers
# signal) stays the script's.
dml_wine_private_mounts() {
    [ "${DML_WINE_PRIVATE_MOUNTS:-}" = "$DML_WINE_ROOT" ] && return 0
    DML_WINE_PRIVATE_MOUNTS="$DML_WINE_ROOT" exec unshare --mount --propagation slave -- "$BASH" "$0" "$@"
}

# proc, dev and sys inside the chroot, in the script's private mount namespace (dml_wine_private_mounts); rslave
# as well, so that unmounting there never propagates to the host's /dev or /sys.
dml_wine_mount() {
    if [ "${DML_WINE_PRIVATE_MOUNTS:-}" != "$DML_WINE_ROOT" ]; then
        echo "dml-wine: refusing to mount on the host: call dml_wine_private_mounts first" >&2
        return 1
    fi
    mountpoint -q "$DML_WINE_ROOT/proc" || mount -t proc proc "$DML_WINE_ROOT/proc"
    local dir
    for dir in dev sys; do
        if ! mountpoint -q "$DML_WINE_ROOT/$dir"; then
            mount --rbind "/$dir" "$DML_WINE_ROOT/$dir"
            mount --make-rslave "$DML_WINE_ROOT/$dir"
        fi
    done
}

# Unmount what an earlier version of these scripts left mounted on the host (build.sh --clean).
dml_wine_umount() {
    local dir
    for dir in proc dev sys; do
        if [ -d "$DML_WINE_ROOT/$dir" ] && mountpoint -q "$DML_WINE_ROOT/$dir"; then
            umount -R "$DML_WINE_ROOT/$dir" 2>/dev/null || umount -R -l "$DML_WINE_ROOT/$dir"
        fi
    done
}

# The command prefix that runs a program in the chroot with the Wine environment (quiet Wine, no Mono/Gecko
# prompts); an array, so that a backgrounded "${prefix[@]}" cmd is one process whose pid can be signalled. The
# caller's DMLRPC_ variables go through (the server's settings, the tests' knobs such as DMLRPC_RECYCLE_DESCS),
# except the lane's own (DMLRPC_DML_*, DMLRPC_WINE_*), which mean something only on this side.
dml_wine_prefix() {
    local name
    DML_WINE_CMD=(chroot "$DML_WINE_ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8
        WINEPREFIX="$DML_WINE_PREFIX" WINEDEBUG="${WINEDEBUG:--all}" "WINEDLLOVERRIDES=mscoree,mshtml="
        ${DISPLAY:+DISPLAY="$DISPLAY"} ${VKD3D_DEBUG:+VKD3D_DEBUG="$VKD3D_DEBUG"}
        ${VKD3D_SHADER_DEBUG:+VKD3D_SHADER_DEBUG="$VKD3D_SHADER_DEBUG"})
    for name in $(compgen -e | grep '^DMLRPC_' | grep -v -E '^DMLRPC_(DML|WINE)_'); do
        DML_WINE_CMD+=("$name=${!name}")
    done
}

dml_wine_chroot() {
    dml_wine_prefix
    "${DML_WINE_CMD[@]}" "$@"
}
