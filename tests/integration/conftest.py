"""Fixtures several integration modules share (helpers are in tests/support)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from minik8s.client.rest import Client
from minik8s.proxy.ipvs import ipvs_unavailable_reason
from tests.support.kubectl import Kubectl
from tests.support.kubectl_parity import Runs
from tests.support.kubelet import (
    LABEL_FLAGS,
    KubeletProcess,
    running_kubelet,
)
from tests.support.processes import APIServer, Etcd, running_apiserver, running_etcd
from tests.support.proxy import ProxyProcess, chains_with_prefix


@pytest.fixture(scope="module")
def own_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Etcd]:
    """An etcd of the module's own (a module that restarts etcd, or that needs an apiserver of its own)."""
    with running_etcd(tmp_path_factory.mktemp("own-etcd")) as server:
        yield server


@pytest.fixture(scope="module")
def own_apiserver(own_etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    """An apiserver of the module's own, over :func:`own_etcd`: for tests of cluster-scoped objects
    (Nodes) that the session apiserver's other tests must not see."""
    with running_apiserver(own_etcd, tmp_path_factory.mktemp("own-apiserver")) as server:
        yield server


@pytest.fixture(scope="module")
def kubelet_flags() -> list[str]:
    """The extra flags of the module's :func:`kubelet`: node labels and a taint (test_kubelet checks
    them).  A module that wants other flags overrides this fixture."""
    return LABEL_FLAGS


@pytest.fixture(scope="module")
def kubelet(apiserver: APIServer, kubelet_flags: list[str],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeletProcess]:
    """A real ``minik8s kubelet`` process on Docker for the module (see :func:`running_kubelet`)."""
    with running_kubelet(apiserver, tmp_path_factory.mktemp("kubelet"), extra=kubelet_flags) as k:
        yield k


ROUTE_LOCALNET = "/proc/sys/net/ipv4/conf/all/route_localnet"


@pytest.fixture(scope="module")
def proxy(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    mode = "auto" if ipvs_unavailable_reason() else "iptables"
    p = ProxyProcess(apiserver.url, tmp_path_factory.mktemp("proxy"), ["--proxy-mode", mode, "--sync-period", "10"])
    localnet = Path(ROUTE_LOCALNET).read_text()  # the proxy sets it for localhost NodePorts, as kube-proxy
    try:
        p.start()
        yield p
    finally:
        p.stop()
        p.cleanup()
        Path(ROUTE_LOCALNET).write_text(localnet)  # leave this machine as it was
        left = chains_with_prefix(p.prefix)
        assert not left, left


@pytest.fixture
def kubectl(kubeconfig: Path, namespace: str) -> Kubectl:
    """minik8s' own kubectl against the test apiserver, in the test's namespace."""
    return Kubectl(kubeconfig, namespace)


@pytest.fixture(scope="module")
def runs() -> Iterator[Runs]:
    """A kubectl differential module's runner (:class:`tests.support.kubectl_parity.Runs`: 4 at a time;
    minik8s' invocations that change nothing run once each)."""
    runner = Runs(4)
    try:
        yield runner
    finally:
        runner.close()


@pytest.fixture
async def nodes(client: Client, namespace: str) -> AsyncIterator[list[str]]:
    """Two Node objects with names unique to the test (nodes are cluster-scoped), deleted afterwards."""
    rt = client.kind("v1", "Node")
    names = [f"{namespace}-n1", f"{namespace}-n2"]
    for name in names:
        await client.create(rt, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    yield names
    for name in names:
        await client.delete(rt, name)
