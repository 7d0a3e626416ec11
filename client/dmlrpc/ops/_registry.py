"""The registry of SDK functions: each builder declared once with ``@operator``, from which every face is made."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from dmlrpc.errors import ArgumentValueError
from dmlrpc.ops._rules import RULES
from dmlrpc.v1 import operators_pb2

__all__ = [
    "ARRAYS",
    "FIRST",
    "OPERATORS",
    "PAIR",
    "PRESENT",
    "SINGLE",
    "TRIPLE",
    "GraphFace",
    "Operator",
    "Result",
    "TensorArrays",
    "cases",
    "docstring",
    "document",
    "operator",
    "pooled_input",
    "rules",
    "same_shapes",
    "sized_output",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


# -- how results are given back: each picker serves both faces (T: an array on the clients, a GraphTensor on Graph) --


def single(outputs: Sequence[T]) -> T:
    """The one output."""
    (output,) = outputs
    return output


def first(outputs: Sequence[T]) -> T:
    """The first output, where the others are optional outputs the call left unset (MAX_POOLING2's indices)."""
    return outputs[0]


def second(outputs: Sequence[T]) -> T:
    """The second output (NONZERO_COORDINATES' coordinates, trimmed to the count by its call)."""
    return outputs[1]


def pair(outputs: Sequence[T]) -> tuple[T, T]:
    """Both outputs."""
    one, two = outputs
    return one, two


def triple(outputs: Sequence[T]) -> tuple[T, T, T]:
    """All three outputs."""
    one, two, three = outputs
    return one, two, three


def arrays(outputs: Sequence[T]) -> list[T]:
    """Every output, as a list (one per element of a tensor-array output)."""
    return list(outputs)


def present(outputs: Sequence[T | None]) -> tuple[T, ...]:
    """The outputs that were asked for (an unset optional output comes back as ``None``), in binding order."""
    return tuple(output for output in outputs if output is not None)


def with_optional(outputs: Sequence[T | None]) -> tuple[T, T | None]:
    """The first output and an optional second one (``None`` where the call did not ask for it)."""
    one, two = outputs
    assert one is not None
    return one, two


def alone_or_three(outputs: Sequence[T | None]) -> T | tuple[T, T, T]:
    """The output alone, or with the two optional outputs where the call asked for them (attention's present key
    and value)."""
    if len(outputs) < 2 or outputs[1] is None:
        one = outputs[0]
        assert one is not None
        return one
    one, two, three = outputs
    assert one is not None and two is not None and three is not None
    return one, two, three


@dataclass(frozen=True)
class Result:
    """How a function's outputs are given back: on the clients (arrays shaped as NumPy gives them) and on a Graph
    (the node's tensors). Each picker's return annotation, with ``T`` for the element, is the face's return type."""

    client: Callable[[list[Any]], Any]
    graph: Callable[[list[Any]], Any]


SINGLE = Result(single, single)
FIRST = Result(first, first)
PAIR = Result(pair, pair)
TRIPLE = Result(triple, triple)
ARRAYS = Result(arrays, arrays)
PRESENT = Result(present, present)


#: A desc's tensor-array field (by stem) -> the arguments whose tensors fill it, in order.
TensorArrays = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class GraphFace:
    """Where a function's ``Graph`` face differs from its builder, said once here and never typed again.

    A Graph node is its builder traced: graph tensors go where arrays go (their ``__array__`` is a stand-in of
    their dtype and shape), and each tensor must enter as it is (an edge keeps its shape and type).
    """

    #: Keyword arguments the Graph face fixes (and leaves out of its signature), e.g. ``keepdims=True``: a graph's
    #: tensors keep their descs' shapes.
    fixed: Mapping[str, object] = field(default_factory=dict)
    #: ``prepare(graph, where, arguments)``, before the trace: it may refuse the arguments (naming one), add graph
    #: constants for absent optional tensors, and return what the builder is given instead of some arguments, where
    #: a tensor's own stand-in would not do (a layout the builder takes without DirectML's leading 1s, index values
    #: it checks); the tensors still feed the node.
    prepare: Callable[[Any, str, dict[str, Any]], dict[str, Any]] | None = None
    #: The builder's variant a Graph traces, where the eager builder pads or broadcasts for NumPy's sake and an
    #: edge cannot (called with the arguments by name).
    trace: Callable[..., Any] | None = None
    #: Tensor-array fields of the desc (by stem) fed by several arguments, in order (QUANTIZE's scale and zero point).
    arrays: TensorArrays = field(default_factory=dict)


# -- checks several Graph faces declare (``GraphFace.prepare``) --


def same_shapes(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tensors joined by an edge keep their shape (DirectML's rule), so a node cannot broadcast its inputs."""
    shapes = [tensor.shape for tensor in arguments["inputs"]]
    if len(set(shapes)) > 1:
        raise ArgumentValueError(
            "inputs",
            f"{where}: inputs of shapes {' and '.join(map(str, shapes))}: a graph node's inputs have one shape (edges "
            "do not broadcast); give the graph inputs that shape",
        )
    return {}


def pooled_input(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A graph's pooling input is 4-D or 5-D: the SDK's 3-D form reshapes, and an edge cannot."""
    rank = len(arguments["input"].shape)
    if rank not in (4, 5):
        raise ArgumentValueError(
            "input",
            f"{where}: input has {rank} dimensions; a graph's pooling node takes (N, C, H, W) or (N, C, D, H, W)",
            allowed=("4", "5"),
        )
    return {}


def sized_output(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A generator's graph tensor has at least one dimension (a 0-d result reshapes, and an edge cannot)."""
    shape = arguments["shape"]
    if isinstance(shape, Sequence) and len(shape) == 0:
        raise ArgumentValueError("shape", f"{where}: shape is empty; a graph tensor has sizes")
    return {}


@dataclass(frozen=True)
class Operator:
    """One SDK function: its builder (signature, docstring, the descs it sends), the cases it sends, how its results
    are given back and where its Graph face differs."""

    name: str
    builder: Callable[..., Any]
    sends: tuple[str, ...]
    result: Result
    graph: GraphFace
    signature: inspect.Signature

    @property
    def tensors(self) -> tuple[inspect.Parameter, ...]:
        """The builder's array parameters: the ones a Graph gives tensors to."""
        return tuple(p for p in self.signature.parameters.values() if "ArrayLike" in str(p.annotation))


_OPERATORS: dict[str, Operator] = {}
#: SDK function name -> its declaration; every ``dmlrpc.ops`` builder, Client/AsyncClient method and Graph method.
OPERATORS: Mapping[str, Operator] = MappingProxyType(_OPERATORS)


def cases(prefix: str) -> tuple[str, ...]:
    """The ``OperatorDesc`` cases whose names start with ``prefix`` (a family one function sends by name)."""
    return tuple(
        f.name
        for f in operators_pb2.OperatorDesc.DESCRIPTOR.fields
        if f.name.startswith(prefix) and f.message_type is not None
    )


def operator(*, sends: tuple[str, ...], result: Result = SINGLE, graph: GraphFace | None = None) -> Callable[[F], F]:
    """Declare ``builder`` an SDK function: a ``dmlrpc.ops`` builder sending the ``OperatorDesc`` cases ``sends``
    (older desc versions by its arguments or ``version=``), a Client/AsyncClient method giving its results as
    ``result`` picks them, and a Graph method (differing from the builder only as ``graph`` says). The builder is
    returned unchanged."""

    def declare(builder: F) -> F:
        name = builder.__name__
        if name in _OPERATORS:
            raise ValueError(f"the SDK function {name} is declared twice")
        _OPERATORS[name] = Operator(
            name, builder, tuple(sends), result, graph or GraphFace(), inspect.signature(builder)
        )
        return builder

    return declare


def rules(operator_type: str) -> str:
    """DirectML's rules of one operator type (``"TOP_K1"`` for DML_OPERATOR_TOP_K1), as the text appended to the
    docstrings of the functions that send it (``ops/_rules.py``, which tools/faces.py writes); empty where none
    are written down for the SDK."""
    return RULES.get(operator_type, "")


def docstring(name: str, *, graph: bool = False) -> str:
    """The docstring a face of the SDK function ``name`` shows: its builder's, then (on a Graph, ``graph``) where
    its node differs, then DirectML's rules of each operator type it sends."""
    declared = _OPERATORS[name]
    parts = [inspect.cleandoc(declared.builder.__doc__ or "")]
    if graph:
        differences = ["On a Graph: the builder traced over graph tensors, each entering the node as it is."]
        differences += [f"``{key}={value!r}`` always." for key, value in declared.graph.fixed.items()]
        if declared.graph.prepare is not None and declared.graph.prepare.__doc__:
            differences.append(" ".join(declared.graph.prepare.__doc__.split()))
        parts.append(" ".join(differences))
    for case in declared.sends:
        text = rules(case.upper())
        if text:
            parts.append(f"DirectML's rules (DML_OPERATOR_{case.upper()}):\n\n{text}")
    return "\n\n".join(parts)


def document(face: type, *, graph: bool = False) -> None:
    """Give each operator method of ``face`` (Client's, AsyncClient's, or Graph's with ``graph``) its function's
    docstring."""
    for name in _OPERATORS:
        getattr(face, name).__doc__ = docstring(name, graph=graph)
