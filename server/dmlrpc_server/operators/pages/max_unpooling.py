"""The page of MAX_UNPOOLING."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (newest stored versions),
# and MicrosoftDocs/windows-ai-docs docs/directml/api/ for AVERAGE_POOLING1 and LP_POOLING1 (6.2), which are
# not in sdk-api. Feature-level remarks cite windows-ai-docs docs/directml/dml-feature-level-history.md.
# support levels are listed ascending; the pages list them descending.

PAGES: dict[str, Page] = {
    "MAX_UNPOOLING": Page(
        page="ns-directml-dml_max_unpooling_operator_desc",
        introduced="3.0",
        function=(
            "Output = zeros(OutputTensor.Sizes); for each element i of InputTensor: "
            "Output.flat[IndicesTensor[i]] = InputTensor[i]"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "InputTensor and IndicesTensor: same Sizes.",
            "OutputTensor has the same number of dimensions as InputTensor (4D only).",
        ),
        support={
            "3.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "IndicesTensor": ("4", "UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
            "5.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
                "IndicesTensor": ("4", "UINT64 UINT32"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"),
            },
        },
        notes=(
            "Inverse of max pooling with indices (MAX_POOLING1/2): InputTensor holds pooled values, IndicesTensor "
            "the OutputIndicesTensor of that pooling. Indices are zero-based into OutputTensor treated as one "
            "contiguous 1D array (including batch/channel offsets). Output elements not targeted by any index "
            "are 0. Output Sizes are not derived from attributes (no window/stride fields): the caller gives "
            "them, typically the original pooling input's Sizes. Behavior for duplicate or out-of-range indices "
            "is not documented. Input is {Batch, Channel, Height, Width}. No examples on the page."
        ),
    ),
}
