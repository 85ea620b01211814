"""Storage end to end on a real local cluster (``minik8s up``): a StatefulSet of 3 with claims from
the default ``local-path`` StorageClass survives deleting its pods — same names, same data, same
DNS names under its headless Service — and deleting the claims removes the volumes and their
directories on the node (reclaim ``Delete``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from tests.support.cluster import Cluster, wait_for

REPLICAS = 3
# the first incarnation of each pod writes a token; later ones only read it back
SCRIPT = "[ -f /data/first ] || (cat /proc/sys/kernel/random/uuid > /data/first); exec sleep 3600"


@pytest.fixture
def ns(cluster: Cluster) -> Iterator[str]:
    """The namespace, deleted and waited for: its claims' volumes and directories go with it."""
    with cluster.namespace("st", wait=True) as name:
        yield name


def manifests(ns: str) -> str:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": ns},
               "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 80}]}}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": ns},
           "spec": {"serviceName": "web", "replicas": REPLICAS, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                        "terminationGracePeriodSeconds": 1,
                        "containers": [{"name": "c", "image": "minik8s/busybox", "command": ["sh", "-c", SCRIPT],
                                        "readinessProbe": {"exec": {"command": ["cat", "/data/first"]},
                                                           "periodSeconds": 1},
                                        "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "16Mi"}}}}]}}
    return yaml.safe_dump_all([service, sts])


def ready_pods(c: Cluster, ns: str) -> dict[str, dict]:
    pods = c.get_json("pods", "-n", ns, "-l", "app=web")["items"]
    ready = {p["metadata"]["name"]: p for p in pods
             if not p["metadata"].get("deletionTimestamp")
             and any(x["type"] == "Ready" and x["status"] == "True" for x in (p.get("status") or {}).get("conditions")
                     or [])}
    return ready if len(ready) == REPLICAS else {}


def tokens(c: Cluster, ns: str) -> dict[str, str]:
    return {f"web-{i}": c.kubectl("exec", "-n", ns, f"web-{i}", "--", "cat", "/data/first").stdout.strip()
            for i in range(REPLICAS)}


def test_statefulset_keeps_names_data_and_dns_names(cluster: Cluster, ns: str) -> None:
    cluster.kubectl("apply", "-f", "-", input=manifests(ns))
    first = wait_for(lambda: ready_pods(cluster, ns), 180, what=f"{REPLICAS} ready web pods")
    assert sorted(first) == [f"web-{i}" for i in range(REPLICAS)]
    claims = cluster.get_json("pvc", "-n", ns)["items"]
    assert sorted((c["metadata"]["name"], c["status"]["phase"], c["spec"]["storageClassName"]) for c in claims) == [
        (f"data-web-{i}", "Bound", "local-path") for i in range(REPLICAS)]
    volumes = {c["spec"]["volumeName"] for c in claims}
    dirs = [cluster.data_dir / "local-path" / v for v in volumes]
    assert all(d.is_dir() for d in dirs), dirs
    before = tokens(cluster, ns)
    assert len(set(before.values())) == REPLICAS and all(before.values())

    # every pod deleted: the same names come back, on the same claims, with the same data
    cluster.kubectl("delete", "pods", "-n", ns, "-l", "app=web", "--wait=false")
    uids = {name: p["metadata"]["uid"] for name, p in first.items()}

    def replaced() -> dict[str, dict]:
        now = ready_pods(cluster, ns)
        return now if now and all(p["metadata"]["uid"] != uids[name] for name, p in now.items()) else {}

    again = wait_for(replaced, 180, what="the pods recreated and ready")
    assert sorted(again) == sorted(first)
    assert tokens(cluster, ns) == before

    # per-pod DNS names under the headless Service, from inside the set
    for i in range(REPLICAS):
        name, ip = f"web-{i}.web.{ns}.svc.cluster.local", again[f"web-{i}"]["status"]["podIP"]
        wait_for(lambda name=name, ip=ip: ip in cluster.kubectl("exec", "-n", ns, "web-0", "--", "nslookup", name,
                                                                check=False).stdout,
                 30, what=f"{name} resolving to {ip}")

    # the claims outlive the set; deleting them removes the volumes and their directories
    cluster.kubectl("delete", "statefulset", "web", "-n", ns, timeout=180)
    cluster.kubectl("delete", "pvc", "--all", "-n", ns, timeout=180)
    wait_for(lambda: not any(pv["metadata"]["name"] in volumes for pv in cluster.get_json("pv")["items"]), 120,
             what="the volumes deleted")
    wait_for(lambda: not any(d.exists() for d in dirs), 60, what="the directories removed on the node")
