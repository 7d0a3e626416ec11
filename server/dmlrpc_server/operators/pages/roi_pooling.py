"""The page of ROI_POOLING."""

from __future__ import annotations

from dmlrpc_server.operators.pages._page import Page

# Transcribed from the Markdown sources of learn.microsoft.com's DirectML reference:
# MicrosoftDocs/sdk-api sdk-api-src/content/directml/ns-directml-dml_*_operator_desc.md (newest stored versions),
# and MicrosoftDocs/windows-ai-docs docs/directml/api/ for AVERAGE_POOLING1 and LP_POOLING1 (6.2), which are
# not in sdk-api. Feature-level remarks cite windows-ai-docs docs/directml/dml-feature-level-history.md.
# support levels are listed ascending; the pages list them descending.

PAGES: dict[str, Page] = {
    "ROI_POOLING": Page(
        page="ns-directml-dml_roi_pooling_operator_desc",
        introduced="1.0",
        function=(
            "y[r, c, ph, pw] = max(x[BatchID_r, c, h, w] for h in [StartY, EndY), w in [StartX, EndX)) with "
            "x1 = round(RoiX1*SpatialScale), x2 = round(RoiX2*SpatialScale), y1/y2 likewise; RegionHeight = "
            "y2 - y1 + 1, RegionWidth = x2 - x1 + 1; StartY = (ph*RegionHeight) / PooledSize.Height + y1; "
            "StartX = (pw*RegionWidth) / PooledSize.Width + x1; EndY = ((ph+1)*RegionHeight + PooledSize.Height "
            "- 1) / PooledSize.Height + y1; EndX = ((pw+1)*RegionWidth + PooledSize.Width - 1) / PooledSize.Width "
            "+ x1; coordinates clamped to the input bounds"
        ),
        constraints=(
            "InputTensor, OutputTensor and ROITensor: same DataType.",
            "ROITensor Sizes are {1, 1, NumROIs, 5}; each ROI row is [BatchID, x1, y1, x2, y2] with x2 >= x1 "
            "and y2 >= y1 (inclusive corner coordinates).",
            "OutputTensor Sizes are {NumROIs, InputChannelCount, PooledSize.Height, PooledSize.Width}.",
            "PooledSize (height, width) must equal the last 2 dims of OutputTensor.",
        ),
        support={
            "1.0": {
                "InputTensor": ("4", "FLOAT32 FLOAT16"),
                "ROITensor": ("4", "FLOAT32 FLOAT16"),
                "OutputTensor": ("4", "FLOAT32 FLOAT16"),
            },
        },
        notes=(
            "InputTensor is {BatchCount, ChannelCount, InputHeight, InputWidth}; Y indexes dim 2 (height), X dim "
            "3 (width). Note the ROI column order is [BatchID, x1, y1, x2, y2] (x before y). BatchID is stored "
            "in the float ROI tensor. The bin formulas use integer (floor) division: Start is floor, End is a "
            "ceil, so End is presumably "
            "exclusive (Caffe-style ROI max pooling; the page does not say). The rounding mode of round() is not "
            "specified. Out-of-bounds coordinates are clamped to the input; the value for an empty bin is not "
            "documented. SpatialScale (FLOAT) maps ROI coordinates into input-feature scale. Single support "
            "table. No examples on the page."
        ),
    ),
}
