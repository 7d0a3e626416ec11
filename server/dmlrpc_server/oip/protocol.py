"""The Open Inference Protocol's messages: the generated modules that tritonclient ships, used as they are.

NOTE: not generated here. ``tritonclient`` (NVIDIA's maintained client) ships Triton's ``grpc_service.proto`` and
``model_config.proto`` compiled (package ``inference``, a superset of KServe's v2 file with the same field numbers),
and it registers them in protobuf's default descriptor pool. A second, non-identical copy of those files in one
process fails to import ("duplicate file name"), so a server that compiled its own could not share a process with
tritonclient (our tests, a user's harness); using its modules keeps the wire identical to Triton's by construction.
Only the base ``tritonclient`` package is required: its ``[grpc]`` extra pins protobuf below 7, while these modules
import and round-trip under the protobuf this project uses.
"""

from __future__ import annotations

from tritonclient.grpc import model_config_pb2, service_pb2

SERVICE_NAME: str = service_pb2.DESCRIPTOR.services_by_name["GRPCInferenceService"].full_name

__all__ = ["SERVICE_NAME", "model_config_pb2", "service_pb2"]
