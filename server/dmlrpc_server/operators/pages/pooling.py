"""The pages of AVERAGE_POOLING(1), MAX_POOLING(1/2) and LP_POOLING(1)."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (newest stored versions),
# and MicrosoftDocs/windows-ai-docs docs/directml/api/ for AVERAGE_POOLING1 and LP_POOLING1 (6.2), which are
# not in sdk-api. Feature-level remarks cite windows-ai-docs docs/directml/dml-feature-level-history.md.
# support levels are listed ascending; the pages list them descending.

_POOL_OUT = (
    "Output size (page): Out.Sizes[0] = In.Sizes[0]; Out.Sizes[1] = In.Sizes[1]; for i in [0, DimensionCount): "
    "Out.Sizes[i+2] = (In.Sizes[i+2] + StartPadding[i] + EndPadding[i] - WindowSize[i]) / Strides[i] + 1 "
    "(unsigned integer division, i.e. floor). DimensionCount is the number of SPATIAL dimensions: 2 for a 4D "
    "InputTensor {N, C, H, W}, 3 for a 5D one {N, C, D, H, W}. Strides, WindowSize, StartPadding and EndPadding "
    "(and Dilations where present) have DimensionCount entries indexed over the spatial dims only, ordered "
    "{H, W} or {D, H, W}; batch and channel are never pooled."
)

PAGES: dict[str, Page] = {
    "AVERAGE_POOLING": Page(
        page="ns-directml-dml_average_pooling_operator_desc",
        introduced="1.0",
        function=(
            "y[n, c, o] = sum(x[n, c, o*Strides - StartPadding + k] for k in window WindowSize) / count, where "
            "out-of-bounds (padding) elements contribute 0 and count = prod(WindowSize) if IncludePadding else "
            "the number of in-bounds (non-padding) elements in the window"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " IncludePadding=FALSE: padding elements are excluded from the averaging divisor; "
            "IncludePadding=TRUE: they count in the divisor "
            "(presumably as zeros; the value of padding elements is not stated). The page has a single support "
            "table (no "
            "per-level split), no examples and no in-place statement. Superseded by AVERAGE_POOLING1 (6.2), which "
            "adds Dilations."
        ),
    ),
    "AVERAGE_POOLING1": Page(
        page="ns-directml-dml_average_pooling1_operator_desc",
        introduced="6.2",
        function=(
            "like AVERAGE_POOLING but window element k of spatial dim i is read at "
            "o*Strides[i] - StartPadding[i] + k*Dilations[i]; y = sum(window) / count, count = prod(WindowSize) "
            "if IncludePadding else number of non-padding elements in the window"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "6.2": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " CAUTION: the page's output-size formula does not mention Dilations; with dilation the "
            "window extent is presumably (WindowSize[i] - 1) * Dilations[i] + 1 (not stated on the page). The "
            "page's DimensionCount text also names only Strides/StartPadding/EndPadding, but Dilations is "
            "_Field_size_(DimensionCount) too. With Dilations all 1 ({1,1} for 4D, {1,1,1} for 5D) it equals "
            "AVERAGE_POOLING. Page lives only in MicrosoftDocs/windows-ai-docs (DirectML 1.13+ redistributable). "
            "No examples on the page."
        ),
    ),
    "MAX_POOLING": Page(
        page="ns-directml-dml_max_pooling_operator_desc",
        introduced="1.0",
        function="y[n, c, o] = max(x[n, c, o*Strides - StartPadding + k] for k in window WindowSize)",
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
            "3.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
            },
            "5.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            _POOL_OUT + " The page does not say which value padding elements take; for a max they must not win "
            "(treat as -inf / ignored). Integer types from 3.0 (INT8, UINT8) and 5.0 (all 8-64-bit ints); never "
            "FLOAT64. Newer versions: MAX_POOLING1 (2.0, optional indices), MAX_POOLING2 (2.1, dilations). No "
            "examples on the page."
        ),
    ),
    "MAX_POOLING1": Page(
        page="ns-directml-dml_max_pooling1_operator_desc",
        introduced="2.0",
        function=(
            "y = max over the window as in MAX_POOLING; optional indices[n, c, o] = flat (row-major, contiguous) "
            "index into InputTensor of the first element attaining the max"
        ),
        constraints=(
            "InputTensor, OutputIndicesTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            "OutputIndicesTensor, when given, has the same Sizes as OutputTensor.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "2.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "3.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "5.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT64 UINT32"),
            },
        },
        notes=(
            _POOL_OUT + " OutputIndicesTensor is optional (_Maybenull_); with it NULL the op equals MAX_POOLING. "
            "Indices are zero-based and treat InputTensor as one contiguous 1D array (so they include the "
            "batch/channel offset, not just the position inside the window). Ties: the first equal value "
            "encountered wins, later equal values are ignored. UINT64 indices only from 5.0. Example from an "
            "older (2020) revision of this page: input [[3,5,7,1],[9,4,2,8]] (implicit flat indices 0..7), "
            "window covering 3 elements along a row, stride 1 -> values [[7,7],[9,8]], indices [[2,2],[4,7]]."
        ),
    ),
    "MAX_POOLING2": Page(
        page="ns-directml-dml_max_pooling2_operator_desc",
        introduced="2.1",
        function=(
            "y[n, c, o] = max(x[n, c, o*Strides - StartPadding + k*Dilations] for k in window WindowSize); "
            "optional indices = flat contiguous index into InputTensor of the first max"
        ),
        constraints=(
            "InputTensor, OutputIndicesTensor and OutputTensor: same DimensionCount.",
            "InputTensor and OutputTensor: same DataType.",
            "OutputIndicesTensor, when given, has the same Sizes as OutputTensor.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "2.1": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "3.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT8 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT32"),
            },
            "5.0": {
                "InputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "OutputIndicesTensor": ("4-5", "UINT64 UINT32"),
            },
        },
        notes=(
            _POOL_OUT + " CAUTION: the page's output-size formula does not mention Dilations; the dilated window "
            "extent is presumably (WindowSize[i] - 1) * Dilations[i] + 1 (not stated). Dilations has "
            "DimensionCount entries ({H, W} or {D, H, W}); with all ones it equals MAX_POOLING1. Indices: "
            "zero-based, InputTensor treated as contiguous 1D array, ties resolve to the first value encountered. "
            "OutputIndicesTensor optional. No examples on the page."
        ),
    ),
    "LP_POOLING": Page(
        page="ns-directml-dml_lp_pooling_operator_desc",
        introduced="1.0",
        function="y = (x1^P + x2^P + ... + xn^P)^(1/P) over the n elements x1..xn of each sliding window",
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "1.0": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " P is a UINT; commonly 1 (L1) or 2 (L2). The page writes x^P without absolute values "
            "(standard Lp pooling uses |x|^P; for odd P and negative inputs the page is ambiguous). Padding "
            "elements presumably contribute 0 (not stated). Single support table. No examples on the page."
        ),
    ),
    "LP_POOLING1": Page(
        page="ns-directml-dml_lp_pooling1_operator_desc",
        introduced="6.2",
        function=(
            "y = (x1^P + ... + xn^P)^(1/P) over each dilated sliding window (element k of spatial dim i at "
            "o*Strides[i] - StartPadding[i] + k*Dilations[i])"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType and DimensionCount.",
            "DimensionCount (spatial) must be 2 for a 4D InputTensor and 3 for a 5D one.",
            "OutputTensor Sizes must follow the pooling output-size formula (see notes).",
        ),
        support={
            "6.2": {"InputTensor": ("4-5", "FLOAT32 FLOAT16"), "OutputTensor": ("4-5", "FLOAT32 FLOAT16")},
        },
        notes=(
            _POOL_OUT + " CAUTION: the page's output-size formula ignores Dilations; dilated window extent is "
            "presumably (WindowSize[i] - 1) * Dilations[i] + 1 (not stated). With Dilations all 1 it equals "
            "LP_POOLING. P: UINT, usually 1 or 2. Page lives only in MicrosoftDocs/windows-ai-docs (DirectML "
            "1.13+). No examples on the page."
        ),
    ),
}
