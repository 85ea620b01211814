"""``kubectl create configmap|secret generic``, ``get`` and ``describe`` for ConfigMaps and Secrets,
run as a real subprocess against the real apiserver (the :mod:`tests.integration.test_kubectl`
harness)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
import yaml

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.support.kubectl import Kubectl, assert_one_error_line


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


async def test_create_configmap_from_literals_files_and_env_files(kubectl: Kubectl, client: Client, namespace: str,
                                                                  tmp_path: Path) -> None:
    (tmp_path / "app.conf").write_text("port=8080\n\tindented\n")
    (tmp_path / "logo.bin").write_bytes(b"\x89PNG\xff\x00")
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "one.txt").write_text("1")
    (folder / "not a key").write_text("skipped")
    env_file = tmp_path / "app.env"
    env_file.write_text("# comment\n\nLEVEL=debug\nEMPTY=\n")
    res = kubectl.ok("create", "configmap", "app", "--from-literal=MODE=fast", "--from-literal", "URL=http://x/?a=b",
                     f"--from-file={tmp_path / 'app.conf'}", f"--from-file=logo={tmp_path / 'logo.bin'}",
                     f"--from-file={folder}")
    assert res.out == "configmap/app created\n"
    cm = await client.get(client.resource("configmaps"), "app", namespace)
    assert cm["data"] == {"MODE": "fast", "URL": "http://x/?a=b", "app.conf": "port=8080\n\tindented\n",
                          "one.txt": "1"}
    assert cm["binaryData"] == {"logo": b64(b"\x89PNG\xff\x00")}
    # an env file is a source of its own, as in kubectl (not combined with files or literals)
    combined = kubectl("create", "configmap", "both", "--from-literal=A=1", f"--from-env-file={env_file}")
    assert (combined.code, combined.err) == (1, "error: from-env-file cannot be combined with from-file or "
                                                "from-literal\n")
    kubectl.ok("create", "configmap", "app-env", f"--from-env-file={env_file}")
    env_cm = await client.get(client.resource("configmaps"), "app-env", namespace)
    assert env_cm["data"] == {"LEVEL": "debug", "EMPTY": ""}

    table = kubectl.ok("get", "cm").table()
    assert table[0] == ["NAME", "DATA", "AGE"] and table[1][:2] == ["app", "5"] and table[2][:2] == ["app-env", "2"]
    described = kubectl.ok("describe", "configmap", "app").out
    assert "Name:         app\n" in described and f"Namespace:    {namespace}\n" in described
    assert "\nData\n====\nEMPTY:\n----\n\n\n" in kubectl.ok("describe", "configmap", "app-env").out
    assert "\napp.conf:\n----\nport=8080\n\tindented\n\n" in described
    assert "\nBinaryData\n====\nlogo: 6 bytes\n" in described

    dry = kubectl.ok("create", "cm", "preview", "--from-literal=a=1", "--dry-run=client", "-o", "yaml")
    assert yaml.safe_load(dry.out) == {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"},
                                       "metadata": {"name": "preview", "namespace": namespace,
                                                                    "creationTimestamp": None}}
    assert kubectl.ok("create", "cm", "preview", "--from-literal=a=1", "--dry-run=server").out == \
        "configmap/preview created (server dry run)\n"
    with pytest.raises(errors.NotFound):
        await client.get(client.resource("configmaps"), "preview", namespace)


async def test_create_secret_generic(kubectl: Kubectl, client: Client, namespace: str, tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    res = kubectl.ok("create", "secret", "generic", "ssh", "--type=kubernetes.io/ssh-auth",
                     f"--from-file=ssh-privatekey={key}", "--from-literal=user=slurm")
    assert res.out == "secret/ssh created\n"
    secret = await client.get(client.resource("secrets"), "ssh", namespace)
    assert secret["type"] == "kubernetes.io/ssh-auth"
    assert base64.b64decode(secret["data"]["ssh-privatekey"]) == key.read_bytes()
    assert secret["data"]["user"] == b64(b"slurm")
    kubectl.ok("create", "secret", "generic", "plain", "--from-literal=password=hunter2")

    table = kubectl.ok("get", "secrets").table()
    assert table[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert [r[:3] for r in table[1:]] == [["plain", "Opaque", "1"], ["ssh", "kubernetes.io/ssh-auth", "2"]]
    described = kubectl.ok("describe", "secret", "plain", "ssh").out
    assert "hunter2" not in described and "slurm" not in described and "AAAA" not in described
    assert b64(b"hunter2") not in described
    assert "Type:  Opaque\n" in described and "password:  7 bytes\n" in described
    assert "Type:  kubernetes.io/ssh-auth\n" in described
    assert "ssh-privatekey:  75 bytes\nuser:            5 bytes\n" in described

    # the server's rules hold: ssh-auth needs ssh-privatekey
    assert_one_error_line(kubectl("create", "secret", "generic", "bad", "--type=kubernetes.io/ssh-auth",
                                  "--from-literal=user=x"),
                          'error: failed to create secret Secret "bad" is invalid',
                          "data[ssh-privatekey]: Required value")


@pytest.mark.parametrize(("args", "fragment"), [
    (["configmap", "x", "--from-literal=novalue"], "invalid literal source novalue, expected key=value"),
    (["configmap", "x", "--from-literal=a=1", "--from-literal=a=2"],
     'cannot add key "a", another key by that name already exists'),
    (["configmap", "x", "--from-literal=bad/key=1"], '"bad/key" is not a valid key name for a ConfigMap'),
    (["configmap", "x", "--from-file=/nonexistent/file"], "error reading /nonexistent/file"),
    (["secret", "generic", "x", "--from-literal=a b=1"], '"a b" is not a valid key name for a Secret'),
    (["configmap", "x", "--dry-run=maybe"], "Invalid dry-run value (maybe)"),
])
def test_create_generator_errors(kubectl: Kubectl, args: list[str], fragment: str) -> None:
    assert_one_error_line(kubectl("create", *args), fragment)


async def test_describe_pod_shows_env_sources(kubectl: Kubectl, namespace: str) -> None:
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{
        "name": "c", "image": "busybox",
        "envFrom": [{"configMapRef": {"name": "app"}}, {"secretRef": {"name": "creds", "optional": True},
                                                        "prefix": "DB_"}],
        "env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "pw"}}}]}],
        "volumes": [{"name": "v", "secret": {"secretName": "creds"}}]}}
    kubectl.ok("apply", "-f", "-", stdin=yaml.safe_dump(manifest))
    out = kubectl.ok("describe", "pod", "p").out
    assert "    Environment Variables from:\n      app " in out
    words = re.sub(" +", " ", out)  # the columns' widths depend on the other lines
    assert "\n app ConfigMap Optional: false\n" in words
    assert "\n creds Secret with prefix 'DB_' Optional: true\n" in words
    assert "\n PW: <set to the key 'pw' in secret 'creds'> Optional: false\n" in words
    assert "\n SecretName: creds\n" in words
