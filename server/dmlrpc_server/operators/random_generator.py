"""DML_RANDOM_GENERATOR_OPERATOR_DESC: Philox 4x32-10 pseudo-random bits from an explicit counter and key."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._graph import I64, U32, U64, Graph, Value
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

_MASK = 0xFFFFFFFF
#: Philox 4x32's round multipliers and key-schedule (Weyl) constants.
_M0, _M1 = 0xD2511F53, 0xCD9E8D57
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10
_STATE = [1, 1, 1, 6]


class _Words:
    """32-bit words held in UINT64 values of the graph: a 32x32-bit product fits exactly, so mulhilo is one Mul,
    a shift and a mask, and every other step (xor, carries, key bumps) stays below 2^33."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.mask = graph.const(_MASK, U64)
        self.shift = graph.const(32, U64)

    def low(self, value: Value) -> Value:
        return self.graph.op("BitwiseAnd", value, self.mask, opset=18)

    def high(self, value: Value) -> Value:
        return self.graph.op("BitShift", value, self.shift, direction="RIGHT")

    def xor(self, *values: Value) -> Value:
        result = values[0]
        for value in values[1:]:
            result = self.graph.op("BitwiseXor", result, value, opset=18)
        return result

    def add(self, words: list[Value], increment: Value) -> list[Value]:
        """A 128-bit little-endian counter (four words) plus a value below 2^32, wrapping at 2^128."""
        result = []
        carry = increment
        for word in words:
            total = self.graph.op("Add", word, carry)
            result.append(self.low(total))
            carry = self.high(total)
        return result


class RandomGenerator(Operator[operators_pb2.RandomGeneratorOperatorDesc]):
    """Philox 4x32-10 (Salmon et al., SC11) on every counter ``counter + i`` at once, in UINT64 arithmetic.

    ONNX has no random operator that takes an explicit counter and key (RandomUniform draws from a seed with an
    unspecified generator), so the ten rounds are composed from Mul, BitShift, BitwiseAnd and BitwiseXor, which
    is bit-exact on every provider.
    """

    case: ClassVar[str] = "random_generator"

    def lower(self, desc: operators_pb2.RandomGeneratorOperatorDesc, tensors: Tensors) -> Plan:
        state, output = tensors["input_state_tensor"], tensors["output_tensor"]
        next_state = tensors.layouts["output_state_tensor"]
        require(
            desc.type == operators_pb2.RANDOM_GENERATOR_TYPE_PHILOX_4X32_10,
            tensors.field("type"),
            f"{desc.type}; only RANDOM_GENERATOR_TYPE_PHILOX_4X32_10 is defined",
        )
        require(
            list(state.sizes) == _STATE,
            f"{tensors.field('input_state_tensor')}.buffer.sizes",
            f"sizes {list(state.sizes)} must be {_STATE} (a 128-bit counter and a 64-bit key) for PHILOX_4X32_10",
        )
        if next_state is not None:
            require(
                next_state.sizes == state.sizes,
                f"{tensors.field('output_state_tensor')}.buffer.sizes",
                f"sizes {list(next_state.sizes)} must equal input_state_tensor's {list(state.sizes)}",
            )
        count = math.prod(output.sizes)
        blocks = -(-count // 4)
        graph = Graph()
        words = _Words(graph)
        flat = graph.cast(graph.input("state", U32, (6,)), U64)

        def word(i: int) -> Value:
            return graph.op("Gather", flat, graph.const(i, I64), axis=0)

        counter = [word(i) for i in range(4)]
        key = [word(4), word(5)]
        # The block index i as a UINT64 column (Range has no unsigned kernel; the indices are below 2^32).
        index = graph.cast(graph.op("Range", graph.const(0, I64), graph.const(blocks, I64), graph.const(1, I64)), U64)
        c0, c1, c2, c3 = words.add(counter, index)
        k0, k1 = key
        multiplier0, multiplier1 = graph.const(_M0, U64), graph.const(_M1, U64)
        for round_ in range(_ROUNDS):
            if round_:
                k0 = words.low(graph.op("Add", k0, graph.const(_W0, U64)))
                k1 = words.low(graph.op("Add", k1, graph.const(_W1, U64)))
            product0 = graph.op("Mul", c0, multiplier0)
            product1 = graph.op("Mul", c2, multiplier1)
            c0, c1, c2, c3 = (
                words.xor(words.high(product1), c1, k0),
                words.low(product1),
                words.xor(words.high(product0), c3, k1),
                words.low(product0),
            )
        axis = graph.const([1], I64)
        columns = [graph.op("Unsqueeze", c, axis) for c in (c0, c1, c2, c3)]
        stream = graph.op("Reshape", graph.op("Concat", *columns, axis=1), graph.const([4 * blocks], I64))
        if count != 4 * blocks:
            stream = graph.op("Slice", stream, graph.const([0], I64), graph.const([count], I64))
        values = graph.op("Reshape", graph.cast(stream, U32), graph.const(list(output.sizes), I64))
        graph.output(values, "output", output.sizes)
        if next_state is not None:
            advanced = words.add(counter, graph.const(blocks, U64))
            pieces = [graph.op("Unsqueeze", w, graph.const([0], I64)) for w in (*advanced, *key)]
            updated = graph.op("Reshape", graph.op("Concat", *pieces, axis=0), graph.const(_STATE, I64))
            graph.output(graph.cast(updated, U32), "output_state", next_state.sizes)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            (data,) = arrays
            assert data is not None
            return {"state": np.ascontiguousarray(data, dtype=np.uint32).reshape(6)}

        def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            return [outputs[0], outputs[1] if next_state is not None else None]

        return Plan((state,), (output, next_state), graph.model(), prepare, finish)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (RandomGenerator(),)
