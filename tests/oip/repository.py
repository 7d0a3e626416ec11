"""Small ONNX models made with onnx.helper, laid out as a Triton model repository, and their in-process runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

#: The datatypes whose identity models the repository holds (protocol name -> ONNX element type).
IDENTITY_TYPES = {
    "BOOL": TensorProto.BOOL,
    "UINT8": TensorProto.UINT8,
    "UINT16": TensorProto.UINT16,
    "UINT32": TensorProto.UINT32,
    "UINT64": TensorProto.UINT64,
    "INT8": TensorProto.INT8,
    "INT16": TensorProto.INT16,
    "INT32": TensorProto.INT32,
    "INT64": TensorProto.INT64,
    "FP16": TensorProto.FLOAT16,
    "FP32": TensorProto.FLOAT,
    "FP64": TensorProto.DOUBLE,
    "BYTES": TensorProto.STRING,
}


def model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[tuple[str, int, Sequence[int | str]]],
    outputs: Sequence[tuple[str, int, Sequence[int | str]]],
    initializers: Sequence[onnx.TensorProto] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in outputs],
        initializer=list(initializers),
    )
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 8
    onnx.checker.check_model(made)
    return made


def simple() -> onnx.ModelProto:
    """Triton's `simple` example model: INT32 INPUT0, INPUT1 [N,16] -> OUTPUT0 = sum, OUTPUT1 = difference."""
    io = [("INPUT0", TensorProto.INT32, ["N", 16]), ("INPUT1", TensorProto.INT32, ["N", 16])]
    out = [("OUTPUT0", TensorProto.INT32, ["N", 16]), ("OUTPUT1", TensorProto.INT32, ["N", 16])]
    return model(
        [
            helper.make_node("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]),
            helper.make_node("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"]),
        ],
        io,
        out,
    )


def affine() -> onnx.ModelProto:
    """FP32 INPUT0 [N,16] -> OUTPUT0 = INPUT0 * 2 + 1."""
    return model(
        [helper.make_node("Mul", ["INPUT0", "two"], ["t"]), helper.make_node("Add", ["t", "one"], ["OUTPUT0"])],
        [("INPUT0", TensorProto.FLOAT, ["N", 16])],
        [("OUTPUT0", TensorProto.FLOAT, ["N", 16])],
        [
            helper.make_tensor("two", TensorProto.FLOAT, [], [2.0]),
            helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        ],
    )


def identity(onnx_type: int) -> onnx.ModelProto:
    """INPUT0 [N, D] -> OUTPUT0, the same (D symbolic)."""
    return model(
        [helper.make_node("Identity", ["INPUT0"], ["OUTPUT0"])],
        [("INPUT0", onnx_type, ["N", "D"])],
        [("OUTPUT0", onnx_type, ["N", "D"])],
    )


def fixed() -> onnx.ModelProto:
    """A model that cannot batch (fixed first dim): FP32 X [2,3] -> Y = X + X."""
    return model(
        [helper.make_node("Add", ["X", "X"], ["Y"])],
        [("X", TensorProto.FLOAT, [2, 3])],
        [("Y", TensorProto.FLOAT, [2, 3])],
    )


def write(
    root: Path, name: str, made: onnx.ModelProto, *, config: str | None = None, versions: Sequence[int] = (1,)
) -> Path:
    directory = root / name
    for version in versions:
        (directory / str(version)).mkdir(parents=True, exist_ok=True)
        onnx.save(made, str(directory / str(version) / "model.onnx"))
    if config is not None:
        (directory / "config.pbtxt").write_text(config)
    return directory


def run_in_process(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The model run by ONNX Runtime in this process (the reference every answer is compared with)."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


M_CONFIG = """
name: "m"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
dynamic_batching { max_queue_delay_microseconds: 200000 }
"""

SIMPLE_CONFIG = """
name: "simple"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
  { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
  { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
]
"""

QUEUED_CONFIG = """
max_batch_size: 4
dynamic_batching { max_queue_delay_microseconds: 500000 default_queue_policy { max_queue_size: 2 } }
"""


def build(root: Path) -> Path:
    """The test repository: `m` (§8's fixture), `simple`, identity models per datatype (configs completed from the
    models), a fixed-shape model, a model in two versions, and bad entries that must be reported, not fatal."""
    write(root, "m", affine(), config=M_CONFIG)
    write(root, "simple", simple(), config=SIMPLE_CONFIG)
    for name, onnx_type in IDENTITY_TYPES.items():
        write(root, f"identity_{name.lower()}", identity(onnx_type))
    write(root, "fixed", fixed())
    write(root, "versioned", affine(), versions=(1, 3), config="version_policy { all { } }\n")
    write(root, "queued", affine(), config=QUEUED_CONFIG)
    bad = root / "broken" / "1"
    bad.mkdir(parents=True)
    (bad / "model.onnx").write_bytes(b"not an onnx model")
    write(root, "badconfig", affine(), config="max_batch_size: [nonsense")
    write(root, "cannot_batch", fixed(), config="max_batch_size: 4\n")
    (root / "noversions").mkdir()
    return root
