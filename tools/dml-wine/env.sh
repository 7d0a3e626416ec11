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
DML_WINE_PYTHON="$DML_WINE_ROOT$DML_WINE_WINPY/python.exe"

# A chroot path as Wine's Z: drive sees it.
dml_wine_winpath() { printf 'Z:%s' "${1//\//\\}"; }

# proc, dev and sys inside the chroot; rslave so that unmounting there never propagates to the host.
dml_wine_mount() {
    mountpoint -q "$DML_WINE_ROOT/proc" || mount -t proc proc "$DML_WINE_ROOT/proc"
    local dir
    for dir in dev sys; do
        if ! mountpoint -q "$DML_WINE_ROOT/$dir"; then
            mount --rbind "/$dir" "$DML_WINE_ROOT/$dir"
            mount --make-rslave "$DML_WINE_ROOT/$dir"
        fi
    done
}

dml_wine_umount() {
    local dir
    for dir in proc dev sys; do
        if [ -d "$DML_WINE_ROOT/$dir" ] && mountpoint -q "$DML_WINE_ROOT/$dir"; then
            umount -R "$DML_WINE_ROOT/$dir" 2>/dev/null || umount -R -l "$DML_WINE_ROOT/$dir"
        fi
    done
}

# The command prefix that runs a program in the chroot with the Wine environment (quiet Wine, no Mono/Gecko
# prompts); an array, so that a backgrounded "${prefix[@]}" cmd is one process whose pid can be signalled.
dml_wine_prefix() {
    DML_WINE_CMD=(chroot "$DML_WINE_ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8
        WINEPREFIX="$DML_WINE_PREFIX" WINEDEBUG="${WINEDEBUG:--all}" "WINEDLLOVERRIDES=mscoree,mshtml="
        ${DISPLAY:+DISPLAY="$DISPLAY"} ${VKD3D_DEBUG:+VKD3D_DEBUG="$VKD3D_DEBUG"}
        ${VKD3D_SHADER_DEBUG:+VKD3D_SHADER_DEBUG="$VKD3D_SHADER_DEBUG"})
}

dml_wine_chroot() {
    dml_wine_prefix
    "${DML_WINE_CMD[@]}" "$@"
}
