"""StatefulSet pieces without an apiserver: validation and defaults, ordinals, claims and pod volumes,
status, kubectl's rollout status lines, and the per-pod DNS names its pods get."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest
from dnslib import QTYPE

from minik8s.api.apps import StatefulSetView
from minik8s.api.base import Obj
from minik8s.api.discovery import SERVICE_INDEX, SERVICE_NAME_LABEL, slice_service_key
from minik8s.apiserver.strategies.statefulset import StatefulSetStrategy
from minik8s.client.informer import NAMESPACE_INDEX, by_namespace
from minik8s.controllers.endpoints import compute_subsets
from minik8s.controllers.endpointslice import desired_groups
from minik8s.controllers.statefulset import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_HASH_LABEL,
    add_claim_volumes,
    claim_name,
    compute_status,
    identity_patch,
    new_claim,
    new_pod,
    ordinal_of,
    revision_name,
    split_pods,
)
from minik8s.dns.records import POD_IP_INDEX, ClusterZone, pod_ips
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.rollout import statefulset_status_message

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def sts(**spec: Any) -> Obj:
    body: Obj = {"apiVersion": "apps/v1", "kind": "StatefulSet",
                 "metadata": {"name": "web", "namespace": "ns", "uid": "sts-uid", "generation": 1},
                 "spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                          "template": {"metadata": {"labels": {"app": "web"}},
                                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, **spec}}
    return body


def defaulted(**spec: Any) -> Obj:
    body = sts(**spec)
    StatefulSetStrategy().default(body)
    return body


def causes(body: Obj, old: Obj | None = None) -> dict[str, str]:
    return {path: msg for path, _value, msg in StatefulSetStrategy().validate(body, old)}


def pod(name: str, phase: str = "Running", ready: bool = True, revision: str = "web-1", **meta: Any) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {REVISION_HASH_LABEL: revision}, **meta},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                                       "lastTransitionTime": "2025-01-01T00:00:00Z"}]}}


# ---------------------------------------------------------------- defaults and validation
def test_defaults() -> None:
    spec = defaulted()["spec"]
    assert spec["replicas"] == 1 and spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    on_delete = defaulted(updateStrategy={"type": "OnDelete"})["spec"]["updateStrategy"]
    assert on_delete == {"type": "OnDelete"}
    assert causes(defaulted()) == {}


@pytest.mark.parametrize(("spec", "path", "message"), [
    ({"podManagementPolicy": "Sometimes"}, "spec.podManagementPolicy", "must be 'OrderedReady' or 'Parallel'"),
    ({"updateStrategy": {"type": "Blue"}}, "spec.updateStrategy", "must be 'RollingUpdate' or 'OnDelete'"),
    ({"updateStrategy": {"type": "OnDelete", "rollingUpdate": {}}}, "spec.updateStrategy.rollingUpdate",
     "only allowed for updateStrategy 'RollingUpdate'"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
     "spec.updateStrategy.rollingUpdate.partition", "must be greater than or equal to 0"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}},
     "spec.updateStrategy.rollingUpdate.maxUnavailable", "cannot be 0"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%"}}},
     "spec.updateStrategy.rollingUpdate.maxUnavailable", "must not be greater than 100%"),
    ({"replicas": -1}, "spec.replicas", "must be greater than or equal to 0"),
    ({"minReadySeconds": -1}, "spec.minReadySeconds", "must be greater than or equal to 0"),
    ({"ordinals": {"start": -2}}, "spec.ordinals.start", "must be greater than or equal to 0"),
    ({"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep", "whenScaled": "Retain"}},
     "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
     'Unsupported value: "Keep": supported values: "Delete", "Retain"'),
    ({"selector": {}}, "spec.selector", "empty selector is invalid for statefulset"),
    ({"selector": {"matchLabels": {"app": "db"}}}, "spec.template.metadata.labels",
     "`selector` does not match template `labels`"),
    ({"volumeClaimTemplates": [{"metadata": {}}]}, "spec.volumeClaimTemplates[0].metadata.name",
     "name or generateName is required"),
])
def test_validation_messages(spec: Obj, path: str, message: str) -> None:
    assert causes(defaulted(**spec)).get(path) == message


def test_template_rules_and_claim_mounts() -> None:
    body = defaulted()
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    body["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5
    found = causes(body)
    assert found["spec.template.spec.restartPolicy"] == 'Unsupported value: "Never": supported values: "Always"'
    assert found["spec.template.spec.activeDeadlineSeconds"] == \
        "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"
    # a mount of a claim template is a mount of a volume
    body = defaulted(volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}])
    body["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/d"}]
    assert causes(body) == {}
    body["spec"]["volumeClaimTemplates"] = []
    assert "spec.template.spec.containers[0].volumeMounts[0].name" in causes(body)


def test_update_allows_only_kubernetes_mutable_fields() -> None:
    old = defaulted()
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    new["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 2
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    assert causes(new, old) == {}
    new["spec"]["serviceName"] = "other"
    assert causes(new, old)["spec"].startswith("Forbidden: updates to statefulset spec for fields other than "
                                               "'replicas', 'ordinals', 'template', 'updateStrategy', "
                                               "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds'")


# ---------------------------------------------------------------- ordinals
def test_ordinals_of_member_pods() -> None:
    assert ordinal_of("web", {"metadata": {"name": "web-12"}}) == 12
    assert ordinal_of("web", {"metadata": {"name": "web-x"}}) is None
    assert ordinal_of("web", {"metadata": {"name": "web-01"}}) is None
    assert ordinal_of("web", {"metadata": {"name": "webapp-1"}}) is None
    assert ordinal_of("my-web", {"metadata": {"name": "my-web-0"}}) == 0
    view = StatefulSetView.of(defaulted(replicas=2, ordinals={"start": 1}))
    replicas, condemned = split_pods(view, [pod("web-3"), pod("web-0"), pod("web-1"), pod("other"), pod("web-5")])
    assert sorted(replicas) == [1] and replicas[1]["metadata"]["name"] == "web-1"
    assert [p["metadata"]["name"] for p in condemned] == ["web-0", "web-3", "web-5"]


def test_identity_patch_restores_labels() -> None:
    view = StatefulSetView.of(defaulted())
    good = pod("web-2")
    good["metadata"]["labels"].update({POD_NAME_LABEL: "web-2", POD_INDEX_LABEL: "2"})
    assert identity_patch(view, good, 2) is None
    assert identity_patch(view, pod("web-2"), 2) == {"metadata": {"labels": {POD_NAME_LABEL: "web-2",
                                                                            POD_INDEX_LABEL: "2"}}}


# ---------------------------------------------------------------- claims and pods
def test_claim_names_and_pod_volumes() -> None:
    templates = [{"metadata": {"name": "data", "labels": {"tier": "db"}},
                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
                 {"metadata": {"name": "logs"}, "spec": {}}]
    body = defaulted(volumeClaimTemplates=templates)
    body["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]
    view = StatefulSetView.of(body)
    assert claim_name("data", "web", 3) == "data-web-3"
    made = new_pod(body, view, body["spec"]["template"], 3, "web-abc")
    assert made["metadata"]["name"] == "web-3"
    assert made["spec"]["hostname"] == "web-3" and made["spec"]["subdomain"] == "web"
    assert made["metadata"]["labels"] == {"app": "web", POD_NAME_LABEL: "web-3", POD_INDEX_LABEL: "3",
                                          REVISION_HASH_LABEL: "web-abc"}
    assert made["spec"]["volumes"] == [{"name": "tmp", "emptyDir": {}},
                                       {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-3"}},
                                       {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-web-3"}}]
    assert body["spec"]["template"]["spec"]["volumes"][0] == {"name": "data", "emptyDir": {}}  # template unchanged
    claim = new_claim(view, templates[0], 3, {"app": "web"}, None)
    assert claim["metadata"] == {"name": "data-web-3", "namespace": "ns", "labels": {"tier": "db", "app": "web"}}
    assert claim["spec"] == templates[0]["spec"] and claim["kind"] == "PersistentVolumeClaim"
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "sts-uid", "controller": False}
    assert new_claim(view, templates[1], 0, {}, owner)["metadata"]["ownerReferences"] == [owner]
    spec: Obj = {}
    add_claim_volumes(spec, StatefulSetView.of(defaulted()), 0)
    assert spec == {}


def test_revision_name_is_stable_until_the_template_changes() -> None:
    body = defaulted()
    first = revision_name(body)
    body["status"] = {"collisionCount": 0}
    assert revision_name(body) == first and first.startswith("web-")
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    assert revision_name(body) != first


def test_status_counts_and_rollout_completion() -> None:
    body = defaulted(replicas=3)
    view = StatefulSetView.of(body)
    pods = [pod("web-0", revision="old"), pod("web-1", revision="new"),
            pod("web-2", revision="new", ready=False)]
    status = compute_status(body, view, pods, "old", "new", NOW)
    assert {k: status[k] for k in ("replicas", "readyReplicas", "availableReplicas", "currentReplicas",
                                   "updatedReplicas", "currentRevision", "updateRevision", "observedGeneration")} == \
        {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "currentReplicas": 1, "updatedReplicas": 2,
         "currentRevision": "old", "updateRevision": "new", "observedGeneration": 1}
    done = compute_status(body, view, [pod(f"web-{i}", revision="new") for i in range(3)], "old", "new", NOW)
    assert (done["currentRevision"], done["currentReplicas"]) == ("new", 3)


# ---------------------------------------------------------------- kubectl rollout status
def test_rollout_status_lines() -> None:
    body = defaulted(replicas=3)
    body["status"] = {"observedGeneration": 1, "readyReplicas": 1, "updatedReplicas": 1}
    assert statefulset_status_message(body) == ("Waiting for 2 pods to be ready...", False)
    body["status"].update(readyReplicas=3, updatedReplicas=1)
    body["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1
    assert statefulset_status_message(body) == (
        "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...", False)
    body["status"]["updatedReplicas"] = 2
    assert statefulset_status_message(body) == ("partitioned roll out complete: 2 new pods have been updated...",
                                                True)
    del body["spec"]["updateStrategy"]["rollingUpdate"]
    body["status"].update(currentRevision="a", updateRevision="b")
    assert statefulset_status_message(body)[1] is False
    body["status"].update(currentRevision="b", currentReplicas=3)
    assert statefulset_status_message(body) == ("statefulset rolling update complete 3 pods at revision b...", True)
    body["metadata"]["generation"] = 2
    assert statefulset_status_message(body) == ("Waiting for statefulset spec update to be observed...", False)
    with pytest.raises(KubectlError, match="only available for RollingUpdate"):
        statefulset_status_message(defaulted(updateStrategy={"type": "OnDelete"}))


# ---------------------------------------------------------------- DNS: <pod>.<service>.<ns>.svc
class _Cache:
    def __init__(self, objs: list[Obj], indexers: dict[str, Any] | None = None) -> None:
        self.objs, self.indexers = objs, indexers or {}

    def get(self, key: str) -> Obj | None:
        return next((o for o in self.objs if f"{o['metadata'].get('namespace')}/{o['metadata']['name']}" == key),
                    None)

    def list(self) -> list[Obj]:
        return list(self.objs)

    def by_index(self, index: str, value: str) -> list[Obj]:
        return [o for o in self.objs if value in self.indexers[index](o)]


def test_pods_answer_by_name_under_the_headless_service() -> None:
    body = defaulted(replicas=2)
    view = StatefulSetView.of(body)
    pods = []
    for i in range(2):
        made = new_pod(body, view, body["spec"]["template"], i, "web-1")
        made["metadata"]["uid"] = f"uid-{i}"
        made["status"] = {"phase": "Running", "podIP": f"10.244.0.{10 + i}",
                          "conditions": [{"type": "Ready", "status": "True"}]}
        pods.append(made)
    service = {"metadata": {"name": "web", "namespace": "ns", "uid": "svc"},
               "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}}
    subsets = compute_subsets(service, pods)
    assert [a.get("hostname") for a in subsets[0]["addresses"]] == ["web-0", "web-1"]
    other = {**service, "metadata": {"name": "other", "namespace": "ns"}}
    assert all("hostname" not in a for a in compute_subsets(other, pods)[0]["addresses"])
    endpoint_slice = {"metadata": {"name": "web-x", "namespace": "ns", "labels": {SERVICE_NAME_LABEL: "web"}},
                      "addressType": "IPv4",
                      "endpoints": [e for g in desired_groups(service, pods).values() for e in g.endpoints.values()]}
    assert sorted(str(e.get("hostname")) for e in endpoint_slice["endpoints"]) == ["web-0", "web-1"]
    zone = ClusterZone(_Cache([service], {NAMESPACE_INDEX: by_namespace}),
                       _Cache([endpoint_slice], {SERVICE_INDEX: slice_service_key}),
                       _Cache(pods, {POD_IP_INDEX: pod_ips}), [])
    answer = zone.answer("web-1.web.ns.svc.cluster.local.", QTYPE.A)
    assert answer is not None and [str(rr.rdata) for rr in answer.answers] == ["10.244.0.11"]
