"""A bare gRPC echo server on dmlrpc's Execute method path: the response is the request's bytes, unparsed."""

from __future__ import annotations

import argparse
import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

SERVICE = "dmlrpc.v1.DirectMLService"
METHOD = "Execute"
#: Message size limits off (-1), as the baseline must accept the same payloads as the real server.
OPTIONS = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def _identity(data: bytes) -> bytes:
    return data


def _announce(port: int, mode: str) -> None:
    # The parent parses this line, as it parses the real server's "listening on" log line.
    sys.stderr.write(f"echo server ({mode}) listening on 127.0.0.1:{port}\n")
    sys.stderr.flush()


async def _serve_aio(port: int) -> None:
    async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return request

    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        {METHOD: grpc.unary_unary_rpc_method_handler(echo, _identity, _identity)},
    )
    server = grpc.aio.server(options=OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    _announce(bound, "aio")
    await server.wait_for_termination()


def _serve_sync(port: int, threads: int) -> None:
    def echo(request: bytes, context: grpc.ServicerContext) -> bytes:
        return request

    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        {METHOD: grpc.unary_unary_rpc_method_handler(echo, _identity, _identity)},
    )
    server = grpc.server(ThreadPoolExecutor(max_workers=threads), options=OPTIONS)
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    _announce(bound, "sync")
    server.wait_for_termination()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["aio", "sync"], default="aio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--threads", type=int, default=16, help="thread pool size of the sync server")
    args = parser.parse_args()
    try:
        if args.mode == "aio":
            asyncio.run(_serve_aio(args.port))
        else:
            _serve_sync(args.port, args.threads)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
