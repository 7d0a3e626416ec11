"""RNN, LSTM and GRU over the wire: hand-worked sequences, properties against the NumPy reference (every direction,
optional tensor, activation parameters, strides), every documented rule, and the work estimate of a long sequence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import ResourceExhausted
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.cost import check_cost, model_cost
from dmlrpc_server.settings import PROVIDERS
from tests.references import recurrent as ref
from tests.strategies import layouts

LATEST = operators_pb2.FEATURE_LEVEL_6_4
LIMITS = Limits(max_tensor_bytes=1 << 30, max_request_bytes=1 << 30, max_message_bytes=1 << 30)
DIRECTIONS = {
    "forward": operators_pb2.RECURRENT_NETWORK_DIRECTION_FORWARD,
    "backward": operators_pb2.RECURRENT_NETWORK_DIRECTION_BACKWARD,
    "bidirectional": operators_pb2.RECURRENT_NETWORK_DIRECTION_BIDIRECTIONAL,
}
#: Input fields in binding order, per operator.
INPUTS = {kind: [field.name for field in REGISTRY[kind].inputs] for kind in ("rnn", "lstm", "gru")}
OUTPUTS = {kind: [field.name for field in REGISTRY[kind].outputs] for kind in ("rnn", "lstm", "gru")}


def _activation(name: str, **params: float) -> tuple[operators_pb2.OperatorDesc, Any]:
    """An ActivationDescs entry and its inner desc (what the reference reads parameters from)."""
    case = name.lower()
    inner = type(getattr(operators_pb2.OperatorDesc(), case))(**params)
    return operators_pb2.OperatorDesc(**{case: inner}), inner


def _desc(kind: str, activations: list[str] | None = None, **fields: Any) -> operators_pb2.OperatorDesc:
    """A desc with default activations (the ONNX defaults: sigmoid, tanh, tanh) unless given."""
    if "activation_descs" not in fields:
        directions = 2 if fields.get("direction") == DIRECTIONS["bidirectional"] else 1
        names = (
            activations
            or ["ACTIVATION_SIGMOID", "ACTIVATION_TANH", "ACTIVATION_TANH"][
                int(kind == "rnn") : ref.ACTIVATION_COUNT[kind] + int(kind == "rnn")
            ]
        )
        fields["activation_descs"] = [_activation(name)[0] for name in names] * directions
    fields.setdefault("activation_desc_count", len(fields["activation_descs"]))
    inner = type(getattr(operators_pb2.OperatorDesc(), kind))(**fields)
    return operators_pb2.OperatorDesc(**{kind: inner})


def _tolerance(expected: np.ndarray, dtype: np.dtype[Any]) -> tuple[float, float]:
    """Relative and absolute tolerance: FLOAT16 computes in FLOAT32 and rounds once at the end; FLOAT32
    accumulates rounding over the steps."""
    tol = 3e-3 if dtype == np.float16 else 2e-5
    return tol, tol * (1 + float(np.abs(expected).max(initial=0)))


def _close(got: np.ndarray | None, expected: np.ndarray, dtype: np.dtype[Any]) -> None:
    assert got is not None and got.dtype == dtype and got.shape == expected.shape
    rtol, atol = _tolerance(expected, dtype)
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol)


def _near(a: np.ndarray, b: np.ndarray, dtype: np.dtype[Any]) -> bool:
    rtol, atol = _tolerance(b, dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


# ---------------------------------------------------------------------------------------------------------------
# Hand-worked cases (the pages give no examples): an identity RNN with unit weights is a running sum.


def _running_sum(direction: str, lengths: np.ndarray | None = None) -> operators_pb2.OperatorDesc:
    x = np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(x),
        "weight_tensor": tensor_desc((np.float32, (1, 1, 1, 1))),
        "recurrence_tensor": tensor_desc((np.float32, (1, 1, 1, 1))),
        "output_sequence_tensor": tensor_desc((np.float32, (3, 1, 1, 1))),
        "output_single_tensor": tensor_desc((np.float32, (1, 1, 1, 1))),
        "direction": DIRECTIONS[direction],
    }
    if lengths is not None:
        fields["sequence_lengths_tensor"] = tensor_desc(lengths)
    return _desc("rnn", ["ACTIVATION_IDENTITY"], **fields)


@pytest.mark.parametrize(
    ("direction", "length", "sequence", "single"),
    [
        ("forward", None, [1, 3, 6], 6),
        ("backward", None, [6, 5, 3], 6),
        # Length 2: forward takes t = 0, 1; backward t = 1, 0; the step past the length writes 0.
        ("forward", 2, [1, 3, 0], 3),
        ("backward", 2, [3, 2, 0], 3),
        # An empty sequence takes no step and writes 0 everywhere.
        ("forward", 0, [0, 0, 0], 0),
    ],
)
def test_identity_rnn_is_a_running_sum(
    client: dmlrpc.Client, direction: str, length: int | None, sequence: list[int], single: int
) -> None:
    x = np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)
    one = np.ones((1, 1, 1, 1), np.float32)
    lengths = None if length is None else np.array([length], np.uint32).reshape(1, 1, 1, 1)
    got = client.execute(_running_sum(direction, lengths), [x, one, one, None, None, lengths])
    assert got[0] is not None and got[1] is not None
    np.testing.assert_array_equal(np.asarray(got[0]).reshape(-1), sequence)
    np.testing.assert_array_equal(np.asarray(got[1]).reshape(-1), [single])


def test_lstm_with_constant_gates(client: dmlrpc.Client) -> None:
    # Zero weights and biases b: every gate's input is its bias. With i = f = o = sigmoid(0) = 0.5 and
    # c~ = tanh(b_c): C_t = 0.5 C_{t-1} + 0.5 tanh(b_c), H_t = 0.5 tanh(C_t).
    b_c = 1.0
    bias = np.zeros((1, 1, 1, 8), np.float32)
    bias[0, 0, 0, 3] = b_c  # W_bc (gates i, o, f, c)
    x = np.zeros((1, 2, 1, 1), np.float32)
    zeros = np.zeros((1, 1, 4, 1), np.float32)
    desc = _desc(
        "lstm",
        input_tensor=tensor_desc(x),
        weight_tensor=tensor_desc(zeros),
        recurrence_tensor=tensor_desc(zeros),
        bias_tensor=tensor_desc(bias),
        output_single_tensor=tensor_desc((np.float32, (1, 1, 1, 1))),
        output_cell_single_tensor=tensor_desc((np.float32, (1, 1, 1, 1))),
    )
    got = client.execute(desc, [x, zeros, zeros, bias, None, None, None, None])
    c1 = 0.5 * np.tanh(b_c)
    c2 = 0.5 * c1 + 0.5 * np.tanh(b_c)
    assert got[0] is None
    np.testing.assert_allclose(np.asarray(got[1]).reshape(-1), [0.5 * np.tanh(c2)], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[2]).reshape(-1), [c2], rtol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# Properties against the reference.

_PARAMETERS: dict[str, dict[str, st.SearchStrategy[float]]] = {
    "ACTIVATION_SIGMOID": {},
    "ACTIVATION_TANH": {},
    "ACTIVATION_RELU": {},
    "ACTIVATION_IDENTITY": {},
    "ACTIVATION_SOFTSIGN": {},
    "ACTIVATION_LEAKY_RELU": {"alpha": st.sampled_from([0.01, 0.5])},
    "ACTIVATION_LINEAR": {"alpha": st.sampled_from([0.5, -1.0]), "beta": st.sampled_from([0.0, 0.25])},
    "ACTIVATION_SCALED_TANH": {"alpha": st.sampled_from([1.0, 0.5]), "beta": st.sampled_from([1.0, 2.0])},
    "ACTIVATION_HARD_SIGMOID": {"alpha": st.sampled_from([0.2, 0.5]), "beta": st.sampled_from([0.5])},
    "ACTIVATION_SOFTPLUS": {"steepness": st.sampled_from([1.0, 2.0])},
    "ACTIVATION_ELU": {"alpha": st.sampled_from([1.0, 0.5])},
    "ACTIVATION_THRESHOLDED_RELU": {"alpha": st.sampled_from([0.0, 0.5])},
    "ACTIVATION_SCALED_ELU": {"alpha": st.sampled_from([1.67]), "gamma": st.sampled_from([1.05])},
    "ACTIVATION_SHRINK": {"threshold": st.sampled_from([0.5]), "bias": st.sampled_from([0.25])},
    "ACTIVATION_CELU": {"alpha": st.sampled_from([1.0, 2.0])},
}


@st.composite
def _activations(
    draw: st.DrawFn, count: int, names: Sequence[str] = tuple(_PARAMETERS)
) -> list[tuple[str, operators_pb2.OperatorDesc, Any]]:
    """(ACTIVATION_* name, ActivationDescs entry, its inner desc) per activation, each one of ``names``."""
    chosen = []
    for index in range(count):
        name = draw(st.sampled_from(sorted(names)), label=f"activation {index}")
        params = {key: draw(value, label=f"{name} {key}") for key, value in _PARAMETERS[name].items()}
        chosen.append((name, *_activation(name, **params)))
    return chosen


def _values(data: st.DataObject, dtype: np.dtype[Any], shape: tuple[int, ...], label: str) -> np.ndarray:
    elements = st.floats(-1, 1, width=32).map(lambda v: round(v, 2))
    return data.draw(hnp.arrays(np.float32, shape, elements=elements), label=label).astype(dtype)


@dataclass
class _Drawn:
    """A drawn desc of ``kind``, its inputs in binding order, the outputs it sets and the reference's results."""

    kind: str
    desc: operators_pb2.OperatorDesc
    inputs: list[np.ndarray | None]
    outputs: list[str]
    expected: dict[str, np.ndarray]
    dtype: np.dtype[Any]

    def check(self, got: Sequence[Any]) -> None:
        """The results of every output set match the reference; the others are absent."""
        for name, result in zip(OUTPUTS[self.kind], got, strict=True):
            if name in self.outputs:
                assert isinstance(result, np.ndarray)
                _close(result, self.expected[name], self.dtype)
            else:
                assert result is None


def _draw(data: st.DataObject, kind: str, dtype: np.dtype[Any], activations: Sequence[str], *, strided: bool) -> _Drawn:
    """A desc of ``kind``: every direction, optional tensor and output set, LSTM's clip and coupling, GRU's reset
    order, activations of ``activations`` with their parameters and, with ``strided``, tensors laid out with strides
    and broadcasts; with the NumPy reference's results."""
    direction = data.draw(st.sampled_from(sorted(DIRECTIONS)), label="direction")
    directions = 2 if direction == "bidirectional" else 1
    steps, batch, inputs, hidden = (data.draw(st.integers(1, 4), label=name) for name in "TBIH")
    g = ref.GATES[kind]
    shapes = {
        "input_tensor": (1, steps, batch, inputs),
        "weight_tensor": (1, directions, g * hidden, inputs),
        "recurrence_tensor": (1, directions, g * hidden, hidden),
        "bias_tensor": (1, 1, directions, 2 * g * hidden),
        "hidden_init_tensor": (1, directions, batch, hidden),
        "cell_mem_init_tensor": (1, directions, batch, hidden),
        "sequence_lengths_tensor": (1, 1, 1, batch),
        "peephole_tensor": (1, 1, directions, 3 * hidden),
        "output_sequence_tensor": (steps, directions, batch, hidden),
        "output_single_tensor": (1, directions, batch, hidden),
        "output_cell_single_tensor": (1, directions, batch, hidden),
    }
    fields: dict[str, Any] = {"direction": DIRECTIONS[direction]}
    arrays: dict[str, np.ndarray | None] = {}
    for index, name in enumerate(INPUTS[kind]):
        if index >= 3 and not data.draw(st.booleans(), label=f"{name} set"):
            arrays[name] = None
            continue
        if name == "sequence_lengths_tensor":
            array = data.draw(hnp.arrays(np.uint32, shapes[name], elements=st.integers(0, steps)), label=name)
        else:
            array = _values(data, dtype, shapes[name], name)
        strides = None
        if strided:
            layout = data.draw(layouts(shapes[name], allow_broadcast=True), label=f"{name} layout")
            if layout.broadcast:
                index_ = tuple(slice(0, 1) if d in layout.broadcast else slice(None) for d in range(array.ndim))
                array = np.ascontiguousarray(np.broadcast_to(array[index_], array.shape))
            strides = layout.strides
        arrays[name] = array
        fields[name] = tensor_desc(array, strides)
    outputs = data.draw(st.lists(st.sampled_from(OUTPUTS[kind]), min_size=1, unique=True), label="outputs set")
    for name in outputs:
        strides = data.draw(layouts(shapes[name], allow_broadcast=False)).strides if strided else None
        fields[name] = tensor_desc((dtype, shapes[name]), strides)
    chosen = data.draw(_activations(directions * ref.ACTIVATION_COUNT[kind], activations))
    fields["activation_descs"] = [entry for _, entry, _ in chosen]
    clip = None
    if kind == "lstm":
        if data.draw(st.booleans(), label="use clip"):
            clip = data.draw(st.sampled_from([0.5, 2.0]), label="clip")
            fields.update(use_clip_threshold=True, clip_threshold=clip)
        fields["couple_input_forget"] = data.draw(st.booleans(), label="couple input forget")
    if kind == "gru":
        fields["linear_before_reset"] = data.draw(st.booleans(), label="linear before reset")

    def reference(bias: np.ndarray | None) -> dict[str, np.ndarray]:
        expected = ref.recurrent(
            kind,
            *(np.asarray(arrays[name]) for name in ("input_tensor", "weight_tensor", "recurrence_tensor")),
            activations=[(name, inner) for name, _, inner in chosen],
            direction=direction,
            bias=bias,
            hidden_init=arrays.get("hidden_init_tensor"),
            cell_init=arrays.get("cell_mem_init_tensor"),
            lengths=arrays.get("sequence_lengths_tensor"),
            peephole=arrays.get("peephole_tensor"),
            clip=clip,
            couple_input_forget=bool(fields.get("couple_input_forget")),
            linear_before_reset=bool(fields.get("linear_before_reset")),
        )
        return {
            "output_sequence_tensor": expected.sequence,
            "output_single_tensor": expected.single,
            "output_cell_single_tensor": expected.cell_single,
        }

    by_name = reference(arrays.get("bias_tensor"))
    # An activation with a jump (SHRINK, THRESHOLDED_RELU) or a clip at a gate's value branches one way in the
    # server's FLOAT32 and the other in the reference's FLOAT64 (a gate of exactly -0.5 in FLOAT32 is -0.50000002 in
    # FLOAT64, beyond SHRINK's threshold 0.5): a draw whose results move past the tolerance when every gate moves by
    # 1e-6 sits on such a jump, and compares nothing about the operator.
    bias = arrays.get("bias_tensor")
    base = np.zeros(shapes["bias_tensor"]) if bias is None else np.asarray(bias, np.float64)
    for shift in (-1e-6, 1e-6):
        moved = reference(base + shift)
        assume(all(_near(moved[name], by_name[name], dtype) for name in outputs))
    # Unbounded activations on every gate (CELU as the forget gate) can grow doubly exponentially over the steps:
    # the float64 reference then holds values that the server's FLOAT32 arithmetic (or FLOAT16's final rounding)
    # can only write as inf, so such draws compare nothing about the operator.
    largest = float(np.finfo(dtype).max) / 2
    assume(all(np.abs(by_name[name]).max(initial=0) < largest for name in outputs))
    return _Drawn(
        kind,
        _desc(kind, **fields),
        [arrays[name] for name in INPUTS[kind]],
        outputs,
        {name: by_name[name] for name in outputs},
        dtype,
    )


@settings(max_examples=60, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["rnn", "lstm", "gru"]))
def test_matches_reference(client: dmlrpc.Client, data: st.DataObject, kind: str) -> None:
    dtype = np.dtype(data.draw(st.sampled_from([np.float32, np.float16]), label="dtype"))
    drawn = _draw(data, kind, dtype, tuple(_PARAMETERS), strided=True)
    drawn.check(client.execute(drawn.desc, drawn.inputs))


# ---------------------------------------------------------------------------------------------------------------
# Every documented rule: INVALID_ARGUMENT naming the field.

STEPS, BATCH, INPUT, HIDDEN = 3, 2, 2, 2
_X = np.zeros((1, STEPS, BATCH, INPUT), np.float32)
_W = np.zeros((1, 1, 4 * HIDDEN, INPUT), np.float32)
_R = np.zeros((1, 1, 4 * HIDDEN, HIDDEN), np.float32)
_LSTM_INPUTS: list[Any] = [_X, _W, _R, None, None, None, None, None]


def _lstm(**overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(_X),
        "weight_tensor": tensor_desc(_W),
        "recurrence_tensor": tensor_desc(_R),
        "output_single_tensor": tensor_desc((np.float32, (1, 1, BATCH, HIDDEN))),
    }
    fields.update(overrides)
    return _desc("lstm", **{k: v for k, v in fields.items() if v is not None})


_PATH = "operator_desc.lstm."
_SIGMOID = _activation("ACTIVATION_SIGMOID")[0]


def test_a_valid_lstm_runs(client: dmlrpc.Client) -> None:
    got = client.execute(_lstm(), _LSTM_INPUTS)
    np.testing.assert_array_equal(np.asarray(got[1]), np.zeros((1, 1, BATCH, HIDDEN), np.float32))


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"weight_tensor": tensor_desc((np.float32, (1, 1, 3 * HIDDEN, INPUT)))}, "weight_tensor.buffer.sizes"),
        (
            {"recurrence_tensor": tensor_desc((np.float32, (1, 2, 4 * HIDDEN, HIDDEN)))},
            "recurrence_tensor.buffer.sizes",
        ),
        ({"input_tensor": tensor_desc((np.float32, (2, STEPS, BATCH, INPUT)))}, "input_tensor.buffer.sizes"),
        ({"bias_tensor": tensor_desc((np.float32, (1, 1, 1, 4 * HIDDEN)))}, "bias_tensor.buffer.sizes"),
        ({"peephole_tensor": tensor_desc((np.float32, (1, 1, 1, 4 * HIDDEN)))}, "peephole_tensor.buffer.sizes"),
        (
            {"hidden_init_tensor": tensor_desc((np.float32, (1, 1, BATCH + 1, HIDDEN)))},
            "hidden_init_tensor.buffer.sizes",
        ),
        (
            {"sequence_lengths_tensor": tensor_desc((np.uint32, (1, 1, BATCH, 1)))},
            "sequence_lengths_tensor.buffer.sizes",
        ),
        (
            {"output_sequence_tensor": tensor_desc((np.float32, (1, STEPS, BATCH, HIDDEN)))},
            "output_sequence_tensor.buffer.sizes",
        ),
        (
            {"output_single_tensor": tensor_desc((np.float16, (1, 1, BATCH, HIDDEN)))},
            "output_single_tensor.buffer.data_type",
        ),
        (
            {"sequence_lengths_tensor": tensor_desc((np.int32, (1, 1, 1, BATCH)))},
            "sequence_lengths_tensor.buffer.data_type",
        ),
        ({"output_single_tensor": None}, "output_sequence_tensor"),
        ({"direction": 7}, "direction"),
        ({"activation_desc_count": 2}, "activation_desc_count"),
        ({"activation_descs": [_SIGMOID] * 2}, "activation_descs"),
        (
            {"activation_descs": [_SIGMOID, _activation("ACTIVATION_SOFTMAX")[0], _SIGMOID]},
            "activation_descs[1].activation_softmax",
        ),
        (
            {"activation_descs": [_SIGMOID, _activation("ACTIVATION_GELU")[0], _SIGMOID]},
            "activation_descs[1].activation_gelu",
        ),
        ({"activation_descs": [_SIGMOID, operators_pb2.OperatorDesc(), _SIGMOID]}, "activation_descs[1]"),
        (
            {
                "activation_descs": [
                    _SIGMOID,
                    operators_pb2.OperatorDesc(
                        activation_tanh=operators_pb2.ActivationTanhOperatorDesc(input_tensor=tensor_desc(_X))
                    ),
                    _SIGMOID,
                ]
            },
            "activation_descs[1].activation_tanh.input_tensor",
        ),
        (
            {"activation_descs": [_SIGMOID, _activation("ACTIVATION_CELU", alpha=0)[0], _SIGMOID]},
            "activation_descs[1].activation_celu.alpha",
        ),
        ({"use_clip_threshold": True, "clip_threshold": -1.0}, "clip_threshold"),
        ({"use_clip_threshold": True, "clip_threshold": float("nan")}, "clip_threshold"),
    ],
)
def test_lstm_rules(client: dmlrpc.Client, overrides: dict[str, Any], field: str) -> None:
    desc = _lstm(**overrides)
    # Raw bytes of each input's buffer size: the SDK would refuse an array that disagrees with its desc.
    inputs = [
        bytes(getattr(desc.lstm, name).buffer.total_tensor_size_in_bytes) if desc.lstm.HasField(name) else None
        for name in INPUTS["lstm"]
    ]
    _invalid(client, desc, inputs, _PATH + field)


def test_a_negative_clip_threshold_is_ignored_without_use_clip_threshold(client: dmlrpc.Client) -> None:
    client.execute(_lstm(clip_threshold=-1.0), _LSTM_INPUTS)


def test_recurrent_networks_take_only_floats(client: dmlrpc.Client) -> None:
    x = np.zeros((1, STEPS, BATCH, INPUT), np.int32)
    desc = _desc(
        "gru",
        input_tensor=tensor_desc(x),
        weight_tensor=tensor_desc((np.int32, (1, 1, 3 * HIDDEN, INPUT))),
        recurrence_tensor=tensor_desc((np.int32, (1, 1, 3 * HIDDEN, HIDDEN))),
        output_single_tensor=tensor_desc((np.int32, (1, 1, BATCH, HIDDEN))),
    )
    _invalid(client, desc, [x, None, None, None, None, None], "operator_desc.gru.input_tensor.buffer.data_type")


def test_a_sequence_length_over_seq_length_is_refused(client: dmlrpc.Client) -> None:
    lengths = np.array([STEPS, STEPS + 1], np.uint32).reshape(1, 1, 1, BATCH)
    desc = _lstm(sequence_lengths_tensor=tensor_desc(lengths))
    inputs = [_X, _W, _R, None, None, None, lengths, None]
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    violation = caught.value.field_violations[0]
    assert violation.field == "inputs[6].buffer.data"
    assert "batch item 1" in violation.description


# ---------------------------------------------------------------------------------------------------------------
# The work estimate: a Scan's body times its steps, so a small desc over a long sequence is not tiny work.


def _rnn_work(steps: int, hidden: int, provider: str = PROVIDERS["cpu"]) -> int:
    desc = _desc(
        "rnn",
        input_tensor=tensor_desc((np.float32, (1, steps, 1, 1))),
        weight_tensor=tensor_desc((np.float32, (1, 1, hidden, 1))),
        recurrence_tensor=tensor_desc((np.float32, (1, 1, hidden, hidden))),
        output_single_tensor=tensor_desc((np.float32, (1, 1, 1, hidden))),
    )
    plan = REGISTRY["rnn"].plan(desc.rnn, feature_level=LATEST, limits=LIMITS, provider=provider)
    return model_cost(plan.model).work


@pytest.mark.parametrize("provider", [PROVIDERS["cpu"], PROVIDERS["directml"]])  # a Scan; ONNX's RNN node
def test_the_work_grows_with_the_sequence_and_the_recurrent_product(provider: str) -> None:
    short, long = _rnn_work(10, 64, provider), _rnn_work(1000, 64, provider)
    assert long > 50 * short
    # Each step multiplies a 1 x H state by an H x H matrix: at least H * H element-operations a step.
    assert long >= 1000 * 64 * 64
    # Even a one-element step counts a run's fixed cost.
    assert _rnn_work(10_000, 1, provider) >= 10_000 * 1024


def test_a_long_sequence_over_the_work_limit_is_refused_before_it_runs() -> None:
    # 1.2 MB of input and a 1 MB recurrence matrix: 300,000 steps of a 512 x 512 product, over the default limit.
    desc = _desc(
        "rnn",
        input_tensor=tensor_desc((np.float32, (1, 300_000, 1, 1))),
        weight_tensor=tensor_desc((np.float32, (1, 1, 512, 1))),
        recurrence_tensor=tensor_desc((np.float32, (1, 1, 512, 512))),
        output_single_tensor=tensor_desc((np.float32, (1, 1, 1, 512))),
    )
    plan = REGISTRY["rnn"].plan(desc.rnn, feature_level=LATEST, limits=LIMITS)
    with pytest.raises(ResourceExhausted, match="--max-work"):
        check_cost(model_cost(plan.model), LIMITS, "operator_desc.rnn")


# ---------------------------------------------------------------------------------------------------------------
# In a graph: models holding a Scan body run node by node (a composed model would have to rename the body's
# references to its node's values), with the same results.


def test_a_graph_of_recurrent_nodes(client: dmlrpc.Client) -> None:
    x = np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)
    one = np.ones((1, 1, 1, 1), np.float32)
    graph = dmlrpc.Graph()
    source, weight = graph.input(np.float32, x.shape), graph.input(np.float32, one.shape)
    sequence, total = graph.node(_running_sum("forward"), [source, weight, weight, None, None, None])
    # The first node's final sum {1, 1, 1, 1} is a one-step sequence for the second: H = 2 * total.
    second = _desc(
        "rnn",
        ["ACTIVATION_LINEAR"],
        input_tensor=tensor_desc(one),
        weight_tensor=tensor_desc(one),
        recurrence_tensor=tensor_desc(one),
        output_single_tensor=tensor_desc(one),
    )
    second.rnn.activation_descs[0].activation_linear.alpha = 2.0
    (doubled,) = graph.node(second, [total, weight, weight, None, None, None])
    graph.output(sequence, doubled)
    got = client.compile(graph)(x, one)
    np.testing.assert_array_equal(np.asarray(got[0]).reshape(-1), [1, 3, 6])
    np.testing.assert_array_equal(np.asarray(got[1]).reshape(-1), [12])


# ---------------------------------------------------------------------------------------------------------------
# DirectML's lowering: ONNX's own RNN/LSTM/GRU node (DirectML has no Scan kernel), run here by the CPU provider.

#: The activations DirectML's lowering passes to ONNX's recurrent nodes by name.
_NATIVE = [
    "ACTIVATION_SIGMOID",
    "ACTIVATION_TANH",
    "ACTIVATION_RELU",
    "ACTIVATION_SOFTSIGN",
    "ACTIVATION_LEAKY_RELU",
    "ACTIVATION_THRESHOLDED_RELU",
    "ACTIVATION_ELU",
    "ACTIVATION_SCALED_TANH",
    "ACTIVATION_HARD_SIGMOID",
]


@settings(max_examples=40, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["rnn", "lstm", "gru"]))
def test_directml_lowers_to_onnx_recurrent_nodes_with_the_same_results(data: st.DataObject, kind: str) -> None:
    drawn = _draw(data, kind, np.dtype(np.float32), _NATIVE, strided=False)
    desc = getattr(drawn.desc, kind)
    plan = REGISTRY[kind].plan(desc, feature_level=LATEST, limits=LIMITS, provider=PROVIDERS["directml"])
    assert {node.op_type for node in plan.model.graph.node} & {kind.upper(), "Scan"} == {kind.upper()}
    session = ort.InferenceSession(plan.model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert plan.prepare is not None and plan.finish is not None
    drawn.check(plan.finish(session.run(None, plan.prepare(drawn.inputs))))


def test_an_activation_onnx_does_not_name_keeps_the_scan_on_directml() -> None:
    desc = _desc(
        "rnn",
        activation_descs=[_activation("ACTIVATION_CELU", alpha=2.0)[0]],
        input_tensor=tensor_desc((np.float32, (1, 2, 1, 1))),
        weight_tensor=tensor_desc((np.float32, (1, 1, 2, 1))),
        recurrence_tensor=tensor_desc((np.float32, (1, 1, 2, 2))),
        output_single_tensor=tensor_desc((np.float32, (1, 1, 1, 2))),
    )
    plan = REGISTRY["rnn"].plan(desc.rnn, feature_level=LATEST, limits=LIMITS, provider=PROVIDERS["directml"])
    assert "Scan" in {node.op_type for node in plan.model.graph.node}
