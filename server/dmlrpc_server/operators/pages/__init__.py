"""DirectML's per-operator doc pages as data, one module per operator module of the same name, merged here."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, ModuleType

from dmlrpc_server.operators.pages import (
    activation,
    activation_softmax,
    attention,
    cast,
    convolution,
    cumulative,
    depth_space,
    element_wise,
    element_wise_bits,
    element_wise_rounding,
    element_wise_transcendental,
    fold,
    gather,
    generators,
    join_split,
    matrix,
    max_unpooling,
    movement,
    normalization,
    pooling,
    quantize,
    quantized,
    random_generator,
    recurrent,
    reduce,
    resample,
    roi_align,
    roi_pooling,
    scatter_elements,
    scatter_nd,
    spatial_grad,
    top_k,
    training,
)
from dmlrpc_server.operators.pages._page import Page

__all__ = ["MODULES", "PAGES", "Page", "page"]

#: Every page module, named as the operator module whose operators its pages document.
MODULES: tuple[ModuleType, ...] = (
    activation,
    activation_softmax,
    attention,
    cast,
    convolution,
    cumulative,
    depth_space,
    element_wise,
    element_wise_bits,
    element_wise_rounding,
    element_wise_transcendental,
    fold,
    gather,
    generators,
    join_split,
    matrix,
    max_unpooling,
    movement,
    normalization,
    pooling,
    quantize,
    quantized,
    random_generator,
    recurrent,
    reduce,
    resample,
    roi_align,
    roi_pooling,
    scatter_elements,
    scatter_nd,
    spatial_grad,
    top_k,
    training,
)


def _merge(modules: tuple[ModuleType, ...]) -> Mapping[str, Page]:
    merged: dict[str, Page] = {}
    for module in modules:
        for name, entry in module.PAGES.items():
            if name in merged:
                raise ValueError(f"the page of DML_OPERATOR_{name} is in two modules (one is {module.__name__})")
            merged[name] = entry
    return MappingProxyType(merged)


#: Every transcribed page by DirectML operator type name ("ELEMENT_WISE_ABS").
PAGES: Mapping[str, Page] = _merge(MODULES)


def page(name: str) -> Page:
    """The page of operator type ``name`` (``"ELEMENT_WISE_ABS"``)."""
    if name not in PAGES:
        raise KeyError(f"no transcribed page for DML_OPERATOR_{name}")
    return PAGES[name]
