"""Ask DirectML itself (IDMLDevice::CreateOperator and CompileOperator) which operator descs it accepts."""

# ONNX Runtime decides per node whether its DirectML provider takes it, from its own kernel registrations; this
# module goes below that and builds DML_OPERATOR_DESCs by hand for the DirectML.dll that the onnxruntime-directml
# wheel ships, so the answers are DirectML's own. Constants are DirectML.h's. Windows only; apply the vkd3d shim
# (dml_wine_shim.apply) first.

from __future__ import annotations

import ctypes
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dml_wine_shim
import onnxruntime

#: DML_TENSOR_DATA_TYPE values (DirectML.h).
DATA_TYPES: dict[str, int] = {
    "FLOAT32": 1,
    "FLOAT16": 2,
    "UINT32": 3,
    "UINT16": 4,
    "UINT8": 5,
    "INT32": 6,
    "INT16": 7,
    "INT8": 8,
    "FLOAT64": 9,
    "UINT64": 10,
    "INT64": 11,
}
_ELEMENT_BYTES = {"FLOAT64": 8, "UINT64": 8, "INT64": 8, "FLOAT32": 4, "UINT32": 4, "INT32": 4}
_ELEMENT_BYTES |= {"FLOAT16": 2, "UINT16": 2, "INT16": 2, "UINT8": 1, "INT8": 1}
#: DML_OPERATOR_TYPE values (DirectML.h).
OPERATOR_TYPES = {"CAST": 61, "TOP_K": 71, "SCATTER_ELEMENTS": 94, "SCATTER_ND": 109, "TOP_K1": 112}
#: The recurrent operators and the activations they take (a recurrent desc's activations have no tensors).
RECURRENT_TYPES = {"LSTM": 77, "GRU": 78, "ACTIVATION_SIGMOID": 47, "ACTIVATION_TANH": 51}
#: DML_RECURRENT_NETWORK_DIRECTION values.
DIRECTIONS = {"FORWARD": 0, "BACKWARD": 1, "BIDIRECTIONAL": 2}
_FEATURE_LEVELS = [0x1000, 0x2000, 0x2100, 0x3000, 0x3100, 0x4000, 0x4100, 0x5000, 0x5100, 0x5200, 0x6000]
_FEATURE_LEVELS += [0x6100, 0x6200, 0x6300, 0x6400]
_DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0
_DML_FEATURE_FEATURE_LEVELS = 1
_DML_TENSOR_TYPE_BUFFER = 1
_DML_EXECUTION_FLAG_NONE = 0
_IID_IDML_DEVICE = uuid.UUID("6dbd6437-96fd-423f-a98c-ae5e7c2a573f")
_IID_IDML_OPERATOR = uuid.UUID("26caae7a-3081-4633-9581-226fbe57695d")
_IID_IDML_COMPILED_OPERATOR = uuid.UUID("6b15e56a-bf5c-4902-92d8-da3a650afea4")
# IDMLDevice vtable: IUnknown (0-2), IDMLObject (3-6), then CheckFeatureSupport, CreateOperator, CompileOperator.
# ID3D12Device vtable: IUnknown (0-2), ID3D12Object (3-6), GetNodeCount ... CheckFeatureSupport at 13.
_SLOT_D3D12_CHECK_FEATURE_SUPPORT = 13
_D3D12_FEATURE_SHADER_MODEL, _D3D12_FEATURE_D3D12_OPTIONS1 = 7, 8
_SLOT_RELEASE, _SLOT_CHECK_FEATURE_SUPPORT, _SLOT_CREATE_OPERATOR, _SLOT_COMPILE_OPERATOR = 2, 7, 8, 9

_HRESULT = ctypes.c_long
_c_p = ctypes.c_void_p


class BufferTensorDesc(ctypes.Structure):
    _fields_ = [
        ("DataType", ctypes.c_uint),
        ("Flags", ctypes.c_uint),
        ("DimensionCount", ctypes.c_uint),
        ("Sizes", ctypes.POINTER(ctypes.c_uint)),
        ("Strides", ctypes.POINTER(ctypes.c_uint)),
        ("TotalTensorSizeInBytes", ctypes.c_uint64),
        ("GuaranteedBaseOffsetAlignment", ctypes.c_uint),
    ]


class TensorDesc(ctypes.Structure):
    _fields_ = [("Type", ctypes.c_uint), ("Desc", _c_p)]


class OperatorDesc(ctypes.Structure):
    _fields_ = [("Type", ctypes.c_uint), ("Desc", _c_p)]


class CastDesc(ctypes.Structure):
    _fields_ = [("InputTensor", _c_p), ("OutputTensor", _c_p)]


class TopKDesc(ctypes.Structure):
    _fields_ = [
        ("InputTensor", _c_p),
        ("OutputValueTensor", _c_p),
        ("OutputIndexTensor", _c_p),
        ("Axis", ctypes.c_uint),
        ("K", ctypes.c_uint),
    ]


class TopK1Desc(ctypes.Structure):
    _fields_ = [*TopKDesc._fields_, ("AxisDirection", ctypes.c_uint)]


class ScatterDesc(ctypes.Structure):
    _fields_ = [
        ("InputTensor", _c_p),
        ("IndicesTensor", _c_p),
        ("UpdatesTensor", _c_p),
        ("OutputTensor", _c_p),
        ("Axis", ctypes.c_uint),
    ]


class ScatterNdDesc(ctypes.Structure):
    _fields_ = [
        ("InputTensor", _c_p),
        ("IndicesTensor", _c_p),
        ("UpdatesTensor", _c_p),
        ("OutputTensor", _c_p),
        ("InputDimensionCount", ctypes.c_uint),
        ("IndicesDimensionCount", ctypes.c_uint),
    ]


class ActivationDesc(ctypes.Structure):
    _fields_ = [("InputTensor", _c_p), ("OutputTensor", _c_p)]


class LstmDesc(ctypes.Structure):
    _fields_ = [
        *((name, _c_p) for name in ("InputTensor", "WeightTensor", "RecurrenceTensor", "BiasTensor")),
        *((name, _c_p) for name in ("HiddenInitTensor", "CellMemInitTensor", "SequenceLengthsTensor")),
        *((name, _c_p) for name in ("PeepholeTensor", "OutputSequenceTensor", "OutputSingleTensor")),
        ("OutputCellSingleTensor", _c_p),
        ("ActivationDescCount", ctypes.c_uint),
        ("ActivationDescs", _c_p),
        ("Direction", ctypes.c_uint),
        ("ClipThreshold", ctypes.c_float),
        ("UseClipThreshold", ctypes.c_int),
        ("CoupleInputForget", ctypes.c_int),
    ]


class GruDesc(ctypes.Structure):
    _fields_ = [
        *((name, _c_p) for name in ("InputTensor", "WeightTensor", "RecurrenceTensor", "BiasTensor")),
        *((name, _c_p) for name in ("HiddenInitTensor", "SequenceLengthsTensor", "OutputSequenceTensor")),
        ("OutputSingleTensor", _c_p),
        ("ActivationDescCount", ctypes.c_uint),
        ("ActivationDescs", _c_p),
        ("Direction", ctypes.c_uint),
        ("LinearBeforeReset", ctypes.c_int),
    ]


def _guid(value: uuid.UUID) -> Any:
    return (ctypes.c_ubyte * 16).from_buffer_copy(value.bytes_le)


def _method(obj: _c_p, slot: int, *argtypes: Any) -> Any:
    vtable = ctypes.cast(obj, ctypes.POINTER(ctypes.POINTER(_c_p)))[0]
    prototype = ctypes.WINFUNCTYPE(_HRESULT, _c_p, *argtypes)  # type: ignore[attr-defined]
    function = prototype(vtable[slot])
    return lambda *args: function(obj, *args)


def _release(obj: _c_p) -> None:
    vtable = ctypes.cast(obj, ctypes.POINTER(ctypes.POINTER(_c_p)))[0]
    ctypes.WINFUNCTYPE(ctypes.c_ulong, _c_p)(vtable[_SLOT_RELEASE])(obj)  # type: ignore[attr-defined]


_HRESULT_NAMES = {0: "S_OK", 0x80070057: "E_INVALIDARG", 0x80004001: "E_NOTIMPL", 0x887A0004: "DXGI_ERROR_UNSUPPORTED"}


def _hresult(value: int) -> str:
    return _HRESULT_NAMES.get(value & 0xFFFFFFFF, f"0x{value & 0xFFFFFFFF:08X}")


class _Keep:
    """Keeps the ctypes objects a desc points into alive until the call is made."""

    def __init__(self) -> None:
        self.objects: list[Any] = []

    def tensor(self, data_type: str, sizes: Sequence[int]) -> int:
        count = 1
        for size in sizes:
            count *= size
        dims = (ctypes.c_uint * len(sizes))(*sizes)
        total = (count * _ELEMENT_BYTES[data_type] + 3) & ~3  # DMLCalcBufferTensorSize for packed tensors
        buffer = BufferTensorDesc(DATA_TYPES[data_type], 0, len(sizes), dims, None, total, 0)
        tensor = TensorDesc(_DML_TENSOR_TYPE_BUFFER, ctypes.addressof(buffer))
        self.objects += [dims, buffer, tensor]
        return ctypes.addressof(tensor)

    def operator(self, type_name: str, desc: ctypes.Structure) -> OperatorDesc:
        self.objects.append(desc)
        operator = OperatorDesc({**OPERATOR_TYPES, **RECURRENT_TYPES}[type_name], ctypes.addressof(desc))
        self.objects.append(operator)
        return operator

    def activations(self, names: Sequence[str]) -> tuple[int, int]:
        """An array of tensorless activation descs (as a recurrent desc takes them): its count and address."""
        array = (OperatorDesc * len(names))()
        for index, name in enumerate(names):
            activation = ActivationDesc(None, None)
            self.objects.append(activation)
            array[index] = OperatorDesc(RECURRENT_TYPES[name], ctypes.addressof(activation))
        self.objects.append(array)
        return len(names), ctypes.addressof(array)


class DirectML:
    """An IDMLDevice on the default D3D12 adapter (vkd3d under Wine)."""

    def __init__(self) -> None:
        dml_wine_shim.apply()
        self.path = Path(onnxruntime.__file__).parent / "capi" / "DirectML.dll"
        self.dll = ctypes.WinDLL(str(self.path))  # type: ignore[attr-defined]
        self.d3d12 = dml_wine_shim.create_d3d12_device()
        self.device = _c_p()
        result = self.dll.DMLCreateDevice(
            self.d3d12, 0, ctypes.byref(_guid(_IID_IDML_DEVICE)), ctypes.byref(self.device)
        )
        if result != 0:
            raise OSError(f"DMLCreateDevice failed: HRESULT {_hresult(result)}")

    def max_feature_level(self) -> str:
        levels = (ctypes.c_uint * len(_FEATURE_LEVELS))(*_FEATURE_LEVELS)
        query = (ctypes.c_uint * 2)()
        ctypes.cast(query, ctypes.POINTER(ctypes.c_uint))[0] = len(_FEATURE_LEVELS)
        query_struct = (ctypes.c_byte * 16)()  # {UINT count; (pad) const DML_FEATURE_LEVEL* levels}
        ctypes.c_uint.from_buffer(query_struct, 0).value = len(_FEATURE_LEVELS)
        ctypes.c_void_p.from_buffer(query_struct, 8).value = ctypes.addressof(levels)
        answer = ctypes.c_uint()
        check = _method(
            self.device, _SLOT_CHECK_FEATURE_SUPPORT, ctypes.c_uint, ctypes.c_uint, _c_p, ctypes.c_uint, _c_p
        )
        result = check(_DML_FEATURE_FEATURE_LEVELS, 16, ctypes.addressof(query_struct), 4, ctypes.addressof(answer))
        if result != 0:
            return f"CheckFeatureSupport failed: {_hresult(result)}"
        return f"{answer.value >> 12}.{(answer.value >> 8) & 0xF}"

    def data_type_support(self) -> dict[str, bool | str]:
        """DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT: which data types the device supports at all."""
        check = _method(
            self.device, _SLOT_CHECK_FEATURE_SUPPORT, ctypes.c_uint, ctypes.c_uint, _c_p, ctypes.c_uint, _c_p
        )
        answers: dict[str, bool | str] = {}
        for name, value in DATA_TYPES.items():
            query, answer = ctypes.c_uint(value), ctypes.c_int()
            result = check(
                _DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, 4, ctypes.addressof(query), 4, ctypes.addressof(answer)
            )
            answers[name] = bool(answer.value) if result == 0 else _hresult(result)
        return answers

    def accepts(self, type_name: str, desc: ctypes.Structure, keep: _Keep) -> dict[str, str]:
        """HRESULTs of CreateOperator and (when that succeeds) CompileOperator for one desc."""
        operator_desc = keep.operator(type_name, desc)
        create = _method(self.device, _SLOT_CREATE_OPERATOR, _c_p, _c_p, _c_p)
        operator = _c_p()
        result = create(
            ctypes.addressof(operator_desc), ctypes.byref(_guid(_IID_IDML_OPERATOR)), ctypes.byref(operator)
        )
        answer = {"create": _hresult(result)}
        if result == 0:
            compile_ = _method(self.device, _SLOT_COMPILE_OPERATOR, _c_p, ctypes.c_uint, _c_p, _c_p)
            compiled = _c_p()
            result = compile_(
                operator,
                _DML_EXECUTION_FLAG_NONE,
                ctypes.byref(_guid(_IID_IDML_COMPILED_OPERATOR)),
                ctypes.byref(compiled),
            )
            answer["compile"] = _hresult(result)
            if result == 0:
                _release(compiled)
            _release(operator)
        return answer


def top_k(dml: DirectML, type_name: str, data: str, index: str, axis_size: int, k: int) -> dict[str, str]:
    keep = _Keep()
    source = keep.tensor(data, [1, 1, 2, axis_size])
    values, indices = keep.tensor(data, [1, 1, 2, k]), keep.tensor(index, [1, 1, 2, k])
    if type_name == "TOP_K":
        return dml.accepts(type_name, TopKDesc(source, values, indices, 3, k), keep)
    return dml.accepts(type_name, TopK1Desc(source, values, indices, 3, k, 0), keep)


def scatter_elements(dml: DirectML, data: str, index: str) -> dict[str, str]:
    keep = _Keep()
    source, output = keep.tensor(data, [1, 1, 4, 5]), keep.tensor(data, [1, 1, 4, 5])
    indices, updates = keep.tensor(index, [1, 1, 2, 5]), keep.tensor(data, [1, 1, 2, 5])
    return dml.accepts("SCATTER_ELEMENTS", ScatterDesc(source, indices, updates, output, 2), keep)


def scatter_nd(dml: DirectML, data: str, index: str) -> dict[str, str]:
    keep = _Keep()
    source, output = keep.tensor(data, [4, 5]), keep.tensor(data, [4, 5])
    indices, updates = keep.tensor(index, [3, 1]), keep.tensor(data, [3, 5])
    return dml.accepts("SCATTER_ND", ScatterNdDesc(source, indices, updates, output, 2, 2), keep)


def cast(dml: DirectML, source: str, target: str) -> dict[str, str]:
    keep = _Keep()
    return dml.accepts("CAST", CastDesc(keep.tensor(source, [1, 1, 2, 8]), keep.tensor(target, [1, 1, 2, 8])), keep)


def recurrent(dml: DirectML, type_name: str, direction: str, bias: bool) -> dict[str, str]:
    """An LSTM or GRU of FLOAT32 [T, B, I, H] = [3, 2, 4, 5] with DirectML's default activations, with or without a
    bias tensor, both outputs."""
    keep = _Keep()
    steps, batch, inputs, hidden = 3, 2, 4, 5
    directions = 2 if direction == "BIDIRECTIONAL" else 1
    gates = 4 if type_name == "LSTM" else 3
    x = keep.tensor("FLOAT32", [1, steps, batch, inputs])
    w = keep.tensor("FLOAT32", [1, directions, gates * hidden, inputs])
    r = keep.tensor("FLOAT32", [1, directions, gates * hidden, hidden])
    b = keep.tensor("FLOAT32", [1, 1, directions, 2 * gates * hidden]) if bias else None
    sequence = keep.tensor("FLOAT32", [steps, directions, batch, hidden])
    single = keep.tensor("FLOAT32", [1, directions, batch, hidden])
    if type_name == "LSTM":
        count, activations = keep.activations(["ACTIVATION_SIGMOID", "ACTIVATION_TANH", "ACTIVATION_TANH"] * directions)
        cell = keep.tensor("FLOAT32", [1, directions, batch, hidden])
        desc: ctypes.Structure = LstmDesc(
            x,
            w,
            r,
            b,
            None,
            None,
            None,
            None,
            sequence,
            single,
            cell,
            count,
            activations,
            DIRECTIONS[direction],
            0.0,
            0,
            0,
        )
    else:
        count, activations = keep.activations(["ACTIVATION_SIGMOID", "ACTIVATION_TANH"] * directions)
        desc = GruDesc(x, w, r, b, None, None, sequence, single, count, activations, DIRECTIONS[direction], 0)
    return dml.accepts(type_name, desc, keep)


def d3d12_caps(device: _c_p) -> dict[str, Any]:
    """The D3D12 device's shader model and 64-bit integer shader support (what DirectML's shaders may use)."""
    check = _method(device, _SLOT_D3D12_CHECK_FEATURE_SUPPORT, ctypes.c_uint, _c_p, ctypes.c_uint)
    options1 = (ctypes.c_uint * 6)()  # D3D12_FEATURE_DATA_D3D12_OPTIONS1
    caps: dict[str, Any] = {}
    if check(_D3D12_FEATURE_D3D12_OPTIONS1, ctypes.addressof(options1), ctypes.sizeof(options1)) == 0:
        caps["wave_ops"], caps["int64_shader_ops"] = bool(options1[0]), bool(options1[5])
    shader_model = ctypes.c_uint(0x66)  # ask for 6.6; the answer is the highest supported up to that
    if check(_D3D12_FEATURE_SHADER_MODEL, ctypes.byref(shader_model), 4) == 0:
        caps["shader_model"] = f"{shader_model.value >> 4}.{shader_model.value & 0xF}"
    return caps


def _file_version(path: Path) -> str:
    version = ctypes.WinDLL("version")  # type: ignore[attr-defined]
    size = version.GetFileVersionInfoSizeW(str(path), None)
    if not size:
        return "unknown"
    buffer = ctypes.create_string_buffer(size)
    version.GetFileVersionInfoW(str(path), 0, size, buffer)
    pointer, length = _c_p(), ctypes.c_uint()
    if not version.VerQueryValueW(buffer, "\\", ctypes.byref(pointer), ctypes.byref(length)):
        return "unknown"
    fixed = ctypes.cast(pointer, ctypes.POINTER(ctypes.c_uint32 * 13))[0]  # VS_FIXEDFILEINFO
    ms, ls = fixed[2], fixed[3]
    return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"


def probe() -> dict[str, Any]:
    """DirectML's version, feature level and its answer for every operator x data type x index type."""
    dml = DirectML()
    data_types = list(DATA_TYPES)
    index_types = ["UINT32", "UINT64", "INT32", "INT64"]
    report: dict[str, Any] = {
        "dll_version": _file_version(dml.path),
        "data_type_values": DATA_TYPES,
        "operator_type_values": OPERATOR_TYPES,
        "max_feature_level": dml.max_feature_level(),
        "d3d12": d3d12_caps(dml.d3d12),
        "tensor_data_type_support": dml.data_type_support(),
        "accepts": {},
    }
    accepts: dict[str, dict[str, dict[str, str]]] = report["accepts"]
    for type_name in ("TOP_K", "TOP_K1"):
        accepts[type_name] = {
            f"{data}/{index}": top_k(dml, type_name, data, index, 8, 3) for data in data_types for index in index_types
        }
        accepts[type_name + " K=axis size"] = {
            f"{data}/UINT32": top_k(dml, type_name, data, "UINT32", size, size)
            for data in ("FLOAT32",)
            for size in (8,)
        }
        accepts[type_name + " K=axis size"]["FLOAT32/UINT32 size 1"] = top_k(dml, type_name, "FLOAT32", "UINT32", 1, 1)
        accepts[type_name + " K>axis size"] = {"FLOAT32/UINT32": top_k(dml, type_name, "FLOAT32", "UINT32", 8, 9)}
    accepts["SCATTER_ELEMENTS"] = {
        f"{data}/{index}": scatter_elements(dml, data, index) for data in data_types for index in index_types
    }
    # The casts a lowering may put around those operators (64-bit integers <-> 32-bit ones).
    casts = ["INT64", "UINT64", "INT32", "UINT32", "FLOAT32"]
    accepts["CAST"] = {f"{a}->{b}": cast(dml, a, b) for a in casts for b in casts if a != b}
    accepts["SCATTER_ND"] = {
        f"{data}/{index}": scatter_nd(dml, data, index) for data in data_types for index in index_types
    }
    for type_name in ("LSTM", "GRU"):
        accepts[type_name] = {
            f"{direction}/{'bias' if bias else 'no bias'}": recurrent(dml, type_name, direction, bias)
            for direction in DIRECTIONS
            for bias in (True, False)
        }
    return report
