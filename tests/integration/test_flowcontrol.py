"""API Priority and Fairness end to end: FlowSchema and PriorityLevelConfiguration served and
validated, the bootstrap configuration, ``Dangling`` conditions, and the apiserver's write turns
chosen by the FlowSchemas (seen in the ``X-Kubernetes-PF-*-UID`` response headers)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.support.processes import APIServer, Etcd, wait_http
from tests.support.waiting import wait_for

FC = "/apis/flowcontrol.apiserver.k8s.io/v1"
FS_HEADER, PL_HEADER = "x-kubernetes-pf-flowschema-uid", "x-kubernetes-pf-prioritylevel-uid"


def _level(name: str, shares: int = 10) -> dict:
    return {"metadata": {"name": name}, "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": shares, "limitResponse": {"type": "Queue"}}}}


def _schema(name: str, level: str, subjects: list[dict], precedence: int = 500) -> dict:
    return {"metadata": {"name": name}, "spec": {
        "priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence,
        "distinguisherMethod": {"type": "ByUser"},
        "rules": [{"subjects": subjects, "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                                            "namespaces": ["*"], "clusterScope": True}]}]}}


@pytest.fixture
async def http(apiserver: APIServer) -> httpx.AsyncClient:
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=10) as c:
        yield c


async def _uids(http: httpx.AsyncClient, kind: str, name: str) -> str:
    r = await http.get(f"{FC}/{kind}/{name}")
    assert r.status_code == 200, r.text
    return r.json()["metadata"]["uid"]


async def test_bootstrap_configuration(http: httpx.AsyncClient) -> None:
    async def present() -> bool:
        names = {i["metadata"]["name"] for i in (await http.get(f"{FC}/flowschemas")).json()["items"]}
        levels = {i["metadata"]["name"] for i in (await http.get(f"{FC}/prioritylevelconfigurations")).json()["items"]}
        return {"exempt", "catch-all", "global-default", "system-leader-election", "system-node-high",
                "service-accounts"} <= names and {"exempt", "catch-all", "leader-election", "node-high",
                                                  "workload-high", "workload-low", "global-default"} <= levels
    await wait_for(present, what="the mandatory and suggested objects")
    exempt = (await http.get(f"{FC}/prioritylevelconfigurations/exempt")).json()
    assert exempt["spec"]["type"] == "Exempt"
    assert exempt["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"] == "true"
    catch_all = (await http.get(f"{FC}/flowschemas/catch-all")).json()
    assert catch_all["spec"]["matchingPrecedence"] == 10000
    await wait_for(lambda: http.get(f"{FC}/flowschemas/catch-all"), what="catch-all's condition")

    async def found() -> bool:
        conds = (await http.get(f"{FC}/flowschemas/catch-all")).json().get("status", {}).get("conditions") or []
        return any(c["type"] == "Dangling" and c["status"] == "False" and c["reason"] == "Found" for c in conds)
    await wait_for(found, what="catch-all Dangling=False")


async def test_validation(http: httpx.AsyncClient) -> None:
    bad = _level("t-bad")
    bad["spec"]["type"] = "Sometimes"
    r = await http.post(f"{FC}/prioritylevelconfigurations", json=bad)
    assert r.status_code == 422 and r.json()["message"] == (
        'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "t-bad" is invalid: spec.type: Unsupported value: '
        '"Sometimes": supported values: "Exempt", "Limited"')
    bad = _level("t-bad")
    bad["spec"]["limited"]["lendablePercent"] = 101
    r = await http.post(f"{FC}/prioritylevelconfigurations", json=bad)
    assert r.status_code == 422 and "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, " \
        "inclusive" in r.json()["message"]
    schema = _schema("t-bad", "x", [])
    schema["spec"]["matchingPrecedence"] = 10001
    r = await http.post(f"{FC}/flowschemas", json=schema)
    message = r.json()["message"]
    assert r.status_code == 422
    assert "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000" in message
    assert "spec.rules[0].subjects: Required value: subjects must contain at least one value" in message


async def test_crud_defaults_and_dangling(http: httpx.AsyncClient) -> None:
    name = f"t-{uuid.uuid4().hex[:6]}"
    r = await http.post(f"{FC}/flowschemas", json=_schema(name, name, [{"kind": "User", "user": {"name": "nobody"}}]))
    assert r.status_code == 201, r.text

    async def dangling(status: str) -> bool:
        conds = (await http.get(f"{FC}/flowschemas/{name}")).json().get("status", {}).get("conditions") or []
        return any(c["type"] == "Dangling" and c["status"] == status for c in conds)
    await wait_for(lambda: dangling("True"), what="Dangling=True while the level is missing")
    r = await http.post(f"{FC}/prioritylevelconfigurations", json=_level(name))
    assert r.status_code == 201, r.text
    queuing = r.json()["spec"]["limited"]["limitResponse"]["queuing"]
    assert queuing == {"queues": 64, "handSize": 8, "queueLengthLimit": 50}
    await wait_for(lambda: dangling("False"), what="Dangling=False once the level exists")
    r = await http.patch(f"{FC}/flowschemas/{name}", json={"spec": {"matchingPrecedence": 700}},
                         headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200 and r.json()["spec"]["matchingPrecedence"] == 700
    for kind in ("flowschemas", "prioritylevelconfigurations"):
        assert (await http.delete(f"{FC}/{kind}/{name}")).status_code == 200


async def test_levels_by_flow_schema_headers(http: httpx.AsyncClient, namespace: str) -> None:
    """Without credentials writes are system:anonymous's: global-default, but leader Leases and node
    heartbeats go to their own levels whoever writes them."""
    global_default = await _uids(http, "prioritylevelconfigurations", "global-default")
    leader = await _uids(http, "prioritylevelconfigurations", "leader-election")
    node_high = await _uids(http, "prioritylevelconfigurations", "node-high")
    r = await http.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "c"}})
    assert r.status_code == 201 and r.headers[PL_HEADER] == global_default
    assert r.headers[FS_HEADER] == await _uids(http, "flowschemas", "global-default")
    lease = {"metadata": {"name": f"t-{uuid.uuid4().hex[:6]}"}, "spec": {"holderIdentity": "x"}}
    r = await http.post("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", json=lease)
    assert r.status_code == 201 and r.headers[PL_HEADER] == leader
    await http.delete(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{lease['metadata']['name']}")
    r = await http.post("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", json=lease)
    assert r.status_code == 201 and r.headers[PL_HEADER] == node_high
    await http.delete(f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{lease['metadata']['name']}")
    r = await http.get("/healthz")
    assert r.headers[PL_HEADER] == await _uids(http, "prioritylevelconfigurations", "exempt")  # probes


@pytest.fixture(scope="module")
def authenticated(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    d = tmp_path_factory.mktemp("apf")
    (d / "tokens.csv").write_text('t-admin,admin,1,"system:masters"\nt-alice,alice,2,""\n')
    srv = APIServer(etcd, d, extra=["--token-auth-file", str(d / "tokens.csv")])
    wait_http(f"{srv.url}/readyz")
    yield srv
    srv.stop()


async def test_user_routed_to_own_level(authenticated: APIServer) -> None:
    name = f"t-{uuid.uuid4().hex[:6]}"
    admin = {"Authorization": "Bearer t-admin"}
    alice = {"Authorization": "Bearer t-alice"}
    async with httpx.AsyncClient(base_url=authenticated.url, timeout=10) as http:
        r = await http.post(f"{FC}/prioritylevelconfigurations", json=_level(name), headers=admin)
        assert r.status_code == 201, r.text
        pl_uid = r.json()["metadata"]["uid"]
        assert r.headers[PL_HEADER] == (await http.get(f"{FC}/prioritylevelconfigurations/exempt",
                                                       headers=admin)).json()["metadata"]["uid"]
        r = await http.post(f"{FC}/flowschemas", headers=admin, json=_schema(
            name, name, [{"kind": "User", "user": {"name": "alice"}}]))
        assert r.status_code == 201, r.text
        fs_uid = r.json()["metadata"]["uid"]
        ns = f"apf-{name}"
        assert (await http.post("/api/v1/namespaces", json={"metadata": {"name": ns}},
                                headers=admin)).status_code == 201

        async def routed() -> bool:
            r = await http.post(f"/api/v1/namespaces/{ns}/configmaps", headers=alice,
                                json={"metadata": {"generateName": "c-"}})
            assert r.status_code == 201, r.text
            return r.headers[FS_HEADER] == fs_uid and r.headers[PL_HEADER] == pl_uid
        await wait_for(routed, what="alice's writes in her own level")
        r = await http.get(f"/api/v1/namespaces/{ns}/configmaps", headers={"Authorization": "Bearer t-alice"})
        assert r.headers[FS_HEADER] == fs_uid
        global_default = (await http.get(f"{FC}/flowschemas/global-default", headers=admin)).json()
        await http.delete(f"{FC}/flowschemas/{name}", headers=admin)

        async def back() -> bool:
            r = await http.get(f"/api/v1/namespaces/{ns}/configmaps", headers=alice)
            return r.headers[FS_HEADER] == global_default["metadata"]["uid"]
        await wait_for(back, what="alice back in global-default")
        await http.delete(f"/api/v1/namespaces/{ns}", headers=admin)
