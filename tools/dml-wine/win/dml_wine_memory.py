"""How much memory DirectML sessions hold under the lane: sessions created, run once and released, one after another."""

# Prints one line per step with the process's Linux memory (read from /proc through Wine's Z: drive), so that a
# growth per released session can be told from a growth per live one. Usage:
#   run.sh -m dml_wine_memory sessions 12 [--keep N] [--no-run] [--pause S]
#   run.sh -m dml_wine_memory devices|heaps|descriptor-heaps 4   (bare D3D12 objects created and released)
# The models are one Neg node over a distinct shape each: small, and each one a session of its own, as distinct
# descs are in the server's compile cache.

from __future__ import annotations

import argparse
import gc
import time
from collections import deque

import dml_wine_shim

dml_wine_shim.apply()  # before anything creates a DirectML device

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

from dmlrpc_server.runtime.providers import choose_provider  # noqa: E402

MARKER = "DMLRPC-MEMORY "
_FIELDS = ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmSize")


def linux_memory() -> dict[str, int]:
    """The Wine process's memory figures in KiB (Linux's /proc/self/status), or {} where /proc cannot be read."""
    try:
        with open("Z:\\proc\\self\\status") as status:
            lines = status.read().splitlines()
    except OSError:
        return {}
    figures: dict[str, int] = {}
    for line in lines:
        name, _, value = line.partition(":")
        if name in _FIELDS:
            figures[name] = int(value.split()[0])
    return figures


def model(size: int) -> bytes:
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [size])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [size])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Neg", ["x"], ["y"])], "neg", [x], [y])
    built = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)], ir_version=8)
    return built.SerializeToString()


def release(com_object: object) -> int:
    """IUnknown::Release of a COM pointer (vtable slot 2); the object's remaining reference count."""
    import ctypes

    assert isinstance(com_object, ctypes.c_void_p)
    vtable = ctypes.cast(com_object, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)))[0]
    release_fn = ctypes.WINFUNCTYPE(ctypes.c_ulong, ctypes.c_void_p)(vtable[2])  # type: ignore[attr-defined]
    return int(release_fn(com_object))


def devices(count: int, *, directml: bool = False) -> None:
    """D3D12 devices (with a DirectML device on each: ``directml``) created and released: whether the lane gives
    a device's memory back."""
    import dml_wine_directml

    print(MARKER + "start", flush=True)
    for index in range(count):
        left: tuple[int, ...]
        if directml:
            dml = dml_wine_directml.DirectML()
            print(MARKER + f"{index + 1} DirectML devices created", flush=True)
            left = release(dml.device), release(dml.d3d12)
        else:
            left = (release(dml_wine_shim.create_d3d12_device()),)
        print(MARKER + f"{index + 1} devices released (refcounts left {left})", flush=True)


_IID_ID3D12_HEAP = "6b3b2502-6e51-45b3-90ee-9884265e8df3"
_IID_ID3D12_DESCRIPTOR_HEAP = "8efb471d-616c-4f49-90f7-127bb763fa51"
#: ID3D12Device vtable slots.
_SLOT_CREATE_DESCRIPTOR_HEAP = 14
_SLOT_CREATE_HEAP = 28


def _device_call(device: object, slot: int, description: object, iid: str) -> object:
    import ctypes
    import uuid

    assert isinstance(device, ctypes.c_void_p)
    vtable = ctypes.cast(device, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)))[0]
    function = ctypes.WINFUNCTYPE(ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(  # type: ignore[attr-defined]
        vtable[slot]
    )
    guid = (ctypes.c_ubyte * 16).from_buffer_copy(uuid.UUID(iid).bytes_le)
    created = ctypes.c_void_p()
    result = function(device, ctypes.byref(description), ctypes.byref(guid), ctypes.byref(created))  # type: ignore[arg-type]
    if result != 0:
        raise OSError(f"ID3D12Device call {slot} failed: HRESULT 0x{result & 0xFFFFFFFF:08x}")
    return created


def heaps(count: int, kind: str, descriptors: int = 65536) -> None:
    """D3D12 heaps (64 MiB, default type) or shader-visible descriptor heaps (``descriptors`` each) created and
    released on one device: whether the lane gives device memory back when its object is released."""
    import ctypes

    class HeapProperties(ctypes.Structure):
        _fields_ = [
            ("type", ctypes.c_int),
            ("page", ctypes.c_int),
            ("pool", ctypes.c_int),
            ("creation_mask", ctypes.c_uint),
            ("visible_mask", ctypes.c_uint),
        ]

    class HeapDesc(ctypes.Structure):
        _fields_ = [
            ("size", ctypes.c_uint64),
            ("properties", HeapProperties),
            ("alignment", ctypes.c_uint64),
            ("flags", ctypes.c_int),
        ]

    class DescriptorHeapDesc(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("count", ctypes.c_uint), ("flags", ctypes.c_int), ("mask", ctypes.c_uint)]

    device = dml_wine_shim.create_d3d12_device()
    print(MARKER + f"start {kind}", flush=True)
    for index in range(count):
        if kind == "heaps":
            created = _device_call(
                device, _SLOT_CREATE_HEAP, HeapDesc(64 << 20, HeapProperties(1, 0, 0, 0, 0), 0, 0), _IID_ID3D12_HEAP
            )
        else:
            created = _device_call(
                device,
                _SLOT_CREATE_DESCRIPTOR_HEAP,
                DescriptorHeapDesc(0, descriptors, 1, 0),
                _IID_ID3D12_DESCRIPTOR_HEAP,
            )
        print(MARKER + f"{index + 1} {kind} created", flush=True)
        remaining = release(created)
        print(MARKER + f"{index + 1} {kind} released (refcount left {remaining})", flush=True)


def main(sessions: int, keep: int, *, run: bool = True, pause: float = 0.0) -> None:
    provider = choose_provider("directml")
    live: deque[ort.InferenceSession] = deque()
    started = time.monotonic()
    print(MARKER + f"start {linux_memory()}", flush=True)
    for index in range(sessions):
        size = 16 + index
        session = ort.InferenceSession(
            model(size), sess_options=provider.session_options(), providers=provider.providers()
        )
        if run:
            x = np.arange(size, dtype=np.float32)
            result = session.run(None, {"x": x})[0]
            assert np.array_equal(result, -x)
        live.append(session)
        del session
        while len(live) > keep:
            live.popleft()
        gc.collect()
        time.sleep(pause)
        print(
            MARKER + f"{index + 1} sessions ({len(live)} live) {time.monotonic() - started:.1f}s {linux_memory()}",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("what", choices=["sessions", "devices", "dml-devices", "heaps", "descriptor-heaps"])
    parser.add_argument("count", type=int, nargs="?", default=12)
    parser.add_argument("--keep", type=int, default=0, help="sessions kept alive at once")
    parser.add_argument("--no-run", action="store_true", help="create sessions without running them")
    parser.add_argument("--descriptors", type=int, default=65536, help="descriptors of each descriptor heap")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds to wait after each release")
    args = parser.parse_args()
    if args.what == "sessions":
        main(args.count, args.keep, run=not args.no_run, pause=args.pause)
    elif args.what in ("devices", "dml-devices"):
        devices(args.count, directml=args.what == "dml-devices")
    else:
        heaps(args.count, args.what, args.descriptors)
