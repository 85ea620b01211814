"""``v1`` ComponentStatus against a real apiserver and etcd: probed at each read, as kube-apiserver.

etcd is the test's real etcd; the scheduler and controller-manager are their leader Leases, written
here (one live, one stale).  minik8s' kubectl and the official kubectl 1.32 print ``get cs`` and
``get componentstatuses NAME`` alike, the deprecation warning included; the official Python client
reads them typed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.realkubectl import find
from tests.support.kubectl import Kubectl
from tests.support.kubectl_parity import run_process
from tests.support.processes import APIServer

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"'


def _micro(at: dt.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture(scope="module")
def leases(apiserver: APIServer) -> Iterator[None]:
    """A live scheduler Lease and a controller-manager Lease last renewed an hour ago."""
    now = dt.datetime.now(dt.UTC)
    with httpx.Client(base_url=apiserver.url, timeout=20) as h:
        for name, renewed in (("kube-scheduler", now + dt.timedelta(hours=1)),
                              ("kube-controller-manager", now - dt.timedelta(hours=1))):
            h.delete(f"{LEASES}/{name}")
            r = h.post(LEASES, json={"metadata": {"name": name}, "spec": {
                "holderIdentity": f"{name}-host", "leaseDurationSeconds": 15, "acquireTime": _micro(renewed),
                "renewTime": _micro(renewed)}})
            assert r.status_code == 201, r.text
        yield
        for name in ("kube-scheduler", "kube-controller-manager"):
            h.delete(f"{LEASES}/{name}")


def test_list_and_get_probe_now(apiserver: APIServer, leases: None) -> None:
    with httpx.Client(base_url=apiserver.url, timeout=20) as h:
        r = h.get("/api/v1/componentstatuses")
        assert r.status_code == 200 and r.headers.get_list("warning") == [WARNING], r.headers
        got = {i["metadata"]["name"]: i["conditions"] for i in r.json()["items"]}
        assert r.json()["kind"] == "ComponentStatusList"
        assert got["etcd-0"] == [{"type": "Healthy", "status": "True", "message": "ok"}]
        assert got["scheduler"] == [{"type": "Healthy", "status": "True", "message": "ok"}]
        assert got["controller-manager"][0]["status"] == "False"
        assert got["controller-manager"][0]["message"] == (
            "Lease kube-system/kube-controller-manager: leader kube-controller-manager-host not renewed within 15s")
        one = h.get("/api/v1/componentstatuses/etcd-0")
        assert one.status_code == 200 and one.json()["kind"] == "ComponentStatus" and \
            one.headers.get_list("warning") == [WARNING]
        r = h.get("/api/v1/componentstatuses", params={"fieldSelector": "metadata.name=scheduler"})
        assert [i["metadata"]["name"] for i in r.json()["items"]] == ["scheduler"]
        r = h.get("/api/v1/componentstatuses/nope")
        assert r.status_code == 500 and r.json()["message"] == "Component not found: nope"
        assert h.delete("/api/v1/componentstatuses/etcd-0").status_code == 405
        assert h.post("/api/v1/componentstatuses", json={"metadata": {"name": "x"}}).status_code == 405


@pytest.mark.parametrize("args", [["get", "cs"], ["get", "componentstatuses", "etcd-0"],
                                  ["get", "cs", "scheduler", "-o", "wide"]])
def test_kubectl_get_cs_as_the_official(kubectl: Kubectl, kubeconfig: Path, leases: None, args: list[str]) -> None:
    ours = kubectl(*args, ns=False)
    assert ours.code == 0, ours.err
    assert "Healthy" in ours.out and "Warning: v1 ComponentStatus is deprecated in v1.19+" in ours.err
    official, why = find("1.32")
    if official is None:
        pytest.skip(why)
    theirs = run_process([str(official), "--kubeconfig", str(kubeconfig), *args],
                         {"KUBECONFIG": "/nonexistent", "COLUMNS": "200", "HOME": str(kubeconfig.parent)})
    assert (ours.code, ours.out, ours.err) == (theirs.code, theirs.out, theirs.err)


def test_official_python_client_reads_component_statuses(apiserver: APIServer, leases: None) -> None:
    from kubernetes import client as k8s

    cfg = k8s.Configuration()
    cfg.host = apiserver.url
    api = k8s.CoreV1Api(k8s.ApiClient(cfg))
    names = [cs.metadata.name for cs in api.list_component_status().items]
    assert sorted(names) == ["controller-manager", "etcd-0", "scheduler"]
    assert api.read_component_status("etcd-0").conditions[0].status == "True"
    assert re.match(r"^ok$", api.read_component_status("scheduler").conditions[0].message)
