"""AsyncClient: the asyncio SDK over a grpc.aio channel."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any, Literal, overload

import grpc
import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._base import (
    InputValue,
    Resident,
    StreamedOutputs,
    TensorReader,
    create_requests,
    decode_outputs,
    flat_bindings,
)
from dmlrpc._core import ClientCore
from dmlrpc.codec import tensor_desc
from dmlrpc.compiled import AsyncCompiledOperator, compile_graph_request, compile_operator_request
from dmlrpc.errors import DmlRpcError, from_rpc_error
from dmlrpc.graph import Graph
from dmlrpc.many import DEFAULT_WINDOW, AsyncExecuteManyStream, Operator, Outputs, amap_ordered, amap_unordered
from dmlrpc.resident import AsyncResidentTensor
from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2, tensor_pb2

__all__ = ["AsyncClient"]


class AsyncClient(ClientCore):
    """asyncio dmlrpc client: the methods of ``Client``, awaited; the same arguments (see ``ClientCore``).

    Every failed call raises a ``dmlrpc.errors.DmlRpcError`` subclass, never a raw ``grpc.RpcError``.
    """

    _asynchronous = True

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel if this client created it."""
        if self._owns_channel:
            await self._channel.close()

    async def execute(
        self,
        operator_desc: operators_pb2.OperatorDesc,
        inputs: Sequence[InputValue],
        *,
        timeout: float | None = None,
        stream: bool | None = None,
        keep: bool | Sequence[int] | None = None,
        execution_flags: int = 0,
    ) -> list[np.ndarray | AsyncResidentTensor | None]:
        """Run any operator desc.

        Args:
            operator_desc: the DML_OPERATOR_DESC; its tensor descs say how each buffer is laid out.
            inputs: one value per input tensor field in declaration order: an array (encoded per its desc),
                raw buffer ``bytes``, or ``None`` for an unset optional tensor; a list of arrays for a tensor-array
                field (JOIN's ``input_tensors``).
            timeout: deadline in seconds for this call (defaults to the client's).
            stream: send over ExecuteStream (``True``), unary Execute (``False``), or decide by size (``None``:
                streamed when an input or output buffer exceeds the client's ``stream_threshold_bytes``).
            keep: keep outputs on the server as ``AsyncResidentTensor``s instead of sending them back: ``True``
                for all, or output indices. Inputs may be resident tensors too (those calls use unary Execute).
            execution_flags: DML_EXECUTION_FLAGS bits (``dmlrpc.v1.service_pb2.ExecutionFlags``), e.g.
                ``EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION`` to let a GPU compute FLOAT32 in less precision.

        Returns:
            One read-only array per output tensor field (``None`` for an unset one), shaped and strided as the
            output desc says; a tensor-array field (SPLIT's ``output_tensors``) gives one per tensor, in place.
        """
        prepared, stream = self._prepare(operator_desc, inputs, stream, keep, execution_flags)
        try:
            if stream:
                outputs = StreamedOutputs(prepared.outputs)
                parts = self._execute_stream(
                    prepared.stream_requests(), timeout=self._timeout(timeout), metadata=self._metadata
                )
                async for part in parts:
                    outputs.add(part)
                return list(outputs.arrays())
            response = await self._stub.Execute(
                prepared.request, timeout=self._timeout(timeout), metadata=self._metadata
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        decoded = decode_outputs(response, prepared.outputs)
        return [
            AsyncResidentTensor(self, binding.resident.handle, binding.resident.desc)
            if binding.WhichOneof("binding") == "resident"
            else output
            for binding, output in zip(flat_bindings(response.outputs), decoded, strict=False)
        ]

    @overload
    def map(
        self,
        operator: Operator,
        batches: Iterable[Sequence[InputValue]] | AsyncIterable[Sequence[InputValue]],
        *,
        ordered: Literal[True] = True,
        window: int | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[Outputs, None]: ...

    @overload
    def map(
        self,
        operator: Operator,
        batches: Iterable[Sequence[InputValue]] | AsyncIterable[Sequence[InputValue]],
        *,
        ordered: Literal[False],
        window: int | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[tuple[int, Outputs], None]: ...

    def map(
        self,
        operator: Operator,
        batches: Iterable[Sequence[InputValue]] | AsyncIterable[Sequence[InputValue]],
        *,
        ordered: bool = True,
        window: int | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[Outputs, None] | AsyncGenerator[tuple[int, Outputs], None]:
        """``Client.map`` as an async generator: ``async for outputs in client.map(op, batches)``; ``batches`` may be
        an async iterable too. ``aclose()`` (or leaving the loop early) cancels the stream."""
        stream = self.stream(window=window, timeout=timeout)
        if ordered:
            return amap_ordered(stream, operator, batches)
        return amap_unordered(stream, operator, batches)

    def stream(self, *, window: int | None = None, timeout: float | None = None) -> AsyncExecuteManyStream:
        """Open an ExecuteMany stream: ``async with client.stream() as s: future = await s.submit(op, inputs)``
        (see ``Client.stream``); nothing is sent before ``async with`` or the first ``submit``."""
        return AsyncExecuteManyStream(self, window=window, timeout=self._timeout(timeout))

    async def _stream_window(self) -> int:
        if self._window is None:
            try:
                limits = (await self.get_capabilities()).limits
            except DmlRpcError:
                return DEFAULT_WINDOW
            self._window = limits.max_stream_items_in_flight or DEFAULT_WINDOW
        return self._window

    async def upload(
        self, array: npt.ArrayLike, *, strides: Sequence[int] | None = None, timeout: float | None = None
    ) -> AsyncResidentTensor:
        """Keep ``array`` on the server (in device memory on a GPU server), streamed up in chunks."""
        data = np.asarray(array)
        desc = tensor_desc(data, strides)
        return await self._create(create_requests(data, desc), timeout)

    async def allocate(
        self, dtype: npt.DTypeLike, shape: Sequence[int], *, timeout: float | None = None
    ) -> AsyncResidentTensor:
        """A zero-filled resident tensor, allocated on the server without uploading anything."""
        return await self._create(create_requests(None, tensor_desc((dtype, shape))), timeout)

    async def _create(self, requests: Iterator[bytes], timeout: float | None) -> AsyncResidentTensor:
        try:
            created = await self._create_tensor(requests, timeout=self._timeout(timeout), metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return AsyncResidentTensor(self, created.handle, created.desc)

    async def read_tensor(self, tensor: Resident, *, timeout: float | None = None) -> np.ndarray:
        """A resident tensor's contents, streamed back: an owned array."""
        reader = TensorReader()
        try:
            async for message in self._read_tensor(
                service_pb2.ReadTensorRequest(handle=tensor.handle),
                timeout=self._timeout(timeout),
                metadata=self._metadata,
            ):
                reader.add(message)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return reader.array()

    async def release_tensor(self, tensor: Resident, *, timeout: float | None = None) -> None:
        """Free a resident tensor on the server."""
        try:
            await self._stub.ReleaseTensor(
                service_pb2.ReleaseTensorRequest(handle=tensor.handle),
                timeout=self._timeout(timeout),
                metadata=self._metadata,
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    async def compile(
        self,
        target: operators_pb2.OperatorDesc | Graph | graph_pb2.GraphDesc,
        *,
        owned: Sequence[npt.ArrayLike | None] | None = None,
        timeout: float | None = None,
    ) -> AsyncCompiledOperator:
        """Compile an operator desc or a graph once (CompileOperator / CompileGraph); call the result many times.

        Args:
            target: an OperatorDesc, a ``dmlrpc.Graph`` or a GraphDesc.
            owned: for inputs flagged DML_TENSOR_FLAG_OWNED_BY_DML, their arrays, one per input (None elsewhere);
                they are bound once here and left out of every call.
        """
        try:
            if isinstance(target, operators_pb2.OperatorDesc):
                compiled = await self._stub.CompileOperator(
                    compile_operator_request(target, owned), timeout=self._timeout(timeout), metadata=self._metadata
                )
            else:
                compiled = await self._stub.CompileGraph(
                    compile_graph_request(target, owned), timeout=self._timeout(timeout), metadata=self._metadata
                )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return AsyncCompiledOperator(self, compiled)

    async def _dispatch(
        self, request: service_pb2.DispatchRequest, timeout: float | None
    ) -> service_pb2.ExecuteResponse:
        try:
            response: service_pb2.ExecuteResponse = await self._stub.Dispatch(
                request, timeout=self._timeout(timeout), metadata=self._metadata
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return response

    async def _release_compiled(self, handle: str, timeout: float | None) -> None:
        try:
            await self._stub.ReleaseCompiledOperator(
                service_pb2.ReleaseCompiledOperatorRequest(handle=handle),
                timeout=self._timeout(timeout),
                metadata=self._metadata,
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def _resident(self, handle: str, desc: tensor_pb2.TensorDesc) -> AsyncResidentTensor:
        return AsyncResidentTensor(self, handle, desc)

    async def get_capabilities(self, *, timeout: float | None = None) -> service_pb2.GetCapabilitiesResponse:
        """The server's execution provider, device, feature level, limits and per-operator support."""
        try:
            response: service_pb2.GetCapabilitiesResponse = await self._stub.GetCapabilities(
                service_pb2.GetCapabilitiesRequest(), timeout=self._timeout(timeout), metadata=self._metadata
            )
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error
        return response

    async def element_wise(
        self,
        name: str,
        *inputs: npt.ArrayLike | None,
        output_dtype: npt.DTypeLike | None = None,
        timeout: float | None = None,
        **attributes: Any,
    ) -> np.ndarray:
        """DML_ELEMENT_WISE_<NAME> over NumPy-broadcast inputs: ``element_wise("add", a, b)`` (see
        ``dmlrpc.ops.element_wise``)."""
        call = ops.element_wise(name, *inputs, output_dtype=output_dtype, **attributes)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def activation(
        self, name: str, *inputs: npt.ArrayLike | None, timeout: float | None = None, **attributes: Any
    ) -> np.ndarray:
        """DML_ACTIVATION_<NAME>: ``activation("leaky_relu", x, alpha=0.1)`` (see ``dmlrpc.ops.activation``)."""
        call = ops.activation(name, *inputs, **attributes)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def top_k(
        self,
        input: npt.ArrayLike,
        k: int,
        axis: int = -1,
        *,
        direction: ops.Direction = "decreasing",
        index_dtype: npt.DTypeLike = np.uint32,
        timeout: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The k largest (``direction="decreasing"``) or smallest elements along ``axis``: (values, indices)."""
        call = ops.top_k(input, k, axis, direction=direction, index_dtype=index_dtype)
        values, indices = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(values, np.ndarray) and isinstance(indices, np.ndarray)
        return values, indices

    async def scatter_elements(
        self,
        input: npt.ArrayLike,
        indices: npt.ArrayLike,
        updates: npt.ArrayLike,
        axis: int = 0,
        *,
        timeout: float | None = None,
    ) -> np.ndarray:
        """A copy of ``input`` with ``updates`` written at ``indices`` along ``axis``."""
        call = ops.scatter_elements(input, indices, updates, axis)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def scatter_nd(
        self,
        input: npt.ArrayLike,
        indices: npt.ArrayLike,
        updates: npt.ArrayLike,
        *,
        input_dimension_count: int | None = None,
        indices_dimension_count: int | None = None,
        timeout: float | None = None,
    ) -> np.ndarray:
        """A copy of ``input`` with ``updates`` written at the index tuples of ``indices`` (ONNX ScatterND).

        The arrays may differ in rank as in ONNX (see ``dmlrpc.ops.scatter_nd``); the result has ``input``'s shape.
        """
        call = ops.scatter_nd(
            input,
            indices,
            updates,
            input_dimension_count=input_dimension_count,
            indices_dimension_count=indices_dimension_count,
        )
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def gemm(
        self,
        a: npt.ArrayLike,
        b: npt.ArrayLike,
        c: npt.ArrayLike | None = None,
        *,
        trans_a: bool = False,
        trans_b: bool = False,
        alpha: float = 1.0,
        beta: float = 1.0,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_GEMM: ``alpha * (a @ b) + beta * c`` over 2-D to 4-D float32/float16 arrays, ``a``/``b`` transposed in
        their last two dimensions where ``trans_a``/``trans_b`` say (see ``dmlrpc.ops.gemm``); NumPy's result shape."""
        call = ops.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def convolution(
        self,
        input: npt.ArrayLike,
        filter: npt.ArrayLike,
        bias: npt.ArrayLike | None = None,
        *,
        strides: int | Sequence[int] | None = None,
        dilations: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        output_padding: int | Sequence[int] | None = None,
        group_count: int = 1,
        mode: Literal["cross_correlation", "convolution"] = "cross_correlation",
        direction: Literal["forward", "backward"] = "forward",
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_CONVOLUTION of {batch, channels, spatial..} ``input`` with ``filter`` plus ``bias`` per output channel
        (ONNX Conv by default, ConvTranspose with ``direction="backward"``; see ``dmlrpc.ops.convolution``)."""
        call = ops.convolution(
            input,
            filter,
            bias,
            strides=strides,
            dilations=dilations,
            start_padding=start_padding,
            end_padding=end_padding,
            output_padding=output_padding,
            group_count=group_count,
            mode=mode,
            direction=direction,
        )
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def matrix_multiply_integer(
        self,
        a: npt.ArrayLike,
        b: npt.ArrayLike,
        *,
        a_zero_point: npt.ArrayLike | None = None,
        b_zero_point: npt.ArrayLike | None = None,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_MATRIX_MULTIPLY_INTEGER: ``(a - a_zero_point) @ (b - b_zero_point)`` of int8/uint8 arrays, in int32
        (see ``dmlrpc.ops.matrix_multiply_integer``)."""
        call = ops.matrix_multiply_integer(a, b, a_zero_point=a_zero_point, b_zero_point=b_zero_point)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def reduce(
        self,
        function: str,
        input: npt.ArrayLike,
        axes: int | Sequence[int] | None = None,
        *,
        keepdims: bool = False,
        index_dtype: npt.DTypeLike = np.int64,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_REDUCE: ``function`` ("sum", "mean", "max", "argmax", ...) over ``axes`` (``None``: all), shaped as
        NumPy's with ``keepdims`` (see ``dmlrpc.ops.reduce``)."""
        call = ops.reduce(function, input, axes, keepdims=keepdims, index_dtype=index_dtype)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def cast(self, input: npt.ArrayLike, dtype: npt.DTypeLike, *, timeout: float | None = None) -> np.ndarray:
        """DML_CAST: ``input.astype(dtype)`` by DirectML's conversion rules (see ``dmlrpc.ops.cast``)."""
        call = ops.cast(input, dtype)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def gather(
        self, input: npt.ArrayLike, indices: npt.ArrayLike, axis: int = 0, *, timeout: float | None = None
    ) -> np.ndarray:
        """DML_GATHER: ``np.take(input, indices, axis)`` (see ``dmlrpc.ops.gather``)."""
        call = ops.gather(input, indices, axis)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def slice(
        self,
        input: npt.ArrayLike,
        offsets: Sequence[int],
        sizes: Sequence[int],
        strides: Sequence[int] | None = None,
        *,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_SLICE1: a strided window of ``input`` per dimension (see ``dmlrpc.ops.slice``)."""
        call = ops.slice(input, offsets, sizes, strides)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def pad(
        self,
        input: npt.ArrayLike,
        start_padding: int | Sequence[int],
        end_padding: int | Sequence[int],
        mode: str = "constant",
        value: float = 0,
        *,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_PADDING1: ``np.pad`` with a start and end padding per dimension (see ``dmlrpc.ops.pad``)."""
        call = ops.pad(input, start_padding, end_padding, mode, value)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def tile(
        self, input: npt.ArrayLike, repetitions: int | Sequence[int], *, timeout: float | None = None
    ) -> np.ndarray:
        """DML_TILE: ``np.tile(input, repetitions)`` (see ``dmlrpc.ops.tile``)."""
        call = ops.tile(input, repetitions)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def join(self, inputs: Sequence[npt.ArrayLike], axis: int = 0, *, timeout: float | None = None) -> np.ndarray:
        """DML_JOIN: ``np.concatenate(inputs, axis)`` for arrays of one dtype (see ``dmlrpc.ops.join``)."""
        call = ops.join(inputs, axis)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def split(
        self, input: npt.ArrayLike, sizes: int | Sequence[int], axis: int = 0, *, timeout: float | None = None
    ) -> list[np.ndarray]:
        """DML_SPLIT: ``input`` cut along ``axis`` into pieces of ``sizes`` (an int: that many equal pieces, as
        ``np.split``); one array per piece (see ``dmlrpc.ops.split``)."""
        call = ops.split(input, sizes, axis)
        outputs = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert all(isinstance(output, np.ndarray) for output in outputs)
        return outputs

    async def average_pooling(
        self,
        input: npt.ArrayLike,
        window_size: int | Sequence[int],
        *,
        strides: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        include_padding: bool = False,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_AVERAGE_POOLING over the spatial dimensions of an (N, C, ...) array (see
        ``dmlrpc.ops.average_pooling``)."""
        call = ops.average_pooling(
            input,
            window_size,
            strides=strides,
            start_padding=start_padding,
            end_padding=end_padding,
            include_padding=include_padding,
        )
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def max_pooling(
        self,
        input: npt.ArrayLike,
        window_size: int | Sequence[int],
        *,
        strides: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_MAX_POOLING over the spatial dimensions of an (N, C, ...) array (see ``dmlrpc.ops.max_pooling``)."""
        call = ops.max_pooling(
            input, window_size, strides=strides, start_padding=start_padding, end_padding=end_padding
        )
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def cumsum(
        self,
        input: npt.ArrayLike,
        axis: int,
        *,
        reverse: bool = False,
        exclusive: bool = False,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_CUMULATIVE_SUMMATION: running sums along ``axis``, as ``np.cumsum`` (see ``dmlrpc.ops.cumsum``)."""
        call = ops.cumsum(input, axis, reverse=reverse, exclusive=exclusive)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def cumprod(
        self,
        input: npt.ArrayLike,
        axis: int,
        *,
        reverse: bool = False,
        exclusive: bool = False,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_CUMULATIVE_PRODUCT: running products along ``axis``, as ``np.cumprod`` (see ``dmlrpc.ops.cumprod``)."""
        call = ops.cumprod(input, axis, reverse=reverse, exclusive=exclusive)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def mean_variance_normalization(
        self,
        input: npt.ArrayLike,
        axes: int | Sequence[int] | None,
        *,
        scale: npt.ArrayLike | None = None,
        bias: npt.ArrayLike | None = None,
        normalize_variance: bool = True,
        epsilon: float = 1e-5,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_MEAN_VARIANCE_NORMALIZATION2 over ``axes`` (see ``dmlrpc.ops.mean_variance_normalization``)."""
        call = ops.mean_variance_normalization(
            input, axes, scale=scale, bias=bias, normalize_variance=normalize_variance, epsilon=epsilon
        )
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def batch_normalization(
        self,
        input: npt.ArrayLike,
        mean: npt.ArrayLike,
        variance: npt.ArrayLike,
        scale: npt.ArrayLike | None = None,
        bias: npt.ArrayLike | None = None,
        *,
        epsilon: float = 1e-5,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_BATCH_NORMALIZATION with given statistics (see ``dmlrpc.ops.batch_normalization``)."""
        call = ops.batch_normalization(input, mean, variance, scale, bias, epsilon=epsilon)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def lp_normalization(
        self, input: npt.ArrayLike, axis: int = -1, *, p: int = 2, epsilon: float = 1e-5, timeout: float | None = None
    ) -> np.ndarray:
        """DML_LP_NORMALIZATION: ``input`` over its L1/L2 norm along ``axis`` (see ``dmlrpc.ops.lp_normalization``)."""
        call = ops.lp_normalization(input, axis, p=p, epsilon=epsilon)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def one_hot(
        self,
        indices: npt.ArrayLike,
        depth: int,
        values: npt.ArrayLike = (0, 1),
        axis: int = -1,
        *,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_ONE_HOT: ``values[1]`` at each index along a new ``axis`` of ``depth``, else ``values[0]`` (see
        ``dmlrpc.ops.one_hot``)."""
        call = ops.one_hot(indices, depth, values, axis)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output

    async def fill_value_sequence(
        self,
        shape: int | Sequence[int],
        start: float,
        delta: float,
        dtype: npt.DTypeLike = np.float32,
        *,
        timeout: float | None = None,
    ) -> np.ndarray:
        """DML_FILL_VALUE_SEQUENCE: ``start + i * delta`` in row-major order, shaped ``shape`` (see
        ``dmlrpc.ops.fill_value_sequence``)."""
        call = ops.fill_value_sequence(shape, start, delta, dtype)
        (output,) = call.results(await self.execute(call.operator_desc, call.inputs, timeout=timeout))
        assert isinstance(output, np.ndarray)
        return output
