"""The page of SCATTER_ND."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown source of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_scatter_nd_operator_desc.md. Support levels are listed ascending; the
# page lists them descending.

_UP_TO_32 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_ALL = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"
_INDICES = "INT64 INT32 UINT64 UINT32"

PAGES: dict[str, Page] = {
    "SCATTER_ND": Page(
        page="ns-directml-dml_scatter_nd_operator_desc",
        introduced="2.1",
        function="output = input; then output[indices[...]] = updates[...] (an index tuple per IndicesTensor row)",
        constraints=(
            "IndicesTensor: InputTensor's DimensionCount; its last dimension (the index-tuple length) is at most "
            "InputTensor's DimensionCount.",
            "InputDimensionCount and IndicesDimensionCount: the meaningful trailing dimensions after leading 1s, "
            "in [1, DimensionCount].",
            "UpdatesTensor: the right-aligned concatenation of IndicesTensor's meaningful sizes but the last and "
            "InputTensor's sizes after the index-tuple length, with leading 1s.",
            "OutputTensor: InputTensor's sizes and DataType.",
            "InputTensor, IndicesTensor, UpdatesTensor and OutputTensor: same DimensionCount.",
            "InputTensor, UpdatesTensor and OutputTensor: same DataType.",
        ),
        support={
            "2.1": {
                "InputTensor": ("4", _UP_TO_32),
                "IndicesTensor": ("4", "UINT32"),
                "UpdatesTensor": ("4", _UP_TO_32),
                "OutputTensor": ("4", _UP_TO_32),
            },
            "3.0": {
                "InputTensor": ("1-8", _UP_TO_32),
                "IndicesTensor": ("1-8", _INDICES),
                "UpdatesTensor": ("1-8", _UP_TO_32),
                "OutputTensor": ("1-8", _UP_TO_32),
            },
            "4.1": {
                "InputTensor": ("1-8", _ALL),
                "IndicesTensor": ("1-8", _INDICES),
                "UpdatesTensor": ("1-8", _ALL),
                "OutputTensor": ("1-8", _ALL),
            },
        },
        notes=(
            "Overlapping indices: which write wins is not guaranteed. Negative indices from feature level 3.0, "
            "with a signed index type. The page states the dimension counts' range as [1, DimensionCount) while "
            "GATHER_ND's says [1, DimensionCount]; the inclusive bound is what works with ONNX ranks. Example: "
            "Input {3,4,5,6,7} with InputDimensionCount 5 and Indices {1,1,1,2,3} with IndicesDimensionCount 3 "
            "give Updates {1,1,2,6,7}."
        ),
    ),
}
