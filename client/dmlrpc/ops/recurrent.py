"""DML_RNN, DML_LSTM and DML_GRU as NumPy-style builders, with ONNX's tensor layouts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import PRESENT, GraphFace, operator
from dmlrpc.ops.base import Call, _flag, _float_operand, _scalar, _wrap
from dmlrpc.ops.convolution import _choice
from dmlrpc.ops.random_generator import unsigned_words
from dmlrpc.ops.training import Activation, activation_desc
from dmlrpc.v1 import operators_pb2

__all__ = ["gru", "lstm", "rnn"]

_DIRECTIONS = {
    "forward": operators_pb2.RECURRENT_NETWORK_DIRECTION_FORWARD,
    "backward": operators_pb2.RECURRENT_NETWORK_DIRECTION_BACKWARD,
    "bidirectional": operators_pb2.RECURRENT_NETWORK_DIRECTION_BIDIRECTIONAL,
}
#: Per network: gates stacked in W, R and B; the activations per direction by default (ONNX's, f g h order).
_GATES = {"rnn": 1, "lstm": 4, "gru": 3}
_DEFAULT_ACTIVATIONS = {"rnn": ("tanh",), "lstm": ("sigmoid", "tanh", "tanh"), "gru": ("sigmoid", "tanh")}
#: Per network: its output fields, by the names ``outputs`` selects them with.
_OUTPUTS = {
    "rnn": {"sequence": "output_sequence_tensor", "single": "output_single_tensor"},
    "lstm": {
        "sequence": "output_sequence_tensor",
        "single": "output_single_tensor",
        "cell_single": "output_cell_single_tensor",
    },
    "gru": {"sequence": "output_sequence_tensor", "single": "output_single_tensor"},
}


def _sized(data: np.ndarray, expected: tuple[int, ...], argument: str, where: str, layout: str) -> np.ndarray:
    """``data`` checked against its NumPy shape ``expected`` (``layout`` names the dimensions), sent 4-D."""
    if data.shape != expected:
        raise ArgumentValueError(
            argument, f"{where}: {argument} has shape {data.shape}; it must be {layout} = {expected}"
        )
    return data.reshape((1,) * (4 - data.ndim) + data.shape)


def _recurrent(
    kind: str,
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    optional: dict[str, npt.ArrayLike | None],
    direction: str,
    activations: Sequence[Activation] | None,
    outputs: Sequence[str],
) -> Call:
    """The network's Call, every attribute but its own (LSTM's clip, GRU's reset) set."""
    where = kind
    x = _float_operand(input, "input", kind, where)
    if x.ndim != 3:
        raise ArgumentValueError(
            "input", f"{where}: input has shape {x.shape}; it takes (seq_length, batch, input_size)"
        )
    steps, batch, size = x.shape
    w = _float_operand(weight, "weight", kind, where, x)
    r = _float_operand(recurrence, "recurrence", kind, where, x)
    if r.ndim != 3:
        raise ArgumentValueError(
            "recurrence", f"{where}: recurrence has shape {r.shape}; it takes (num_directions, gates * hidden, hidden)"
        )
    code = _choice(direction, "direction", where, _DIRECTIONS)
    directions = 2 if direction == "bidirectional" else 1
    gates, hidden = _GATES[kind], r.shape[2]
    gh = gates * hidden
    expected = {
        "weight": ((directions, gh, size), "(num_directions, gates * hidden_size, input_size)"),
        "recurrence": ((directions, gh, hidden), "(num_directions, gates * hidden_size, hidden_size)"),
        "bias": ((directions, 2 * gh), "(num_directions, 2 * gates * hidden_size)"),
        "hidden_init": ((directions, batch, hidden), "(num_directions, batch, hidden_size)"),
        "cell_mem_init": ((directions, batch, hidden), "(num_directions, batch, hidden_size)"),
        "sequence_lengths": ((batch,), "(batch,)"),
        "peephole": ((directions, 3 * hidden), "(num_directions, 3 * hidden_size)"),
    }
    bound: list[np.ndarray | None] = [_sized(x, x.shape, "input", where, "")]
    for argument, data in (("weight", w), ("recurrence", r)):
        bound.append(_sized(data, expected[argument][0], argument, where, expected[argument][1]))
    for argument, value in optional.items():
        if value is None:
            bound.append(None)
        elif argument == "sequence_lengths":
            lengths = unsigned_words(value, argument, where)
            if lengths.size and int(lengths.max()) > steps:
                raise ArgumentValueError(
                    argument, f"{where}: sequence_lengths go up to {int(lengths.max())}; seq_length is {steps}"
                )
            bound.append(_sized(lengths, expected[argument][0], argument, where, expected[argument][1]))
        else:
            data = _float_operand(value, argument, kind, where, x)
            bound.append(_sized(data, expected[argument][0], argument, where, expected[argument][1]))
    message: Any = {
        "rnn": operators_pb2.RnnOperatorDesc,
        "lstm": operators_pb2.LstmOperatorDesc,
        "gru": operators_pb2.GruOperatorDesc,
    }[kind]()
    fields = ["input_tensor", "weight_tensor", "recurrence_tensor", *(f"{name}_tensor" for name in optional)]
    for field, array in zip(fields, bound, strict=True):
        if array is not None:
            getattr(message, field).CopyFrom(tensor_desc(array))
    chosen = _outputs(outputs, kind, where)
    shapes = {"sequence": (steps, directions, batch, hidden)} | dict.fromkeys(
        ("single", "cell_single"), (directions, batch, hidden)
    )
    for name in chosen:
        wire = (1,) * (4 - len(shapes[name])) + shapes[name]
        getattr(message, _OUTPUTS[kind][name]).CopyFrom(tensor_desc((x.dtype, wire)))
    per = _DEFAULT_ACTIVATIONS[kind]
    given: Sequence[Activation] = per if activations is None else activations
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise ArgumentTypeError(
            "activations", f"{where}: activations must be a sequence of activation names or descs; got {given!r}"
        )
    if len(given) not in (len(per), directions * len(per)):
        raise ArgumentValueError(
            "activations",
            f"{where}: {len(given)} activations; {kind.upper()} takes {len(per)} per direction ({', '.join(per)} by "
            f"default), or {directions * len(per)} for {directions} directions",
        )
    descs = [activation_desc(a, "activations", where) for a in given]
    descs = descs * (directions * len(per) // len(descs))
    message.activation_desc_count = len(descs)
    message.activation_descs.extend(descs)
    message.direction = code
    output_shapes = tuple(shapes[name] for name in _OUTPUTS[kind])
    return Call(_wrap(kind, message), tuple(bound), output_shapes)


def _outputs(outputs: Sequence[str], kind: str, where: str) -> list[str]:
    names = tuple(_OUTPUTS[kind])
    if isinstance(outputs, str) or not isinstance(outputs, Sequence):
        raise ArgumentTypeError("outputs", f"{where}: outputs must be a sequence of names; got {outputs!r}")
    for name in outputs:
        if name not in names:
            raise ArgumentValueError("outputs", f"{where}: no output named {name!r}", allowed=names)
    if not outputs:
        raise ArgumentValueError("outputs", f"{where}: outputs is empty; DirectML computes at least one", allowed=names)
    if list(outputs) != [name for name in names if name in outputs]:
        raise ArgumentValueError(
            "outputs", f"{where}: outputs {tuple(outputs)} must be distinct and in DirectML's order {names}"
        )
    return list(outputs)


_Direction = Literal["forward", "backward", "bidirectional"]

_SHAPES_DOC = """
    Shapes are ONNX's (DirectML's 4-D tensors without their leading 1s): ``input`` (seq_length, batch,
    input_size); ``weight`` (num_directions, gates * hidden_size, input_size) and ``recurrence`` (num_directions,
    gates * hidden_size, hidden_size), gates stacked; ``bias`` (num_directions, 2 * gates * hidden_size), the input
    biases then the recurrence biases; ``hidden_init`` (num_directions, batch, hidden_size); ``sequence_lengths``
    (batch,) unsigned 32-bit, each at most seq_length (steps past an item's length write 0 and keep the state).
    num_directions is 2 for ``direction="bidirectional"``, else 1; hidden_size is ``recurrence``'s last dimension.
    ``activations`` are names (``"tanh"``) or descs (``dmlrpc.ops.activation("leaky_relu", alpha=0.1)
    .operator_desc``), one set per direction (given once: both directions use it). ``outputs`` picks among
    "sequence" (seq_length, num_directions, batch, hidden_size) and "single" (num_directions, batch,
    hidden_size), the state after the last step; the results come in that order. Every tensor is FLOAT32 or
    FLOAT16, of one data type.
"""


#: Per recurrent tensor, DirectML's leading 1s before ONNX's layout (the rest have one).
_LEADING = {"bias": 2, "peephole": 2, "sequence_lengths": 3}


def _directml_layouts(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A graph's recurrent tensors have DirectML's 4-D shapes ({1, T, B, I} ...); the builder takes ONNX's
    layouts, without the leading 1s."""
    stand_ins: dict[str, Any] = {}
    for name in (
        "input",
        "weight",
        "recurrence",
        "bias",
        "hidden_init",
        "cell_mem_init",
        "sequence_lengths",
        "peephole",
    ):
        tensor = arguments.get(name)
        if tensor is None:
            continue
        drop = _LEADING.get(name, 1)
        if len(tensor.shape) != 4 or any(size != 1 for size in tensor.shape[:drop]):
            raise ArgumentValueError(
                name,
                f"{where}: {name} has shape {tensor.shape}; in a graph it has DirectML's 4-D shape, {drop} leading 1s "
                "then ONNX's",
            )
        stand_ins[name] = np.asarray(tensor).reshape(tensor.shape[drop:])
    return stand_ins


@operator(sends=("rnn",), result=PRESENT, graph=GraphFace(prepare=_directml_layouts))
def rnn(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    direction: _Direction = "forward",
    activations: Sequence[Activation] | None = None,
    outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
) -> Call:
    """DML_RNN_OPERATOR_DESC: ``h_t = f(x_t W^T + h_{t-1} R^T + Wb + Rb)`` (one gate; ``f`` tanh by default).
    {shapes}
    Raises:
        ArgumentValueError, ArgumentTypeError: a shape unlike the above, an unknown direction, activation or
            output, dtypes other than float32/float16 or unlike.
    """
    optional = {"bias": bias, "hidden_init": hidden_init, "sequence_lengths": sequence_lengths}
    call = _recurrent("rnn", input, weight, recurrence, optional, direction, activations, outputs)
    return call


@operator(sends=("lstm",), result=PRESENT, graph=GraphFace(prepare=_directml_layouts))
def lstm(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    cell_mem_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    peephole: npt.ArrayLike | None = None,
    direction: _Direction = "forward",
    activations: Sequence[Activation] | None = None,
    clip_threshold: float | None = None,
    couple_input_forget: bool = False,
    outputs: Sequence[Literal["sequence", "single", "cell_single"]] = ("sequence", "single", "cell_single"),
) -> Call:
    """DML_LSTM_OPERATOR_DESC: the LSTM cell of ONNX, gates stacked i, o, f, c; activations f, g, h (sigmoid,
    tanh, tanh by default).

    ``cell_mem_init`` has ``hidden_init``'s shape, ``peephole`` is (num_directions, 3 * hidden_size) (i, o, f);
    ``clip_threshold`` (>= 0) clips the gates' inputs; ``couple_input_forget`` uses ``1 - i`` as the forget gate.
    The outputs add "cell_single" (num_directions, batch, hidden_size), the cell state after the last step.
    {shapes}
    Raises:
        ArgumentValueError, ArgumentTypeError: as ``rnn``; a negative or NaN clip threshold.
    """
    optional = {
        "bias": bias,
        "hidden_init": hidden_init,
        "cell_mem_init": cell_mem_init,
        "sequence_lengths": sequence_lengths,
        "peephole": peephole,
    }
    call = _recurrent("lstm", input, weight, recurrence, optional, direction, activations, outputs)
    if clip_threshold is not None:
        threshold = _scalar(clip_threshold, "clip_threshold", "lstm")
        if not threshold >= 0:
            raise ArgumentValueError("clip_threshold", f"lstm: clip_threshold = {threshold} must be >= 0")
        call.operator_desc.lstm.clip_threshold = threshold
        call.operator_desc.lstm.use_clip_threshold = True
    call.operator_desc.lstm.couple_input_forget = _flag(couple_input_forget, "couple_input_forget", "lstm")
    return call


@operator(sends=("gru",), result=PRESENT, graph=GraphFace(prepare=_directml_layouts))
def gru(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    direction: _Direction = "forward",
    activations: Sequence[Activation] | None = None,
    linear_before_reset: bool = False,
    outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
) -> Call:
    """DML_GRU_OPERATOR_DESC: the GRU cell of ONNX, gates stacked z, r, h; activations f, g (sigmoid, tanh by
    default); ``linear_before_reset`` applies the reset gate after the recurrence product (ONNX's attribute).
    {shapes}
    Raises:
        ArgumentValueError, ArgumentTypeError: as ``rnn``.
    """
    optional = {"bias": bias, "hidden_init": hidden_init, "sequence_lengths": sequence_lengths}
    call = _recurrent("gru", input, weight, recurrence, optional, direction, activations, outputs)
    call.operator_desc.gru.linear_before_reset = _flag(linear_before_reset, "linear_before_reset", "gru")
    return call


for _function in (rnn, lstm, gru):
    # One description of the shapes, written once, in each docstring.
    _function.__doc__ = (_function.__doc__ or "").replace("{shapes}", _SHAPES_DOC)
