"""The Page type: what one DirectML operator page documents, as data."""

from __future__ import annotations

from typing import TypedDict


class Page(TypedDict):
    """What one `DML_<NAME>_OPERATOR_DESC` page of Microsoft's DirectML reference documents.

    ``support`` maps a feature level ("1.0", "2.1", ...: the "DML_FEATURE_LEVEL_X_Y and above" headings, or the
    introducing level for a page with a single table) to the table's rows: the DirectML tensor field name
    ("InputTensor") -> (supported dimension counts as "4" or "1-8", supported data types as space-separated
    DML_TENSOR_DATA_TYPE names without the prefix, "FLOAT32 FLOAT16").
    """

    #: The page's name, e.g. "ns-directml-dml_element_wise_abs_operator_desc".
    page: str
    #: The feature level that introduced the operator, per the page's Availability section ("1.0").
    introduced: str
    #: The function the page defines, in short mathematical form ("f(x) = abs(x)").
    function: str
    #: The page's tensor constraints and other documented rules, paraphrased one per item.
    constraints: tuple[str, ...]
    support: dict[str, dict[str, tuple[str, str]]]
    #: Anything else a faithful implementation must know (attribute ranges, special values, remarks).
    notes: str
