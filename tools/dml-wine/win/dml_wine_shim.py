"""Work around vkd3d's missing ID3D12Device5::EnumerateMetaCommands so DirectML can create its device under Wine."""

# vkd3d answers EnumerateMetaCommands with E_NOTIMPL, and DMLCreateDevice1 (which ONNX Runtime's DirectML provider
# calls) treats that as fatal. vkd3d's devices share one static vtable, so patching the slot once in this process
# makes every later device report "0 metacommands" instead; DirectML then uses its own shaders. Import this module
# and call apply() before the first DirectML session. Windows only (ctypes.WinDLL).

from __future__ import annotations

import ctypes
import uuid
from ctypes import wintypes
from typing import Any

#: IID_ID3D12Device, and the vtable index of EnumerateMetaCommands in ID3D12Device5.
_IID_ID3D12_DEVICE = uuid.UUID("189819f1-1db6-4b57-be54-1821339b85f7")
_SLOT_ENUMERATE_META_COMMANDS = 59
_D3D_FEATURE_LEVEL_11_0 = 0xB000
_PAGE_READWRITE = 0x04

_ENUMERATE = ctypes.WINFUNCTYPE(ctypes.c_long, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint), ctypes.c_void_p)  # type: ignore[attr-defined]


@_ENUMERATE  # type: ignore[untyped-decorator]
def _enumerate_meta_commands(_this: int, count: Any, _descs: int) -> int:
    if count:
        count[0] = 0
    return 0  # S_OK


#: The device whose vtable was patched (kept alive so the patched vtable stays mapped) once apply() has run.
_device: ctypes.c_void_p | None = None


def create_d3d12_device() -> ctypes.c_void_p:
    """A new ID3D12Device on the default adapter (feature level 11_0, what ONNX Runtime asks for)."""
    guid = (ctypes.c_ubyte * 16).from_buffer_copy(_IID_ID3D12_DEVICE.bytes_le)
    device = ctypes.c_void_p()
    d3d12 = ctypes.WinDLL("d3d12")  # type: ignore[attr-defined]
    result = d3d12.D3D12CreateDevice(None, _D3D_FEATURE_LEVEL_11_0, ctypes.byref(guid), ctypes.byref(device))
    if result != 0:
        raise OSError(f"D3D12CreateDevice failed: HRESULT 0x{result & 0xFFFFFFFF:08x}")
    return device


def apply() -> None:
    """Patch the vtable once per process (later calls do nothing)."""
    global _device
    if _device is not None:
        return
    device = create_d3d12_device()
    vtable = ctypes.cast(device, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)))[0]
    slot = ctypes.addressof(vtable.contents) + ctypes.sizeof(ctypes.c_void_p) * _SLOT_ENUMERATE_META_COMMANDS
    kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined]
    old = wintypes.DWORD()
    if not kernel32.VirtualProtect(ctypes.c_void_p(slot), ctypes.c_size_t(8), _PAGE_READWRITE, ctypes.byref(old)):
        raise OSError("VirtualProtect failed on the D3D12 device vtable")
    ctypes.c_void_p.from_address(slot).value = ctypes.cast(_enumerate_meta_commands, ctypes.c_void_p).value
    _device = device
