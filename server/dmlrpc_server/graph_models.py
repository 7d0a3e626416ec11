"""A validated graph as ONNX Runtime runs it: one composed model (with its batch rule), or its nodes in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from dmlrpc_server.graphs import GraphLowering, Node
from dmlrpc_server.operators._batching import BatchRule
from dmlrpc_server.operators.base import ONNX_IR_VERSION, Plan, add_constants, make_model


def graph_batching(lowering: GraphLowering) -> BatchRule | None:
    """A batch rule for the composed model when every node batches with a plain ``BatchRule`` (a new leading
    axis; gathers and scatters by index tuple need more) and no node holds an ONNX op another node's rule shifts
    the axis of but its own does not."""
    rules = [node.batching for node in lowering.nodes]
    if any(rule is None or type(rule) is not BatchRule for rule in rules):
        return None
    shifted = frozenset().union(*(rule.axis_nodes for rule in rules if rule is not None))
    for node, rule in zip(lowering.nodes, rules, strict=True):
        assert rule is not None
        ops = {n.op_type for n in node.plan.model.graph.node}
        if (ops & shifted) - rule.axis_nodes:
            return None
    return BatchRule(*shifted)


def composed_plan(lowering: GraphLowering) -> Plan:
    """The whole graph as one ONNX model: each node's model with its names prefixed, intermediate edges wired by
    renaming the consumer's feed to the producer's output, constants fed unchanged baked in as initializers."""
    nodes: list[onnx.NodeProto] = []
    inputs: list[onnx.ValueInfoProto] = []
    initializers: list[onnx.TensorProto] = []
    #: Graph constants fed unchanged, by initializer name (``add_constants``).
    constants: dict[str, np.ndarray] = {}
    outputs: list[onnx.ValueInfoProto] = []
    opsets: dict[str, int] = {}
    output_names: dict[int, list[str]] = {}
    finishing = {node_index for node_index, _ in lowering.outputs}
    plans = {node.index: node.plan for node in lowering.nodes}
    constant_feeds: dict[int, set[int]] = {}
    for node in lowering.nodes:
        model = node.plan.model
        for opset in model.opset_import:
            opsets[opset.domain] = max(opsets.get(opset.domain, 0), opset.version)
        prefix = f"n{node.index}."
        renamed: dict[str, str] = {}
        baked: set[int] = set()
        for k, source in enumerate(node.sources):
            feed = node.plan.direct_inputs[k] if k < len(node.plan.direct_inputs) else None
            if source is not None and source.kind == "node" and feed is not None:
                renamed[feed] = output_names[source.index][source.output]
            elif source is not None and source.kind == "constant" and feed is not None:
                constants[prefix + feed] = node.constants[k]
                baked.add(k)
        constant_feeds[node.index] = baked

        def name(original: str, prefix: str = prefix, renamed: dict[str, str] = renamed) -> str:
            return renamed.get(original, prefix + original if original else original)

        for initializer in model.graph.initializer:
            copy = onnx.TensorProto()
            copy.CopyFrom(initializer)
            copy.name = name(initializer.name)
            initializers.append(copy)
        for graph_input in model.graph.input:
            if graph_input.name in renamed:
                continue
            if prefix + graph_input.name in constants or any(
                prefix + graph_input.name == init.name for init in initializers
            ):
                continue
            copy_info = onnx.ValueInfoProto()
            copy_info.CopyFrom(graph_input)
            copy_info.name = name(graph_input.name)
            inputs.append(copy_info)
        for original in model.graph.node:
            copy_node = onnx.NodeProto()
            copy_node.CopyFrom(original)
            copy_node.name = prefix + original.name if original.name else ""
            copy_node.input[:] = [name(n) for n in original.input]
            copy_node.output[:] = [name(n) for n in original.output]
            nodes.append(copy_node)
        output_names[node.index] = [name(o.name) for o in model.graph.output]
        if node.index in finishing:
            for graph_output in model.graph.output:
                copy_info = onnx.ValueInfoProto()
                copy_info.CopyFrom(graph_output)
                copy_info.name = name(graph_output.name)
                outputs.append(copy_info)
    composed = make_model(nodes, inputs, outputs, initializers)
    external = add_constants(composed, constants)
    del composed.opset_import[:]
    composed.opset_import.extend(onnx.helper.make_opsetid(domain, version) for domain, version in opsets.items())
    composed.ir_version = ONNX_IR_VERSION
    finish_order = [node.index for node in lowering.nodes if node.index in finishing]
    output_slices: dict[int, tuple[int, int]] = {}
    position = 0
    for index in finish_order:
        count = len(output_names[index])
        output_slices[index] = (position, position + count)
        position += count

    def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
        feeds: dict[str, np.ndarray] = {}
        for node in lowering.nodes:
            node_arrays: list[np.ndarray | None] = []
            for k, source in enumerate(node.sources):
                if source is None or source.kind == "node" or k in constant_feeds[node.index]:
                    node_arrays.append(None)
                elif source.kind == "graph":
                    node_arrays.append(arrays[source.index])
                else:
                    node_arrays.append(node.constants[k])
            for key, value in node.prepare(node_arrays).items():
                feeds[f"n{node.index}.{key}"] = value
        return feeds

    def finish(results: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        finished = {
            index: plans[index].finish(list(results[start:end])) for index, (start, end) in output_slices.items()
        }
        return [finished[node_index][j] for node_index, j in lowering.outputs]

    direct = all(plans[i].direct_outputs for i in finishing) and len(lowering.outputs) == position
    return Plan(
        tuple(lowering.input_layouts),
        tuple(lowering.output_layouts),
        composed,
        prepare,
        finish,
        direct_outputs=False if not direct else _outputs_in_order(lowering, output_slices),
        external=external,
    )


def _outputs_in_order(lowering: GraphLowering, slices: dict[int, tuple[int, int]]) -> bool:
    """Whether the composed model's outputs are exactly the graph outputs, in order (then they pass through)."""
    flat = [slices[node_index][0] + j for node_index, j in lowering.outputs]
    return flat == list(range(len(flat)))


@dataclass
class Stage:
    """One node of a node-by-node graph run: its plan, session and sources."""

    node: Node
    run: Callable[[dict[str, np.ndarray], Any], list[np.ndarray]]


def staged_run(
    lowering: GraphLowering, stages: Sequence[Stage]
) -> Callable[[Sequence[np.ndarray | None], Any], list[Any]]:
    """Run the nodes one after another on the server: each node's prepare (its data checks), session and finish;
    the graph outputs in order. The run options (``RunOptions``, or ``None``) go to every node's session, so a
    terminated run stops at the next node."""

    def run(arrays: Sequence[np.ndarray | None], options: Any) -> list[Any]:
        values: dict[tuple[int, int], np.ndarray | None] = {}
        for stage in stages:
            node = stage.node
            node_arrays: list[np.ndarray | None] = []
            for k, source in enumerate(node.sources):
                if source is None:
                    node_arrays.append(None)
                elif source.kind == "graph":
                    node_arrays.append(arrays[source.index])
                elif source.kind == "constant":
                    node_arrays.append(node.constants[k])
                else:
                    node_arrays.append(values[source.index, source.output])
            results = node.plan.finish(stage.run(node.prepare(node_arrays), options))
            for j, result in enumerate(results):
                values[node.index, j] = result
        return [values[key] for key in lowering.outputs]

    return run
