"""ModelInfer and the metadata RPCs through the unmodified tritonclient (grpc, sync) against the real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from hypothesis import given, settings
from hypothesis import strategies as st
from tritonclient.utils import InferenceServerException

from tests.oip.repository import IDENTITY_TYPES, run_in_process

Client = Any


def test_health_and_metadata(triton: Client) -> None:
    assert triton.is_server_live() and triton.is_server_ready()
    assert triton.is_model_ready("m") and triton.is_model_ready("m", "1")
    assert not triton.is_model_ready("nope")
    assert not triton.is_model_ready("m", "2")
    server = triton.get_server_metadata()
    assert server.name == "dmlrpc"
    assert set(server.extensions) == {"model_repository", "model_configuration", "statistics", "system_shared_memory"}
    meta = triton.get_model_metadata("m")
    assert meta.versions == ["1"] and meta.platform == "onnxruntime_onnx"
    assert [(t.name, t.datatype, list(t.shape)) for t in meta.inputs] == [("INPUT0", "FP32", [-1, 16])]
    assert [(t.name, t.datatype, list(t.shape)) for t in meta.outputs] == [("OUTPUT0", "FP32", [-1, 16])]
    config = triton.get_model_config("m").config
    assert config.max_batch_size == 8 and list(config.input[0].dims) == [16]
    assert config.HasField("dynamic_batching")


def test_config_completed_from_the_model(triton: Client) -> None:
    # No config.pbtxt: completed as Triton's ONNX Runtime backend does (default max batch 4, dynamic batching).
    config = triton.get_model_config("identity_fp32").config
    assert config.max_batch_size == 4 and config.HasField("dynamic_batching")
    assert [(i.name, i.data_type, list(i.dims)) for i in config.input] == [("INPUT0", 11, [-1])]
    assert [(o.name, list(o.dims)) for o in config.output] == [("OUTPUT0", [-1])]
    assert config.platform == "onnxruntime_onnx"
    fixed = triton.get_model_config("fixed").config  # cannot batch: max_batch_size 0, full dims
    assert fixed.max_batch_size == 0 and list(fixed.input[0].dims) == [2, 3]
    assert not fixed.HasField("dynamic_batching")
    assert list(triton.get_model_metadata("fixed").inputs[0].shape) == [2, 3]


def test_infer_equals_onnx_runtime(triton: Client, repository: Path) -> None:
    data = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    request = grpcclient.InferInput("INPUT0", [4, 16], "FP32")
    request.set_data_from_numpy(data)
    result = triton.infer("m", [request], outputs=[grpcclient.InferRequestedOutput("OUTPUT0")], request_id="r1")
    expected = run_in_process(repository / "m" / "1" / "model.onnx", {"INPUT0": data})["OUTPUT0"]
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), expected)
    response = result.get_response()
    assert response.id == "r1" and response.model_version == "1" and response.model_name == "m"
    assert list(response.outputs[0].shape) == [4, 16]


def test_simple_all_outputs_when_none_requested(triton: Client, repository: Path) -> None:
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.ones((1, 16), dtype=np.int32)
    inputs = [grpcclient.InferInput("INPUT0", [1, 16], "INT32"), grpcclient.InferInput("INPUT1", [1, 16], "INT32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    result = triton.infer("simple", inputs)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert len(result.get_response().raw_output_contents) == 2
    only = triton.infer("simple", inputs, outputs=[grpcclient.InferRequestedOutput("OUTPUT1")])
    assert [o.name for o in only.get_response().outputs] == ["OUTPUT1"]


def _values(datatype: str, shape: tuple[int, int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if datatype == "BYTES":
        words = [b"", b"a", "\u00e9t\u00e9".encode(), b"dmlrpc", b"x" * 40]
        return np.array([words[i] for i in rng.integers(0, len(words), shape).reshape(-1)], dtype=object).reshape(shape)
    if datatype == "BOOL":
        return rng.integers(0, 2, shape).astype(bool)
    dtype = {"FP16": np.float16, "FP32": np.float32, "FP64": np.float64}.get(datatype)
    if dtype is not None:
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(grpcclient.triton_to_np_dtype(datatype))
    return rng.integers(info.min, info.max, shape, dtype=info.dtype, endpoint=True)


@settings(max_examples=30)
@given(
    datatype=st.sampled_from(sorted(IDENTITY_TYPES)),
    batch=st.integers(1, 4),
    width=st.integers(0, 5),
    seed=st.integers(0, 2**16),
)
def test_every_datatype_round_trips_raw(oip_server: Any, datatype: str, batch: int, width: int, seed: int) -> None:
    data = _values(datatype, (batch, width), seed)
    with grpcclient.InferenceServerClient(oip_server.address) as triton:
        request = grpcclient.InferInput("INPUT0", [batch, width], datatype)
        request.set_data_from_numpy(data)
        result = triton.infer(f"identity_{datatype.lower()}", [request])
    out = result.as_numpy("OUTPUT0")
    assert out.shape == (batch, width)
    if datatype == "BYTES":
        assert out.reshape(-1).tolist() == data.reshape(-1).tolist()
    else:
        assert out.dtype == data.dtype
        np.testing.assert_array_equal(out, data)


def _raw_stub(address: str) -> tuple[Any, Any]:
    import grpc
    from tritonclient.grpc import service_pb2, service_pb2_grpc

    channel = grpc.insecure_channel(address)
    return service_pb2, service_pb2_grpc.GRPCInferenceServiceStub(channel)


def test_typed_contents_are_accepted(oip_server: Any) -> None:
    # KServe's SDK (binary_data=False) and grpcurl send typed contents; the answer is raw as always.
    pb, stub = _raw_stub(oip_server.address)
    values = [float(i) for i in range(32)]
    request = pb.ModelInferRequest(model_name="m", id="typed")
    request.inputs.add(name="INPUT0", datatype="FP32", shape=[2, 16]).contents.fp32_contents.extend(values)
    response = stub.ModelInfer(request, timeout=30)
    out = np.frombuffer(response.raw_output_contents[0], "<f4").reshape(2, 16)
    np.testing.assert_array_equal(out, np.array(values, np.float32).reshape(2, 16) * 2 + 1)
    strings = pb.ModelInferRequest(model_name="identity_bytes")
    strings.inputs.add(name="INPUT0", datatype="BYTES", shape=[1, 2]).contents.bytes_contents.extend([b"ab", b""])
    response = stub.ModelInfer(strings, timeout=30)
    assert response.raw_output_contents[0] == b"\x02\x00\x00\x00ab\x00\x00\x00\x00"
    ints = pb.ModelInferRequest(model_name="identity_int8")
    ints.inputs.add(name="INPUT0", datatype="INT8", shape=[1, 3]).contents.int_contents.extend([-128, 0, 127])
    response = stub.ModelInfer(ints, timeout=30)
    assert np.frombuffer(response.raw_output_contents[0], np.int8).tolist() == [-128, 0, 127]


def test_responses_name_their_own_shapes_and_ids(oip_server: Any) -> None:
    # Response heads are kept per batch size and output shapes: each answer still carries its own shape and id.
    pb, stub = _raw_stub(oip_server.address)
    for index, (batch, width) in enumerate([(1, 3), (2, 3), (1, 3), (1, 5), (2, 3)]):
        request = pb.ModelInferRequest(model_name="identity_fp32", id=f"r{index}" if index % 2 else "")
        request.inputs.add(name="INPUT0", datatype="FP32", shape=[batch, width])
        data = np.arange(batch * width, dtype=np.float32) + index
        request.raw_input_contents.append(data.tobytes())
        response = stub.ModelInfer(request, timeout=30)
        assert response.id == request.id
        assert (response.model_name, response.model_version) == ("identity_fp32", "1")
        assert [(o.name, o.datatype, list(o.shape)) for o in response.outputs] == [("OUTPUT0", "FP32", [batch, width])]
        np.testing.assert_array_equal(np.frombuffer(response.raw_output_contents[0], np.float32), data)


@settings(max_examples=25)
@given(
    batch=st.integers(1, 4),
    swap_inputs=st.booleans(),
    outputs=st.sampled_from([(), ("OUTPUT0",), ("OUTPUT1", "OUTPUT0")]),
    request_id=st.sampled_from(["", "a", "é" * 70]),
    seed=st.integers(0, 2**16),
)
def test_the_wire_reader_answers_as_protobuf_does(
    oip_server: Any, batch: int, swap_inputs: bool, outputs: tuple[str, ...], request_id: str, seed: int
) -> None:
    # A request of the common form is read from its bytes; the same request with a parameter (which only protobuf
    # reads) must get the same answer, byte for byte, and those bytes are the response's own serialization.
    import grpc
    from tritonclient.grpc import service_pb2 as pb

    rng = np.random.default_rng(seed)
    values = {name: rng.integers(-1000, 1000, (batch, 16), dtype=np.int32) for name in ("INPUT0", "INPUT1")}
    request = pb.ModelInferRequest(model_name="simple", id=request_id)
    for name in ("INPUT1", "INPUT0") if swap_inputs else ("INPUT0", "INPUT1"):
        request.inputs.add(name=name, datatype="INT32", shape=[batch, 16])
        request.raw_input_contents.append(values[name].tobytes())
    for name in outputs:
        request.outputs.add(name=name)
    with grpc.insecure_channel(oip_server.address) as channel:
        infer = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
        common = infer(request.SerializeToString(), timeout=30)
        request.parameters["sequence_id"].int64_param = 0
        parsed = infer(request.SerializeToString(), timeout=30)
    assert common == parsed
    response = pb.ModelInferResponse.FromString(common)
    assert response.SerializeToString() == common
    assert response.id == request_id
    expected = {"OUTPUT0": values["INPUT0"] + values["INPUT1"], "OUTPUT1": values["INPUT0"] - values["INPUT1"]}
    named = outputs or ("OUTPUT0", "OUTPUT1")
    assert [output.name for output in response.outputs] == list(named)
    for output, data in zip(response.outputs, response.raw_output_contents, strict=True):
        assert list(output.shape) == [batch, 16]
        np.testing.assert_array_equal(np.frombuffer(data, np.int32).reshape(batch, 16), expected[output.name])


@settings(max_examples=60)
@given(cut=st.integers(0, 200), flip=st.integers(0, 200), bits=st.integers(1, 255))
def test_damaged_request_bytes_get_a_clear_status(oip_server: Any, cut: int, flip: int, bits: int) -> None:
    # The wire reader leaves whatever it cannot read to protobuf: a damaged request is answered, or refused with a
    # status the protocol lists, never INTERNAL or UNKNOWN.
    import grpc
    from tritonclient.grpc import service_pb2 as pb

    request = pb.ModelInferRequest(model_name="identity_fp32", id="x")
    request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 4])
    request.raw_input_contents.append(np.arange(4, dtype=np.float32).tobytes())
    raw = bytearray(request.SerializeToString())
    raw = raw[: len(raw) - cut % len(raw)]
    if raw:
        raw[flip % len(raw)] ^= bits
    code, details = grpc.StatusCode.OK, ""
    with grpc.insecure_channel(oip_server.address) as channel:
        try:
            channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")(bytes(raw), timeout=30)
        except grpc.RpcError as error:
            code, details = error.code(), error.details()
    assert code not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), details


def test_a_bad_raw_entry_of_the_common_form_gets_its_field_path(oip_server: Any) -> None:
    import grpc

    pb, stub = _raw_stub(oip_server.address)
    request = pb.ModelInferRequest(model_name="identity_fp32")
    request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 4])
    for contents in ([b"\0" * 15], [b"\0" * 16, b"\0" * 16], []):
        del request.raw_input_contents[:]
        request.raw_input_contents.extend(contents)
        with pytest.raises(grpc.RpcError) as raised:
            stub.ModelInfer(request, timeout=30)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "raw_input_contents" in raised.value.details()


def _status(call: Any) -> Any:
    import grpc

    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value.code()


def test_bad_requests_get_the_listed_status(oip_server: Any, triton: Client) -> None:
    import grpc

    pb, stub = _raw_stub(oip_server.address)
    ok = np.zeros((1, 16), np.float32).tobytes()

    def infer(**fields: Any) -> Any:
        request = pb.ModelInferRequest(model_name=fields.pop("model", "m"), model_version=fields.pop("version", ""))
        for name, datatype, shape in fields.pop("inputs", [("INPUT0", "FP32", [1, 16])]):
            request.inputs.add(name=name, datatype=datatype, shape=shape)
        request.raw_input_contents.extend(fields.pop("raw", [ok]))
        return _status(lambda: stub.ModelInfer(request, timeout=30))

    invalid = grpc.StatusCode.INVALID_ARGUMENT
    assert infer(model="nope") == invalid  # a model never seen
    assert infer(version="x") == invalid
    assert infer(version="2") == grpc.StatusCode.UNAVAILABLE  # a version that is not ready
    assert infer(model="broken") == grpc.StatusCode.NOT_FOUND  # known, no ready version
    assert infer(inputs=[("INPUT0", "FP32", [9, 16])], raw=[bytes(9 * 64)]) == invalid  # batch over max_batch_size
    assert infer(inputs=[("INPUT0", "FP32", [4, 15])], raw=[bytes(4 * 60)]) == invalid  # wrong shape
    assert infer(inputs=[("INPUT0", "INT64", [1, 16])], raw=[bytes(128)]) == invalid  # wrong datatype
    assert infer(inputs=[("INPUT0", "FP32", [1, 16])], raw=[bytes(63)]) == invalid  # wrong byte count
    assert infer(inputs=[("INPUT0", "FP32", [1, 16])], raw=[]) == invalid  # missing data
    assert infer(inputs=[("OTHER", "FP32", [1, 16])]) == invalid  # unknown input
    assert infer(inputs=[]) == invalid  # missing input
    assert infer(inputs=[("INPUT0", "BF16", [1, 16])], raw=[bytes(32)]) == invalid  # BF16 to an FP32 input
    bytes_request = [("INPUT0", "BYTES", [1, 2])]
    assert infer(model="identity_bytes", inputs=bytes_request, raw=[b"\x05\x00\x00\x00ab"]) == invalid  # framing
    assert infer(model="identity_bytes", inputs=bytes_request, raw=[b"\x01\x00\x00\x00a"]) == invalid  # 1 of 2
    assert infer(model="identity_bytes", inputs=bytes_request, raw=[b"\x01\x00"]) == invalid  # cut prefix
    mixed = pb.ModelInferRequest(model_name="m")
    mixed.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16]).contents.fp32_contents.extend([0.0] * 16)
    mixed.raw_input_contents.append(ok)
    assert _status(lambda: stub.ModelInfer(mixed, timeout=30)) == invalid  # contents beside raw
    typed = pb.ModelInferRequest(model_name="m")
    typed.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16]).contents.int_contents.extend([0] * 16)
    assert _status(lambda: stub.ModelInfer(typed, timeout=30)) == invalid  # the wrong typed field
    wanted = pb.ModelInferRequest(model_name="m", raw_input_contents=[ok])
    wanted.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16])
    wanted.outputs.add(name="NOPE")
    assert _status(lambda: stub.ModelInfer(wanted, timeout=30)) == invalid  # unknown output
    twice = pb.ModelInferRequest(model_name="m", raw_input_contents=[ok])
    twice.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16])
    twice.outputs.add(name="OUTPUT0")
    twice.outputs.add(name="OUTPUT0")
    assert _status(lambda: stub.ModelInfer(twice, timeout=30)) == invalid  # an output asked twice
    # tritonclient reports each as an InferenceServerException, and the server stays up.
    with pytest.raises(InferenceServerException):
        triton.infer(
            "nope",
            [grpcclient.InferInput("INPUT0", [1, 16], "FP32").set_data_from_numpy(np.zeros((1, 16), np.float32))],
        )
    assert triton.is_server_ready() and triton.is_model_ready("m")


@pytest.mark.parametrize("method", ["ModelInfer", "ServerLive", "RepositoryIndex", "SystemSharedMemoryStatus"])
def test_undecodable_messages_are_invalid_argument(oip_server: Any, method: str) -> None:
    # Bytes that are not the method's message: INVALID_ARGUMENT naming the request, as DirectMLService answers
    # (a deserializer that raised would make gRPC answer UNKNOWN); a stream answers it in the item's response.
    import grpc
    from tritonclient.grpc import service_pb2

    with grpc.insecure_channel(oip_server.address) as channel:
        call = channel.unary_unary(f"/inference.GRPCInferenceService/{method}")
        with pytest.raises(grpc.RpcError) as info:
            call(b"\xff\xff\xff", timeout=30)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
        assert "not valid protobuf" in info.value.details()  # type: ignore[attr-defined]
        stream = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer")
        answers = stream(iter([b"\x0a\x05ab"]), timeout=30)
        (answer,) = (service_pb2.ModelStreamInferResponse.FromString(data) for data in answers)
        assert "not valid protobuf" in answer.error_message


def test_fixed_shape_model(triton: Client, repository: Path) -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    request = grpcclient.InferInput("X", [2, 3], "FP32")
    request.set_data_from_numpy(data)
    np.testing.assert_array_equal(triton.infer("fixed", [request]).as_numpy("Y"), data + data)
    bad = grpcclient.InferInput("X", [1, 2, 3], "FP32")
    bad.set_data_from_numpy(data.reshape(1, 2, 3))
    with pytest.raises(InferenceServerException, match="does not match"):
        triton.infer("fixed", [bad])


def test_version_policy_and_explicit_version(triton: Client) -> None:
    assert triton.get_model_metadata("versioned").versions == ["1", "3"]
    request = grpcclient.InferInput("INPUT0", [1, 16], "FP32")
    request.set_data_from_numpy(np.zeros((1, 16), np.float32))
    assert triton.infer("versioned", [request]).get_response().model_version == "3"  # the highest by default
    assert triton.infer("versioned", [request], model_version="1").get_response().model_version == "1"
