"""The pages of RNN, LSTM and GRU."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_{rnn,lstm,gru}_operator_desc.md. The GRU page has the Availability,
# Tensor constraints and Tensor support sections; the RNN and LSTM pages end after their fields, so their tables are
# the GRU page's (every operator of the family introduced at 1.0, FLOAT32/FLOAT16 tensors, UINT32 sequence lengths,
# all 4D), extended by each page's own tensor fields.

_F = "FLOAT32 FLOAT16"

_SHAPES = (
    "Sizes, with D = num_directions (2 if Direction is BIDIRECTIONAL, else 1), G = the gate count (RNN 1, LSTM 4, "
    "GRU 3), H = hidden_size, I = input_size, T = seq_length, B = batch_size: InputTensor {1, T, B, I}; "
    "WeightTensor {1, D, G*H, I}; RecurrenceTensor {1, D, G*H, H}; BiasTensor {1, 1, D, 2*G*H} (the weight "
    "biases of every gate, then the recurrence biases, per direction); HiddenInitTensor (and LSTM's "
    "CellMemInitTensor) {1, D, B, H}; SequenceLengthsTensor {1, 1, 1, B}; OutputSequenceTensor {T, D, B, H}; "
    "OutputSingleTensor (and LSTM's OutputCellSingleTensor) {1, D, B, H}."
)

_SEQUENCE_LENGTHS = (
    "SequenceLengthsTensor (optional) holds each batch item's own length; unset, every sequence is seq_length "
    "long. The pages do not say what is written past a sequence's length. ONNX Runtime's DirectML provider lowers "
    "ONNX RNN/LSTM/GRU straight onto these operators (its sequence_lens becomes SequenceLengthsTensor), so the "
    "ONNX rule applies: OutputSequenceTensor holds 0 at steps t >= length, the single outputs hold the state of "
    "the last step taken (t = length - 1 forward; t = 0 backward, whose steps run from length - 1 down to 0); an "
    "empty sequence (length 0) writes 0 everywhere, single outputs included (ONNX Runtime's rule). Lengths above "
    "seq_length have no meaning and are refused."
)

PAGES: dict[str, Page] = {
    "RNN": Page(
        page="ns-directml-dml_rnn_operator_desc",
        introduced="1.0",
        function=(
            "forward: for t = 0 .. T-1: H_t = f(X_t * W_i^T + H_{t-1} * R_i^T + W_bi + R_bi); backward: the same "
            "over t = T-1 .. 0 with the backward sub-matrices; H_{-1} = HiddenInitTensor (0 when unset)"
        ),
        constraints=(
            "Every tensor except SequenceLengthsTensor has the same DataType.",
            _SHAPES,
            "At least one of OutputSequenceTensor and OutputSingleTensor is set.",
            "ActivationDescCount = len(ActivationDescs) = num_directions: f() forward, then f() backward.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "WeightTensor": ("4", _F),
                "RecurrenceTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "HiddenInitTensor": ("4", _F),
                "SequenceLengthsTensor": ("4", "UINT32"),
                "OutputSequenceTensor": ("4", _F),
                "OutputSingleTensor": ("4", _F),
            },
        },
        notes=(
            "Also called the input gate. Each activation is a DML_OPERATOR_DESC of an ACTIVATION_* type with its "
            "own parameters (alpha, beta, ...) and null tensors, like a FusedActivation; ONNX Runtime's DirectML "
            "provider builds them from ONNX's activations (Relu, LeakyRelu, ThresholdedRelu, Tanh, ScaledTanh, "
            "Sigmoid, HardSigmoid, Elu, Softsign, Softplus) and ActivationDescCount from the direction. "
            + _SEQUENCE_LENGTHS
            + " The page gives no example."
        ),
    ),
    "LSTM": Page(
        page="ns-directml-dml_lstm_operator_desc",
        introduced="1.0",
        function=(
            "i_t = f(clip(X_t*W_i^T + H_{t-1}*R_i^T + P_i (.) C_{t-1} + W_bi + R_bi)); f_t = f(clip(X_t*W_f^T + "
            "H_{t-1}*R_f^T + P_f (.) C_{t-1} + W_bf + R_bf)), or 1 - i_t with CoupleInputForget; c_t = "
            "g(clip(X_t*W_c^T + H_{t-1}*R_c^T + W_bc + R_bc)); C_t = f_t (.) C_{t-1} + i_t (.) c_t; o_t = "
            "f(clip(X_t*W_o^T + H_{t-1}*R_o^T + P_o (.) C_t + W_bo + R_bo)); H_t = o_t (.) h(C_t); clip(x) = "
            "min(max(x, -ClipThreshold), ClipThreshold) with UseClipThreshold, else x"
        ),
        constraints=(
            "Every tensor except SequenceLengthsTensor has the same DataType.",
            _SHAPES + " Gates are stacked i, o, f, c in WeightTensor, RecurrenceTensor and BiasTensor; PeepholeTensor "
            "{1, 1, D, 3*H} stacks P_i, P_o, P_f.",
            "At least one of OutputSequenceTensor, OutputSingleTensor and OutputCellSingleTensor is set.",
            "ActivationDescCount = len(ActivationDescs) = 3 * num_directions: f(), g(), h() forward, then f(), "
            "g(), h() backward.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "WeightTensor": ("4", _F),
                "RecurrenceTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "HiddenInitTensor": ("4", _F),
                "CellMemInitTensor": ("4", _F),
                "SequenceLengthsTensor": ("4", "UINT32"),
                "PeepholeTensor": ("4", _F),
                "OutputSequenceTensor": ("4", _F),
                "OutputSingleTensor": ("4", _F),
                "OutputCellSingleTensor": ("4", _F),
            },
        },
        notes=(
            "Clipping bounds to [-ClipThreshold, +ClipThreshold] and applies to the input of the gate activations "
            "(not to h(C_t)). The page's equation writes P_o (.) C_{t-1} and h(ct); ONNX's LSTM, which ONNX "
            "Runtime's DirectML provider maps onto this operator field for field (peepholes, clip and input_forget "
            "included), uses the new cell state C_t in both places, so C_t is taken. CellMemInitTensor is C_{-1} "
            "(0 when unset); PeepholeTensor and BiasTensor default to 0. "
            + _SEQUENCE_LENGTHS
            + " OutputCellSingleTensor follows the single-output rule with C_t. The page gives no example."
        ),
    ),
    "GRU": Page(
        page="ns-directml-dml_gru_operator_desc",
        introduced="1.0",
        function=(
            "z_t = f(X_t*W_z^T + H_{t-1}*R_z^T + W_bz + R_bz); r_t = f(X_t*W_r^T + H_{t-1}*R_r^T + W_br + R_br); "
            "h_t = g(X_t*W_h^T + (r_t (.) H_{t-1})*R_h^T + R_bh + W_bh), or with LinearBeforeReset h_t = "
            "g(X_t*W_h^T + r_t (.) (H_{t-1}*R_h^T + R_bh) + W_bh); H_t = (1 - z_t) (.) h_t + z_t (.) H_{t-1}"
        ),
        constraints=(
            "BiasTensor, HiddenInitTensor, InputTensor, OutputSequenceTensor, OutputSingleTensor, "
            "RecurrenceTensor and WeightTensor have the same DataType.",
            _SHAPES + " Gates are stacked z, r, h.",
            "At least one of OutputSequenceTensor and OutputSingleTensor is set.",
            "ActivationDescCount = len(ActivationDescs) = 2 * num_directions: f(), g() forward, then f(), g() "
            "backward.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "WeightTensor": ("4", _F),
                "RecurrenceTensor": ("4", _F),
                "BiasTensor": ("4", _F),
                "HiddenInitTensor": ("4", _F),
                "SequenceLengthsTensor": ("4", "UINT32"),
                "OutputSequenceTensor": ("4", _F),
                "OutputSingleTensor": ("4", _F),
            },
        },
        notes=(
            "The page draws its equations as images; they are ONNX's GRU equations (ONNX Runtime's DirectML "
            "provider maps ONNX GRU onto this operator, linear_before_reset onto LinearBeforeReset). "
            + _SEQUENCE_LENGTHS
            + " The page gives no example."
        ),
    ),
}
