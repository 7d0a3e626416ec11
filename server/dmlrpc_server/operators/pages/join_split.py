"""The pages of JOIN and SPLIT."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (newest stored versions),
# and MicrosoftDocs/windows-ai-docs docs/directml/api/ for AVERAGE_POOLING1 and LP_POOLING1 (6.2), which are
# not in sdk-api. Feature-level remarks cite windows-ai-docs docs/directml/dml-feature-level-history.md.
# support levels are listed ascending; the pages list them descending.

PAGES: dict[str, Page] = {
    "SPLIT": Page(
        page="ns-directml-dml_split_operator_desc",
        introduced="1.0",
        function=(
            "OutputTensors[j] = InputTensor[..., sum(OutputTensors[:j].Sizes[Axis]) : "
            "sum(OutputTensors[:j+1].Sizes[Axis]), ...] (consecutive pieces along Axis)"
        ),
        constraints=(
            "InputTensor and OutputTensors: same DataType and DimensionCount.",
            "OutputCount > 0 (size of the OutputTensors array).",
            "Axis in [0, InputTensor.DimensionCount - 1].",
            "Every output has the input's Sizes except along Axis.",
            "The outputs' Axis sizes sum exactly to InputTensor.Sizes[Axis].",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
                "OutputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
            },
            "2.1": {
                "InputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensor": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensors": ("1-8", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensor": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
                "OutputTensors": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
            },
        },
        notes=(
            "Inverse of JOIN. Axis is a plain dimension index (0 = outermost), unsigned, no negative axes. "
            "OutputTensors is an array of outputs (table kind 'Array of outputs'). A single output is a plain "
            "copy. E.g. an axis of size 3 splits as 1+1+1, 1+2, 2+1 or 3. Examples, input (1,1,6,2) FLOAT32 "
            "[[1,2],[3,4],[5,6],[7,8],[9,10],[11,12]]: Ex1 OutputCount 3, Axis 2 -> (1,1,2,2) [[1,2],[3,4]], "
            "(1,1,1,2) [[5,6]], (1,1,3,2) [[7,8],[9,10],[11,12]]; Ex2 OutputCount 2, Axis 3 -> (1,1,6,1) "
            "[1,3,5,7,9,11] and (1,1,6,1) [2,4,6,8,10,12]."
        ),
    ),
    "JOIN": Page(
        page="ns-directml-dml_join_operator_desc",
        introduced="1.0",
        function="OutputTensor = concatenate(InputTensors[0..InputCount-1], axis=Axis)",
        constraints=(
            "InputTensors and OutputTensor: same DataType and DimensionCount.",
            "InputCount > 0 (size of the InputTensors array).",
            "Axis in [0, OutputTensor.DimensionCount - 1].",
            "All inputs match the output's Sizes except along Axis, where each input size is non-zero.",
            "OutputTensor.Sizes[Axis] = sum of the inputs' Sizes[Axis].",
        ),
        support={
            "1.0": {
                "InputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 UINT32 UINT16"),
            },
            "2.1": {
                "InputTensors": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "3.0": {
                "InputTensors": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
                "OutputTensor": ("4-5", "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"),
            },
            "4.1": {
                "InputTensors": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
                "OutputTensor": (
                    "1-8",
                    "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8",
                ),
            },
        },
        notes=(
            "Inverse of SPLIT. Axis: plain unsigned dimension index, no negative axes. A single input is a plain "
            "copy. Discrepancy: the page's 3.0 table lists 4-5 dims and 1-8 only from 4.1, while the feature-level "
            "history says JOIN's max dimension count rose from 4 to 8 in 3.1. Examples: Ex1 InputCount 2, Axis 3, "
            "(1,1,2,3) [[1,2,3],[4,5,6]] + (1,1,2,4) [[7,8,9,10],[11,12,13,14]] -> (1,1,2,7) "
            "[[1,2,3,7,8,9,10],[4,5,6,11,12,13,14]] (only axis 3 possible). Ex2 InputCount 3, inputs (1,1,2,2) "
            "A=[[1,2],[3,4]], B=[[5,6],[7,8]], C=[[9,10],[11,12]]: Axis 1 -> (1,3,2,2) [A, B, C]; Axis 2 -> "
            "(1,1,6,2) [[1,2],[3,4],[5,6],[7,8],[9,10],[11,12]]; Axis 3 -> (1,1,2,6) "
            "[[1,2,5,6,9,10],[3,4,7,8,11,12]]."
        ),
    ),
}
