"""NumPy references for RNN, LSTM and GRU from the DirectML pages' equations (FLOAT64, one step at a time)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tests.references.element_wise import fused

#: Gates stacked in W, R and B per direction.
GATES = {"rnn": 1, "lstm": 4, "gru": 3}
#: Activations per direction.
ACTIVATION_COUNT = {"rnn": 1, "lstm": 3, "gru": 2}


@dataclass
class Result:
    """Every output of one run: OutputSequence {T, D, B, H}, OutputSingle and OutputCellSingle {1, D, B, H}."""

    sequence: np.ndarray
    single: np.ndarray
    cell_single: np.ndarray


def recurrent(
    kind: str,
    x: np.ndarray,
    w: np.ndarray,
    r: np.ndarray,
    *,
    activations: Sequence[tuple[str, Any]],
    direction: str = "forward",
    bias: np.ndarray | None = None,
    hidden_init: np.ndarray | None = None,
    cell_init: np.ndarray | None = None,
    lengths: np.ndarray | None = None,
    peephole: np.ndarray | None = None,
    clip: float | None = None,
    couple_input_forget: bool = False,
    linear_before_reset: bool = False,
) -> Result:
    """The operator on DirectML's 4D tensors: X {1, T, B, I}, W {1, D, G*H, I}, R {1, D, G*H, H}, B {1, 1, D,
    2*G*H}, inits {1, D, B, H}, lengths {1, 1, 1, B}, P {1, 1, D, 3*H}; ``activations`` as (ACTIVATION_* name, its
    desc) for every direction, f, g, h order.

    An item of length L takes steps 0 .. L-1 (backward: L-1 down to 0); OutputSequence is 0 at the other steps, the
    single outputs hold the state after the last step taken, or 0 for L = 0.
    """
    f64 = np.float64
    _, steps, batch, _ = x.shape
    hidden = r.shape[3]
    directions = 2 if direction == "bidirectional" else 1
    per = ACTIVATION_COUNT[kind]
    g = GATES[kind]
    sequence = np.zeros((steps, directions, batch, hidden))
    single = np.zeros((1, directions, batch, hidden))
    cell_single = np.zeros((1, directions, batch, hidden))
    for d in range(directions):
        backward = direction == "backward" or d == 1
        acts = activations[d * per : (d + 1) * per]

        def act(index: int, value: np.ndarray, acts: Sequence[tuple[str, Any]] = acts) -> np.ndarray:
            name, desc = acts[index]
            return fused(name, value, desc)

        def clipped(value: np.ndarray) -> np.ndarray:
            return value if clip is None else np.clip(value, -clip, clip)

        W = w[0, d].astype(f64)  # noqa: N806 - the pages' names
        R = r[0, d].astype(f64)  # noqa: N806
        b = bias[0, 0, d].astype(f64) if bias is not None else np.zeros(2 * g * hidden)
        wb, rb = b[: g * hidden], b[g * hidden :]
        p = peephole[0, 0, d].astype(f64) if peephole is not None else np.zeros(3 * hidden)

        def part(matrix: np.ndarray, index: int) -> np.ndarray:
            return matrix[index * hidden : (index + 1) * hidden]

        for item in range(batch):
            length = steps if lengths is None else int(lengths.reshape(-1)[item])
            h = hidden_init[0, d, item].astype(f64) if hidden_init is not None else np.zeros(hidden)
            c = cell_init[0, d, item].astype(f64) if cell_init is not None else np.zeros(hidden)
            order = range(length - 1, -1, -1) if backward else range(length)
            for t in order:
                xt = x[0, t, item].astype(f64)
                # Per gate: X_t * W^T + W_b and H_{t-1} * R^T + R_b, stacked as the tensors stack them.
                from_x = W @ xt + wb
                from_h = R @ h + rb
                if kind == "rnn":
                    h = act(0, from_x + from_h)
                elif kind == "lstm":
                    # Stacked i, o, f, c; peepholes i, o, f.
                    both = from_x + from_h
                    i_t = act(0, clipped(part(both, 0) + part(p, 0) * c))
                    f_t = 1 - i_t if couple_input_forget else act(0, clipped(part(both, 2) + part(p, 2) * c))
                    c_tilde = act(1, clipped(part(both, 3)))
                    c_new = f_t * c + i_t * c_tilde
                    o_t = act(0, clipped(part(both, 1) + part(p, 1) * c_new))
                    h, c = o_t * act(2, c_new), c_new
                else:
                    # Stacked z, r, h.
                    z_t = act(0, part(from_x, 0) + part(from_h, 0))
                    r_t = act(0, part(from_x, 1) + part(from_h, 1))
                    if linear_before_reset:
                        candidate = part(from_x, 2) + r_t * part(from_h, 2)
                    else:
                        candidate = part(from_x, 2) + part(R, 2) @ (r_t * h) + part(rb, 2)
                    h_tilde = act(1, candidate)
                    h = (1 - z_t) * h_tilde + z_t * h
                sequence[t, d, item] = h
            if length > 0:
                single[0, d, item] = h
                cell_single[0, d, item] = c
    return Result(sequence, single, cell_single)
