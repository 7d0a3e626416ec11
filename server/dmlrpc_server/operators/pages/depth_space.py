"""The pages of SPACE_TO_DEPTH(1) and DEPTH_TO_SPACE(1)."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference: MicrosoftDocs/sdk-api
# sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (REVERSE_SUBSEQUENCES lives at
# ns-directml-dml_reverse_subsequences_desc.md) and MicrosoftDocs/windows-ai-docs docs/directml/api/
# (DIAGONAL_MATRIX1, RESAMPLE2, RESAMPLE3). Support levels are listed ascending; the pages list them descending.
# The pages separate data types with commas; here they are space-separated, in the page's order.

_F = "FLOAT32 FLOAT16"

_I8 = "FLOAT32 FLOAT16 INT32 INT16 INT8 UINT32 UINT16 UINT8"

_ALL = "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"

PAGES: dict[str, Page] = {
    "SPACE_TO_DEPTH": Page(
        page="ns-directml-dml_space_to_depth_operator_desc",
        introduced="1.0",
        function=(
            "out[n, (bh*B + bw)*C + c, h, w] = in[n, c, h*B + bh, w*B + bw] for B = BlockSize, C = input channels, "
            "0 <= bh, bw < B (depth-column-row order)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {Batch, Channels, Height, Width}.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of DEPTH_TO_SPACE. Output sizes (per the example and the operation's meaning): "
            "{N, C*B*B, H/B, W/B}. NOTE: the page's OutputTensor field text wrongly gives "
            "{Batch, Channels / (BlockSize*BlockSize), Height*BlockSize, Width*BlockSize} (copied from "
            "DEPTH_TO_SPACE); the worked example contradicts it. BlockSize is both block width and height. "
            "Equivalent to SPACE_TO_DEPTH1 with Order = DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW. "
            "Example: BlockSize=2, input UINT32 {1,2,4,6} = "
            "[[[[0,18,1,19,2,20],[36,54,37,55,38,56],[3,21,4,22,5,23],[39,57,40,58,41,59]],"
            "[[9,27,10,28,11,29],[45,63,46,64,47,65],[12,30,13,31,14,32],[48,66,49,67,50,68]]]] -> "
            "output UINT32 {1,8,2,3} = [[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],"
            "[[27,28,29],[30,31,32]],[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],"
            "[[63,64,65],[66,67,68]]]]."
        ),
    ),
    "SPACE_TO_DEPTH1": Page(
        page="ns-directml-dml_space_to_depth1_operator_desc",
        introduced="2.1",
        function=(
            "Order DEPTH_COLUMN_ROW: out[n, (bh*B + bw)*C + c, h, w] = in[n, c, h*B + bh, w*B + bw]; "
            "Order COLUMN_ROW_DEPTH: out[n, c*B*B + bh*B + bw, h, w] = in[n, c, h*B + bh, w*B + bw] "
            "(B = BlockSize, C = input channels)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {Batch, Channels, Height, Width}.",
        ),
        support={
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of DEPTH_TO_SPACE1. Output sizes {N, C*B*B, H/B, W/B} (per the examples; the page's "
            "OutputTensor text wrongly says {Batch, Channels/(B*B), Height*B, Width*B}). DML_DEPTH_SPACE_ORDER "
            "layouts (parenthesised dims are flattened, first = slowest): DEPTH_COLUMN_ROW: depth side "
            "[Batch, (BlockHeight, BlockWidth, Channels), H, W]; COLUMN_ROW_DEPTH: depth side "
            "[Batch, (Channels, BlockHeight, BlockWidth), H, W]; space side always "
            "[Batch, Channels, (Height, BlockHeight), (Width, BlockWidth)]. With DEPTH_COLUMN_ROW it equals "
            "SPACE_TO_DEPTH. Example 1 (DEPTH_COLUMN_ROW, B=2): same input/output as SPACE_TO_DEPTH's example. "
            "Example 2 (COLUMN_ROW_DEPTH, B=2): input UINT32 {1,2,4,6} = "
            "[[[[0,9,1,10,2,11],[18,27,19,28,20,29],[3,12,4,13,5,14],[21,30,22,31,23,32]],"
            "[[36,45,37,46,38,47],[54,63,55,64,56,65],[39,48,40,49,41,50],[57,66,58,67,59,68]]]] -> "
            "output UINT32 {1,8,2,3} = [[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],"
            "[[27,28,29],[30,31,32]],[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],"
            "[[63,64,65],[66,67,68]]]]."
        ),
    ),
    "DEPTH_TO_SPACE": Page(
        page="ns-directml-dml_depth_to_space_operator_desc",
        introduced="1.0",
        function=(
            "out[n, c, h*B + bh, w*B + bw] = in[n, (bh*B + bw)*Cout + c, h, w] for B = BlockSize, "
            "Cout = InputChannelCount / (B*B) (depth-column-row order)"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {BatchCount, ChannelCount, Height, Width}.",
            "OutputChannelCount = InputChannelCount / (BlockSize*BlockSize); OutputHeight = InputHeight * "
            "BlockSize; OutputWidth = InputWidth * BlockSize.",
        ),
        support={
            "1.0": {"InputTensor": ("4", _F), "OutputTensor": ("4", _F)},
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of SPACE_TO_DEPTH; equivalent to DEPTH_TO_SPACE1 with Order = DEPTH_COLUMN_ROW. BlockSize "
            "is both block width and height. Example: BlockSize=2, input UINT32 {1,8,2,3} = "
            "[[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],[[27,28,29],[30,31,32]],"
            "[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],[[63,64,65],[66,67,68]]]] "
            "-> output UINT32 {1,2,4,6} = "
            "[[[[0,18,1,19,2,20],[36,54,37,55,38,56],[3,21,4,22,5,23],[39,57,40,58,41,59]],"
            "[[9,27,10,28,11,29],[45,63,46,64,47,65],[12,30,13,31,14,32],[48,66,49,67,50,68]]]]."
        ),
    ),
    "DEPTH_TO_SPACE1": Page(
        page="ns-directml-dml_depth_to_space1_operator_desc",
        introduced="2.1",
        function=(
            "Order DEPTH_COLUMN_ROW: out[n, c, h*B + bh, w*B + bw] = in[n, (bh*B + bw)*Cout + c, h, w]; "
            "Order COLUMN_ROW_DEPTH: out[n, c, h*B + bh, w*B + bw] = in[n, c*B*B + bh*B + bw, h, w] "
            "(B = BlockSize, Cout = InputChannelCount / (B*B))"
        ),
        constraints=(
            "InputTensor and OutputTensor: same DataType.",
            "Both tensors are 4D {BatchCount, ChannelCount, Height, Width}.",
            "OutputChannelCount = InputChannelCount / (BlockSize*BlockSize); OutputHeight = InputHeight * "
            "BlockSize; OutputWidth = InputWidth * BlockSize.",
        ),
        support={
            "2.1": {"InputTensor": ("4", _I8), "OutputTensor": ("4", _I8)},
            "5.0": {"InputTensor": ("4", _ALL), "OutputTensor": ("4", _ALL)},
        },
        notes=(
            "Inverse of SPACE_TO_DEPTH1; with Order = DEPTH_COLUMN_ROW it equals DEPTH_TO_SPACE. Order layouts "
            "as in DML_DEPTH_SPACE_ORDER (see SPACE_TO_DEPTH1 notes). Examples share the input UINT32 {1,8,2,3} = "
            "[[[[0,1,2],[3,4,5]],[[9,10,11],[12,13,14]],[[18,19,20],[21,22,23]],[[27,28,29],[30,31,32]],"
            "[[36,37,38],[39,40,41]],[[45,46,47],[48,49,50]],[[54,55,56],[57,58,59]],[[63,64,65],[66,67,68]]]], "
            "B=2. Example 1 (DEPTH_COLUMN_ROW) -> {1,2,4,6} = "
            "[[[[0,18,1,19,2,20],[36,54,37,55,38,56],[3,21,4,22,5,23],[39,57,40,58,41,59]],"
            "[[9,27,10,28,11,29],[45,63,46,64,47,65],[12,30,13,31,14,32],[48,66,49,67,50,68]]]]. "
            "Example 2 (COLUMN_ROW_DEPTH) -> {1,2,4,6} = "
            "[[[[0,9,1,10,2,11],[18,27,19,28,20,29],[3,12,4,13,5,14],[21,30,22,31,23,32]],"
            "[[36,45,37,46,38,47],[54,63,55,64,56,65],[39,48,40,49,41,50],[57,66,58,67,59,68]]]]."
        ),
    ),
}
