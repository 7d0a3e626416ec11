"""DML_SPACE_TO_DEPTH(1) and DML_DEPTH_TO_SPACE(1): blocks of space moved into channels and back."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._graph import I64, Graph
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require
from dmlrpc_server.operators.movement import _output_sizes, _same_data_type

DepthSpaceDesc = TypeVar(
    "DepthSpaceDesc",
    operators_pb2.SpaceToDepthOperatorDesc,
    operators_pb2.SpaceToDepth1OperatorDesc,
    operators_pb2.DepthToSpaceOperatorDesc,
    operators_pb2.DepthToSpace1OperatorDesc,
)


class _DepthSpaceBase(Operator[DepthSpaceDesc]):
    """Both directions as Reshape -> Transpose -> Reshape, which every provider runs for every type (ONNX Runtime's
    CPU DepthToSpace/SpaceToDepth kernels take floats only)."""

    to_depth: ClassVar[bool]

    def order(self, desc: DepthSpaceDesc, tensors: Tensors) -> int:
        return operators_pb2.DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW

    def lower(self, desc: DepthSpaceDesc, tensors: Tensors) -> Plan:
        source, output = tensors["input_tensor"], tensors["output_tensor"]
        _same_data_type(tensors)
        order = self.order(desc, tensors)
        block = desc.block_size
        require(block >= 1, tensors.field("block_size"), "must be at least 1")
        n, c, h, w = source.sizes
        sizes_field = f"{tensors.field('input_tensor')}.buffer.sizes"
        depth_column_row = order == operators_pb2.DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW
        if self.to_depth:
            require(
                h % block == 0 and w % block == 0,
                sizes_field,
                f"height {h} and width {w} must be multiples of block_size {block}",
            )
            expected = [n, c * block * block, h // block, w // block]
            rule = "{N, C * block_size^2, H / block_size, W / block_size}"
            # Space side [N, C, H', bh, W', bw]; depth side [N, (bh, bw, C) or (C, bh, bw), H', W'].
            split = [n, c, h // block, block, w // block, block]
            perm = [0, 3, 5, 1, 2, 4] if depth_column_row else [0, 1, 3, 5, 2, 4]
        else:
            require(
                c % (block * block) == 0,
                sizes_field,
                f"channel count {c} must be a multiple of block_size^2 = {block * block}",
            )
            depth = c // (block * block)
            expected = [n, depth, h * block, w * block]
            rule = "{N, C / block_size^2, H * block_size, W * block_size}"
            split = [n, block, block, depth, h, w] if depth_column_row else [n, depth, block, block, h, w]
            perm = [0, 3, 4, 1, 5, 2] if depth_column_row else [0, 1, 4, 2, 5, 3]
        _output_sizes(tensors, expected, rule)
        graph = Graph()
        x = graph.input("input", source.dtype, source.sizes)
        blocks = graph.op("Reshape", x, graph.const(split, I64))
        moved = graph.op("Transpose", blocks, perm=perm)
        graph.output(graph.op("Reshape", moved, graph.const(expected, I64)), "output", output.sizes)
        return Plan.direct((source,), (output,), graph.model())


def _checked_order(order: int, tensors: Tensors) -> int:
    require(
        order in operators_pb2.DepthSpaceOrder.values(),
        tensors.field("order"),
        f"{order} is not a DML_DEPTH_SPACE_ORDER (0 = DEPTH_COLUMN_ROW, 1 = COLUMN_ROW_DEPTH)",
    )
    return order


class SpaceToDepth(_DepthSpaceBase[operators_pb2.SpaceToDepthOperatorDesc]):
    case: ClassVar[str] = "space_to_depth"
    to_depth = True


class SpaceToDepth1(_DepthSpaceBase[operators_pb2.SpaceToDepth1OperatorDesc]):
    case: ClassVar[str] = "space_to_depth1"
    to_depth = True

    def order(self, desc: operators_pb2.SpaceToDepth1OperatorDesc, tensors: Tensors) -> int:
        return _checked_order(desc.order, tensors)


class DepthToSpace(_DepthSpaceBase[operators_pb2.DepthToSpaceOperatorDesc]):
    case: ClassVar[str] = "depth_to_space"
    to_depth = False


class DepthToSpace1(_DepthSpaceBase[operators_pb2.DepthToSpace1OperatorDesc]):
    case: ClassVar[str] = "depth_to_space1"
    to_depth = False

    def order(self, desc: operators_pb2.DepthToSpace1OperatorDesc, tensors: Tensors) -> int:
        return _checked_order(desc.order, tensors)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    SpaceToDepth(),
    SpaceToDepth1(),
    DepthToSpace(),
    DepthToSpace1(),
)
