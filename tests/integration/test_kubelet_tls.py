"""The kubelet's server over TLS with client-certificate authentication, and the apiserver reaching it.

A throwaway CA (:mod:`tests.support.pki`) signs the kubelet's serving certificate and the client
certificates: ``kube-apiserver-kubelet-client`` (the apiserver's, as kubeadm names it), an
admin in ``system:masters``, and another node ``system:node:other`` in ``system:nodes``; a
second CA signs a rogue certificate.  One real kubelet process runs with
``--tls-cert-file --tls-private-key-file --client-ca-file``, registered with a real apiserver
started with ``--kubelet-client-certificate --kubelet-client-key
--kubelet-certificate-authority``; a real busybox pod on Docker serves ``pods/log`` and
``pods/exec`` through it, and the metrics scraper reads ``/stats/summary`` over TLS.
Traffic goes only to 127.0.0.1.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets

from minik8s.client.rest import Client
from minik8s.serving.http import MAX_HEAD_BYTES
from tests.support.hostile import oversized_head
from tests.support.kubelet import KubeletProcess, create_pod, exec_ws, pod_body, pod_log, running_kubelet, wait_phase
from tests.support.pki import CA, KeyPair
from tests.support.processes import APIServer, Etcd, wait_http
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker

BUSYBOX = "minik8s/busybox:latest"


class PKI:
    """The module's certificates (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.ca = CA(directory / "ca")
        self.kubelet = self.ca.issue("kubelet", "system:node:kubelet-tls", ("system:nodes",), server=True)
        self.apiserver = self.ca.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client")
        self.admin = self.ca.issue("admin", "admin", ("system:masters",))
        self.other_node = self.ca.issue("other-node", "system:node:other", ("system:nodes",))
        self.rogue_ca = CA(directory / "rogue", "rogue-ca")
        self.rogue = self.rogue_ca.issue("rogue", "kube-apiserver-kubelet-client")

    def ctx(self, pair: KeyPair | None = None) -> ssl.SSLContext:
        return self.ca.client_context(pair)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return PKI(tmp_path_factory.mktemp("pki"))


def kubelet_client_flags(pki: PKI, ca: Path | None = None, cert: KeyPair | None = None) -> list[str]:
    flags = ["--kubelet-certificate-authority", str(ca or pki.ca.cert)]
    if cert is not None:
        flags += ["--kubelet-client-certificate", str(cert.cert), "--kubelet-client-key", str(cert.key)]
    return flags


def start_apiserver(etcd: Etcd, log_dir: Path, flags: list[str]) -> APIServer:
    server = APIServer(etcd, log_dir, extra=[*flags, "--metrics-resolution", "1s"])
    wait_http(f"{server.url}/readyz")
    return server


@pytest.fixture(scope="module")
def apiserver(etcd: Etcd, pki: PKI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    """This module's apiserver: reaches kubelets over TLS with its kubelet client certificate."""
    server = start_apiserver(etcd, tmp_path_factory.mktemp("apiserver"), kubelet_client_flags(pki, cert=pki.apiserver))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def kubelet(apiserver: APIServer, pki: PKI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeletProcess]:
    with running_kubelet(apiserver, tmp_path_factory.mktemp("kubelet"), tls=pki.ctx(pki.apiserver), extra=[
            "--tls-cert-file", str(pki.kubelet.cert), "--tls-private-key-file", str(pki.kubelet.key),
            "--client-ca-file", str(pki.ca.cert)]) as k:
        yield k


async def _get(kubelet: KubeletProcess, path: str, ctx: ssl.SSLContext) -> httpx.Response:
    async with httpx.AsyncClient(verify=ctx, timeout=10) as http:
        return await http.get(kubelet.url + path)


async def test_kubelet_server_requires_an_authorized_client_certificate(kubelet: KubeletProcess, pki: PKI) -> None:
    for path in ("/healthz", "/pods", "/stats/summary", "/containerLogs/default/x/y"):
        anonymous = await _get(kubelet, path, pki.ctx())
        assert (anonymous.status_code, anonymous.text) == (401, "Unauthorized"), path
    other = await _get(kubelet, "/pods", pki.ctx(pki.other_node))
    assert other.status_code == 403
    assert other.text == "Forbidden (user=system:node:other, verb=get, resource=nodes, subresource=pods)"
    stats = await _get(kubelet, "/stats/summary", pki.ctx(pki.other_node))
    assert stats.status_code == 403 and "subresource=stats" in stats.text

    for allowed in (pki.apiserver, pki.admin):
        health = await _get(kubelet, "/healthz", pki.ctx(allowed))
        assert (health.status_code, health.text) == (200, "ok")
        pods = await _get(kubelet, "/pods", pki.ctx(allowed))
        assert pods.status_code == 200 and pods.json()["kind"] == "PodList"

    try:  # a certificate from another CA: the handshake fails, or it counts as no certificate
        rogue = await _get(kubelet, "/healthz", pki.ctx(pki.rogue))
        assert rogue.status_code == 401
    except httpx.HTTPError:
        pass
    with pytest.raises(httpx.HTTPError):  # no plain HTTP on the TLS port
        httpx.get(kubelet.url.replace("https", "http") + "/healthz", timeout=2)
    # request heads are bounded before authentication (minik8s.serving.http), as on every listener
    too_large = await oversized_head("127.0.0.1", kubelet.port, 4 * MAX_HEAD_BYTES, ssl_context=pki.ctx())
    assert too_large == b"HTTP/1.1 431 Request Header Fields Too Large"


async def test_kubelet_exec_websocket_requires_an_authorized_client_certificate(kubelet: KubeletProcess,
                                                                                pki: PKI) -> None:
    url = kubelet.url.replace("https", "wss") + "/exec/default/nope/c?command=true&stdout=true"
    for pair, code in ((None, 401), (pki.other_node, 403)):
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(url, ssl=pki.ctx(pair), subprotocols=["v5.channel.k8s.io"]):  # type: ignore[list-item]
                pass
        assert refused.value.response.status_code == code
    async with websockets.connect(url, ssl=pki.ctx(pki.apiserver),
                                  subprotocols=["v5.channel.k8s.io"]) as ws:  # type: ignore[list-item]
        frame = await ws.recv()
        assert isinstance(frame, bytes) and frame[0] == 3
        assert json.loads(frame[1:])["reason"] == "NotFound"


async def test_logs_exec_and_metrics_through_the_apiserver(kubelet: KubeletProcess, apiserver: APIServer,
                                                           client: Client, namespace: str) -> None:
    await create_pod(client, namespace, pod_body("talker", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": ["sh", "-c", "echo hello-over-tls; exec sleep 600"]}]))
    await wait_phase(client, namespace, "talker", "Running", 60)

    async def logged() -> bool:
        return "hello-over-tls" in await pod_log(apiserver, namespace, "talker")

    await wait_for(logged, 15, what="the pod's log through the apiserver")
    out, _, status = await exec_ws(apiserver, namespace, "talker", "main", ["sh", "-c", "echo $((6*7))"])
    assert (out, status["status"]) == (b"42\n", "Success")

    async def node_metrics() -> bool:
        async with httpx.AsyncClient(base_url=apiserver.url, timeout=5) as http:
            resp = await http.get(f"/apis/metrics.k8s.io/v1beta1/nodes/{kubelet.node}")
            return resp.status_code == 200

    await wait_for(node_metrics, 20, what="NodeMetrics scraped over TLS")


async def test_apiserver_verifies_the_kubelet_and_relays_its_refusal(kubelet: KubeletProcess, etcd: Etcd, pki: PKI,
                                                                     client: Client, namespace: str,
                                                                     tmp_path: Path) -> None:
    """An apiserver that does not trust the kubelet's CA does not talk to it (503); one without a
    client certificate is refused by the kubelet, and relays the 401."""
    await create_pod(client, namespace, pod_body("quiet", kubelet.node, [
        {"name": "main", "image": BUSYBOX, "command": ["sleep", "600"]}]))
    await wait_phase(client, namespace, "quiet", "Running", 60)
    distrustful = start_apiserver(etcd, tmp_path, kubelet_client_flags(pki, pki.rogue_ca.cert, pki.apiserver))
    anonymous = start_apiserver(etcd, tmp_path, kubelet_client_flags(pki))
    try:
        text = await pod_log(distrustful, namespace, "quiet")
        assert text.startswith("503 ") and "CERTIFICATE_VERIFY_FAILED" in text, text
        _, _, status = await exec_ws(distrustful, namespace, "quiet", "main", ["true"])
        assert status["code"] == 503 and "CERTIFICATE_VERIFY_FAILED" in status["message"], status

        text = await pod_log(anonymous, namespace, "quiet")
        assert text.startswith("401 ") and "Unauthorized" in text, text
        _, _, status = await exec_ws(anonymous, namespace, "quiet", "main", ["true"])
        assert status["code"] == 401 and "did not accept the apiserver's credentials" in status["message"], status
    finally:
        distrustful.stop()
        anonymous.stop()
