"""The official ``kubernetes`` Python client's typed models accept what minik8s sends, for every kind.

The client's models (37.x: pydantic) validate responses against Kubernetes' OpenAPI: a field it
marks required that is missing fails the whole call.  Here one object of every Kubernetes kind
minik8s serves is created (with the status its controller or kubelet would write), read and
listed over HTTP, and each answer deserialized into the client's model of that kind; then every
typed ``list_*`` call of CoreV1Api, AppsV1Api, BatchV1Api and AutoscalingV2Api runs, and those of
the kinds minik8s serves must all succeed.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s

from minik8s import certsigning
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.registry import default_registry
from minik8s.apiserver.versions import SERVED_VERSIONS
from tests.support.processes import APIServer

TYPED_APIS = (k8s.CoreV1Api, k8s.AppsV1Api, k8s.BatchV1Api, k8s.AutoscalingV2Api, k8s.StorageV1Api, k8s.PolicyV1Api,
              k8s.RbacAuthorizationV1Api, k8s.DiscoveryV1Api, k8s.NetworkingV1Api, k8s.SchedulingV1Api,
              k8s.NodeV1Api, k8s.FlowcontrolApiserverV1Api,
              k8s.CertificatesV1Api)

POD_SPEC = {"containers": [{"name": "main", "image": "minik8s/busybox", "command": ["sleep", "3600"]}]}
TEMPLATE = {"metadata": {"labels": {"app": "typed"}}, "spec": POD_SPEC}

#: One object of each Kubernetes kind minik8s serves, and (second) the status its owner writes.
SAMPLES: dict[tuple[str, str], tuple[Obj, Obj | None]] = {
    ("v1", "Namespace"): ({}, None),
    ("v1", "Pod"): ({"metadata": {"labels": {"app": "typed"}}, "spec": POD_SPEC}, {
        "phase": "Running", "podIP": "10.244.0.9", "startTime": now_rfc3339(),
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0,
                               "state": {"running": {"startedAt": now_rfc3339()}}}]}),
    ("v1", "Node"): ({"spec": {"podCIDR": "10.244.7.0/24"}}, {
        "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        # What minik8s' kubelet reports: no kubeProxyVersion (Kubernetes' OpenAPI requires it).
        "nodeInfo": {"kernelVersion": "6.1", "kubeletVersion": "v1.32.0", "operatingSystem": "linux",
                     "architecture": "amd64", "containerRuntimeVersion": "docker://25"},
        "images": [{"names": ["minik8s/busybox:latest"], "sizeBytes": 1000}]}),
    # (an Event is in its object's namespace: $NAMESPACE is the test's, see sample_body; with an eventTime, as
    # the client's events.k8s.io model, which lists it too, requires one)
    ("v1", "Event"): ({"involvedObject": {"kind": "Pod", "name": "x", "namespace": "$NAMESPACE"}, "reason": "Tested",
                       "message": "m", "type": "Normal", "eventTime": "2026-01-01T00:00:00.000000Z",
                       "reportingComponent": "typed.io/c", "reportingInstance": "typed-1", "action": "Testing"}, None),
    ("events.k8s.io/v1", "Event"): ({"eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "typed.io/c",
                                     "reportingInstance": "typed-1", "action": "Testing", "reason": "Tested",
                                     "type": "Normal", "note": "m",
                                     "regarding": {"kind": "Pod", "name": "x", "namespace": "$NAMESPACE"}}, None),
    ("v1", "Service"): ({"spec": {"selector": {"app": "typed"}, "ports": [{"port": 80}]}}, None),
    ("v1", "Endpoints"): ({"subsets": [{"addresses": [{"ip": "10.244.0.9"}], "ports": [{"port": 80}]}]}, None),
    ("v1", "PodTemplate"): ({"template": TEMPLATE}, None),
    ("v1", "ConfigMap"): ({"data": {"k": "v"}}, None),
    ("v1", "Secret"): ({"stringData": {"k": "v"}}, None),
    ("v1", "ServiceAccount"): ({"automountServiceAccountToken": False}, None),
    ("v1", "ReplicationController"): ({"spec": {"replicas": 0, "template": TEMPLATE}}, {"observedGeneration": 1}),
    ("v1", "ResourceQuota"): ({"spec": {"hard": {"pods": "10", "requests.cpu": "2"}}},
                              {"hard": {"pods": "10", "requests.cpu": "2"},
                               "used": {"pods": "0", "requests.cpu": "0"}}),
    ("v1", "LimitRange"): ({"spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]}}, None),
    ("coordination.k8s.io/v1", "Lease"): ({"spec": {"holderIdentity": "typed", "leaseDurationSeconds": 40}}, None),
    ("policy/v1", "PodDisruptionBudget"): ({"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "typed"}}}},
                                           {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 0,
                                            "desiredHealthy": 1, "expectedPods": 0}),
    ("scheduling.k8s.io/v1", "PriorityClass"): ({"value": 1000, "description": "typed"}, None),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): (
        {"spec": {"request": base64.b64encode(certsigning.make_csr(certsigning.new_key(), "typed")).decode(),
                  "signerName": "example.com/typed", "usages": ["client auth"], "expirationSeconds": 600}},
        {"conditions": [{"type": "Failed", "status": "True", "reason": "Typed", "message": "typed"}]}),
    ("node.k8s.io/v1", "RuntimeClass"): ({"handler": "runc", "overhead": {"podFixed": {"cpu": "100m"}},
                                          "scheduling": {"nodeSelector": {"typed": "yes"}}}, None),
    ("networking.k8s.io/v1", "IngressClass"): ({"spec": {"controller": "example.com/typed", "parameters": {
        "kind": "Params", "name": "p", "apiGroup": "example.com"}}}, None),
    ("storage.k8s.io/v1", "CSIDriver"): ({"spec": {"tokenRequests": [{"audience": "typed"}]}}, None),
    ("storage.k8s.io/v1", "CSINode"): ({"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "typed",
                                                              "allocatable": {"count": 3}}]}}, None),
    ("storage.k8s.io/v1", "CSIStorageCapacity"): ({"storageClassName": "typed", "capacity": "1Gi"}, None),
    ("storage.k8s.io/v1", "VolumeAttachment"): ({"spec": {"attacher": "csi.example.com", "nodeName": "n1",
                                                          "source": {"persistentVolumeName": "pv1"}}},
                                                {"attached": True}),
    ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration"): ({"spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 3, "limitResponse": {"type": "Reject"}}}}, None),
    ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema"): ({"spec": {
        "priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 5000,
        "rules": [{"subjects": [{"kind": "User", "user": {"name": "typed"}}],
                   "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/typed"]}]}]}}, None),
    ("discovery.k8s.io/v1", "EndpointSlice"): ({
        "metadata": {"labels": {"kubernetes.io/service-name": "typed"}}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.0.9"], "conditions": {"ready": True, "serving": True,
                                                                  "terminating": False},
                       "hints": {"forZones": [{"name": "z1"}]}, "nodeName": "n1", "zone": "z1"}],
        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "appProtocol": "http"}]}, None),
    ("apps/v1", "ReplicaSet"): ({"spec": {"replicas": 0, "selector": {"matchLabels": {"app": "typed"}},
                                          "template": TEMPLATE}}, None),
    ("apps/v1", "Deployment"): ({"spec": {"replicas": 0, "selector": {"matchLabels": {"app": "typed"}},
                                          "template": TEMPLATE}}, {"observedGeneration": 1}),
    ("apps/v1", "DaemonSet"): ({"spec": {"selector": {"matchLabels": {"app": "typed"}}, "template": TEMPLATE}},
                               {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 1,
                                "numberMisscheduled": 0, "updatedNumberScheduled": 2, "numberAvailable": 1,
                                "numberUnavailable": 1, "observedGeneration": 1}),
    ("apps/v1", "StatefulSet"): ({"spec": {"replicas": 0, "serviceName": "typed",
                                            "selector": {"matchLabels": {"app": "typed"}}, "template": TEMPLATE,
                                            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                                                "accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}}]}},
                                  {"observedGeneration": 1, "replicas": 0, "readyReplicas": 0, "currentReplicas": 0,
                                   "updatedReplicas": 0, "availableReplicas": 0, "currentRevision": "typed-1",
                                   "updateRevision": "typed-1", "collisionCount": 0}),
    ("apps/v1", "ControllerRevision"): ({"metadata": {"labels": {"app": "typed"}}, "revision": 1, "data": {
        "spec": {"template": {**TEMPLATE, "$patch": "replace"}}}}, None),
    ("batch/v1", "Job"): ({"spec": {"completions": 1, "template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}}, {
        "startTime": now_rfc3339(), "completionTime": now_rfc3339(), "succeeded": 1, "active": 0,
        "conditions": [{"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now_rfc3339()},
                       {"type": "Complete", "status": "True", "lastTransitionTime": now_rfc3339()}]}),
    ("batch/v1", "CronJob"): ({"spec": {"schedule": "*/5 * * * *", "timeZone": "Etc/UTC", "jobTemplate": {
        "spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "OnFailure"}}}}}}, {
        "lastScheduleTime": now_rfc3339(),
        "active": [{"apiVersion": "batch/v1", "kind": "Job", "name": "typed-1", "uid": "u-1"}]}),
    ("networking.k8s.io/v1", "Ingress"): ({"spec": {"rules": [{"host": "typed.example", "http": {"paths": [
        {"path": "/", "pathType": "Prefix",
         "backend": {"service": {"name": "typed", "port": {"number": 80}}}}]}}]}}, None),
    ("networking.k8s.io/v1", "NetworkPolicy"): ({"spec": {
        "podSelector": {"matchLabels": {"app": "typed"}},
        "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                              {"namespaceSelector": {}, "podSelector": {"matchLabels": {"role": "c"}}}],
                     "ports": [{"port": "http"}, {"port": 9000, "endPort": 9010, "protocol": "UDP"}]}],
        "egress": [{"to": [{"podSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}]}}, None),
    ("autoscaling/v2", "HorizontalPodAutoscaler"): ({"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "typed"},
        "minReplicas": 1, "maxReplicas": 3}}, {"currentReplicas": 1, "desiredReplicas": 1}),
    ("v1", "PersistentVolume"): ({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                           "hostPath": {"path": "/tmp/typed"}, "storageClassName": "manual"}}, None),
    ("v1", "PersistentVolumeClaim"): ({"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
                                                "resources": {"requests": {"storage": "1Gi"}}}}, None),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): ({"spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"kind": "Typed"},  # plural: see sample_body
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}, None),
    ("storage.k8s.io/v1", "StorageClass"): ({"provisioner": "example.com/typed", "reclaimPolicy": "Retain",
                                             "volumeBindingMode": "WaitForFirstConsumer"}, None),
    ("rbac.authorization.k8s.io/v1", "Role"): ({"rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}, None),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): ({"rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]}, None),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ({
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "typed"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}, None),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ({
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "Group", "name": "readers", "apiGroup": "rbac.authorization.k8s.io"}]}, None),
    ("autoscaling/v1", "HorizontalPodAutoscaler"): ({"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "typed"},
        "maxReplicas": 3}}, None),  # status as created: {currentReplicas: 0, desiredReplicas: 0}
}
#: The stanzas Kubernetes always sends, as the typed models show them (checked on the samples).
STANZAS: dict[tuple[str, str], Any] = {
    ("v1", "Namespace"): lambda o: o.status.phase == "Active"
    and o.metadata.labels["kubernetes.io/metadata.name"] == o.metadata.name,
    ("v1", "Service"): lambda o: o.status.load_balancer is not None,
    ("networking.k8s.io/v1", "NetworkPolicy"): lambda o: o.spec.policy_types == ["Ingress", "Egress"]
    and o.spec.ingress[0].ports[0].protocol == "TCP" and o.spec.ingress[0]._from[0].ip_block._except == ["10.1.0.0/16"],
    ("v1", "Node"): lambda o: o.status.node_info.kube_proxy_version == "" and o.status.node_info.kubelet_version
    and o.status.daemon_endpoints.kubelet_endpoint.port == 0,
    ("v1", "Pod"): lambda o: o.status.container_statuses[0].image_id == "",
    ("v1", "ReplicationController"): lambda o: o.status.replicas == 0,
    ("apps/v1", "ReplicaSet"): lambda o: o.status.replicas == 0,
    ("apps/v1", "Deployment"): lambda o: o.status is not None,
    ("apps/v1", "DaemonSet"): lambda o: o.status.desired_number_scheduled == 2
    and o.spec.update_strategy.rolling_update.max_unavailable == 1 and o.spec.revision_history_limit == 10,
    ("apps/v1", "StatefulSet"): lambda o: o.spec.pod_management_policy == "OrderedReady"
    and o.spec.update_strategy.rolling_update.partition == 0 and o.status.update_revision == "typed-1"
    and o.spec.volume_claim_templates[0].metadata.name == "data",
    ("batch/v1", "Job"): lambda o: o.spec.backoff_limit == 6 and o.spec.completion_mode == "NonIndexed"
    and o.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == o.metadata.uid,
    ("batch/v1", "CronJob"): lambda o: o.spec.concurrency_policy == "Allow"
    and o.spec.successful_jobs_history_limit == 3,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): lambda o: o.status.desired_replicas == 1,
    ("autoscaling/v1", "HorizontalPodAutoscaler"): lambda o: (o.status.current_replicas, o.status.desired_replicas)
    == (0, 0),
}
#: Served kinds the typed client has no model of a stored object for (``Binding`` and the reviews are
#: create-only verbs).
NO_OBJECT = {("v1", "Binding"), ("authentication.k8s.io/v1", "TokenReview"),
             ("authorization.k8s.io/v1", "LocalSubjectAccessReview"),
             ("v1", "ComponentStatus"),  # read-only, computed: tests/integration/test_componentstatus.py
             ("authentication.k8s.io/v1", "SelfSubjectReview"), ("authorization.k8s.io/v1", "SubjectAccessReview"),
             ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
             ("authorization.k8s.io/v1", "SelfSubjectRulesReview")}


def served_kubernetes_kinds() -> list[Any]:
    """Every row minik8s serves for a Kubernetes group (its own ``minik8s.io`` kinds have no typed model)."""
    rows = default_registry().types + [sv.rt for sv in SERVED_VERSIONS]
    return [rt for rt in rows if rt.group != "minik8s.io" and (rt.api_version, rt.kind) not in NO_OBJECT]


def sample_body(rt: Any, name: str, namespace: str) -> tuple[Obj, str]:
    """The sample of ``rt`` named after ``name`` (a CRD's name is ``<plural>.<group>``), ``$NAMESPACE`` in it
    ``namespace``: (body, name)."""
    body = json.loads(json.dumps(SAMPLES[(rt.api_version, rt.kind)][0]).replace("$NAMESPACE", namespace))
    if rt.kind == "CustomResourceDefinition":
        body["spec"]["names"]["plural"] = name
        name = f"{name}.{body['spec']['group']}"
    return {"apiVersion": rt.api_version, "kind": rt.kind, **body,
            "metadata": {**body.get("metadata", {}), "name": name}}, name


def group_word(rt: Any) -> str:
    """``events-`` for events.k8s.io, so its Event sample is not named as the core one (one resource)."""
    return "events-" if rt.group == "events.k8s.io" else ""


def model_name(api_version: str, kind: str) -> str:
    """The client's model of a kind: ``apps/v1`` ``Deployment`` → ``V1Deployment`` (core ``Event``:
    ``CoreV1Event``, as ``events.k8s.io`` has one too)."""
    if (api_version, kind) == ("v1", "Event"):
        return "CoreV1Event"
    if (api_version, kind) == ("events.k8s.io/v1", "Event"):
        return "EventsV1Event"
    version = api_version.rsplit("/", 1)[-1]
    return f"{version[:1].upper()}{version[1:]}{kind}"


def collection(rt: Any, namespace: str) -> str:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else "/api/v1"
    return f"{base}/namespaces/{namespace}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"


def typed_list_calls(api_client: k8s.ApiClient, namespace: str) -> dict[str, str]:
    """Run every typed ``list_*`` call of :data:`TYPED_APIS`; method → ``"ok"`` or the error's first line."""
    out: dict[str, str] = {}
    for api_class in TYPED_APIS:
        api = api_class(api_client)
        for name in sorted(dir(api)):
            if not name.startswith("list_") or name.endswith("_with_http_info"):
                continue
            method = getattr(api, name)
            try:
                method(namespace) if name.startswith("list_namespaced_") else method()
                out[f"{api_class.__name__}.{name}"] = "ok"
            except Exception as exc:  # noqa: BLE001 -- any failure is a failed typed call
                out[f"{api_class.__name__}.{name}"] = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return out


def _create_all(url: str, namespace: str) -> list[tuple[Any, str]]:
    """Create one sample of every served Kubernetes kind (and write its status); (row, name) pairs."""
    made = []
    with httpx.Client(base_url=url, timeout=10) as h:
        for rt in served_kubernetes_kinds():
            status = copy.deepcopy(SAMPLES[(rt.api_version, rt.kind)][1])
            body, name = sample_body(rt, f"typed-{group_word(rt)}{rt.version}-{rt.plural}" if rt.namespaced
                                     else f"typed-{namespace}-{rt.plural}", namespace)
            r = h.post(collection(rt, namespace), json=body)
            assert r.status_code == 201, (rt.kind, r.text)
            if status is not None:
                obj = r.json()
                obj["status"] = {**obj.get("status", {}), **status}
                r = h.put(f"{collection(rt, namespace)}/{name}/status", json=obj)
                assert r.status_code == 200, (rt.kind, r.text)
            made.append((rt, name))
    return made


def _delete(h: httpx.Client, path: str) -> None:
    """Delete an object, its finalizers first (no controller here takes off a claim's or volume's
    protection finalizer)."""
    h.patch(path, json={"metadata": {"finalizers": None}}, headers={"content-type": "application/merge-patch+json"})
    h.delete(path)


def _check_models(url: str, namespace: str) -> None:
    made = _create_all(url, namespace)
    api_client = k8s.ApiClient()
    with httpx.Client(base_url=url, timeout=10) as h:
        for rt, name in made:
            model = model_name(rt.api_version, rt.kind)
            one = h.get(f"{collection(rt, namespace)}/{name}")
            listed = h.get(collection(rt, namespace))
            assert one.status_code == listed.status_code == 200, (rt.kind, one.text, listed.text)
            obj = api_client.deserialize(one.text, model, "application/json")
            assert obj.metadata.name == name, rt.kind
            assert STANZAS.get((rt.api_version, rt.kind), lambda o: True)(obj), (rt.kind, one.text)
            items = api_client.deserialize(listed.text, f"{model}List", "application/json").items
            assert name in [i.metadata.name for i in items], rt.kind
        for rt, name in reversed(made):
            _delete(h, f"{collection(rt, namespace)}/{name}")


async def test_every_served_kind_deserializes_into_the_official_models(apiserver: APIServer,
                                                                       namespace: str) -> None:
    missing = [(rt.api_version, rt.kind) for rt in served_kubernetes_kinds()
               if (rt.api_version, rt.kind) not in SAMPLES]
    assert not missing, f"add a sample object of {missing} to SAMPLES"
    await asyncio.to_thread(_check_models, apiserver.url, namespace)


#: The typed list calls of kinds minik8s serves: every one must deserialize.
SERVED_LISTS = {
    "CoreV1Api": ["component_status", "config_map", "endpoints", "event", "namespace", "node", "pod",
                  "replication_controller", "secret",
                  "service", "service_account", "persistent_volume", "persistent_volume_claim"],
    "AppsV1Api": ["daemon_set", "deployment", "replica_set", "stateful_set"],
    "BatchV1Api": ["job", "cron_job"],
    "AutoscalingV2Api": ["horizontal_pod_autoscaler"],
    "StorageV1Api": ["storage_class"],
    "RbacAuthorizationV1Api": ["role", "role_binding", "cluster_role", "cluster_role_binding"],
    "DiscoveryV1Api": ["endpoint_slice"],
    "NetworkingV1Api": ["ingress", "network_policy"],
}
#: Cluster-scoped kinds among them (one ``list_<kind>`` call, no namespaced form).
CLUSTER_LISTS = ("component_status", "namespace", "node", "persistent_volume", "storage_class", "cluster_role",
                 "cluster_role_binding")


def _served_list_methods() -> set[str]:
    out = set()
    for api, kinds in SERVED_LISTS.items():
        for kind in kinds:
            if kind in CLUSTER_LISTS:
                out.add(f"{api}.list_{kind}")
            else:
                out |= {f"{api}.list_namespaced_{kind}", f"{api}.list_{kind}_for_all_namespaces"}
    return out


def _list_flow(url: str, namespace: str) -> dict[str, str]:
    made = _create_all(url, namespace)
    cfg = k8s.Configuration()
    cfg.host = url
    try:
        return typed_list_calls(k8s.ApiClient(cfg), namespace)
    finally:
        with httpx.Client(base_url=url, timeout=10) as h:
            for rt, name in reversed(made):
                _delete(h, f"{collection(rt, namespace)}/{name}")


async def test_typed_list_calls_of_served_kinds_succeed(apiserver: APIServer, namespace: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    results = await asyncio.to_thread(_list_flow, apiserver.url, namespace)
    ok = sorted(m for m, r in results.items() if r == "ok")
    failed = {m: results[m] for m in sorted(_served_list_methods()) if results.get(m) != "ok"}
    with capsys.disabled():
        print(f"\ntyped list calls: {len(ok)} of {len(results)} succeed "
              f"({len(_served_list_methods()) - len(failed)} of the {len(_served_list_methods())} of served kinds)")
    assert not failed, json.dumps(failed, indent=1)


# ---------------------------------------------------------------- typed CRUD and watch, every kind
#: The typed API class of each group/version minik8s serves Kubernetes kinds in.
API_CLASSES = {"v1": k8s.CoreV1Api, "apps/v1": k8s.AppsV1Api, "autoscaling/v2": k8s.AutoscalingV2Api,
               "batch/v1": k8s.BatchV1Api, "autoscaling/v1": k8s.AutoscalingV1Api,
               "coordination.k8s.io/v1": k8s.CoordinationV1Api, "policy/v1": k8s.PolicyV1Api,
               "discovery.k8s.io/v1": k8s.DiscoveryV1Api, "scheduling.k8s.io/v1": k8s.SchedulingV1Api,
               "node.k8s.io/v1": k8s.NodeV1Api, "certificates.k8s.io/v1": k8s.CertificatesV1Api,
               "networking.k8s.io/v1": k8s.NetworkingV1Api,
               "storage.k8s.io/v1": k8s.StorageV1Api,
               "rbac.authorization.k8s.io/v1": k8s.RbacAuthorizationV1Api,
               "apiextensions.k8s.io/v1": k8s.ApiextensionsV1Api, "events.k8s.io/v1": k8s.EventsV1Api,
               "flowcontrol.apiserver.k8s.io/v1": k8s.FlowcontrolApiserverV1Api}


def snake(kind: str) -> str:
    """``HorizontalPodAutoscaler`` → ``horizontal_pod_autoscaler``, ``CSIDriver`` → ``csi_driver`` (the
    typed methods' spelling: an acronym is one word)."""
    return "".join(f"_{c.lower()}" if c.isupper() and i and (kind[i - 1].islower() or
                                                             kind[i + 1:i + 2].islower()) else c.lower()
                   for i, c in enumerate(kind))


class TypedKind:
    """The typed calls of one kind: ``call("read", name)`` is ``read_namespaced_pod(name, namespace)``
    for a namespaced kind and ``read_node(name)`` for a cluster-scoped one."""

    def __init__(self, api_client: k8s.ApiClient, rt: Any, namespace: str) -> None:
        self.api = API_CLASSES[rt.api_version](api_client)
        self.rt = rt
        self.namespace = namespace

    def method(self, verb: str) -> Any:
        scope = "namespaced_" if self.rt.namespaced else ""
        return getattr(self.api, f"{verb}_{scope}{snake(self.rt.kind)}")

    def call(self, verb: str, *args: Any, **kwargs: Any) -> Any:
        if self.rt.namespaced:
            if verb in ("create", "list"):
                return self.method(verb)(self.namespace, *args, **kwargs)
            return self.method(verb)(args[0], self.namespace, *args[1:], **kwargs)
        return self.method(verb)(*args, **kwargs)


def _crud_one(api_client: k8s.ApiClient, rt: Any, namespace: str) -> None:
    """create, read, list, patch (seen by a watch), replace, delete — every answer typed."""
    from kubernetes import watch

    typed = TypedKind(api_client, rt, namespace)
    body, name = sample_body(rt, f"crud-{group_word(rt)}{rt.version}-{rt.plural}" if rt.namespaced
                             else f"crud-{namespace}-{rt.plural}", namespace)
    created = typed.call("create", body)
    assert created.metadata.name == name and created.metadata.uid, rt.kind
    read = typed.call("read", name)
    assert read.metadata.uid == created.metadata.uid, rt.kind  # (a controller may have written its status)
    listed = typed.call("list")
    assert name in [i.metadata.name for i in listed.items], rt.kind

    patched = typed.call("patch", name, {"metadata": {"labels": {"patched": "yes"}}})
    assert patched.metadata.labels["patched"] == "yes", rt.kind
    w = watch.Watch()
    seen = []
    list_args = (namespace,) if rt.namespaced else ()
    for event in w.stream(typed.method("list"), *list_args, resource_version=listed.metadata.resource_version,
                          timeout_seconds=5):
        if event["object"].metadata.name == name:  # (a controller's status writes come too)
            seen.append((event["type"], (event["object"].metadata.labels or {}).get("patched")))
            if seen[-1] == ("MODIFIED", "yes"):
                w.stop()
    assert seen and seen[-1] == ("MODIFIED", "yes"), (rt.kind, seen)

    for attempt in range(5):  # read-modify-write, again on a 409 (a controller wrote meanwhile)
        current = typed.call("read", name)
        current.metadata.labels["replaced"] = "yes"
        try:
            replaced = typed.call("replace", name, current)
            break
        except k8s.ApiException as exc:
            assert exc.status == 409 and attempt < 4, (rt.kind, exc.body)
    assert replaced.metadata.labels == {**(current.metadata.labels or {}), "replaced": "yes"}, rt.kind
    assert int(replaced.metadata.resource_version) > int(current.metadata.resource_version), rt.kind

    typed.call("delete", name)
    try:
        gone = typed.call("read", name)
    except k8s.ApiException as exc:
        assert exc.status == 404, rt.kind
    else:  # a namespace is emptied first: Terminating until then
        if rt.kind == "Namespace":
            assert gone.status.phase == "Terminating", rt.kind
        else:  # a claim or a volume waits for its protection finalizer (no controller runs here); a CRD
            # waits for the apiserver's own cleanup, which may finish before the patch below (then a 404)
            assert gone.metadata.deletion_timestamp and gone.metadata.finalizers, rt.kind
            try:
                typed.call("patch", name, {"metadata": {"finalizers": None}})
            except k8s.ApiException as exc:
                assert exc.status == 404 and rt.kind == "CustomResourceDefinition", (rt.kind, exc.body)
            try:
                typed.call("read", name)
                raise AssertionError(f"{rt.kind} {name} is still there without finalizers")
            except k8s.ApiException as exc:
                assert exc.status == 404, rt.kind


def _crud_flow(url: str, namespace: str) -> None:
    cfg = k8s.Configuration()
    cfg.host = url
    api_client = k8s.ApiClient(cfg)
    for rt in served_kubernetes_kinds():
        _crud_one(api_client, rt, namespace)
    # what the service account controller keeps, read typed
    sa = k8s.CoreV1Api(api_client).read_namespaced_service_account("default", namespace)
    assert sa.metadata.name == "default"


async def test_typed_crud_and_watch_of_every_served_kind(apiserver: APIServer, client: Any, namespace: str) -> None:
    from tests.support.controllers import controller_manager
    from tests.support.waiting import wait_for

    sa_rt = client.kind("v1", "ServiceAccount")
    async with controller_manager(client, namespace, ["serviceaccount", "replicaset", "replicationcontroller",
                                                      "deployment"]):
        await wait_for(lambda: client.get(sa_rt, "default", namespace), timeout=10, what="the default ServiceAccount")
        await asyncio.to_thread(_crud_flow, apiserver.url, namespace)


MANIFESTS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: builder}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: minik8s/busybox, command: [sleep, "3600"]}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 0
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: main, image: minik8s/busybox, command: [sleep, "3600"]}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
"""


def _yaml_flow(url: str, namespace: str, path: str) -> None:
    from kubernetes import utils

    cfg = k8s.Configuration()
    cfg.host = url
    api_client = k8s.ApiClient(cfg)
    created = utils.create_from_yaml(api_client, path, namespace=namespace)
    objects = [o for group in created for o in (group if isinstance(group, list) else [group])]
    assert [(type(o).__name__, o.metadata.name) for o in objects] == [
        ("V1ConfigMap", "settings"), ("V1ServiceAccount", "builder"), ("V1Service", "web"),
        ("V1Deployment", "web"), ("V1ReplicationController", "legacy"), ("V2HorizontalPodAutoscaler", "web")]
    service = objects[2]
    assert service.status.load_balancer is not None and service.spec.cluster_ip
    rc = k8s.CoreV1Api(api_client).read_namespaced_replication_controller("legacy", namespace)
    assert rc.spec.selector == {"app": "legacy"}


async def test_create_from_yaml_multi_document(apiserver: APIServer, namespace: str, tmp_path: Any) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(MANIFESTS)
    await asyncio.to_thread(_yaml_flow, apiserver.url, namespace, str(path))
