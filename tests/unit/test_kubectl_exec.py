"""kubectl exec/logs: URL building, channel frames, exit codes (no services)."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from minik8s.api import errors
from minik8s.client.kubeconfig import ClientConfig
from minik8s.kubectl import channels as kexec
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.logquery import log_params


def test_ws_base_converts_scheme() -> None:
    assert kexec.ws_base("http://127.0.0.1:6443") == "ws://127.0.0.1:6443"
    assert kexec.ws_base("https://10.0.0.1:6443/") == "wss://10.0.0.1:6443"
    assert kexec.ws_base("https://example.com/prefix") == "wss://example.com/prefix"


def test_exec_url_repeats_command_and_sets_streams() -> None:
    url = kexec.exec_url("http://127.0.0.1:6443", "ns1", "web", ["sh", "-c", "echo a&b"], "main")
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("ws", "127.0.0.1:6443", "/api/v1/namespaces/ns1/pods/web/exec")
    assert parse_qsl(parts.query) == [("command", "sh"), ("command", "-c"), ("command", "echo a&b"),
                                      ("container", "main"), ("stdout", "true"), ("stderr", "true")]
    tty = dict(parse_qsl(urlsplit(kexec.exec_url("https://h:1", "d", "p", ["sh"], None, True, True)).query))
    assert tty == {"command": "sh", "stdout": "true", "stderr": "false", "stdin": "true", "tty": "true"}


def test_connect_options_carry_token_and_tls() -> None:
    plain = kexec.connect_options(ClientConfig(server="http://127.0.0.1:6443"))
    assert plain["subprotocols"] == ["v5.channel.k8s.io", "v4.channel.k8s.io"]
    assert "ssl" not in plain and "additional_headers" not in plain
    secure = kexec.connect_options(ClientConfig(server="https://127.0.0.1:6443", token="abc",
                                                insecure_skip_tls_verify=True))
    assert secure["additional_headers"] == [("Authorization", "Bearer abc")]
    assert secure["ssl"].check_hostname is False
    acting = kexec.connect_options(ClientConfig(server="https://h:1", token="abc", impersonate_user="alice",
                                                impersonate_groups=["g1", "g2"], insecure_skip_tls_verify=True))
    assert acting["additional_headers"] == [("Authorization", "Bearer abc"), ("Impersonate-User", "alice"),
                                            ("Impersonate-Group", "g1"), ("Impersonate-Group", "g2")]


def test_frames() -> None:
    assert kexec.parse_frame(b"\x01hello") == (kexec.STDOUT, b"hello")
    assert kexec.parse_frame(b"\x02") == (kexec.STDERR, b"")
    assert kexec.parse_frame(b"") == (-1, b"")
    assert kexec.parse_frame("text") == (kexec.STDOUT, b"text")
    assert kexec.stdin_frame(b"abc") == b"\x00abc"
    assert kexec.close_frame() == bytes([255, 0])
    channel, payload = kexec.parse_frame(kexec.resize_frame(80, 24))
    assert channel == kexec.RESIZE and json.loads(payload) == {"Width": 80, "Height": 24}


def test_exit_code_from_status() -> None:
    assert kexec.exit_code(b"") == 0
    assert kexec.exit_code(json.dumps({"status": "Success", "metadata": {}}).encode()) == 0
    failure = {"status": "Failure", "reason": "NonZeroExitCode", "message": "exit 42",
               "details": {"causes": [{"reason": "ExitCode", "message": "42"}]}}
    assert kexec.exit_code(json.dumps(failure).encode()) == 42
    with pytest.raises(errors.NotFound, match='pods "x" not found'):
        kexec.exit_code(json.dumps({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404,
                                    "message": 'pods "x" not found'}).encode())
    with pytest.raises(errors.InternalError):
        kexec.exit_code(json.dumps({"status": "Failure", "message": "boom", "code": 500}).encode())
    with pytest.raises(KubectlError, match="plain words"):
        kexec.exit_code(b"plain words")


def test_logs_arguments() -> None:
    assert log_params(None, False, -1, False, False) == {}
    assert log_params("c", True, 10, True, True) == {"container": "c", "follow": True, "timestamps": True,
                                                     "previous": True, "tailLines": 10}
    assert log_params(None, False, -1, False, False, since_time="2026-01-01T00:00:00Z") == \
        {"sinceTime": "2026-01-01T00:00:00Z"}
