"""System shared memory through tritonclient (Triton's simple_grpc_shm_client flow), CUDA answers without CUDA,
and the errors of regions that are missing or too small."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException, serialize_byte_tensor

from tests.conftest import start_server
from tests.oip.repository import run_in_process

pytestmark = pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no POSIX shared memory here")


def _key(name: str) -> str:
    return f"/dmlrpc_test_{name}_{uuid.uuid4().hex[:8]}"


def test_simple_shm_flow(oip_server: Any, repository: Path) -> None:
    client = grpcclient.InferenceServerClient(oip_server.address)
    client.unregister_system_shared_memory()
    client.unregister_cuda_shared_memory()  # OK without CUDA, as Triton's examples expect
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    out_handle = shm.create_shared_memory_region("output_data", _key("out"), 128)
    in_handle = shm.create_shared_memory_region("input_data", _key("in"), 128)
    try:
        shm.set_shared_memory_region(in_handle, [a])
        shm.set_shared_memory_region(in_handle, [b], offset=64)
        client.register_system_shared_memory("output_data", out_handle._shm_key, 128)
        client.register_system_shared_memory("input_data", in_handle._shm_key, 128)
        inputs = [grpcclient.InferInput("INPUT0", [1, 16], "INT32"), grpcclient.InferInput("INPUT1", [1, 16], "INT32")]
        inputs[0].set_shared_memory("input_data", 64)
        inputs[1].set_shared_memory("input_data", 64, offset=64)
        outputs = [grpcclient.InferRequestedOutput("OUTPUT0"), grpcclient.InferRequestedOutput("OUTPUT1")]
        outputs[0].set_shared_memory("output_data", 64)
        outputs[1].set_shared_memory("output_data", 64, offset=64)
        result = client.infer("simple", inputs, outputs=outputs)
        response = result.get_response()
        assert list(response.raw_output_contents) == [b"", b""]  # one (empty) raw entry per output
        expected = run_in_process(repository / "simple" / "1" / "model.onnx", {"INPUT0": a, "INPUT1": b})
        shape = result.get_output("OUTPUT0").shape
        np.testing.assert_array_equal(shm.get_contents_as_numpy(out_handle, np.int32, shape), expected["OUTPUT0"])
        np.testing.assert_array_equal(
            shm.get_contents_as_numpy(out_handle, np.int32, shape, offset=64), expected["OUTPUT1"]
        )
        status = client.get_system_shared_memory_status()
        assert {r.name: r.byte_size for r in status.regions.values()} == {"output_data": 128, "input_data": 128}
        assert (
            client.get_cuda_shared_memory_status().regions == {} or not client.get_cuda_shared_memory_status().regions
        )
        client.unregister_system_shared_memory()
        assert not client.get_system_shared_memory_status().regions
    finally:
        shm.destroy_shared_memory_region(out_handle)
        shm.destroy_shared_memory_region(in_handle)
        client.close()


def test_bytes_round_trip_through_shm(oip_server: Any) -> None:
    data = np.array([[b"dml", b"", "\u00e9".encode()]], dtype=object)
    payload = serialize_byte_tensor(data)  # length-prefixed elements, as a 0-d object array of their bytes
    size = len(payload.item())
    with grpcclient.InferenceServerClient(oip_server.address) as client:
        handle = shm.create_shared_memory_region("bytes_in", _key("bytes"), 256)
        try:
            shm.set_shared_memory_region(handle, [payload])
            client.register_system_shared_memory("bytes_in", handle._shm_key, 256)
            tensor = grpcclient.InferInput("INPUT0", [1, 3], "BYTES")
            tensor.set_shared_memory("bytes_in", size)
            output = grpcclient.InferRequestedOutput("OUTPUT0")
            output.set_shared_memory("bytes_in", 256 - 128, offset=128)
            result = client.infer("identity_bytes", [tensor], outputs=[output])
            out = shm.get_contents_as_numpy(handle, np.object_, [1, 3], offset=128)
            assert out.reshape(-1).tolist() == data.reshape(-1).tolist()
            assert result.get_output("OUTPUT0").datatype == "BYTES"
        finally:
            client.unregister_system_shared_memory("bytes_in")
            shm.destroy_shared_memory_region(handle)


def test_shm_errors(oip_server: Any) -> None:
    import grpc

    with grpcclient.InferenceServerClient(oip_server.address) as client:
        handle = shm.create_shared_memory_region("small", _key("small"), 64)
        try:
            with pytest.raises(InferenceServerException) as caught:  # past the object's end
                client.register_system_shared_memory("small", handle._shm_key, 128)
            assert caught.value.status() == str(grpc.StatusCode.INVALID_ARGUMENT)
            with pytest.raises(InferenceServerException) as caught:
                client.register_system_shared_memory("nokey", "/dmlrpc_test_no_such_key", 64)
            assert caught.value.status() == str(grpc.StatusCode.INVALID_ARGUMENT)
            client.register_system_shared_memory("small", handle._shm_key, 64)
            with pytest.raises(InferenceServerException) as caught:
                client.register_system_shared_memory("small", handle._shm_key, 64)
            assert caught.value.status() == str(grpc.StatusCode.ALREADY_EXISTS)
            with pytest.raises(InferenceServerException) as caught:
                client.get_system_shared_memory_status("nope")
            assert caught.value.status() == str(grpc.StatusCode.NOT_FOUND)
            client.unregister_system_shared_memory("nope")  # unknown: OK

            tensor = grpcclient.InferInput("INPUT0", [2, 16], "FP32")  # 128 bytes from a 64-byte region
            tensor.set_shared_memory("small", 128)
            with pytest.raises(InferenceServerException) as caught:
                client.infer("m", [tensor])
            assert caught.value.status() == str(grpc.StatusCode.INVALID_ARGUMENT)
            tensor.set_shared_memory("unregistered", 64)
            with pytest.raises(InferenceServerException) as caught:
                client.infer("m", [tensor])
            assert caught.value.status() == str(grpc.StatusCode.NOT_FOUND)
            fits = grpcclient.InferInput("INPUT0", [1, 16], "FP32")
            fits.set_data_from_numpy(np.zeros((1, 16), np.float32))
            output = grpcclient.InferRequestedOutput("OUTPUT0")
            output.set_shared_memory("small", 32)  # the output needs 64
            with pytest.raises(InferenceServerException, match="holds 32") as caught:
                client.infer("m", [fits], outputs=[output])
            with pytest.raises(InferenceServerException) as caught:
                client.register_cuda_shared_memory("cuda", b"\x00" * 64, 0, 64)
            assert caught.value.status() == str(grpc.StatusCode.UNIMPLEMENTED)
            assert client.is_server_ready()
        finally:
            client.unregister_system_shared_memory()
            shm.destroy_shared_memory_region(handle)


def test_shm_is_off_unless_allowed(tmp_path: Path) -> None:
    server = start_server(model_repository=tmp_path)
    try:
        with grpcclient.InferenceServerClient(server.address) as client:
            assert "system_shared_memory" not in client.get_server_metadata().extensions
            with pytest.raises(InferenceServerException, match="allow-client-shm"):
                client.get_system_shared_memory_status()
    finally:
        server.stop()
