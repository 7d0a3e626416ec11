"""Settings: flags over DMLRPC_* variables over the config file over defaults, validated with clear messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dmlrpc_server.settings import ServerSettings, SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("DMLRPC_"):
            monkeypatch.delenv(name)


def test_defaults() -> None:
    settings = load_settings([])
    assert (settings.host, settings.port, settings.provider) == ("127.0.0.1", 50051, "auto")
    assert settings.metrics and settings.reflection and settings.auth_tokens() == ()
    assert settings.feature_level == 0x6400


def test_flags_beat_environment_beats_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "dmlrpc.toml"
    config.write_text('port = 6000\nmax-queue-depth = 3\nprovider = "cpu"\nfeature_level = "3.0"\n')
    monkeypatch.setenv("DMLRPC_PORT", "7000")
    monkeypatch.setenv("DMLRPC_MAX_CONCURRENT_REQUESTS", "5")
    settings = load_settings(["--config", str(config), "--max-concurrent-requests", "9"])
    assert settings.port == 7000  # environment over file
    assert settings.max_queue_depth == 3  # file over default (kebab-case keys accepted)
    assert settings.provider == "cpu"
    assert settings.max_concurrent_requests == 9  # flag over environment
    assert settings.feature_level == 0x3000


def test_config_file_from_the_environment_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "dmlrpc.json"
    config.write_text('{"metrics_port": 9999, "reflection": false, "log_format": "json"}')
    monkeypatch.setenv("DMLRPC_CONFIG", str(config))
    settings = load_settings([])
    assert (settings.metrics_port, settings.reflection, settings.log_format) == (9999, False, "json")


def test_boolean_flags_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(["--no-metrics"]).metrics is False
    monkeypatch.setenv("DMLRPC_REFLECTION", "false")
    assert load_settings([]).reflection is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "-1"], "--port (DMLRPC_PORT): Input should be greater than or equal to 0"),
        (["--max-queue-depth", "-1"], "--max-queue-depth (DMLRPC_MAX_QUEUE_DEPTH)"),
        (["--max-tensor-elements", str(1 << 32)], "--max-tensor-elements"),
        (["--feature-level", "7.7"], "--feature-level"),
        (
            ["--tls-cert-file", "no/such/file.pem"],
            "--tls-cert-file (DMLRPC_TLS_CERT_FILE): Path does not point to a file",
        ),
    ],
)
def test_invalid_values_name_the_flag_and_variable(argv: list[str], message: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(argv)
    assert message in str(info.value)


def test_invalid_values_from_the_config_file_name_its_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "dmlrpc.toml"
    config.write_text('port = 99999\nmax-queue-depth = "x"\nmax_batch_size = -1\n')
    monkeypatch.setenv("DMLRPC_MAX_BATCH_SIZE", "-2")  # overrides the file's: the variable is what is wrong
    with pytest.raises(SettingsError) as info:
        load_settings(["--config", str(config)])
    message = str(info.value)
    assert f"port (in the config file {config}): Input should be less than or equal to 65535" in message
    assert f"max_queue_depth (in the config file {config}): Input should be a valid integer" in message
    assert "--max-batch-size (DMLRPC_MAX_BATCH_SIZE)" in message and "DMLRPC_PORT" not in message


def test_unknown_config_key_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "dmlrpc.toml"
    config.write_text("prot = 1\n")
    with pytest.raises(SettingsError) as info:
        load_settings(["--config", str(config)])
    assert "prot" in str(info.value) and "Extra inputs are not permitted" in str(info.value)


def test_malformed_config_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "dmlrpc.toml"
    config.write_text("port = = 1\n")
    with pytest.raises(SettingsError) as info:
        load_settings(["--config", str(config)])
    assert str(config) in str(info.value)


def test_mutual_tls_needs_a_server_certificate(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked here")
    with pytest.raises(SettingsError) as info:
        load_settings(["--tls-client-ca-file", str(ca)])
    assert "tls_client_ca_file (mutual TLS) needs tls_cert_file and tls_key_file" in str(info.value)


def test_token_file_lines(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# comment\n  a1  \n\nb2\n")
    settings = ServerSettings(auth_tokens_file=tokens, auth_token="c3")  # type: ignore[arg-type]
    assert settings.auth_tokens() == (b"c3", b"a1", b"b2")
    assert "c3" not in repr(settings)  # secrets stay out of logs


def test_help_documents_every_option() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dmlrpc_server", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    for name, field in ServerSettings.model_fields.items():
        flag = "--" + name.replace("_", "-")
        assert flag in result.stdout, flag
        assert field.description, name
    assert "DMLRPC_" in result.stdout


def test_nothing_is_parsed_at_import_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DMLRPC_PORT", "not a port")
    result = subprocess.run(
        [sys.executable, "-c", "import dmlrpc_server, dmlrpc_server.__main__, dmlrpc_server.settings"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
