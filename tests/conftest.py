"""Shared fixtures: a real etcd and a real apiserver process, on free ports in temp dirs; and the
session's one whole local cluster (``minik8s up``), shared by ``tests/e2e`` and ``tests/conformance``."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from minik8s.client.kubeconfig import ClientConfig, render
from minik8s.client.rest import Client
from tests.support.cluster import Cluster, running_cluster
from tests.support.processes import APIServer, Etcd, running_apiserver, running_etcd


@pytest.fixture(scope="session")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Etcd]:
    with running_etcd(tmp_path_factory.mktemp("etcd")) as server:
        yield server


@pytest.fixture(scope="session")
def apiserver(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    with running_apiserver(etcd, tmp_path_factory.mktemp("apiserver")) as server:
        yield server


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One whole local cluster for the session (:func:`tests.support.cluster.running_cluster`), started
    by the first test that needs it; ``tests/e2e`` and ``tests/conformance`` share it."""
    with running_cluster(tmp_path_factory) as c:
        yield c


@pytest.fixture
async def client(apiserver: APIServer) -> AsyncIterator[Client]:
    async with Client(ClientConfig(server=apiserver.url)) as c:
        yield c


@pytest.fixture
async def namespace(client: Client) -> AsyncIterator[str]:
    """A fresh namespace per test, deleted afterwards."""
    name = f"t-{os.urandom(4).hex()}"
    ns_rt = client.kind("v1", "Namespace")
    await client.create(ns_rt, {"metadata": {"name": name}})
    yield name
    try:
        await client.delete(ns_rt, name)
    except Exception:  # noqa: BLE001
        pass


@pytest.fixture
def kubeconfig(apiserver: APIServer, tmp_path: Path) -> Path:
    """A kubeconfig file for the test apiserver (plain HTTP, no credentials)."""
    path = tmp_path / "kubeconfig"
    path.write_text(render(apiserver.url))
    return path
