"""Regressions found by the reliability suites, one test per class of fault."""

from __future__ import annotations

import grpc
import pytest

from tests.conftest import ServerThread
from tests.reliability.fuzzing import EXECUTE


# Found by the fuzzer: an Execute message that was not a valid ExecuteRequest was answered UNKNOWN ("Unexpected
# DecodeError", raised by the deserializer before any handler ran), where ExecuteStream answered INVALID_ARGUMENT.
@pytest.mark.parametrize("wire", [b"\xff\xff\xff", b"\x0a\x05ab", b"\x12\x80\x80\x80\x80\x10"])
def test_undecodable_execute_message_is_invalid_argument(server: ServerThread, wire: bytes) -> None:
    with grpc.insecure_channel(server.address) as channel:
        execute = channel.unary_unary(EXECUTE, request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as info:
            execute(wire, timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
    assert "not valid protobuf" in info.value.details()  # type: ignore[attr-defined]
