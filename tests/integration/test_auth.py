"""TLS serving, bearer tokens and client certificates, like kube-apiserver's flags."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import httpx
import pytest

from minik8s.api import errors
from minik8s.client.kubeconfig import load, render
from minik8s.client.rest import Client
from minik8s.serving.http import HEADER_TIMEOUT, MAX_HEAD_BYTES
from tests.support.hostile import oversized_head, trickled_head
from tests.support.processes import APIServer, Etcd, wait_http


def _ctx(pki: Path, cert: str | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    if cert:
        ctx.load_cert_chain(str(pki / f"{cert}.crt"), str(pki / f"{cert}.key"))
    return ctx


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "ca.key"), "-out",
             str(d / "ca.crt"), "-days", "1", "-subj", "/CN=minik8s-test-ca")
    for name, subj, ext in [("server", "/CN=apiserver", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
                            ("admin", "/O=system:masters/CN=admin", "extendedKeyUsage=clientAuth"),
                            ("rogue", "/CN=rogue", "extendedKeyUsage=clientAuth"),
                            ("nameless", "/O=dev", "extendedKeyUsage=clientAuth")]:
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / f"{name}.key"), "-out",
                 str(d / f"{name}.csr"), "-subj", subj)
        ca = "rogue-ca" if name == "rogue" else "ca"
        if name == "rogue":
            _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "rogue-ca.key"), "-out",
                     str(d / "rogue-ca.crt"), "-days", "1", "-subj", "/CN=rogue-ca")
        (d / f"{name}.ext").write_text(ext + "\n")
        _openssl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / f"{ca}.crt"), "-CAkey",
                 str(d / f"{ca}.key"), "-CAcreateserial", "-out", str(d / f"{name}.crt"), "-days", "1",
                 "-extfile", str(d / f"{name}.ext"))
    (d / "tokens.csv").write_text('s3cret-token,alice,1001,"system:masters,dev"\n')
    return d


@pytest.fixture(scope="module")
def secure_apiserver(etcd: Etcd, pki: Path, tmp_path_factory: pytest.TempPathFactory) -> APIServer:
    server = APIServer(etcd, tmp_path_factory.mktemp("secure"), scheme="https", extra=[
        "--tls-cert-file", str(pki / "server.crt"), "--tls-private-key-file", str(pki / "server.key"),
        "--client-ca-file", str(pki / "ca.crt"), "--token-auth-file", str(pki / "tokens.csv")])
    wait_http(f"{server.url}/readyz", headers={"Authorization": "Bearer s3cret-token"},
              verify=_ctx(pki))
    yield server
    server.stop()


def test_unauthenticated_gets_401_and_nothing_else(secure_apiserver: APIServer, pki: Path) -> None:
    ca = _ctx(pki)
    for path in ("/api/v1/namespaces", "/api/v1/namespaces/default/pods", "/api", "/versions", "/healthzz"):
        r = httpx.get(secure_apiserver.url + path, verify=ca)
        assert r.status_code == 401 and r.json()["reason"] == "Unauthorized", path
    r = httpx.delete(secure_apiserver.url + "/healthz", verify=ca)
    assert r.status_code == 401
    r = httpx.get(secure_apiserver.url + "/api/v1/namespaces", verify=ca, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401
    with pytest.raises(httpx.HTTPError):  # plain HTTP is not served
        httpx.get(secure_apiserver.url.replace("https", "http") + "/api", timeout=2)


def test_health_and_version_are_public(secure_apiserver: APIServer, pki: Path) -> None:
    """kube-apiserver's system:public-info-viewer: anyone may read health and version."""
    ca = _ctx(pki)
    for path in ("/healthz", "/livez", "/readyz"):
        r = httpx.get(secure_apiserver.url + path, verify=ca)
        assert r.status_code == 200 and r.text == "ok", path
    assert httpx.get(secure_apiserver.url + "/version", verify=ca).json()["major"] == "1"


def test_failed_credentials_are_refused_on_public_paths_too(secure_apiserver: APIServer, pki: Path) -> None:
    """Anonymous access is for requests without credentials: a wrong bearer token or a certificate that
    names nobody gets 401 even where anyone may read (kube-apiserver's anonymous authenticator runs only
    when no other authenticator saw credentials)."""
    ca = _ctx(pki)
    for path in ("/version", "/healthz", "/livez", "/readyz"):
        r = httpx.get(secure_apiserver.url + path, verify=ca, headers={"Authorization": "Bearer wrong-token"})
        assert r.status_code == 401 and r.json()["reason"] == "Unauthorized", path
        r = httpx.get(secure_apiserver.url + path, verify=_ctx(pki, "nameless"))
        assert r.status_code == 401, path
        # the right token and no credentials at all still read them
        r = httpx.get(secure_apiserver.url + path, verify=ca, headers={"Authorization": "Bearer s3cret-token"})
        assert r.status_code == 200, path
        assert httpx.get(secure_apiserver.url + path, verify=ca).status_code == 200, path


async def test_tls_listener_bounds_request_heads(secure_apiserver: APIServer, pki: Path) -> None:
    """Before any authentication: an oversized head gets 431, a trickled one is closed at the deadline."""
    host, port = "127.0.0.1", secure_apiserver.port
    too_large = await oversized_head(host, port, 4 * MAX_HEAD_BYTES, ssl_context=_ctx(pki))
    assert too_large == b"HTTP/1.1 431 Request Header Fields Too Large"
    closed_after = await trickled_head(host, port, HEADER_TIMEOUT + 5, ssl_context=_ctx(pki))
    assert closed_after is not None and closed_after < HEADER_TIMEOUT + 3


def test_bearer_token(secure_apiserver: APIServer, pki: Path) -> None:
    r = httpx.get(secure_apiserver.url + "/api/v1/namespaces", verify=_ctx(pki),
                  headers={"Authorization": "Bearer s3cret-token"})
    assert r.status_code == 200 and r.json()["kind"] == "NamespaceList"


def test_client_certificate(secure_apiserver: APIServer, pki: Path) -> None:
    r = httpx.get(secure_apiserver.url + "/api/v1/namespaces", verify=_ctx(pki, "admin"))
    assert r.status_code == 200
    # a certificate from another CA fails the TLS handshake or is rejected
    try:
        r = httpx.get(secure_apiserver.url + "/api/v1/namespaces", verify=_ctx(pki, "rogue"))
        assert r.status_code == 401
    except httpx.HTTPError:
        pass


async def test_kubeconfig_with_certificates(secure_apiserver: APIServer, pki: Path, tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(render(secure_apiserver.url, ca_file=str(pki / "ca.crt"), cert_file=str(pki / "admin.crt"),
                           key_file=str(pki / "admin.key")))
    async with Client(load(str(path))) as c:
        ns = await c.list(c.kind("v1", "Namespace"))
        assert ns["items"]
    path.write_text(render(secure_apiserver.url, ca_file=str(pki / "ca.crt")))
    async with Client(load(str(path)), retries=0) as c:
        with pytest.raises(errors.Unauthorized):
            await c.list(c.kind("v1", "Namespace"))


async def test_websocket_exec_authenticates_with_client_certificate(secure_apiserver: APIServer, pki: Path) -> None:
    """WebSocket upgrades (pods/exec) see the client certificate too: an authenticated client reaches
    the handler (here: a NotFound Status on the error channel), an anonymous one is refused."""
    import json

    import websockets

    url = secure_apiserver.url.replace("https", "wss") + "/api/v1/namespaces/default/pods/nope/exec?command=true"
    async with websockets.connect(url, ssl=_ctx(pki, "admin"), subprotocols=["v5.channel.k8s.io"]) as ws:
        frame = await ws.recv()
        assert isinstance(frame, bytes) and frame[0] == 3
        assert json.loads(frame[1:])["reason"] == "NotFound"
    with pytest.raises(Exception):  # noqa: B017 - refused handshake or immediate close
        async with websockets.connect(url, ssl=_ctx(pki), subprotocols=["v5.channel.k8s.io"]) as ws:
            await ws.recv()
