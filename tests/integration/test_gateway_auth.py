"""``minik8s gateway --token-auth-file``: bearer tokens in the apiserver's file format, over real
HTTP to a gateway process on 127.0.0.1 (against a real apiserver and etcd), and the refusal to
listen off loopback without them.  The function autoscaler's scraper sends its token.  Pods'
service-account tokens (TokenRequest, audience ``minik8s-gateway``) are checked by TokenReview and
allowed their own namespace only; the gateway publishes itself as ``kube-system/minik8s-gateway``."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from minik8s.api import errors
from minik8s.client.rest import Client
from minik8s.cluster.processes import free_port
from minik8s.controllers.functionautoscaler import MetricsScraper
from tests.support.processes import APIServer, stop_process
from tests.support.waiting import wait_for, wait_for_sync

TOKEN = "s3cret-gateway-token"


def gateway_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "minik8s", "gateway", *args]


@contextlib.contextmanager
def running_gateway(kubeconfig: Path, tmp_path: Path, *extra: str) -> Iterator[str]:
    """A ``minik8s gateway`` process with a token file (and ``extra`` flags); yields its URL."""
    tokens = tmp_path / "gateway-tokens.csv"
    tokens.write_text(f'# the gateway\'s clients\n{TOKEN},fn-caller,uid-1,"callers,ops"\n')
    port = free_port()
    log = (tmp_path / "gateway.log").open("wb")
    proc = subprocess.Popen(gateway_argv("--kubeconfig", str(kubeconfig), "--port", str(port),
                                         "--token-auth-file", str(tokens), *extra),
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert proc.poll() is None, (tmp_path / "gateway.log").read_text()
        return httpx.get(url + "/healthz", timeout=1).status_code == 200

    try:
        wait_for_sync(healthy, 30, what="gateway listening", not_yet=(httpx.HTTPError,))
        yield url
    finally:
        stop_process(proc)
        log.close()


@pytest.fixture
def gateway(apiserver: APIServer, kubeconfig: Path, tmp_path: Path) -> Iterator[str]:
    with running_gateway(kubeconfig, tmp_path) as url:
        yield url


async def pod_token(client: Client, namespace: str, audience: str = "minik8s-gateway") -> str:
    """A token of a fresh ServiceAccount ``caller`` of ``namespace`` (TokenRequest) for ``audience``."""
    sa_rt = client.kind("v1", "ServiceAccount")
    with contextlib.suppress(errors.AlreadyExists):
        await client.create(sa_rt, {"metadata": {"name": "caller"}}, namespace)
    made = await client.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/caller/token",
                                body={"spec": {"audiences": [audience], "expirationSeconds": 600}})
    return str(made["status"]["token"])


async def test_pods_call_their_own_namespace_with_service_account_tokens(gateway: str, client: Client,
                                                                         namespace: str) -> None:
    token = await pod_token(client, namespace)
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=gateway, timeout=10) as h:
        # authenticated and allowed: the gateway's own answer for a Function that does not exist
        for path in (f"/functions/{namespace}/missing", f"/workflows/{namespace}/missing"):
            r = await h.post(path, headers=auth, json={})
            assert r.status_code == 404 and r.json()["error"] == "NotFound", (path, r.text)
        r = await h.post(f"/events/{namespace}", headers={**auth, "ce-id": "1", "ce-source": "t", "ce-type": "t",
                                                          "ce-specversion": "1.0"}, json={})
        assert r.status_code == 202, r.text
        # another namespace, and the operators' endpoints: 403 with a Status naming the account
        for method, path in (("POST", "/functions/default/missing"), ("POST", "/events/kube-system"),
                             ("GET", "/metrics")):
            r = await h.request(method, path, headers=auth, json={})
            assert r.status_code == 403, (path, r.text)
            body = r.json()
            assert body["reason"] == "Forbidden" and f"system:serviceaccount:{namespace}:caller" in body["message"]
        # a token for another audience (the apiserver's) is not accepted
        other = await pod_token(client, namespace, "https://kubernetes.default.svc.cluster.local")
        r = await h.post(f"/functions/{namespace}/missing", headers={"Authorization": f"Bearer {other}"}, json={})
        assert r.status_code == 401 and r.json()["reason"] == "Unauthorized", r.text


async def test_the_gateway_publishes_its_service(apiserver: APIServer, kubeconfig: Path, tmp_path: Path,
                                                 client: Client) -> None:
    svc_rt, ep_rt = client.kind("v1", "Service"), client.kind("v1", "Endpoints")
    with running_gateway(kubeconfig, tmp_path, "--advertise-address", "10.1.2.3") as url:
        port = int(url.rsplit(":", 1)[1])

        async def published() -> bool:
            ep = await client.get(ep_rt, "minik8s-gateway", "kube-system")
            return {"ip": "10.1.2.3"} in [a for s in ep.get("subsets") or [] for a in s.get("addresses") or []]

        await wait_for(published, 20, what="the gateway's Endpoints", not_yet=(errors.NotFound,))
        svc = await client.get(svc_rt, "minik8s-gateway", "kube-system")
        assert svc["spec"]["ports"] == [{"name": "http", "port": port, "targetPort": port, "protocol": "TCP"}]
        assert svc["spec"]["clusterIP"] and "selector" not in svc["spec"]
    ep = await client.get(ep_rt, "minik8s-gateway", "kube-system")  # withdrawn on the way out
    assert not [a for s in ep.get("subsets") or [] for a in s.get("addresses") or [] if a["ip"] == "10.1.2.3"]
    await client.delete(svc_rt, "minik8s-gateway", "kube-system")


def test_requests_need_a_known_bearer_token(gateway: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        for method, path in (("GET", "/metrics"), ("POST", "/functions/default/missing"),
                             ("POST", "/workflows/default/missing"), ("POST", "/events/default")):
            r = httpx.request(method, gateway + path, headers=headers, json={}, timeout=5)
            assert r.status_code == 401, (method, path, headers, r.text)
            body = r.json()
            assert body["kind"] == "Status" and body["reason"] == "Unauthorized" and body["code"] == 401
    auth = {"Authorization": f"Bearer {TOKEN}"}
    r = httpx.get(gateway + "/metrics", headers=auth, timeout=5)
    assert r.status_code == 200 and "startTime" in r.json()
    # Past authentication, the gateway's own answers: an unknown Function is 404.
    r = httpx.post(gateway + "/functions/default/missing", headers=auth, json={}, timeout=5)
    assert r.status_code == 404 and r.json()["error"] == "NotFound"
    # Health stays public (GET only).
    assert httpx.get(gateway + "/healthz", timeout=5).status_code == 200
    assert httpx.post(gateway + "/healthz", timeout=5).status_code == 401


async def test_the_autoscaler_scrapes_with_its_token(gateway: str) -> None:
    async with httpx.AsyncClient() as http:
        anonymous = MetricsScraper(gateway)
        await anonymous.scrape(http)
        assert not anonymous.ok and anonymous.sample("default/f") is None
        scraper = MetricsScraper(gateway, TOKEN)
        await scraper.scrape(http)
        assert scraper.ok and scraper.sample("default/f") == (0.0, None)


@pytest.mark.parametrize("address", ["0.0.0.0", "10.1.2.3", "::"])
def test_off_loopback_needs_a_token_file(address: str) -> None:
    r = subprocess.run(gateway_argv("--bind-address", address, "--port", "1"), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--token-auth-file" in lines[0] and address in lines[0], r.stderr


def test_unusable_token_files_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("# no tokens\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("only-a-token\n")
    for path, words in ((empty, "has no tokens"), (bad, "bad.csv:1"), (tmp_path / "missing.csv", "missing.csv")):
        r = subprocess.run(gateway_argv("--token-auth-file", str(path), "--port", "1"), capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and words in r.stderr, r.stderr
