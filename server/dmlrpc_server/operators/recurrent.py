"""Recurrent networks: DML_RNN, LSTM and GRU, each direction one ONNX Scan over the sequence.

Why a Scan of standard ops and not ONNX's RNN/LSTM/GRU: DirectML's ActivationDescs are DML activation descs with
their own parameters (SOFTPLUS's Steepness, SHRINK, CELU, SCALED_ELU, PARAMETRIC_SOFTPLUS ...), most of which ONNX's
recurrent ops cannot take, and FLOAT16 must compute in FLOAT32 as DirectML's shaders do. A Scan body is built from
the same activation functions as ACTIVATION_* and FusedActivation, so every activation DirectML takes is exact, on
every provider. What the lowering does beyond the page's equations:

- X * W^T (plus the biases outside the reset gate) for all steps is one MatMul before the Scan; the body does only
  the recurrent product, so its work per step is B x G*H x H.
- SequenceLengthsTensor becomes a mask per step: a step past an item's length keeps its state and writes 0 to
  OutputSequenceTensor. The backward direction scans its inputs in reverse (and prepends its outputs), so an item of
  length L starts at t = L - 1, as ONNX's rule says. An empty item (length 0) writes 0 to the single outputs too.
- The page's LSTM equation peeks at C_{t-1} for the output gate; ONNX's LSTM, which ONNX Runtime's DirectML provider
  maps onto this operator field for field, peeks at C_t, and so does this lowering (see the page's notes).

On DirectML a desc whose activations are all ones that ONNX's recurrent ops name (sigmoid, tanh, relu, softsign,
leaky and thresholded relu, elu, scaled tanh, hard sigmoid) lowers to ONNX's own RNN/LSTM/GRU node instead, which
the provider maps onto DirectML's recurrent operator field for field: DirectML has no kernel for Scan, which ONNX
Runtime would run on the CPU provider.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import onnx

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.feature_levels import parse_feature_level
from dmlrpc_server.operators._elementwise import Context, ElementWise
from dmlrpc_server.operators._graph import BOOL, F32, I32, I64, Graph, Value
from dmlrpc_server.operators.activation import ACTIVATIONS
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require
from dmlrpc_server.operators.pages import FUSABLE

Direction = operators_pb2.RecurrentNetworkDirection
_ACTIVATIONS: dict[str, ElementWise] = {operator.case: operator for operator in ACTIVATIONS}
#: The fields holding sequence lengths (UINT32), the only tensors not of the input's data type.
_LENGTHS = "sequence_lengths_tensor"
#: The activations both ONNX's recurrent ops and DirectML's provider name, as DirectML computes them: the ONNX name
#: and the desc's fields that are its alpha and beta (ONNX takes them as stacks, one entry an activation using it).
_NATIVE_ACTIVATIONS: dict[str, tuple[str, str | None, str | None]] = {
    "activation_sigmoid": ("Sigmoid", None, None),
    "activation_tanh": ("Tanh", None, None),
    "activation_relu": ("Relu", None, None),
    "activation_softsign": ("Softsign", None, None),
    "activation_leaky_relu": ("LeakyRelu", "alpha", None),
    "activation_thresholded_relu": ("ThresholdedRelu", "alpha", None),
    "activation_elu": ("Elu", "alpha", None),
    "activation_scaled_tanh": ("ScaledTanh", "alpha", "beta"),
    "activation_hard_sigmoid": ("HardSigmoid", "alpha", "beta"),
}
_NATIVE_DIRECTIONS = {
    Direction.RECURRENT_NETWORK_DIRECTION_FORWARD: "forward",
    Direction.RECURRENT_NETWORK_DIRECTION_BACKWARD: "reverse",
    Direction.RECURRENT_NETWORK_DIRECTION_BIDIRECTIONAL: "bidirectional",
}


class _Body(Graph):
    """A Scan body: its value names carry a prefix, since a subgraph may not reuse a name of its outer graph."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def _fresh(self, hint: str) -> str:
        return self._prefix + super()._fresh(hint)

    def graph(self, name: str) -> onnx.GraphProto:
        return onnx.helper.make_graph(self.nodes, name, self.inputs, self.outputs, self.initializers)


class _Cell:
    """One direction's step, built into a Scan body: its activations and the outer values it reads."""

    def __init__(self, body: _Body, activations: Sequence[tuple[ElementWise, Any]], level: int) -> None:
        self.body = body
        self._activations = activations
        self._level = level

    def act(self, index: int, value: Value) -> Value:
        """``value`` through this direction's activation ``index`` (f, g, h in the page's order)."""
        operator, inner = self._activations[index]
        return operator.function(self.body, [value], Context(inner, None, F32, self._level, ""))

    def gate(self, value: Value, index: int, hidden: int) -> Value:
        """Columns [index * H, (index + 1) * H) of a [B, G*H] value: one gate."""
        b = self.body
        starts, ends = b.const([index * hidden], I64), b.const([(index + 1) * hidden], I64)
        return b.op("Slice", value, starts, ends, b.const([1], I64))


class _Recurrent(Operator[Any]):
    """The family's shared rules and lowering; an operator adds its gate count, states and step."""

    #: DirectML's operator type name (the page key).
    #: G: the gates stacked in WeightTensor and RecurrenceTensor.
    gates: ClassVar[int]
    #: Activations per direction (f; f, g; f, g, h).
    activation_count: ClassVar[int]
    #: Recurrent states: (init tensor field, single output field); the hidden state first.
    states: ClassVar[tuple[tuple[str, str], ...]] = (("hidden_init_tensor", "output_single_tensor"),)
    #: Whether R's biases join W's outside the Scan (all but GRU, whose R_bh sits inside the reset gate).
    fold_recurrence_bias: ClassVar[bool] = True

    def check(self, desc: Any, tensors: Tensors) -> None:
        """The operator's own attribute rules."""

    def expected(self, directions: int, steps: int, batch: int, inputs: int, hidden: int) -> dict[str, list[int]]:
        """Each tensor field's sizes, per the page."""
        g = self.gates
        return {
            "input_tensor": [1, steps, batch, inputs],
            "weight_tensor": [1, directions, g * hidden, inputs],
            "recurrence_tensor": [1, directions, g * hidden, hidden],
            "bias_tensor": [1, 1, directions, 2 * g * hidden],
            "hidden_init_tensor": [1, directions, batch, hidden],
            "cell_mem_init_tensor": [1, directions, batch, hidden],
            _LENGTHS: [1, 1, 1, batch],
            "peephole_tensor": [1, 1, directions, 3 * hidden],
            "output_sequence_tensor": [steps, directions, batch, hidden],
            "output_single_tensor": [1, directions, batch, hidden],
            "output_cell_single_tensor": [1, directions, batch, hidden],
        }

    def step(
        self, cell: _Cell, desc: Any, states: list[Value], gates: Value, outer: dict[str, Value], hidden: int
    ) -> list[Value]:
        """One step: the states at t - 1 and X_t * W^T (+ biases) -> the states at t (hidden first)."""
        raise NotImplementedError

    def lower(self, desc: Any, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        require(
            desc.direction in Direction.values(),
            tensors.field("direction"),
            f"{desc.direction} is not a DML_RECURRENT_NETWORK_DIRECTION",
        )
        directions = 2 if desc.direction == Direction.RECURRENT_NETWORK_DIRECTION_BIDIRECTIONAL else 1
        for name, layout in tensors.layouts.items():
            require(
                layout is None or name == _LENGTHS or layout.data_type == source.data_type,
                f"{tensors.field(name)}.buffer.data_type",
                "must equal input_tensor's data type",
            )
        recurrence = tensors["recurrence_tensor"]
        hidden = int(recurrence.sizes[3])
        _, steps, batch, inputs = (int(s) for s in source.sizes)
        expected = self.expected(directions, steps, batch, inputs, hidden)
        for name, layout in tensors.layouts.items():
            if layout is not None:
                require(
                    list(layout.sizes) == expected[name],
                    f"{tensors.field(name)}.buffer.sizes",
                    f"sizes {list(layout.sizes)} must be {expected[name]} (see the page's shapes: "
                    f"num_directions {directions}, seq_length {steps}, batch_size {batch}, input_size {inputs}, "
                    f"hidden_size {hidden} from recurrence_tensor's last dimension)",
                )
        outputs = [field.name for field in self.outputs]
        require(
            any(tensors.layouts[name] is not None for name in outputs),
            tensors.field(outputs[0]),
            f"at least one of {', '.join(outputs)} must be set",
        )
        activations = self._activations(desc, tensors, directions)
        self.check(desc, tensors)

        graph = Graph()
        values, feeds = graph.field_inputs(self.inputs, tensors)
        native = [(operator.case, inner) for per in activations for operator, inner in per]
        if tensors.on_directml and all(case in _NATIVE_ACTIVATIONS for case, _ in native):
            self._native(graph, desc, values, tensors, (steps, directions, batch, inputs, hidden), native)
            return self._plan(graph, tensors, feeds, steps)
        # FLOAT16 computes in FLOAT32, as DirectML's shaders do; lengths compare as INT64.
        values = {name: graph.cast(value, I64 if name == _LENGTHS else F32) for name, value in values.items()}
        x = graph.op("Reshape", values["input_tensor"], graph.const([steps, batch, inputs], I64))
        mask = lengths = None
        if _LENGTHS in values:
            lengths = graph.op("Reshape", values[_LENGTHS], graph.const([batch, 1], I64))
            # mask[t, b, 0] = t < length[b]: whether step t of item b is taken.
            counter = graph.const(np.arange(steps, dtype=np.int64).reshape(steps, 1, 1), I64)
            mask = graph.op("Less", counter, lengths, dtype=BOOL)

        def per_direction(name: str, shape: list[int]) -> list[Value] | None:
            """A tensor field's per-direction slices, reshaped to ``shape`` (None when unset)."""
            if name not in values:
                return None
            whole = graph.op("Reshape", values[name], graph.const([directions, *shape], I64))
            return [graph.op("Gather", whole, graph.const(d, I64), axis=0) for d in range(directions)]

        g, h = self.gates, hidden
        weights = per_direction("weight_tensor", [g * h, inputs])
        recurrences = per_direction("recurrence_tensor", [g * h, h])
        biases = per_direction("bias_tensor", [2 * g * h])
        peepholes = per_direction("peephole_tensor", [3 * h])
        inits = [per_direction(init, [batch, h]) for init, _ in self.states]
        assert weights is not None and recurrences is not None
        sequence_outputs: list[Value] = []
        finals: list[list[Value]] = [[] for _ in self.states]
        want_sequence = tensors.layouts["output_sequence_tensor"] is not None
        for d in range(directions):
            backward = desc.direction == Direction.RECURRENT_NETWORK_DIRECTION_BACKWARD or d == 1
            gates = graph.op("MatMul", x, graph.op("Transpose", weights[d], perm=[1, 0]))
            outer: dict[str, Value] = {"recurrence": graph.op("Transpose", recurrences[d], perm=[1, 0])}
            if biases is not None:
                w_bias = self._slice(graph, biases[d], 0, g * h)
                r_bias = self._slice(graph, biases[d], g * h, 2 * g * h)
                if self.fold_recurrence_bias:
                    gates = graph.op("Add", gates, graph.op("Add", w_bias, r_bias))
                else:
                    gates = graph.op("Add", gates, w_bias)
                    outer["recurrence_bias"] = r_bias
            if peepholes is not None:
                outer["peephole"] = peepholes[d]
            starts = [
                per[d] if per is not None else graph.const(np.zeros((batch, h), np.float32), F32) for per in inits
            ]
            body = _Body(f"d{d}_")
            cell = _Cell(body, activations[d], tensors.feature_level)
            state_in = [body.input(f"d{d}_state{i}", F32, [batch, h]) for i in range(len(self.states))]
            gates_t = body.input(f"d{d}_gates", F32, [batch, g * h])
            mask_t = body.input(f"d{d}_mask", BOOL, [batch, 1]) if mask is not None else None
            new = self.step(cell, desc, state_in, gates_t, outer, h)
            if mask_t is not None:
                new = [body.where(mask_t, n, old) for n, old in zip(new, state_in, strict=True)]
                sequence = body.where(mask_t, new[0], body.const(0.0, F32))
            else:
                sequence = body.op("Identity", new[0])
            for i, value in enumerate(new):
                body.output(value, f"d{d}_state{i}_out", [batch, h])
            if want_sequence:
                body.output(sequence, f"d{d}_sequence_out", [batch, h])
            scan_inputs = [gates] + ([mask] if mask is not None else [])
            scan_outputs = [f"scan{d}_state{i}" for i in range(len(self.states))]
            if want_sequence:
                scan_outputs.append(f"scan{d}_sequence")
            # Backward scans its inputs from the end and prepends its outputs, so they stay in time order.
            directions_attributes: dict[str, Any] = {"scan_input_directions": [int(backward)] * len(scan_inputs)}
            if want_sequence:
                directions_attributes["scan_output_directions"] = [int(backward)]
            graph.nodes.append(
                onnx.helper.make_node(
                    "Scan",
                    [v.name for v in (*starts, *scan_inputs)],
                    scan_outputs,
                    body=body.graph(f"{self.case}_direction{d}"),
                    num_scan_inputs=len(scan_inputs),
                    **directions_attributes,
                )
            )
            for i in range(len(self.states)):
                finals[i].append(Value(scan_outputs[i], F32))
            if want_sequence:
                sequence_outputs.append(Value(scan_outputs[-1], F32))

        for field in self.outputs:
            layout = tensors.layouts[field.name]
            if layout is None:
                continue
            if field.name == "output_sequence_tensor":
                parts = [graph.op("Unsqueeze", s, graph.const([1], I64)) for s in sequence_outputs]
                result = parts[0] if directions == 1 else graph.op("Concat", *parts, axis=1)
            else:
                index = [single for _, single in self.states].index(field.name)
                parts = [graph.op("Unsqueeze", s, graph.const([0, 1], I64)) for s in finals[index]]
                result = parts[0] if directions == 1 else graph.op("Concat", *parts, axis=1)
                if lengths is not None:
                    # An empty sequence takes no step: its single outputs are 0 (ONNX Runtime's rule), not the
                    # initial state.
                    taken = graph.op("Greater", lengths, graph.const(0, I64), dtype=BOOL)
                    result = graph.where(taken, result, graph.const(0.0, F32))
            graph.output(graph.cast(result, layout.dtype), field.name, layout.sizes)
        return self._plan(graph, tensors, feeds, steps)

    def _native(
        self,
        graph: Graph,
        desc: Any,
        values: dict[str, Value],
        tensors: Tensors,
        sizes: tuple[int, int, int, int, int],
        activations: Sequence[tuple[str, Any]],
    ) -> None:
        """The desc as ONNX's own RNN/LSTM/GRU node (DirectML's provider maps it onto this operator)."""
        steps, directions, batch, inputs, hidden = sizes
        gates = self.gates * hidden
        # ONNX's inputs in its order (not the desc's), each with its shape there.
        shapes = {
            "input_tensor": [steps, batch, inputs],
            "weight_tensor": [directions, gates, inputs],
            "recurrence_tensor": [directions, gates, hidden],
            "bias_tensor": [directions, 2 * gates],
            _LENGTHS: [batch],
            "hidden_init_tensor": [directions, batch, hidden],
            "cell_mem_init_tensor": [directions, batch, hidden],
            "peephole_tensor": [directions, 3 * hidden],
        }
        operands = []
        for name, shape in shapes.items():
            value = values.get(name)
            if value is None:
                operands.append("")
                continue
            if name == _LENGTHS:
                value = graph.cast(value, I32)  # ONNX's sequence_lens is INT32; a length is at most seq_length
            operands.append(graph.op("Reshape", value, graph.const(shape, I64)).name)
        attributes: dict[str, Any] = {"hidden_size": hidden, "direction": _NATIVE_DIRECTIONS[desc.direction]}
        names, alphas, betas = [], [], []
        for case, inner in activations:
            name, alpha, beta = _NATIVE_ACTIVATIONS[case]
            names.append(name)
            alphas.extend([] if alpha is None else [float(getattr(inner, alpha))])
            betas.extend([] if beta is None else [float(getattr(inner, beta))])
        attributes["activations"] = names
        if alphas:
            attributes["activation_alpha"] = alphas
        if betas:
            attributes["activation_beta"] = betas
        if self.case == "lstm":
            attributes["input_forget"] = int(desc.couple_input_forget)
            if desc.use_clip_threshold:
                attributes["clip"] = float(desc.clip_threshold)
        if self.case == "gru":
            attributes["linear_before_reset"] = int(desc.linear_before_reset)
        while not operands[-1]:  # optional inputs left out at the end
            operands.pop()
        # The desc's outputs are ONNX's, in ONNX's order: Y, Y_h (and LSTM's Y_c).
        outputs = [f"native_{field.name}" for field in self.outputs]
        dtype = values["input_tensor"].dtype
        graph.nodes.append(onnx.helper.make_node(self.case.upper(), operands, outputs, **attributes))
        for field, name in zip(self.outputs, outputs, strict=True):
            layout = tensors.layouts.get(field.name)
            if layout is not None:
                result = graph.op("Reshape", Value(name, dtype), graph.const(list(layout.sizes), I64))
                graph.output(graph.cast(result, layout.dtype), field.name, layout.sizes)

    def _plan(self, graph: Graph, tensors: Tensors, feeds: tuple[str | None, ...], steps: int) -> Plan:
        """The plan of a lowered graph: sequence lengths checked against seq_length, the outputs the desc sets."""
        present: list[TensorLayout | None] = [tensors.layouts[field.name] for field in self.outputs]
        lengths_index = [f.name for f in self.inputs].index(_LENGTHS)
        lengths_path = f"inputs[{lengths_index}].buffer.data"

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            given = arrays[lengths_index]
            if given is not None and given.size and int(given.max()) > steps:
                position = int(np.argmax(given.reshape(-1) > steps))
                raise InvalidArgument(
                    lengths_path,
                    f"sequence length {int(given.reshape(-1)[position])} of batch item {position} is over "
                    f"seq_length {steps}",
                )
            return {
                name: np.ascontiguousarray(array)
                for name, array in zip(feeds, arrays, strict=True)
                if name is not None and array is not None
            }

        def finish(results: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            found = iter(results)
            return [None if layout is None else next(found) for layout in present]

        direct = tuple(None if name == f"input{lengths_index}" else name for name in feeds)
        layouts_in = tuple(tensors.layouts[field.name] for field in self.inputs)
        return Plan(layouts_in, tuple(present), graph.model(), prepare, finish, direct, None not in present)

    @staticmethod
    def _slice(graph: Graph, value: Value, start: int, end: int) -> Value:
        return graph.op("Slice", value, graph.const([start], I64), graph.const([end], I64), graph.const([0], I64))

    def _activations(self, desc: Any, tensors: Tensors, directions: int) -> list[list[tuple[ElementWise, Any]]]:
        """ActivationDescs checked: the count, and each an activation DirectML fuses at this level (element-wise,
        one input, its tensors unset) with its own attribute rules. Per direction, in f, g, h order."""
        count = int(desc.activation_desc_count)
        listed = len(desc.activation_descs)
        require(count == listed, tensors.field("activation_desc_count"), f"{count} != len(activation_descs) = {listed}")
        wanted = directions * self.activation_count
        require(
            listed == wanted,
            tensors.field("activation_descs"),
            f"{listed} activation descs; {self.type_name} with {directions} direction(s) takes {wanted} "
            f"({self.activation_count} per direction)",
        )
        level = tensors.feature_level
        takes = [name for name, introduced in FUSABLE.items() if parse_feature_level(introduced) <= level]
        checked: list[tuple[ElementWise, Any]] = []
        for index, entry in enumerate(desc.activation_descs):
            path = f"{tensors.field('activation_descs')}[{index}]"
            case = entry.WhichOneof("desc")
            if case is None:
                raise InvalidArgument(path, "an OperatorDesc with no desc set")
            if case.upper() not in takes:
                raise InvalidArgument(
                    f"{path}.{case}",
                    f"DML_OPERATOR_{case.upper()} is not an activation a recurrent network takes; it takes: "
                    + ", ".join(name.lower() for name in takes),
                )
            operator = _ACTIVATIONS[case]
            inner = getattr(entry, case)
            for field in (*operator.inputs, *operator.outputs):
                require(not inner.HasField(field.name), f"{path}.{case}.{field.name}", "must be unset in an activation")
            operator.check(inner, Context(inner, None, tensors["input_tensor"].dtype, level, f"{path}.{case}"))
            checked.append((operator, inner))
        per = self.activation_count
        return [checked[d * per : (d + 1) * per] for d in range(directions)]


class Rnn(_Recurrent):
    case: ClassVar[str] = "rnn"
    gates: ClassVar[int] = 1
    activation_count: ClassVar[int] = 1

    def step(
        self, cell: _Cell, desc: Any, states: list[Value], gates: Value, outer: dict[str, Value], hidden: int
    ) -> list[Value]:
        b = cell.body
        pre = b.op("Add", gates, b.op("MatMul", states[0], outer["recurrence"]))
        return [cell.act(0, pre)]


class Lstm(_Recurrent):
    case: ClassVar[str] = "lstm"
    gates: ClassVar[int] = 4
    activation_count: ClassVar[int] = 3
    states = (("hidden_init_tensor", "output_single_tensor"), ("cell_mem_init_tensor", "output_cell_single_tensor"))

    def check(self, desc: Any, tensors: Tensors) -> None:
        if desc.use_clip_threshold:
            # [-threshold, +threshold] is empty below 0; NaN would make every output NaN.
            threshold = desc.clip_threshold
            require(
                not math.isnan(threshold) and threshold >= 0,
                tensors.field("clip_threshold"),
                f"{threshold} must be >= 0 with use_clip_threshold",
            )

    def step(
        self, cell: _Cell, desc: Any, states: list[Value], gates: Value, outer: dict[str, Value], hidden: int
    ) -> list[Value]:
        b = cell.body
        h_prev, c_prev = states
        pre = b.op("Add", gates, b.op("MatMul", h_prev, outer["recurrence"]))

        def clip(value: Value) -> Value:
            if not desc.use_clip_threshold:
                return value
            threshold = float(desc.clip_threshold)
            return b.op("Clip", value, b.const(-threshold, F32), b.const(threshold, F32))

        def peep(value: Value, index: int, state: Value) -> Value:
            """``value`` + P_[iof][index] (.) ``state``."""
            if "peephole" not in outer:
                return value
            weights = b.op(
                "Slice",
                outer["peephole"],
                b.const([index * hidden], I64),
                b.const([(index + 1) * hidden], I64),
                b.const([0], I64),
            )
            return b.op("Add", value, b.op("Mul", weights, state))

        # Gates are stacked i, o, f, c; peepholes i, o, f.
        i_t = cell.act(0, clip(peep(cell.gate(pre, 0, hidden), 0, c_prev)))
        if desc.couple_input_forget:
            f_t = b.op("Sub", b.const(1.0, F32), i_t)
        else:
            f_t = cell.act(0, clip(peep(cell.gate(pre, 2, hidden), 2, c_prev)))
        c_tilde = cell.act(1, clip(cell.gate(pre, 3, hidden)))
        c_t = b.op("Add", b.op("Mul", f_t, c_prev), b.op("Mul", i_t, c_tilde))
        o_t = cell.act(0, clip(peep(cell.gate(pre, 1, hidden), 1, c_t)))
        h_t = b.op("Mul", o_t, cell.act(2, c_t))
        return [h_t, c_t]


class Gru(_Recurrent):
    case: ClassVar[str] = "gru"
    gates: ClassVar[int] = 3
    activation_count: ClassVar[int] = 2
    fold_recurrence_bias: ClassVar[bool] = False

    def step(
        self, cell: _Cell, desc: Any, states: list[Value], gates: Value, outer: dict[str, Value], hidden: int
    ) -> list[Value]:
        b = cell.body
        (h_prev,) = states
        recurrence = outer["recurrence"]  # [H, 3H]: columns z, r, h
        zr_weights = b.op("Slice", recurrence, b.const([0], I64), b.const([2 * hidden], I64), b.const([1], I64))
        h_weights = b.op("Slice", recurrence, b.const([2 * hidden], I64), b.const([3 * hidden], I64), b.const([1], I64))
        zr = b.op("MatMul", h_prev, zr_weights)
        bias = outer.get("recurrence_bias")
        h_bias = None
        if bias is not None:
            zr = b.op("Add", zr, b.op("Slice", bias, b.const([0], I64), b.const([2 * hidden], I64)))
            h_bias = b.op("Slice", bias, b.const([2 * hidden], I64), b.const([3 * hidden], I64))
        z_t = cell.act(0, b.op("Add", cell.gate(gates, 0, hidden), cell.gate(zr, 0, hidden)))
        r_t = cell.act(0, b.op("Add", cell.gate(gates, 1, hidden), cell.gate(zr, 1, hidden)))
        if desc.linear_before_reset:
            linear = b.op("MatMul", h_prev, h_weights)
            if h_bias is not None:
                linear = b.op("Add", linear, h_bias)
            recurrent = b.op("Mul", r_t, linear)
        else:
            recurrent = b.op("MatMul", b.op("Mul", r_t, h_prev), h_weights)
            if h_bias is not None:
                recurrent = b.op("Add", recurrent, h_bias)
        h_tilde = cell.act(1, b.op("Add", cell.gate(gates, 2, hidden), recurrent))
        # H_t = (1 - z) (.) h~ + z (.) H_{t-1} = h~ + z (.) (H_{t-1} - h~)
        return [b.op("Add", h_tilde, b.op("Mul", z_t, b.op("Sub", h_prev, h_tilde)))]


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Rnn(), Lstm(), Gru())
