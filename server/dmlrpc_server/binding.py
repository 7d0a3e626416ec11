"""Stages 4 and 6 of the request path: a call's inputs bound as its plan's feeds, its results as output buffers."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

import numpy as np
import onnxruntime as ort

from dmlrpc.codec import TensorLayout, data_type_name, decode, encode_into, packed_bytes
from dmlrpc.schema import tensor_descs
from dmlrpc.v1 import service_pb2
from dmlrpc_server.calls import Encoded
from dmlrpc_server.errors import InvalidArgument, ResourceExhausted
from dmlrpc_server.operators.base import Plan
from dmlrpc_server.runtime.buffers import Buffer, BufferPool
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.resident import Device, Resident, ResidentStore

T = TypeVar("T")


class Binding:
    """Binds calls' inputs and outputs: pooled buffers for outputs that need laying out, resident tensors by handle."""

    def __init__(self, pool: BufferPool, resident: ResidentStore, max_message_bytes: int) -> None:
        self.pool = pool
        self.resident = resident
        self.max_message_bytes = max_message_bytes

    def resolve(
        self, owner: str, compiled: Compiled, bindings: Sequence[service_pb2.BindingDesc]
    ) -> list[Buffer | Resident | None]:
        """The bytes or the resident tensor of each unary binding; a resident one must match its tensor desc."""
        layouts = compiled.plan.inputs
        items: list[Buffer | Resident | None] = []
        for index, binding in enumerate(bindings):
            kind = binding.WhichOneof("binding")
            if kind is None:
                items.append(None)
            elif kind == "buffer":
                items.append(binding.buffer.data)  # NOTE: upb copies a bytes field on every access: read it once
            elif kind != "resident":
                raise InvalidArgument(f"inputs[{index}]", "a buffer or resident binding is required for this tensor")
            else:
                path = f"inputs[{index}].resident"
                tensor = self.resident.get(owner, binding.resident.handle, f"{path}.handle")
                layout = layouts[index] if index < len(layouts) else None
                if layout is not None and not tensor.matches(layout):
                    held = f"{data_type_name(tensor.layout.data_type)} {list(tensor.layout.sizes)}"
                    wanted = f"{data_type_name(layout.data_type)} {list(layout.sizes)}"
                    raise InvalidArgument(path, f"the resident tensor is {held}, the bound tensor desc {wanted}")
                items.append(tensor)
        return items

    def resident_run(
        self,
        owner: str,
        compiled: Compiled,
        request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest,
        options: ort.RunOptions | None = None,
        *,
        output_descs: list[bytes] | None = None,
        bind: Callable[[list[Any]], list[Any]] | None = None,
    ) -> list[bytes | Resident | None]:
        """Execute ``request`` (compiled as ``compiled``) with resident inputs and/or outputs kept resident
        (``request.keep_outputs``).

        Resident inputs that the plan feeds unchanged are bound in device memory (IOBinding) and kept outputs stay
        there, so a chain of such calls never copies to the host; anything else is read back to the host, run, and
        uploaded again. The kept outputs' quota is reserved before anything runs.
        """
        plan = compiled.plan
        if plan.input_arrays or plan.output_arrays:
            raise InvalidArgument(
                "inputs", "operators with tensor-array fields bind buffers only: no resident tensors or kept outputs"
            )
        keep = self._kept(plan, request.keep_outputs)
        sent = sum(layout.total_bytes for i, layout in enumerate(plan.outputs) if layout is not None and i not in keep)
        if sent + 32 * len(plan.outputs) > self.max_message_bytes:
            raise ResourceExhausted(
                f"the outputs sent back total {sent} bytes, over the message limit of {self.max_message_bytes} "
                "(the server's --max-message-bytes); keep some outputs on the server or raise the limit"
            )
        items = self.resolve(owner, compiled, request.inputs)
        if bind is not None:
            items = bind(items)  # a compiled handle's owned inputs
        device = self.resident.device
        kept_bytes = sum(layout.packed_bytes for i in keep if (layout := plan.outputs[i]) is not None)
        with self.resident.reserve(owner, kept_bytes, len(keep)) as reservation:
            on_device = {
                i: item
                for i, item in enumerate(items)
                if compiled.on_device
                and isinstance(item, Resident)
                and not isinstance(item.value, np.ndarray)
                and i < len(plan.direct_inputs)
                and plan.direct_inputs[i] is not None
            }
            device_keep = keep if plan.direct_outputs and compiled.on_device and not device.on_host else set()
            if on_device or device_keep:
                inputs = feeds(compiled, items, skip=on_device.keys(), device=device)
                bound = {plan.direct_inputs[i]: item.value for i, item in on_device.items()}
                results: list[Any] = compiled.run_bound(inputs, bound, device_keep, device)  # type: ignore[arg-type]
                finished: list[Any] = results if plan.direct_outputs else plan.finish(results)
            else:
                finished = plan.finish(compiled.run(feeds(compiled, items, device=device), options))
            if not keep:
                descs: list[bytes] = []
            elif output_descs is not None:
                descs = output_descs
            else:
                assert isinstance(request, service_pb2.ExecuteRequest)
                descs = [d.SerializeToString() for d in tensor_descs(request.operator_desc, output=True)]
            outputs: list[bytes | Resident | None] = []
            for index, (result, layout) in enumerate(zip(finished, plan.outputs, strict=True)):
                if layout is None or result is None:
                    outputs.append(None)
                elif index in keep:
                    value = result if index in device_keep else device.upload(np.ascontiguousarray(result))
                    outputs.append(reservation.add(layout, descs[index], value))
                else:
                    staged: list[np.ndarray] = []
                    outputs.append(bytes(self._output_view(result, layout, staged)))
                    for buffer in staged:
                        self.pool.release(buffer)
        return outputs

    def host_bytes(self, compiled: Compiled, request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest) -> int:
        """The bytes a resident call moves through host memory: its buffer inputs and the outputs it sends back
        (on a host provider every tensor is in host memory)."""
        on_host = self.resident.device.on_host
        plan = compiled.plan
        bindings = request.inputs
        read = sum(
            layout.total_bytes
            for index, layout in enumerate(plan.inputs)
            if layout is not None
            and (on_host or index >= len(bindings) or bindings[index].WhichOneof("binding") != "resident")
        )
        kept = set(request.keep_outputs)
        sent = sum(
            layout.total_bytes
            for index, layout in enumerate(plan.outputs)
            if layout is not None and (on_host or index not in kept)
        )
        return read + sent

    @staticmethod
    def _kept(plan: Plan, keep_outputs: Sequence[int]) -> set[int]:
        keep: set[int] = set()
        for position, index in enumerate(keep_outputs):
            if index >= len(plan.outputs) or plan.outputs[index] is None:
                raise InvalidArgument(
                    f"keep_outputs[{position}]", f"{index} is not a set output (the desc has {len(plan.outputs)})"
                )
            keep.add(index)
        return keep

    def output_views(
        self, compiled: Compiled, results: Sequence[np.ndarray]
    ) -> tuple[list[memoryview | None], list[np.ndarray]]:
        """The output buffers as byte views, without the copy ``bytes`` would cost (for streaming them out).

        Packed outputs view the arrays ONNX Runtime returned; strided ones are laid out in pooled buffers, returned
        second: release them to the pool once the views are sent.
        """
        views: list[memoryview | None] = []
        staged: list[np.ndarray] = []
        for result, layout in zip(compiled.plan.finish(results), compiled.plan.outputs, strict=True):
            views.append(None if layout is None or result is None else self._output_view(result, layout, staged))
        return views, staged

    def _output_view(self, result: np.ndarray, layout: TensorLayout, staged: list[np.ndarray]) -> memoryview:
        """One output's bytes: a view of ``result`` when it already is the layout, else laid out in a pooled
        buffer appended to ``staged``."""
        view = packed_bytes(np.ascontiguousarray(result), layout)
        if view is not None:
            return view
        staging = self.pool.acquire(layout.total_bytes)
        encode_into(result, layout, staging)  # writes every byte: gaps and padding are zeroed
        staged.append(staging)
        return staging.data


def feeds(
    compiled: Compiled,
    buffers: Sequence[Buffer | Resident | None],
    path: str = "inputs",
    skip: Collection[int] = (),
    device: Device | None = None,
) -> dict[str, np.ndarray]:
    """Check buffer lengths, view them as arrays and run the operator's data-dependent checks: the model's feeds.

    Raises:
        InvalidArgument: a buffer is missing, unexpected or short, or a value in it breaks a rule.
    """
    plan = compiled.plan
    packed = plan.packed_inputs
    if packed is not None and len(buffers) == len(packed):
        # NOTE: the common case, resolved once per plan: each read-only buffer viewed by its packed layout. Anything
        # else here (a short, writable, resident or misplaced buffer) is left to the checks below.
        arrays: list[np.ndarray | None] = []
        for data, view in zip(buffers, packed, strict=True):
            if view is None:
                if data is not None:
                    break
                arrays.append(None)
                continue
            dtype, sizes, total = view
            if not (type(data) is bytes or (type(data) is memoryview and data.readonly)) or len(data) < total:
                break
            # NOTE: the array made on the buffer at once (one call; frombuffer and reshape are two, at twice the cost)
            arrays.append(np.ndarray(sizes, dtype, data))
        else:
            names = plan.plain_feeds
            if names is None:
                return plan.prepare(arrays)
            bound = {}  # NOTE: a loop, not a comprehension (a function call of its own)
            for name, array in zip(names, arrays, strict=True):
                if name and array is not None:
                    bound[name] = array
            return bound
    if len(buffers) != len(plan.inputs):
        raise InvalidArgument(
            path, f"{len(buffers)} bindings for {len(plan.inputs)} input tensor fields; bind each in order"
        )
    arrays = []
    for i, layout in enumerate(plan.inputs):
        data = buffers[i]
        if layout is None:
            if data is not None:
                raise InvalidArgument(f"{path}[{i}]", "the tensor desc is unset, so its binding must be unset too")
            arrays.append(None)
            continue
        if data is None:
            raise InvalidArgument(f"{path}[{i}]", "a buffer binding is required for this tensor")
        if isinstance(data, Resident):
            # Bound by handle: either fed to the model in device memory (``skip``) or read on the host.
            assert device is not None, "resident tensors are bound with their device"
            arrays.append(None if i in skip else device.download(data.value))
            continue
        if len(data) < layout.total_bytes:
            raise InvalidArgument(
                f"{path}[{i}].buffer.data",
                f"{len(data)} bytes is shorter than the tensor's total_tensor_size_in_bytes ({layout.total_bytes})",
            )
        arrays.append(decode(data, layout))
    return compiled.plan.prepare(arrays)


def encode_outputs(
    compiled: Compiled,
    pool: BufferPool,
    write: Callable[[list[Encoded]], T],
    results: Sequence[np.ndarray],
) -> T:
    """The output buffers per output field (a list of them for a tensor-array field): the array ONNX Runtime
    returned where it already is the output desc's layout, dense (the writer copies it once, into the response),
    else a view of it or its bytes laid out in a pooled buffer and copied out of it: what ``write`` makes of them
    (``list`` for the buffers themselves).

    NOTE: ``write`` (the reader's writer) joins the response where the run is. Returned as views, the outputs
    would outlive the call's last step on the event loop (the future that brought them back is still referenced
    there), so gRPC's copy of the response would be a third copy beside the array and the joined bytes.
    """
    plan = compiled.plan
    finished: Sequence[np.ndarray | None] = results if plan.plain_outputs else plan.finish(results)
    packed = plan.packed_outputs
    if packed is not None:
        # NOTE: the common case, resolved once per plan: each array sent as it is once its dtype and size match.
        # An array that does not (a bridge's view, or a dtype ONNX Runtime chose) is left to the loop below.
        sent: list[Encoded] = []
        for result, expected in zip(finished, packed, strict=True):
            if expected is None or result is None:
                sent.append(None)
                continue
            dtype, total = expected
            if result.dtype != dtype or result.nbytes != total or not result.flags.c_contiguous:
                break
            sent.append(result)  # the array itself: the writer reads its bytes through the buffer protocol
        else:
            return write(sent)
    encoded: list[Any] = []
    for result, layout in zip(finished, plan.outputs, strict=True):
        if layout is None or result is None:
            encoded.append(None)
            continue
        view = packed_bytes(result, layout)
        if view is None and not result.flags.c_contiguous:  # ONNX Runtime's outputs are; a bridge's view may not be
            view = packed_bytes(np.ascontiguousarray(result), layout)
        if view is not None:
            encoded.append(bytes(view) if plan.output_arrays else view)
            continue
        staging = pool.acquire(layout.total_bytes)
        try:
            encode_into(result, layout, staging)  # writes every byte: gaps and padding are zeroed
            encoded.append(staging.tobytes())
        finally:
            pool.release(staging)
    return write(plan.group_outputs(encoded) if plan.output_arrays else encoded)


def unary_buffers(bindings: Sequence[service_pb2.BindingDesc], plan: Plan) -> list[Buffer | None]:
    """The bytes of each unary binding (``None`` for an unset one), tensor arrays expanded in place (``plan.inputs``
    order); checks each is a buffer binding, or a buffer-array binding of the array's length for an array field."""
    buffers: list[Buffer | None] = []
    if not plan.input_arrays:
        for index, binding in enumerate(bindings):
            kind = binding.WhichOneof("binding")
            if kind is None:
                buffers.append(None)
            elif kind != "buffer":
                raise InvalidArgument(f"inputs[{index}]", "a buffer binding is required for this tensor")
            else:
                buffers.append(binding.buffer.data)  # NOTE: upb copies a bytes field on every access: read it once
        return buffers
    if len(bindings) != len(plan.input_arrays):
        raise InvalidArgument(
            "inputs",
            f"{len(bindings)} bindings for {len(plan.input_arrays)} input tensor fields; bind each in order (a "
            "tensor-array field takes one buffer_array)",
        )
    for index, (binding, count) in enumerate(zip(bindings, plan.input_arrays, strict=True)):
        kind = binding.WhichOneof("binding")
        if count is None:
            if kind not in (None, "buffer"):
                raise InvalidArgument(f"inputs[{index}]", "a buffer binding is required for this tensor")
            buffers.append(None if kind is None else binding.buffer.data)
            continue
        if kind != "buffer_array":
            raise InvalidArgument(
                f"inputs[{index}]", f"a tensor-array field takes a buffer_array binding of {count} buffers"
            )
        array = binding.buffer_array
        parts = list(array.bindings)
        if array.binding_count != len(parts):
            raise InvalidArgument(
                f"inputs[{index}].buffer_array.binding_count",
                f"{array.binding_count} differs from the {len(parts)} bindings given",
            )
        if len(parts) != count:
            raise InvalidArgument(
                f"inputs[{index}].buffer_array.bindings", f"{len(parts)} buffers for the array's {count} tensor descs"
            )
        for position, part in enumerate(parts):
            data = part.data
            layout = plan.inputs[len(buffers)]
            if layout is not None and len(data) < layout.total_bytes:
                raise InvalidArgument(
                    f"inputs[{index}].buffer_array.bindings[{position}].data",
                    f"{len(data)} bytes is shorter than the tensor's total_tensor_size_in_bytes ({layout.total_bytes})",
                )
            buffers.append(data)
    return buffers
