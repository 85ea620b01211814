"""ConfigMaps and Secrets through the real apiserver over a real etcd: CRUD, stringData,
immutability, the size limit and bad input (4xx Status, nothing stored)."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from minik8s.api import errors
from minik8s.client.rest import Client
from tests.support.processes import APIServer


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


async def _post(apiserver: APIServer, path: str, body: dict) -> httpx.Response:
    async with httpx.AsyncClient(base_url=apiserver.url) as h:
        return await h.post(path, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


async def test_config_map_crud(client: Client, namespace: str) -> None:
    rt = client.resource("cm")
    created = await client.create(rt, {"metadata": {"name": "app"}, "data": {"app.conf": "x=1\n"},
                                       "binaryData": {"blob": base64.b64encode(b"\x00\x01").decode()}}, namespace)
    meta = created["metadata"]
    assert created["kind"] == "ConfigMap" and meta["uid"] and meta["resourceVersion"] and "generation" not in meta
    assert await client.get(rt, "app", namespace) == created
    created["data"]["other"] = "y"
    updated = await client.update(rt, created)
    assert updated["data"] == {"app.conf": "x=1\n", "other": "y"}
    patched = await client.patch(rt, "app", {"data": {"other": None}}, namespace)
    assert patched["data"] == {"app.conf": "x=1\n"}
    listed = await client.list(rt, namespace)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["app"]
    await client.delete(rt, "app", namespace)
    with pytest.raises(errors.NotFound, match='configmaps "app" not found'):
        await client.get(rt, "app", namespace)


async def test_secret_string_data_is_merged_never_stored(client: Client, namespace: str) -> None:
    rt = client.resource("secrets")
    created = await client.create(rt, {"metadata": {"name": "s"}, "data": {"user": b64("old")},
                                       "stringData": {"user": "admin", "pass": "p@ss"}}, namespace)
    assert created["type"] == "Opaque" and "stringData" not in created
    assert created["data"] == {"user": b64("admin"), "pass": b64("p@ss")}
    got = await client.get(rt, "s", namespace)
    assert "stringData" not in got and got["data"] == created["data"]
    patched = await client.patch(rt, "s", {"stringData": {"pass": "new"}}, namespace)
    assert patched["data"]["pass"] == b64("new") and "stringData" not in patched
    typed = await client.list(rt, namespace, field_selector="type=Opaque")
    assert [i["metadata"]["name"] for i in typed["items"]] == ["s"]
    assert (await client.list(rt, namespace, field_selector="type=kubernetes.io/tls"))["items"] == []
    patched["type"] = "kubernetes.io/tls"
    with pytest.raises(errors.Invalid, match='type: Invalid value: "kubernetes.io/tls": field is immutable'):
        await client.update(rt, patched)


async def test_ssh_auth_secret_needs_its_key(client: Client, namespace: str) -> None:
    rt = client.resource("secrets")
    with pytest.raises(errors.Invalid, match=r"data\[ssh-privatekey\]: Required value") as exc:
        await client.create(rt, {"metadata": {"name": "ssh"}, "type": "kubernetes.io/ssh-auth"}, namespace)
    assert exc.value.details["causes"][0]["field"] == "data[ssh-privatekey]"
    ok = await client.create(rt, {"metadata": {"name": "ssh"}, "type": "kubernetes.io/ssh-auth",
                                  "stringData": {"ssh-privatekey": "-----BEGIN OPENSSH PRIVATE KEY-----\n"}},
                             namespace)
    assert ok["type"] == "kubernetes.io/ssh-auth"


@pytest.mark.parametrize("plural", ["configmaps", "secrets"])
async def test_immutable(client: Client, namespace: str, plural: str) -> None:
    rt = client.resource(plural)
    await client.create(rt, {"metadata": {"name": "frozen"}, "immutable": True,
                             "data": {"k": b64("v") if plural == "secrets" else "v"}}, namespace)
    obj = await client.patch(rt, "frozen", {"metadata": {"labels": {"a": "b"}}}, namespace)
    assert obj["metadata"]["labels"] == {"a": "b"}
    obj["data"]["k"] = b64("changed")
    with pytest.raises(errors.Invalid, match="data: Forbidden: field is immutable when `immutable` is set"):
        await client.update(rt, obj)
    with pytest.raises(errors.Invalid, match="immutable: Forbidden: field is immutable when `immutable` is set"):
        await client.patch(rt, "frozen", {"immutable": False}, namespace)
    stored = await client.get(rt, "frozen", namespace)
    assert stored["data"]["k"] == (b64("v") if plural == "secrets" else "v") and stored["immutable"] is True


@pytest.mark.parametrize(("plural", "body", "code", "field", "fragment"), [
    ("configmaps", {"data": {"bad/key": "x"}}, 422, "data[bad/key]", "a valid config key must consist of"),
    ("configmaps", {"data": {"..": "x"}}, 422, "data[..]", "must not be '..'"),
    ("configmaps", {"data": {"k": "x"}, "binaryData": {"k": "eA=="}}, 422, "data[k]",
     "duplicate of key present in binaryData"),
    ("configmaps", {"data": {"k": "x" * (1024 * 1024 + 1)}}, 422, "[]", "Too long: must have at most 1048576 bytes"),
    ("configmaps", {"data": {"k": 1}}, 422, "data.k", ""),
    ("configmaps", {"binaryData": {"k": "%%%"}}, 400, None, "illegal base64 data at input byte 0"),
    ("secrets", {"data": {"k": "not base64!"}}, 400, None,
     'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'),
    ("secrets", {"stringData": {"k": "x" * (1024 * 1024 + 1)}}, 422, "data",
     "Too long: must have at most 1048576 bytes"),
    ("secrets", {"stringData": {"a b": "x"}}, 422, "data[a b]", "a valid config key"),
    ("secrets", {"type": "kubernetes.io/tls", "stringData": {"tls.crt": "c"}}, 422, "data[tls.key]",
     "Required value"),
    ("secrets", {"type": "kubernetes.io/basic-auth"}, 422, "data[username]", "Required value"),
    ("secrets", {"metadata": {"name": "UPPER"}}, 422, "metadata.name", "RFC 1123 subdomain"),
])
async def test_bad_input_is_rejected_and_nothing_stored(apiserver: APIServer, client: Client, namespace: str,
                                                        plural: str, body: dict, code: int, field: str | None,
                                                        fragment: str) -> None:
    body = {"metadata": {"name": "bad"}, **body}
    r = await _post(apiserver, f"/api/v1/namespaces/{namespace}/{plural}", body)
    assert r.status_code == code, r.text
    status = r.json()
    assert status["kind"] == "Status" and status["code"] == code and fragment in status["message"]
    if field is not None:
        assert status["reason"] == "Invalid"
        assert any(c["field"] == field and fragment in c["message"] for c in status["details"]["causes"]), status
    else:
        assert status["reason"] == "BadRequest"
    assert (await client.list(client.resource(plural), namespace))["items"] == []


async def test_secret_values_survive_binary_round_trip(client: Client, namespace: str) -> None:
    raw = bytes(range(256))
    rt = client.resource("secret")
    await client.create(rt, {"metadata": {"name": "bin"}, "data": {"blob": base64.b64encode(raw).decode()}},
                        namespace)
    got = await client.get(rt, "bin", namespace)
    assert base64.b64decode(got["data"]["blob"]) == raw
