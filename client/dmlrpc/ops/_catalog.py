"""Which ``OperatorDesc`` cases each SDK function sends, and the Markdown table of them in docs/sdk-functions.md."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from dmlrpc.v1 import operators_pb2

__all__ = ["FUNCTIONS", "markdown"]


def _cases(prefix: str) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in operators_pb2.OperatorDesc.DESCRIPTOR.fields
        if f.name.startswith(prefix) and f.message_type is not None
    )


#: SDK function name -> the OperatorDesc cases it sends (older desc versions by its arguments or ``version=``). Each
#: is a ``dmlrpc.ops`` builder, a Client/AsyncClient method and a ``Graph`` method of the same name.
FUNCTIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "element_wise": _cases("element_wise_"),
        "activation": _cases("activation_"),
        "adam_optimizer": ("adam_optimizer",),
        "argmax": ("argmax",),
        "argmin": ("argmin",),
        "average_pooling": ("average_pooling", "average_pooling1"),
        "average_pooling_grad": ("average_pooling_grad",),
        "batch_normalization": ("batch_normalization",),
        "batch_normalization_grad": ("batch_normalization_grad",),
        "batch_normalization_training": ("batch_normalization_training",),
        "batch_normalization_training_grad": ("batch_normalization_training_grad",),
        "cast": ("cast",),
        "convolution": ("convolution",),
        "convolution_integer": ("convolution_integer",),
        "cumprod": ("cumulative_product",),
        "cumsum": ("cumulative_summation",),
        "depth_to_space": ("depth_to_space", "depth_to_space1"),
        "dequantize": ("dequantize",),
        "diagonal_matrix": ("diagonal_matrix", "diagonal_matrix1"),
        "dynamic_quantize_linear": ("dynamic_quantize_linear",),
        "fill_value_constant": ("fill_value_constant",),
        "fill_value_sequence": ("fill_value_sequence",),
        "fold": ("fold",),
        "gather": ("gather",),
        "gather_elements": ("gather_elements",),
        "gather_nd": ("gather_nd", "gather_nd1"),
        "gemm": ("gemm",),
        "gru": ("gru",),
        "join": ("join",),
        "local_response_normalization": ("local_response_normalization",),
        "local_response_normalization_grad": ("local_response_normalization_grad",),
        "lp_normalization": ("lp_normalization",),
        "lp_pooling": ("lp_pooling", "lp_pooling1"),
        "lstm": ("lstm",),
        "matrix_multiply_integer": ("matrix_multiply_integer",),
        "matrix_multiply_integer_to_float": ("matrix_multiply_integer_to_float",),
        "max_pooling": ("max_pooling", "max_pooling2"),
        "max_pooling_grad": ("max_pooling_grad",),
        "max_pooling_with_indices": ("max_pooling1", "max_pooling2"),
        "max_unpooling": ("max_unpooling",),
        "mean_variance_normalization": (
            "mean_variance_normalization",
            "mean_variance_normalization1",
            "mean_variance_normalization2",
        ),
        "multihead_attention": ("multihead_attention", "multihead_attention1"),
        "nonzero_coordinates": ("nonzero_coordinates",),
        "one_hot": ("one_hot",),
        "pad": ("padding", "padding1"),
        "quantize": ("quantize",),
        "quantized_linear_average_pooling": ("quantized_linear_average_pooling",),
        "quantized_linear_convolution": ("quantized_linear_convolution",),
        "quantized_linear_matrix_multiply": ("quantized_linear_matrix_multiply",),
        "random_generator": ("random_generator",),
        "reduce": ("reduce",),
        "resample": ("resample", "resample1", "resample2", "resample3"),
        "resample_grad": ("resample_grad", "resample_grad1"),
        "reverse_subsequences": ("reverse_subsequences",),
        "rnn": ("rnn",),
        "roi_align": ("roi_align", "roi_align1"),
        "roi_align_grad": ("roi_align_grad",),
        "roi_pooling": ("roi_pooling",),
        "scatter_elements": ("scatter_elements",),
        "scatter_nd": ("scatter_nd",),
        "slice": ("slice", "slice1"),
        "slice_grad": ("slice_grad",),
        "space_to_depth": ("space_to_depth", "space_to_depth1"),
        "split": ("split",),
        "tile": ("tile",),
        "top_k": ("top_k", "top_k1"),
        "unfold": ("unfold",),
        "upsample_2d": ("upsample_2d",),
        "value_scale_2d": ("value_scale_2d",),
    }
)


def markdown() -> str:
    """docs/sdk-functions.md: one row per function, with the DirectML operators it sends and its summary line."""
    from dmlrpc import ops

    lines = [
        "# SDK functions",
        "",
        "Generated from `dmlrpc.ops._catalog.FUNCTIONS` (tests/test_sdk_ops_catalog.py checks it is current). Each",
        "function is a `dmlrpc.ops` builder (a desc and its arrays), a `Client`/`AsyncClient` method that executes",
        "it and a `Graph` method that adds it as a node; its docstring gives DirectML's rules. `element_wise` and",
        '`activation` take the operator\'s name (`client.element_wise("add", a, b)`).',
        "",
        "| function | DirectML operators | summary |",
        "|---|---|---|",
    ]
    for name, cases in sorted(FUNCTIONS.items()):
        shown = cases if len(cases) <= 4 else (*cases[:2], f"... {len(cases)} in all")
        operators = ", ".join(c if c.startswith("...") else f"DML_OPERATOR_{c.upper()}" for c in shown)
        first = " ".join((getattr(ops, name).__doc__ or "").strip().split("\n\n")[0].split())
        summary = first.split(": ", 1)[-1].replace("``", "`").replace("|", "\\|")
        lines.append(f"| `{name}` | {operators} | {summary} |")
    return "\n".join(lines) + "\n"
