"""Fixtures several integration modules share (helpers are in tests/support)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from minik8s.proxy.ipvs import ipvs_unavailable_reason
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


@pytest.fixture(scope="module")
def proxy(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    mode = "auto" if ipvs_unavailable_reason() else "iptables"
    p = ProxyProcess(apiserver.url, tmp_path_factory.mktemp("proxy"), ["--proxy-mode", mode, "--sync-period", "10"])
    try:
        p.start()
        yield p
    finally:
        p.stop()
        p.cleanup()
        left = chains_with_prefix(p.prefix)
        assert not left, left
