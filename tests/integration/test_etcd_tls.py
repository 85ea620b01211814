"""The apiserver over an etcd that serves clients over TLS and requires client certificates.

A real etcd (Debian's etcd-server) listens on ``https://127.0.0.1:<free port>`` with
``--cert-file --key-file --trusted-ca-file --client-cert-auth``; certificates come from a
throwaway CA (:mod:`tests.support.pki`).  An apiserver with kube-apiserver's ``--etcd-cafile
--etcd-certfile --etcd-keyfile`` serves create/get/list/watch from it; with a missing or
untrusted client certificate, or distrusting etcd's CA, it exits at start with one clear
log line instead of serving errors forever.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.cluster.processes import etcd_command, free_port
from tests.support.pki import CA, KeyPair
from tests.support.processes import APIServer, Etcd, wait_http


class PKI:
    def __init__(self, directory: Path) -> None:
        self.ca = CA(directory / "ca", "etcd-ca")
        self.server = self.ca.issue("etcd-server", "etcd", server=True)
        self.client = self.ca.issue("apiserver-etcd-client", "kube-apiserver-etcd-client")
        self.rogue_ca = CA(directory / "rogue", "rogue-ca")
        self.rogue = self.rogue_ca.issue("rogue", "kube-apiserver-etcd-client")


class TLSEtcd(Etcd):
    """A throwaway etcd whose client URL is https, with ``--client-cert-auth`` (peers stay on plain loopback)."""

    def __init__(self, data_dir: Path, pki: PKI) -> None:  # replaces Etcd's start
        if not shutil.which("etcd"):
            pytest.skip("etcd is not installed (apt-get install etcd-server)")
        self.port = free_port()
        plain = f"http://127.0.0.1:{self.port}"
        self.endpoint = plain.replace("http://", "https://")
        self.log = open(data_dir / "etcd.log", "wb")  # noqa: SIM115
        argv = [self.endpoint if arg == plain else arg
                for arg in etcd_command(data_dir / "data", self.port, free_port(), name="tls")]
        argv += ["--cert-file", str(pki.server.cert), "--key-file", str(pki.server.key),
                 "--trusted-ca-file", str(pki.ca.cert), "--client-cert-auth"]
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        wait_http(f"{self.endpoint}/health", verify=pki.ca.client_context(pki.client))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return PKI(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tls_etcd(pki: PKI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TLSEtcd]:
    server = TLSEtcd(tmp_path_factory.mktemp("etcd-tls"), pki)
    yield server
    server.stop()


def etcd_flags(ca: Path | None, client: KeyPair | None) -> list[str]:
    flags = ["--etcd-cafile", str(ca)] if ca else []
    if client is not None:
        flags += ["--etcd-certfile", str(client.cert), "--etcd-keyfile", str(client.key)]
    return flags


@pytest.fixture(scope="module")
def tls_apiserver(tls_etcd: TLSEtcd, pki: PKI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    server = APIServer(tls_etcd, tmp_path_factory.mktemp("apiserver"), extra=etcd_flags(pki.ca.cert, pki.client))
    wait_http(f"{server.url}/readyz")
    yield server
    server.stop()


async def test_create_get_list_watch_over_tls_etcd(tls_apiserver: APIServer) -> None:
    async with Client(ClientConfig(server=tls_apiserver.url)) as c:
        pods = c.kind("v1", "Pod")
        listed = await c.list(pods, "default")
        events: asyncio.Queue[dict[str, object]] = asyncio.Queue()

        async def watch() -> None:
            async for ev in c.watch(pods, "default", resource_version=listed["metadata"]["resourceVersion"],
                                    allow_bookmarks=False):
                await events.put(ev)

        watcher = asyncio.create_task(watch())
        try:
            body = {"metadata": {"name": "over-tls", "labels": {"via": "tls"}},
                    "spec": {"containers": [{"name": "c", "image": "minik8s/busybox:latest"}]}}
            created = await c.create(pods, body, "default")
            assert (await c.get(pods, "over-tls", "default"))["metadata"]["labels"] == {"via": "tls"}
            assert "over-tls" in {i["metadata"]["name"] for i in (await c.list(pods, "default"))["items"]}
            ev = await asyncio.wait_for(events.get(), 10)
            assert ev["type"] == "ADDED"
            assert ev["object"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]  # type: ignore[index]
            await c.delete(pods, "over-tls", "default", grace_period_seconds=0)
            ev = await asyncio.wait_for(events.get(), 10)
            assert ev["type"] == "DELETED"
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)


def _exits(server: APIServer, timeout: float = 20.0) -> tuple[int | None, str]:
    assert server.proc is not None
    deadline = time.monotonic() + timeout
    while server.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    code = server.proc.poll()
    server.stop()
    return code, server.log_path.read_text()


@pytest.mark.parametrize("case, expected", [
    ("no client certificate", "etcd refused the TLS connection"),
    ("client certificate of another CA", "etcd refused the TLS connection"),
    ("etcd's CA not trusted", "etcd's serving certificate does not verify"),
])
def test_apiserver_exits_with_one_clear_line_when_etcd_refuses_tls(
        case: str, expected: str, tls_etcd: TLSEtcd, pki: PKI, tmp_path: Path) -> None:
    flags = {"no client certificate": etcd_flags(pki.ca.cert, None),
             "client certificate of another CA": etcd_flags(pki.ca.cert, pki.rogue),
             "etcd's CA not trusted": etcd_flags(pki.rogue_ca.cert, pki.client)}[case]
    code, log = _exits(APIServer(tls_etcd, tmp_path, extra=flags))
    assert code == 1, log
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and expected in errors[0] and tls_etcd.endpoint in errors[0], log
    assert "--etcd-certfile" in errors[0] and "Traceback" not in log, log


def test_tls_files_with_a_plain_etcd_url_are_refused(etcd: Etcd, pki: PKI, tmp_path: Path) -> None:
    code, log = _exits(APIServer(etcd, tmp_path, extra=etcd_flags(pki.ca.cert, pki.client)))
    assert code == 1 and "need an https:// --etcd-servers URL" in log, log


def test_unreachable_tls_etcd_is_reported_not_fatal(pki: PKI, tmp_path: Path) -> None:
    """etcd not up yet (a closed port): the apiserver serves, ``/readyz`` answers 503, as with plain etcd."""

    class Closed:
        endpoint = f"https://127.0.0.1:{free_port()}"

    server = APIServer(Closed(), tmp_path, extra=etcd_flags(pki.ca.cert, pki.client))  # type: ignore[arg-type]
    try:
        wait_http(f"{server.url}/healthz")
        assert httpx.get(f"{server.url}/readyz", timeout=5).status_code == 503
        assert server.proc is not None and server.proc.poll() is None
        assert "is not reachable yet" in server.log_path.read_text()
    finally:
        server.stop()
