"""Encryption at rest against a real etcd: ``minik8s apiserver --encryption-provider-config``.

The raw etcd values are read with the ``etcdctl`` binary, as an operator checks it on a cluster.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.cluster.processes import wait_http
from tests.support.processes import APIServer, Etcd

KEY1 = base64.b64encode(b"1" * 32).decode()
KEY2 = base64.b64encode(b"2" * 32).decode()
PASSWORD = base64.b64encode(b"hunter2-at-rest").decode()


def write_config(path: Path, *providers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({
        "apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
        "resources": [{"resources": ["secrets"], "providers": list(providers)}]}))
    return path


def aesgcm(name: str, secret: str) -> dict[str, Any]:
    return {"aesgcm": {"keys": [{"name": name, "secret": secret}]}}


def secretbox(name: str, secret: str) -> dict[str, Any]:
    return {"secretbox": {"keys": [{"name": name, "secret": secret}]}}


@contextmanager
def encrypted_apiserver(etcd: Etcd, tmp_path: Path, config: Path) -> Iterator[APIServer]:
    server = APIServer(etcd, tmp_path, extra=["--encryption-provider-config", str(config)])
    try:
        wait_http(f"{server.url}/readyz")
        yield server
    finally:
        server.stop()


def raw(etcd: Etcd, key: str) -> bytes:
    """The value stored at ``key``, as ``etcdctl get`` reads it (bytes; b"" when absent)."""
    if not shutil.which("etcdctl"):
        pytest.skip("etcdctl is not installed (apt-get install etcd-client)")
    out = subprocess.run(["etcdctl", "--endpoints", etcd.endpoint, "get", key, "-w", "json"],
                         check=True, capture_output=True, env={**os.environ, "ETCDCTL_API": "3"}, timeout=10)
    kvs = json.loads(out.stdout).get("kvs") or []
    return base64.b64decode(kvs[0]["value"]) if kvs else b""


def secret(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"password": PASSWORD}}


async def test_secrets_are_ciphertext_in_etcd_and_plain_through_the_api(etcd: Etcd, tmp_path: Path) -> None:
    config = write_config(tmp_path / "enc.yaml", aesgcm("key1", KEY1), {"identity": {}})
    ns = f"enc-{os.urandom(3).hex()}"
    with encrypted_apiserver(etcd, tmp_path, config) as server:
        async with Client(ClientConfig(server=server.url)) as c:
            secrets, cms = c.kind("v1", "Secret"), c.kind("v1", "ConfigMap")
            await c.create(c.kind("v1", "Namespace"), {"metadata": {"name": ns}})
            listed = await c.list(secrets, ns)
            events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

            async def watch() -> None:
                async for ev in c.watch(secrets, ns, resource_version=listed["metadata"]["resourceVersion"],
                                        allow_bookmarks=False):
                    await events.put(ev)

            watcher = asyncio.create_task(watch())
            try:
                created = await c.create(secrets, secret("db"), ns)
                await c.create(cms, {"metadata": {"name": "settings"}, "data": {"mode": "plain-visible"}}, ns)

                stored = raw(etcd, f"/registry/secrets/{ns}/db")
                assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:"), stored[:40]
                assert PASSWORD.encode() not in stored and b'"db"' not in stored
                assert json.loads(raw(etcd, f"/registry/configmaps/{ns}/settings"))["data"] == {"mode": "plain-visible"}

                got = await c.get(secrets, "db", ns)
                assert got["data"] == {"password": PASSWORD}
                assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
                assert [i["data"] for i in (await c.list(secrets, ns))["items"]] == [{"password": PASSWORD}]
                ev = await asyncio.wait_for(events.get(), 10)
                assert ev["type"] == "ADDED" and ev["object"]["data"] == {"password": PASSWORD}

                got["data"]["user"] = base64.b64encode(b"admin").decode()
                await c.update(secrets, got)
                ev = await asyncio.wait_for(events.get(), 10)
                assert ev["type"] == "MODIFIED" and ev["object"]["data"]["user"] == got["data"]["user"]
                assert raw(etcd, f"/registry/secrets/{ns}/db").startswith(b"k8s:enc:aesgcm:v1:key1:")
                await c.delete(secrets, "db", ns)
                ev = await asyncio.wait_for(events.get(), 10)
                assert ev["type"] == "DELETED" and ev["object"]["data"]["password"] == PASSWORD
            finally:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)


async def test_key_rotation_and_unreadable_values(etcd: Etcd, tmp_path: Path) -> None:
    """Add a new key first: old values still read, rewrites use the new key; drop the old key and its
    values answer InternalError (get, list, and an ERROR event on watch), as kube-apiserver does."""
    ns = f"rot-{os.urandom(3).hex()}"
    old = write_config(tmp_path / "old.yaml", aesgcm("key1", KEY1))
    with encrypted_apiserver(etcd, tmp_path, old) as server:
        async with Client(ClientConfig(server=server.url)) as c:
            secrets = c.kind("v1", "Secret")
            await c.create(c.kind("v1", "Namespace"), {"metadata": {"name": ns}})
            await c.create(secrets, secret("rewritten"), ns)
            before = await c.create(secrets, secret("left-alone"), ns)
    assert raw(etcd, f"/registry/secrets/{ns}/left-alone").startswith(b"k8s:enc:aesgcm:v1:key1:")

    both = write_config(tmp_path / "both.yaml", secretbox("key2", KEY2), aesgcm("key1", KEY1))
    with encrypted_apiserver(etcd, tmp_path, both) as server:
        async with Client(ClientConfig(server=server.url)) as c:
            secrets = c.kind("v1", "Secret")
            assert (await c.get(secrets, "left-alone", ns))["data"] == {"password": PASSWORD}
            obj = await c.get(secrets, "rewritten", ns)
            obj["metadata"].setdefault("labels", {})["rotated"] = "yes"
            await c.update(secrets, obj)  # any write re-encrypts with the first key
            assert raw(etcd, f"/registry/secrets/{ns}/rewritten").startswith(b"k8s:enc:secretbox:v1:key2:")
            assert sorted(i["metadata"]["name"] for i in (await c.list(secrets, ns))["items"]) == \
                ["left-alone", "rewritten"]

    new_only = write_config(tmp_path / "new.yaml", secretbox("key2", KEY2))
    with encrypted_apiserver(etcd, tmp_path, new_only) as server:
        async with Client(ClientConfig(server=server.url)) as c:
            secrets = c.kind("v1", "Secret")
            assert (await c.get(secrets, "rewritten", ns))["metadata"]["labels"] == {"rotated": "yes"}
            with pytest.raises(errors.InternalError) as info:
                await c.get(secrets, "left-alone", ns)
            assert f'unable to transform key "/registry/secrets/{ns}/left-alone"' in info.value.message
            assert "no matching prefix found" in info.value.message
            with pytest.raises(errors.InternalError, match="left-alone"):
                await c.list(secrets, ns)
            # a watch that replays the unreadable value ends with an ERROR event carrying the Status
            rv = str(int(before["metadata"]["resourceVersion"]) - 1)
            stream = c.watch(secrets, ns, resource_version=rv, allow_bookmarks=False)
            ev = await asyncio.wait_for(stream.__anext__(), 10)
            assert ev["type"] == "ERROR" and ev["object"]["code"] == 500, ev
            assert ev["object"]["reason"] == "InternalError" and "left-alone" in ev["object"]["message"]
            await stream.aclose()  # type: ignore[attr-defined]
    # clean up with the key that reads everything (deleting needs the last state)
    with encrypted_apiserver(etcd, tmp_path, both) as server:
        async with Client(ClientConfig(server=server.url)) as c:
            await c.delete(c.kind("v1", "Namespace"), ns)


@pytest.mark.parametrize(("config", "expected"), [
    ({"kind": "EncryptionConfig"}, 'kind: Unsupported value: "EncryptionConfig"'),
    ({"resources": [{"resources": ["secrets"], "providers": [{"aescbc": {"keys": []}}]}]},
     'resources[0].providers[0]: Unsupported value: "aescbc"'),
    ({"resources": [{"resources": ["secrets"], "providers": [aesgcm("k", base64.b64encode(b"x" * 10).decode())]}]},
     "secret is not of the expected length, got 10"),
    ({"resources": [{"resources": ["secrets"], "providers": [secretbox("k", "%%not-base64%%")]}]},
     "secrets must be base64 encoded"),
])
def test_bad_config_exits_with_one_clear_line(config: dict[str, Any], expected: str, etcd: Etcd,
                                              tmp_path: Path) -> None:
    doc = {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration", **config}
    path = tmp_path / "enc.json"
    path.write_text(json.dumps(doc))
    server = APIServer(etcd, tmp_path, extra=["--encryption-provider-config", str(path)])
    assert server.proc is not None
    deadline = time.monotonic() + 20
    while server.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    code = server.proc.poll()
    server.stop()
    log = server.log_path.read_text()
    assert code == 1, log
    lines = [line for line in log.splitlines() if " ERROR " in line]
    assert len(lines) == 1 and expected in lines[0] and str(path) in lines[0], log
    assert "Traceback" not in log, log
