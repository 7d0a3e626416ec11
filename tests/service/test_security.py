"""TLS, mutual TLS and bearer-token auth against the real server, with certificates generated per test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

import dmlrpc
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.conftest import ServerThread, scrape, start_server
from tests.service.certificates import Authority, Issued

X = np.array([[3.0, 9.0, 1.0, 7.0]], np.float32)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[Authority, Issued, Issued, Authority, Issued]:
    directory = tmp_path_factory.mktemp("pki")
    authority = Authority(directory, "trusted")
    stranger = Authority(directory, "stranger")
    return (
        authority,
        authority.issue("server", server=True),
        authority.issue("client", server=False),
        stranger,
        stranger.issue("intruder", server=False),
    )


def _top_k(client: dmlrpc.Client) -> None:
    values, indices = client.top_k(X, 2)
    np.testing.assert_array_equal(values, [[9.0, 7.0]])
    np.testing.assert_array_equal(indices, [[1, 3]])


@pytest.fixture(scope="module")
def tls_server(pki: tuple[Authority, Issued, Issued, Authority, Issued]) -> Iterator[ServerThread]:
    _, server_cert, _, _, _ = pki
    running = start_server(tls_cert_file=server_cert.cert_file, tls_key_file=server_cert.key_file)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def mtls_server(pki: tuple[Authority, Issued, Issued, Authority, Issued]) -> Iterator[ServerThread]:
    authority, server_cert, _, _, _ = pki
    running = start_server(
        tls_cert_file=server_cert.cert_file, tls_key_file=server_cert.key_file, tls_client_ca_file=authority.file
    )
    yield running
    running.stop()


def test_tls_handshake_and_call(tls_server: ServerThread, pki: tuple[Authority, ...]) -> None:
    authority = pki[0]
    assert isinstance(authority, Authority)
    with dmlrpc.Client(tls_server.address, tls=dmlrpc.TLS.from_files(authority.file), timeout=30) as client:
        _top_k(client)
    # The certificate names localhost too: verification by name works through server_name.
    tls = dmlrpc.TLS(root_certificates=authority.pem, server_name="localhost")
    with dmlrpc.Client(tls_server.address, tls=tls, timeout=30) as client:
        _top_k(client)


def test_tls_server_refuses_plaintext_and_untrusting_clients(
    tls_server: ServerThread, pki: tuple[Authority, ...]
) -> None:
    stranger = pki[3]
    assert isinstance(stranger, Authority)
    with dmlrpc.Client(tls_server.address, timeout=5, retry=None) as client, pytest.raises(dmlrpc.UnavailableError):
        client.get_capabilities()
    untrusting = dmlrpc.TLS(root_certificates=stranger.pem)
    with (
        dmlrpc.Client(tls_server.address, tls=untrusting, timeout=5, retry=None) as client,
        pytest.raises(dmlrpc.UnavailableError),
    ):
        client.get_capabilities()


def test_mutual_tls_accepts_a_client_certificate_from_its_ca(
    mtls_server: ServerThread, pki: tuple[Authority, Issued, Issued, Authority, Issued]
) -> None:
    authority, _, client_cert, _, _ = pki
    tls = dmlrpc.TLS.from_files(authority.file, client_cert.cert_file, client_cert.key_file)
    with dmlrpc.Client(mtls_server.address, tls=tls, timeout=30) as client:
        _top_k(client)


@pytest.mark.parametrize("who", ["no certificate", "certificate of another CA"])
def test_mutual_tls_refuses_clients_without_a_trusted_certificate(
    mtls_server: ServerThread, pki: tuple[Authority, Issued, Issued, Authority, Issued], who: str
) -> None:
    authority, _, _, _, intruder = pki
    if who == "no certificate":
        tls = dmlrpc.TLS(root_certificates=authority.pem)
    else:
        tls = dmlrpc.TLS(authority.pem, intruder.cert, intruder.key)
    with (
        dmlrpc.Client(mtls_server.address, tls=tls, timeout=5, retry=None) as client,
        pytest.raises(dmlrpc.UnavailableError),
    ):
        client.get_capabilities()


# --- bearer tokens --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.txt"
    tokens.write_text("# rotated tokens\nold-token\n\nnew-token\n")
    running = start_server(auth_token="env-token", auth_tokens_file=tokens)
    yield running
    running.stop()


@pytest.mark.parametrize("token", ["env-token", "old-token", "new-token"])
def test_accepted_tokens(token_server: ServerThread, token: str) -> None:
    with dmlrpc.Client(token_server.address, token=token, timeout=30) as client:
        _top_k(client)


@pytest.mark.parametrize("token", [None, "", "wrong", "NEW-TOKEN", "env-tokenx", "env-toke", "# rotated tokens"])
def test_refused_tokens_get_unauthenticated_and_do_no_work(token_server: ServerThread, token: str | None) -> None:
    def executed() -> float:
        return sum(
            v for (name, _), v in scrape(token_server).items() if name == "dmlrpc_compute_duration_seconds_count"
        )

    before = executed()
    with (
        dmlrpc.Client(token_server.address, token=token, timeout=30) as client,
        pytest.raises(dmlrpc.UnauthenticatedError) as info,
    ):
        client.top_k(X, 2)
    assert info.value.message.startswith("missing or invalid bearer token")
    assert info.value.request_id  # as every failed call's
    assert executed() == before
    key = ("dmlrpc_requests_total", (("code", "UNAUTHENTICATED"), ("method", "Execute"), ("operator", "top_k1")))
    assert scrape(token_server)[key] >= 1


@pytest.mark.parametrize("header", ["Basic env-token", "env-token", "bearer env-token", "Bearer  env-token"])
def test_only_the_bearer_scheme_counts(token_server: ServerThread, header: str) -> None:
    with grpc.insecure_channel(token_server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        request = service_pb2.GetCapabilitiesRequest()
        if header.startswith(("Basic", "env")):
            metadata = (("authorization", header), ("dmlrpc-request-id", "my-request-7"))
            with pytest.raises(grpc.RpcError) as info:
                stub.GetCapabilities(request, metadata=metadata, timeout=10)
            assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED
            assert ("dmlrpc-request-id", "my-request-7") in info.value.trailing_metadata()  # the caller's own id
        else:  # the scheme is case-insensitive and extra spaces are not part of the token (RFC 6750)
            stub.GetCapabilities(request, metadata=(("authorization", header),), timeout=10)


def test_health_is_open_and_reflection_is_closed_by_default(token_server: ServerThread) -> None:
    with grpc.insecure_channel(token_server.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        assert stub.Check(health_pb2.HealthCheckRequest(), timeout=10).status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as info:
            ProtoReflectionDescriptorDatabase(channel).get_services()
    assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED


def test_health_and_reflection_exemptions_are_settings(tmp_path: Path) -> None:
    running = start_server(auth_token="t", auth_exempt_health=False, auth_exempt_reflection=True)
    try:
        with grpc.insecure_channel(running.address) as channel:
            assert "dmlrpc.v1.DirectMLService" in ProtoReflectionDescriptorDatabase(channel).get_services()
            with pytest.raises(grpc.RpcError) as info:
                health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED
    finally:
        running.stop()


def test_tls_with_token(pki: tuple[Authority, Issued, Issued, Authority, Issued]) -> None:
    authority, server_cert, _, _, _ = pki
    running = start_server(tls_cert_file=server_cert.cert_file, tls_key_file=server_cert.key_file, auth_token="t0k")
    try:
        tls = dmlrpc.TLS(root_certificates=authority.pem)
        with dmlrpc.Client(running.address, tls=tls, token="t0k", timeout=30) as client:
            _top_k(client)
        with dmlrpc.Client(running.address, tls=tls, timeout=30) as client, pytest.raises(dmlrpc.UnauthenticatedError):
            _top_k(client)
    finally:
        running.stop()
