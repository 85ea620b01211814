"""Fixtures several integration modules share (helpers are in tests/support)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from minik8s.proxy.ipvs import ipvs_unavailable_reason
from tests.support.kubectl import Kubectl
from tests.support.kubelet import (
    LABEL_FLAGS,
    KubeletProcess,
    running_kubelet,
)
from tests.support.processes import APIServer
from tests.support.proxy import ProxyProcess, chains_with_prefix


@pytest.fixture(scope="module")
def kubelet(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeletProcess]:
    with running_kubelet(apiserver, tmp_path_factory.mktemp("kubelet"), extra=LABEL_FLAGS) as k:
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
