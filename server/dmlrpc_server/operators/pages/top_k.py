"""The pages of TOP_K and TOP_K1."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_top_k_operator_desc.md and ns-directml-dml_top_k1_operator_desc.md.
# Support levels are listed ascending; the pages list them descending.

_UP_TO_32 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_WITH_64 = "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"
_TOP_K1_SUPPORT: dict[str, dict[str, tuple[str, str]]] = {
    "2.1": {
        "InputTensor": ("4", _UP_TO_32),
        "OutputValueTensor": ("4", _UP_TO_32),
        "OutputIndexTensor": ("4", "UINT32"),
    },
    "3.1": {
        "InputTensor": ("1-8", _UP_TO_32),
        "OutputValueTensor": ("1-8", _UP_TO_32),
        "OutputIndexTensor": ("1-8", "UINT32"),
    },
    "5.0": {
        "InputTensor": ("1-8", _WITH_64),
        "OutputValueTensor": ("1-8", _WITH_64),
        "OutputIndexTensor": ("1-8", "UINT64 UINT32"),
    },
}

PAGES: dict[str, Page] = {
    "TOP_K": Page(
        page="ns-directml-dml_top_k_operator_desc",
        introduced="2.0",
        function=(
            "OutputValueTensor = the K largest elements of each sequence along Axis, in decreasing order; "
            "OutputIndexTensor = their indices within the sequence"
        ),
        constraints=(
            "InputTensor, OutputValueTensor and OutputIndexTensor: same DimensionCount.",
            "InputTensor and OutputValueTensor: same DataType.",
            "OutputValueTensor and OutputIndexTensor: InputTensor's sizes, except Axis, whose size is K.",
            "Axis: less than InputTensor's DimensionCount.",
        ),
        support={
            "2.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputValueTensor": ("4", "FLOAT32 FLOAT16"),
                "OutputIndexTensor": ("4", "UINT32"),
            },
            **_TOP_K1_SUPPORT,
        },
        notes=(
            "Equal values: the lower index comes first. The page's table is headed 2.0, while DirectML.h puts the "
            "type in its base (1.0) block. From 2.1 the type shares TOP_K1's tables (TOP_K1 with AxisDirection "
            "DECREASING is TOP_K, per TOP_K1's remarks); the 64-bit data and UINT64 indices of 5.0 are the release "
            "notes' 'Supports 64-bit data type for TOP_K' (DirectML 1.8.0)."
        ),
    ),
    "TOP_K1": Page(
        page="ns-directml-dml_top_k1_operator_desc",
        introduced="2.1",
        function=(
            "OutputValueTensor = the K largest (AxisDirection DECREASING, in decreasing order) or smallest "
            "(INCREASING, in increasing order) elements of each sequence along Axis; OutputIndexTensor = their "
            "indices within the sequence"
        ),
        constraints=(
            "InputTensor, OutputIndexTensor and OutputValueTensor: same DimensionCount.",
            "InputTensor and OutputValueTensor: same DataType.",
            "OutputValueTensor and OutputIndexTensor: InputTensor's sizes, except Axis, whose size is K.",
            "Axis: less than InputTensor's DimensionCount.",
            "K: greater than 0 and less than the size of Axis (the page's words).",
        ),
        support=_TOP_K1_SUPPORT,
        notes=(
            "Ties: the indices of every tied element are included in ascending index order, whatever the "
            "AxisDirection. Indices count from the start of their sequence. The stored page lists the 2.1 and 3.1 "
            "tables; 5.0 adds INT64/UINT64 data and UINT64 indices (DirectML 1.8.0's release notes)."
        ),
    ),
}
