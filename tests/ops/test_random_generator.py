"""RANDOM_GENERATOR over the wire: bit-exact against a NumPy Philox 4x32-10, known answers, validation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from tests.references import random_generator as ref
from tests.strategies import layouts

STATE_SHAPE = (1, 1, 1, 6)


def make_desc(  # type: ignore[no-untyped-def]
    state, out, next_state=None, strides=None, **attrs: Any
) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        "input_state_tensor": tensor_desc(state),
        "output_tensor": tensor_desc(out, strides),
        **attrs,
    }
    if next_state is not None:
        fields["output_state_tensor"] = tensor_desc(next_state)
    return operators_pb2.OperatorDesc(random_generator=operators_pb2.RandomGeneratorOperatorDesc(**fields))


def run(client: dmlrpc.Client, state: np.ndarray, shape: tuple[int, ...], with_state: bool = True, strides=None):  # type: ignore[no-untyped-def]
    next_spec = (np.uint32, STATE_SHAPE) if with_state else None
    outputs = client.execute(make_desc(state, (np.uint32, shape), next_spec, strides), [state])
    return outputs


words = st.one_of(st.integers(0, 3), st.integers(0xFFFFFFFC, 0xFFFFFFFF), st.integers(0, 0xFFFFFFFF))


@settings(max_examples=40)
@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    state = np.array(data.draw(st.lists(words, min_size=6, max_size=6), label="state"), np.uint32).reshape(STATE_SHAPE)
    shape = tuple(data.draw(st.integers(1, 5)) for _ in range(4))
    with_state = data.draw(st.booleans(), label="with output state")
    layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    values, next_state = ref.random_generator(state, int(np.prod(shape)))
    outputs = run(client, state, shape, with_state, layout.strides)
    assert isinstance(outputs[0], np.ndarray) and outputs[0].dtype == np.uint32
    np.testing.assert_array_equal(outputs[0], values.reshape(shape))
    if with_state:
        assert isinstance(outputs[1], np.ndarray)
        np.testing.assert_array_equal(outputs[1], next_state)
    else:
        assert outputs[1] is None


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        # Known answers of Random123's Philox 4x32-10 (counter words, key words -> the four outputs).
        ([0, 0, 0, 0, 0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 6, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        (
            [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0],
            [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1],
        ),
    ],
)
def test_known_answers(client: dmlrpc.Client, state: list[int], expected: list[int]) -> None:
    values, _ = run(client, np.array(state, np.uint32).reshape(STATE_SHAPE), (1, 1, 1, 4))
    np.testing.assert_array_equal(np.asarray(values).reshape(-1), np.array(expected, np.uint32))


def test_successive_calls_continue_the_stream(client: dmlrpc.Client) -> None:
    state = np.array([7, 0, 0, 0, 1234, 5678], np.uint32).reshape(STATE_SHAPE)
    whole, _ = run(client, state, (1, 1, 2, 8))
    first, middle = run(client, state, (1, 1, 1, 8))
    second, _ = run(client, np.asarray(middle), (1, 1, 1, 8))
    np.testing.assert_array_equal(np.asarray(whole).reshape(-1), np.concatenate([first, second], axis=None))


def test_counter_increment_carries_and_wraps(client: dmlrpc.Client) -> None:
    # The page's counter 0x48656c6c'6f46726f'6d536561'74746c65, advanced by ceil(5 / 4) = 2.
    state = np.array([0x74746C65, 0x6D536561, 0x6F46726F, 0x48656C6C, 1, 2], np.uint32).reshape(STATE_SHAPE)
    _, advanced = run(client, state, (1, 1, 1, 5))
    np.testing.assert_array_equal(
        np.asarray(advanced).reshape(-1), [0x74746C67, 0x6D536561, 0x6F46726F, 0x48656C6C, 1, 2]
    )
    top = np.array([0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 9, 9], np.uint32).reshape(STATE_SHAPE)
    _, wrapped = run(client, top, (1, 1, 1, 3))
    np.testing.assert_array_equal(np.asarray(wrapped).reshape(-1), [0, 0, 0, 0, 9, 9])
    low = np.array([0xFFFFFFFE, 0xFFFFFFFF, 5, 0, 9, 9], np.uint32).reshape(STATE_SHAPE)
    _, carried = run(client, low, (1, 1, 3, 4))
    np.testing.assert_array_equal(np.asarray(carried).reshape(-1), [1, 0, 6, 0, 9, 9])


STATE = np.zeros(STATE_SHAPE, np.uint32)


def expect_invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, state: np.ndarray, field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [state])
    assert caught.value.field_violations[0].field == f"operator_desc.random_generator.{field}"


def test_rules(client: dmlrpc.Client) -> None:
    out = (np.uint32, (1, 1, 2, 2))
    expect_invalid(client, make_desc(STATE, out, type=1), STATE, "type")
    short = np.zeros((1, 1, 1, 4), np.uint32)
    expect_invalid(client, make_desc(short, out), short, "input_state_tensor.buffer.sizes")
    expect_invalid(client, make_desc(STATE, out, (np.uint32, (1, 1, 6, 1))), STATE, "output_state_tensor.buffer.sizes")
    signed = STATE.astype(np.int32)
    expect_invalid(client, make_desc(signed, out), signed, "input_state_tensor.buffer.data_type")
    expect_invalid(client, make_desc(STATE, (np.float32, (1, 1, 2, 2))), STATE, "output_tensor.buffer.data_type")
    expect_invalid(client, make_desc(STATE, (np.uint32, (4,))), STATE, "output_tensor.buffer.sizes")
