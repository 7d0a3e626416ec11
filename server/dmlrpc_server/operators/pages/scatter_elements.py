"""The page of SCATTER_ELEMENTS (DML_SCATTER_OPERATOR_DESC)."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown source of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_scatter_operator_desc.md (DML_SCATTER_ELEMENTS_OPERATOR_DESC is an
# alias of DML_SCATTER_OPERATOR_DESC). Support levels are listed ascending; the page lists them descending.

_F = "FLOAT32 FLOAT16"
_UP_TO_32 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"
_ALL = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"
_INDICES = "INT64 INT32 UINT64 UINT32"

PAGES: dict[str, Page] = {
    "SCATTER_ELEMENTS": Page(
        page="ns-directml-dml_scatter_operator_desc",
        introduced="1.0",
        function=(
            "output = input; then output[..., indices[i, j, k, ...] (at Axis), ...] = updates[i, j, k, ...] for "
            "every element of IndicesTensor"
        ),
        constraints=(
            "IndicesTensor: InputTensor's sizes in every dimension except Axis.",
            "UpdatesTensor: IndicesTensor's sizes.",
            "OutputTensor: InputTensor's sizes and DataType.",
            "Axis: less than OutputTensor's DimensionCount.",
            "InputTensor, IndicesTensor, UpdatesTensor and OutputTensor: same DimensionCount.",
            "InputTensor, UpdatesTensor and OutputTensor: same DataType.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", _F),
                "IndicesTensor": ("4", "UINT32"),
                "UpdatesTensor": ("4", _F),
                "OutputTensor": ("4", _F),
            },
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
            "Overlapping output indices are invalid: which write wins is not guaranteed. Negative indices (from "
            "the end of the axis) from feature level 3.0, with a signed index type. The page says the operator was "
            "introduced at 1.0; DirectML.h puts the type in its 2.0 block."
        ),
    ),
}
