"""minik8s' kubectl against the official kubectl 1.32 (:mod:`tests.realkubectl`) for ``describe`` (pod,
node, namespace, service, endpoints, ingress, networkpolicy, configmap, secret, job, cronjob, deployment, replicaset,
statefulset, daemonset, replicationcontroller, endpointslice, hpa, serviceaccount, role, clusterrole, rolebinding,
clusterrolebinding, persistentvolume, persistentvolumeclaim, storageclass, and the kinds kubectl
describes generically: a CustomResourceDefinition and its custom resource, Lease, Event, minik8s'
Function, Workflow, WorkflowRun, Trigger, DNS, SlurmCluster), ``logs`` and ``exec``: the same
invocations, against the same apiserver and objects, must print the same (exit code, stdout and the
whole of stderr).

One apiserver (the session's) and one namespace for the module: two Deployments (one with an old and a
new ReplicaSet it controls, one with none), their ReplicaSets and pods, two HPAs (Resource metrics,
the only type minik8s serves; a behavior), two ServiceAccounts (pull, mountable and token secrets), a
Role and a ClusterRole, their bindings, a two-container pod, one whose
``kubectl.kubernetes.io/default-container`` annotation names its second container, a one-container
pod and a Job with a pod; a CronJob, two Services, a ConfigMap and a Secret (one data key each:
kubectl prints a map's keys in Go's random order); a StatefulSet (claim templates) with a pod, a
DaemonSet (its counts set), a ReplicationController, Endpoints and EndpointSlices for Services, two Ingresses
(rules, TLS, default backends), two NetworkPolicies (every kind of peer and port), a PersistentVolume
and its claim (the bound statuses set here: no
controller runs), an unbound claim and a pod using the bound one, a StorageClass, a CRD
(``Gadget``) and a custom resource whose fields exercise the generic rendering, a Lease, an Event
about a pod, a Function, a Workflow, a WorkflowRun, a Trigger, a DNS and a SlurmCluster.
Cluster-scoped objects are described by name only (the session's apiserver holds other modules'
too).  The pods are bound to a Node whose kubelet is the stand-in
:class:`tests.support.stream_kubelet.FakeKubelet` (every container's log is ``line 1`` ..
``line 5``; exec prints ``ran CMD`` and ``to stderr``), so ``logs`` and ``exec`` reach a kubelet
without containers.
No controller runs: the objects never change, and every case is submitted at once when the module
starts (:class:`~tests.support.kubectl_parity.Runs`).

Normalisation: both runs get ``TZ=UTC`` (describe prints CreationTimestamp in the local zone);
ages become ``<age>`` as in the ``get`` parity test (the Node's pods and the Events tables print
them).  What prints uids, IPs or resourceVersions prints the same objects' on both sides.  Where
the official kubectl walks a Go map (``logs -l``: the pods' and
containers' requests, and their ``Defaulted container`` lines), the order is random, so those cases
compare stdout's and stderr's lines sorted.  Nothing else is rewritten but the differences listed in
:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES` named in :data:`DIFFERENCES`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from concurrent.futures import Future

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import find
from tests.support.kubectl import Result
from tests.support.kubectl_parity import Runs, tolerate
from tests.support.processes import APIServer
from tests.support.stream_kubelet import FakeKubelet

NS = "dparity"
CRD_GROUP = "dparity.example.com"
CRD = {"metadata": {"name": f"gadgets.{CRD_GROUP}"},
       "spec": {"group": CRD_GROUP, "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "shortNames": ["gd"]},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
VERSION = "1.32"
AGE = re.compile(r"\b\d+(?:d\d*h?|h\d*m?|m\d*s?|s)\b")
TEMPLATE = {"metadata": {"labels": {"app": "front"}},
            "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
                                     "env": [{"name": "MODE", "value": "prod"}]},
                                    {"name": "side", "image": "busybox", "command": ["sleep", "3600"]}]}}


def _post(h: httpx.Client, path: str, body: dict) -> dict:
    r = h.post(path, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _owner(obj: dict) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _pod(h: httpx.Client, node: str, name: str, containers: list[str], labels: dict | None = None,
         owner: dict | None = None, annotations: dict | None = None, running: bool = False) -> None:
    meta: dict = {"name": name, "labels": labels or {}, "annotations": annotations or {}}
    if owner:
        meta["ownerReferences"] = [owner]
    _post(h, f"/api/v1/namespaces/{NS}/pods",
          {"metadata": meta, "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}})
    _post(h, f"/api/v1/namespaces/{NS}/pods/{name}/binding",
          {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}})
    if running:
        pod = h.get(f"/api/v1/namespaces/{NS}/pods/{name}").json()
        pod["status"] = {**(pod.get("status") or {}), "phase": "Running"}
        r = h.put(f"/api/v1/namespaces/{NS}/pods/{name}/status", json=pod)
        assert r.status_code == 200, r.text


def _status(h: httpx.Client, path: str, status: dict) -> None:
    obj = h.get(path).json()
    obj["status"] = status
    r = h.put(f"{path}/status", json=obj)
    assert r.status_code == 200, r.text


def _rich_node_and_pod(h: httpx.Client, node: str) -> None:
    """A Node with capacity, conditions, taints and system info, and a pod on it with init containers,
    resources, probes, env sources, several volume kinds, tolerations and container statuses."""
    _post(h, "/api/v1/nodes", {
        "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node, "node-role.kubernetes.io/worker": ""}},
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
                 "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"},
                            {"key": "dedicated", "effect": "PreferNoSchedule"}]}})
    _status(h, f"/api/v1/nodes/{node}", {
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"},
        "allocatable": {"cpu": "3800m", "memory": "7Gi", "pods": "110", "ephemeral-storage": "90Gi"},
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready",
                        "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}, {"type": "Hostname", "address": node}],
        "nodeInfo": {"machineID": "m1", "systemUUID": "u1", "bootID": "b1", "kernelVersion": "6.1",
                     "osImage": "Debian", "operatingSystem": "linux", "architecture": "amd64",
                     "containerRuntimeVersion": "minik8s://1", "kubeletVersion": "v1.32.0",
                     "kubeProxyVersion": "v1.32.0"}})
    lease = {"metadata": {"name": node},
             "spec": {"holderIdentity": node, "leaseDurationSeconds": 40,
                      "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:30.123456Z"}}
    r = h.post("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", json=lease)
    assert r.status_code in (201, 409), r.text
    # the Priority admission plugin sets the pod's priority from its class
    _post(h, "/apis/scheduling.k8s.io/v1/priorityclasses", {"metadata": {"name": f"{NS}-five"}, "value": 5})
    _post(h, f"/api/v1/namespaces/{NS}/pods", {
        "metadata": {"name": "rich", "labels": {"app": "rich"}},
        "spec": {"nodeName": node, "priorityClassName": f"{NS}-five", "serviceAccountName": "robot",
                 "nodeSelector": {"disk": "ssd"},
                 "tolerations": [{"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"},
                                 {"operator": "Exists"},
                                 {"key": "slow", "operator": "Exists", "effect": "NoExecute",
                                  "tolerationSeconds": 30}],
                 "initContainers": [{"name": "setup", "image": "busybox", "command": ["sh", "-c", "echo hi"]}],
                 "containers": [{
                     "name": "app", "image": "nginx:1.25",
                     "ports": [{"containerPort": 80}, {"containerPort": 443, "hostPort": 8443}],
                     "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                                   "limits": {"cpu": "1", "memory": "128Mi"}},
                     "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5},
                     "readinessProbe": {"tcpSocket": {"port": 443}},
                     "envFrom": [{"configMapRef": {"name": "settings"}},
                                 {"prefix": "S_", "secretRef": {"name": "creds"}}],
                     "env": [{"name": "A", "value": "1"},
                             {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                             {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                             {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}}],
                     "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": True},
                                      {"name": "scratch", "mountPath": "/tmp", "subPath": "x"}]}],
                 "volumes": [{"name": "cfg", "configMap": {"name": "settings"}},
                             {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
                             {"name": "sec", "secret": {"secretName": "creds", "optional": True}}]}})
    _status(h, f"/api/v1/namespaces/{NS}/pods/rich", {
        "phase": "Running", "hostIP": "10.0.0.5", "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}],
        "startTime": "2026-01-01T00:00:00Z", "qosClass": "Burstable",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        "initContainerStatuses": [{"name": "setup", "ready": False, "restartCount": 0, "image": "busybox",
                                   "imageID": "docker://sha", "containerID": "docker://c0",
                                   "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                            "startedAt": "2026-01-01T00:00:00Z",
                                                            "finishedAt": "2026-01-01T00:00:01Z"}}}],
        "containerStatuses": [{"name": "app", "ready": True, "restartCount": 2, "image": "nginx:1.25",
                               "imageID": "docker://sha2", "containerID": "docker://c1",
                               "state": {"running": {"startedAt": "2026-01-01T00:00:02Z"}},
                               "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                                                            "startedAt": "2026-01-01T00:00:00Z",
                                                            "finishedAt": "2026-01-01T00:00:01Z"}}}]})


def _workloads(h: httpx.Client, node: str) -> None:
    """A StatefulSet (claim templates, a partition) with a running pod, a DaemonSet with its counts, a
    ReplicationController."""
    sts = _post(h, f"/apis/apps/v1/namespaces/{NS}/statefulsets", {
        "metadata": {"name": "db", "labels": {"tier": "data"}, "annotations": {"team": "b"}},
        "spec": {"serviceName": "db", "replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "pg", "image": "postgres",
                                                       "volumeMounts": [{"name": "data", "mountPath": "/var"}]}]}},
                 "volumeClaimTemplates": [
                     {"metadata": {"name": "data", "labels": {"kind": "pg"}},
                      "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                               "resources": {"requests": {"storage": "1Gi"}}}},
                     {"metadata": {"name": "scratch"}, "spec": {"accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                                                                "resources": {}}}]}})
    _pod(h, node, "db-0", ["pg"], {"app": "db"}, _owner(sts), running=True)
    _post(h, f"/apis/apps/v1/namespaces/{NS}/statefulsets", {
        "metadata": {"name": "cache"},
        "spec": {"serviceName": "cache", "selector": {"matchLabels": {"app": "cache"}},
                 "updateStrategy": {"type": "OnDelete"},
                 "template": {"metadata": {"labels": {"app": "cache"}},
                              "spec": {"containers": [{"name": "redis", "image": "redis"}]}}}})
    _post(h, f"/apis/batch/v1/namespaces/{NS}/jobs", {
        "metadata": {"name": "indexed"},
        "spec": {"completions": 3, "parallelism": 2, "completionMode": "Indexed", "ttlSecondsAfterFinished": 60,
                 "activeDeadlineSeconds": 600, "suspend": False,
                 "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "busybox"}]}}}})
    _status(h, f"/apis/batch/v1/namespaces/{NS}/jobs/indexed", {
        "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T01:02:03Z", "succeeded": 3,
        "ready": 0, "completedIndexes": "0-2",
        "conditions": [{"type": "Complete", "status": "True", "lastProbeTime": "2026-01-01T01:02:03Z",
                        "lastTransitionTime": "2026-01-01T01:02:03Z"}]})
    _post(h, f"/apis/batch/v1/namespaces/{NS}/cronjobs", {
        "metadata": {"name": "zoned"},
        "spec": {"schedule": "*/5 * * * *", "timeZone": "Europe/Paris", "suspend": True,
                 "successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 0,
                 "jobTemplate": {"spec": {"completions": 2, "parallelism": 1, "activeDeadlineSeconds": 30,
                                          "template": {"metadata": {"labels": {"cj": "zoned"}}, "spec": {
                                              "restartPolicy": "Never",
                                              "containers": [{"name": "c", "image": "busybox"}]}}}}}})
    _status(h, f"/apis/batch/v1/namespaces/{NS}/cronjobs/zoned", {
        "lastScheduleTime": "2026-01-01T00:05:00Z",
        "active": [{"kind": "Job", "name": "zoned-1", "namespace": NS}, {"kind": "Job", "name": "zoned-2",
                                                                       "namespace": NS}]})
    _post(h, f"/apis/apps/v1/namespaces/{NS}/daemonsets", {
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"nodeSelector": {"disk": "ssd", "zone": "a"},
                                       "containers": [{"name": "a", "image": "busybox"}]}}}})
    _status(h, f"/apis/apps/v1/namespaces/{NS}/daemonsets/agent", {
        "desiredNumberScheduled": 3, "currentNumberScheduled": 2, "updatedNumberScheduled": 1,
        "numberAvailable": 1, "numberMisscheduled": 0, "numberReady": 1})
    _post(h, f"/api/v1/namespaces/{NS}/replicationcontrollers", {
        "metadata": {"name": "legacy", "labels": {"app": "legacy"}},
        "spec": {"replicas": 1, "selector": {"app": "legacy"},
                 "template": {"metadata": {"labels": {"app": "legacy"}},
                              "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})


def _storage_and_network(h: httpx.Client) -> None:
    """Endpoints for the ``web`` Service, two Ingresses, a bound PV/PVC pair (statuses set here), an
    unbound claim and a pod using the bound one, a StorageClass."""
    _post(h, f"/api/v1/namespaces/{NS}/endpoints", {
        "metadata": {"name": "web", "labels": {"app": "front"}},
        "subsets": [{"addresses": [{"ip": "10.1.0.1"}, {"ip": "10.1.0.2"}],
                     "notReadyAddresses": [{"ip": "10.1.0.9"}],
                     "ports": [{"name": "http", "port": 8080, "protocol": "TCP"},
                               {"name": "metrics", "port": 9090, "protocol": "TCP"}]},
                    {"addresses": [{"ip": "10.1.0.3"}, {"ip": "10.1.0.4"}],
                     "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]})
    web_slice = {"kubernetes.io/service-name": "web"}
    _post(h, f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices", {
        "metadata": {"name": "web-a", "labels": web_slice, "annotations": {"note": "a"}}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.0.1"], "conditions": {"ready": True, "serving": True, "terminating": False},
                       "hostname": "web-0", "nodeName": "node-1", "zone": "z1",
                       "targetRef": {"kind": "Pod", "namespace": NS, "name": "front-new-a"}},
                      {"addresses": ["10.1.0.2"]},
                      {"addresses": ["10.1.0.9"], "conditions": {"ready": False}},
                      {"addresses": ["10.1.0.5"], "conditions": {"ready": True}}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"},
                  {"name": "metrics", "port": 9090, "protocol": "TCP", "appProtocol": "http"}]})
    _post(h, f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices", {
        "metadata": {"name": "web-b", "labels": web_slice}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.0.3"]}, {"addresses": ["10.1.0.4"]}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]})
    _post(h, f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices", {
        "metadata": {"name": "np-a", "labels": {"kubernetes.io/service-name": "np"}}, "addressType": "IPv4"})
    _post(h, f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses", {
        "metadata": {"name": "site", "labels": {"app": "front"}, "annotations": {"owner": "web-team"}},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}},
                 "tls": [{"hosts": ["foo.example.com", "bar.example.com"], "secretName": "site-tls"},
                         {"hosts": ["sni.example.com"]}],
                 "rules": [{"host": "foo.example.com", "http": {"paths": [
                     {"path": "/", "pathType": "Prefix",
                      "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                     {"path": "/metrics", "pathType": "Exact",
                      "backend": {"service": {"name": "web", "port": {"name": "metrics"}}}}]}},
                           {"http": {"paths": [{"path": "/gone", "pathType": "Prefix",
                                                "backend": {"service": {"name": "missing", "port": {"number": 81}}}}]}},
                           {"host": "res.example.com", "http": {"paths": [
                               {"path": "/static", "pathType": "Prefix",
                                "backend": {"resource": {"apiGroup": "k8s.example.com", "kind": "Bucket",
                                                         "name": "assets"}}}]}},
                           {"host": "nohttp.example.com"}]}})
    _post(h, f"/api/v1/namespaces/{NS}/endpoints", {
        "metadata": {"name": "headless"},
        "subsets": [{"addresses": [{"ip": "10.2.0.1"}]}, {"notReadyAddresses": [{"ip": "10.2.0.2"}],
                                                         "ports": [{"port": 53, "protocol": "UDP"}]}]})
    _post(h, f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses", {
        "metadata": {"name": "bare"},
        "spec": {"ingressClassName": "nginx",
                 "defaultBackend": {"service": {"name": "np", "port": {"number": 443}}}}})
    _post(h, f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies", {
        "metadata": {"name": "deny-all", "labels": {"tier": "net"}}, "spec": {"podSelector": {}}})
    _post(h, f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies", {
        "metadata": {"name": "web-policy", "annotations": {"note": "matrix"}},
        "spec": {"podSelector": {"matchLabels": {"app": "front"},
                                 "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
                 "ingress": [{"from": [{"podSelector": {"matchLabels": {"role": "c"}}},
                                       {"namespaceSelector": {"matchLabels": {"team": "b"}}, "podSelector": {}},
                                       {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16", "10.2.0.0/16"]}},
                                       {"namespaceSelector": {}}],
                              "ports": [{"port": "http"}, {"port": 9000, "endPort": 9010, "protocol": "UDP"},
                                        {"protocol": "SCTP"}]}, {}],
                 "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 53, "protocol": "UDP"}]},
                            {"ports": [{"port": 443}]}]}})
    _post(h, "/api/v1/persistentvolumes", {
        "metadata": {"name": f"{NS}-pv", "labels": {"speed": "fast"}},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "manual",
                 "hostPath": {"path": "/data/pv"},
                 "claimRef": {"namespace": NS, "name": "claim"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "zone", "operator": "In", "values": ["a", "b"]},
                     {"key": "disk", "operator": "Exists"}]}]}}}})
    _status(h, f"/api/v1/persistentvolumes/{NS}-pv", {"phase": "Bound"})
    _post(h, f"/api/v1/namespaces/{NS}/persistentvolumeclaims", {
        "metadata": {"name": "claim", "annotations": {"note": "bound"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "manual", "volumeName": f"{NS}-pv",
                 "resources": {"requests": {"storage": "1Gi"}}}})
    _status(h, f"/api/v1/namespaces/{NS}/persistentvolumeclaims/claim",
            {"phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadWriteMany"], "capacity": {"storage": "1Gi"}})
    _post(h, f"/api/v1/namespaces/{NS}/persistentvolumeclaims", {
        "metadata": {"name": "cloned"},
        "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Block",
                 "dataSource": {"kind": "PersistentVolumeClaim", "name": "claim"},
                 "resources": {"requests": {"storage": "1Gi"}}}})
    _post(h, f"/api/v1/namespaces/{NS}/persistentvolumeclaims", {
        "metadata": {"name": "waiting"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}})
    _post(h, f"/api/v1/namespaces/{NS}/pods", {
        "metadata": {"name": "user"},
        "spec": {"containers": [{"name": "c", "image": "busybox",
                                 "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True}]}],
                 "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "claim"}},
                             {"name": "h", "hostPath": {"path": "/tmp"}}]}})
    _post(h, "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "metadata": {"name": f"{NS}-pc", "annotations": {"note": "x", "a": "b"}},
        "value": 1000, "globalDefault": False, "description": "for the parity test", "preemptionPolicy": "Never"})
    _post(h, "/apis/storage.k8s.io/v1/storageclasses", {
        "metadata": {"name": f"{NS}-sc", "annotations": {"note": "x"}},
        "provisioner": "example.com/fake", "parameters": {"type": "fast", "iops": "10"},
        "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True,
        "mountOptions": ["ro", "noatime"],
        "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}]})


def _quota_and_limits(h: httpx.Client) -> None:
    """ResourceQuotas (one scoped, both with a status as the quota controller writes it) and a
    LimitRange of one resource per type (kubectl prints an item's resources in a Go map's order);
    made last, so the LimitRange defaults no other pod."""
    base = f"/api/v1/namespaces/{NS}/resourcequotas"
    _post(h, base, {"metadata": {"name": "compute"},
                    "spec": {"hard": {"pods": "10", "requests.cpu": "2", "limits.memory": "2Gi"}}})
    _status(h, f"{base}/compute", {"hard": {"pods": "10", "requests.cpu": "2", "limits.memory": "2Gi"},
                                   "used": {"pods": "3", "requests.cpu": "500m", "limits.memory": "512Mi"}})
    _post(h, base, {"metadata": {"name": "scoped"}, "spec": {"hard": {"pods": "4"},
                                                            "scopes": ["NotTerminating", "BestEffort"]}})
    _status(h, f"{base}/scoped", {"hard": {"pods": "4"}, "used": {"pods": "0"}})
    _post(h, f"/api/v1/namespaces/{NS}/limitranges", {"metadata": {"name": "bounds"}, "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "100m"}, "maxLimitRequestRatio": {"cpu": "4"}},
        {"type": "Pod", "max": {"memory": "4Gi"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}}]}})


def _cluster_classes_and_budgets(h: httpx.Client) -> None:
    """The cluster-scoped classes and storage records (IngressClass, RuntimeClass, the CSI kinds),
    a PodDisruptionBudget with a status, a PodTemplate."""
    _post(h, "/apis/networking.k8s.io/v1/ingressclasses", {
        "metadata": {"name": f"{NS}-ic", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "example.com/ingress",
                 "parameters": {"apiGroup": "example.com", "kind": "Params", "name": "p1"}}})
    _post(h, "/apis/node.k8s.io/v1/runtimeclasses", {
        "metadata": {"name": f"{NS}-rc"}, "handler": "runc", "overhead": {"podFixed": {"cpu": "100m"}},
        "scheduling": {"nodeSelector": {"sandbox": "yes"}}})
    _post(h, "/apis/storage.k8s.io/v1/csidrivers", {
        "metadata": {"name": f"{NS}.csi.example.com"},
        "spec": {"attachRequired": False, "podInfoOnMount": True, "volumeLifecycleModes": ["Persistent", "Ephemeral"],
                 "tokenRequests": [{"audience": "vault", "expirationSeconds": 3600}]}})
    _post(h, "/apis/storage.k8s.io/v1/csinodes", {
        "metadata": {"name": f"{NS}-csinode"},
        "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1", "topologyKeys": ["zone"],
                              "allocatable": {"count": 8}}]}})
    _post(h, "/apis/storage.k8s.io/v1/volumeattachments", {
        "metadata": {"name": f"{NS}-va"},
        "spec": {"attacher": "csi.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}}})
    _post(h, f"/apis/storage.k8s.io/v1/namespaces/{NS}/csistoragecapacities", {
        "metadata": {"name": "cap"}, "storageClassName": f"{NS}-sc", "capacity": "10Gi"})
    base = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"
    _post(h, base, {"metadata": {"name": "front-pdb"},
                    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "front"}}}})
    _post(h, base, {"metadata": {"name": "pct"},
                    "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "none"}},
                             "unhealthyPodEvictionPolicy": "AlwaysAllow"}})
    _post(h, f"/api/v1/namespaces/{NS}/podtemplates", {"metadata": {"name": "tmpl"}, "template": TEMPLATE})


def _access_and_generic(h: httpx.Client) -> None:
    """Bindings; a CRD and a custom resource, a Lease, an Event about ``solo``, minik8s' Function,
    Workflow, WorkflowRun, Trigger, DNS and SlurmCluster (the kinds kubectl describes generically)."""
    subjects = [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "robot", "namespace": NS},
                {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]
    _post(h, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings", {
        "metadata": {"name": "read", "labels": {"team": "a"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}, "subjects": subjects})
    _post(h, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": f"{NS}-urls"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{NS}-urls"},
        "subjects": subjects[1:2]})
    _post(h, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)
    deadline = time.monotonic() + 30
    while h.get(f"/apis/{CRD_GROUP}/v1").status_code != 200:
        assert time.monotonic() < deadline, "the CRD is not served"
        time.sleep(0.2)
    _post(h, f"/apis/{CRD_GROUP}/v1/namespaces/{NS}/gadgets", {
        "apiVersion": f"{CRD_GROUP}/v1", "kind": "Gadget",
        "metadata": {"name": "g1", "labels": {"app.kubernetes.io/name": "gadget"}, "annotations": {"a": "b"}},
        "spec": {"size": 3, "ratio": 0.5, "big": 2500000.0, "enabled": True, "tags": ["x", "y"],
                 "note": "line one\nline two", "podIP": "10.0.0.1", "apiURL": "http://x", "fooBar-baz": 1,
                 "nested": {"deepKey": "v", "app.kubernetes.io/name": "n", "empty": {}},
                 "items": [{"name": "one", "port": 80}, {"name": "two", "port": 81}], "none": []}})
    _post(h, f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases", {
        "metadata": {"name": "lock"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}})
    _post(h, f"/api/v1/namespaces/{NS}/events", {
        "metadata": {"name": "solo.started"},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": "solo", "apiVersion": "v1"},
        "reason": "Started", "message": "Started container only", "type": "Normal", "count": 1,
        "source": {"component": "kubelet"}, "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:00Z"})
    for name, reason, kind, count, first, last in (
            ("two.pulled", "Pulled", "Normal", 3, "2026-01-01T00:00:00Z", "2026-01-01T00:10:00Z"),
            ("two.backoff", "BackOff", "Warning", 1, "2026-01-01T00:05:00Z", "2026-01-01T00:05:00Z")):
        _post(h, f"/api/v1/namespaces/{NS}/events", {
            "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "namespace": NS, "name": "two", "apiVersion": "v1"},
            "reason": reason, "message": f"  {reason} happened  ", "type": kind, "count": count,
            "source": {"component": "kubelet", "host": "n1"}, "firstTimestamp": first, "lastTimestamp": last})
    _post(h, f"/apis/minik8s.io/v1/namespaces/{NS}/functions", {
        "metadata": {"name": "hello"}, "spec": {"source": "def handler(event, context):\n    return event\n"}})
    _post(h, f"/apis/minik8s.io/v1/namespaces/{NS}/workflows", {
        "metadata": {"name": "route"},
        "spec": {"startAt": "Check", "states": {
            "Check": {"type": "Choice", "choices": [{"variable": "$.n", "numericGreaterThan": 10, "next": "Big"}],
                      "default": "Small"},
            "Big": {"type": "Task", "function": "hello", "end": True},
            "Small": {"type": "Pass", "result": "small", "end": True}}}})
    _post(h, f"/apis/minik8s.io/v1/namespaces/{NS}/workflowruns", {
        "metadata": {"name": "run1"}, "spec": {"workflowRef": {"name": "route"}, "input": {"n": 12, "w": 0.25}}})
    _post(h, f"/apis/minik8s.io/v1/namespaces/{NS}/triggers", {
        "metadata": {"name": "orders"},
        "spec": {"filter": {"attributes": {"type": "order.created"}},
                 "subscriber": {"ref": {"kind": "Workflow", "name": "route"}}}})
    _post(h, f"/apis/minik8s.io/v1/namespaces/{NS}/dnses", {
        "metadata": {"name": "shop"},
        "spec": {"host": "shop.example.com", "paths": [{"path": "/api", "serviceName": "web", "servicePort": 80}]}})
    _post(h, "/apis/minik8s.io/v1/slurmclusters", {
        "metadata": {"name": f"{NS}-slurm"},
        "spec": {"host": "login.example.com", "port": 22, "user": "me",
                 "secretRef": {"name": "ssh", "namespace": NS}, "defaultPartition": "gpu"}})


@pytest.fixture(scope="module")
def kubelet() -> Iterator[FakeKubelet]:
    """The stand-in kubelet the module's Node points at."""
    fake = FakeKubelet()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def objects(apiserver: APIServer, kubelet: FakeKubelet) -> Iterator[None]:
    """The module's namespace, Node, Deployments, ReplicaSets, Job and pods (see the module's docstring)."""
    node = f"dparity-{os.urandom(3).hex()}"
    with httpx.Client(base_url=apiserver.url) as h:
        _post(h, "/api/v1/namespaces", {"metadata": {"name": NS}})
        created = _post(h, "/api/v1/nodes", {"metadata": {"name": node}})
        created["status"] = {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                             "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet.port}}}
        assert h.put(f"/api/v1/nodes/{node}/status", json=created).status_code == 200
        front = _post(h, f"/apis/apps/v1/namespaces/{NS}/deployments", {
            "metadata": {"name": "front", "labels": {"tier": "web"}, "annotations": {"team": "a"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "front"}}, "template": TEMPLATE}})
        _post(h, f"/apis/apps/v1/namespaces/{NS}/deployments", {
            "metadata": {"name": "lone"},
            "spec": {"selector": {"matchLabels": {"app": "lone"}}, "minReadySeconds": 5,
                     "strategy": {"type": "Recreate"},
                     "template": {"metadata": {"labels": {"app": "lone"}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})
        old_template = {"metadata": {"labels": {"app": "front", "pod-template-hash": "old"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.0"}]}}
        _post(h, f"/apis/apps/v1/namespaces/{NS}/replicasets", {
            "metadata": {"name": "front-old", "labels": {"app": "front", "pod-template-hash": "old"},
                         "ownerReferences": [_owner(front)]},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "front", "pod-template-hash": "old"}},
                     "template": old_template}})
        new_template = {**TEMPLATE, "metadata": {"labels": {"app": "front", "pod-template-hash": "new"}}}
        new = _post(h, f"/apis/apps/v1/namespaces/{NS}/replicasets", {
            "metadata": {"name": "front-new", "labels": {"app": "front", "pod-template-hash": "new"},
                         "annotations": {"deployment.kubernetes.io/revision": "2"},
                         "ownerReferences": [_owner(front)]},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "front", "pod-template-hash": "new"}},
                     "template": new_template}})
        labels = {"app": "front", "pod-template-hash": "new"}
        _pod(h, node, "front-new-a", ["web", "side"], labels, _owner(new), running=True)
        _pod(h, node, "front-new-b", ["web", "side"], labels, _owner(new))
        _pod(h, node, "two", ["c1", "c2"])
        _pod(h, node, "anno", ["c1", "c2"], annotations={"kubectl.kubernetes.io/default-container": "c2"})
        _pod(h, node, "solo", ["only"])
        job = _post(h, f"/apis/batch/v1/namespaces/{NS}/jobs", {
            "metadata": {"name": "j"},
            "spec": {"manualSelector": True, "selector": {"matchLabels": {"job": "j"}},
                     "template": {"metadata": {"labels": {"job": "j"}},
                                  "spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "work", "image": "busybox"}]}}}})
        _pod(h, node, "j-pod", ["work"], {"job": "j"}, _owner(job))
        _post(h, f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "cm"}})
        _post(h, f"/api/v1/namespaces/{NS}/configmaps", {
            "metadata": {"name": "settings", "labels": {"app": "front"},
                         "annotations": {"long": "x" * 200, "multi": "first\nsecond\n  third",
                                         "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "data": {"multi": "a\nb\n"}, "binaryData": {"blob": "AAEC"}})
        _post(h, f"/api/v1/namespaces/{NS}/secrets", {
            "metadata": {"name": "creds"}, "type": "Opaque",
            "data": {"password": "c2VjcmV0"}})
        _post(h, f"/api/v1/namespaces/{NS}/services", {
            "metadata": {"name": "web", "labels": {"app": "front"}},
            "spec": {"selector": {"app": "front"},
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080},
                               {"name": "metrics", "port": 9090, "protocol": "TCP"}]}})
        _post(h, f"/api/v1/namespaces/{NS}/services", {
            "metadata": {"name": "np"},
            "spec": {"type": "NodePort", "selector": {"app": "lone"}, "ports": [{"port": 443}]}})
        _post(h, f"/api/v1/namespaces/{NS}/services", {
            "metadata": {"name": "lb"},
            "spec": {"type": "LoadBalancer", "selector": {"app": "front", "tier": "web"},
                     "externalTrafficPolicy": "Local", "sessionAffinity": "ClientIP",
                     "externalIPs": ["192.0.2.10", "192.0.2.11"], "loadBalancerSourceRanges": ["10.0.0.0/8"],
                     "ports": [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}]}})
        _status(h, f"/api/v1/namespaces/{NS}/services/lb",
                {"loadBalancer": {"ingress": [{"ip": "203.0.113.5"}, {"hostname": "lb.example.com"}]}})
        _post(h, f"/api/v1/namespaces/{NS}/services", {
            "metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "db.example.com"}})
        _post(h, f"/apis/batch/v1/namespaces/{NS}/cronjobs", {
            "metadata": {"name": "nightly", "labels": {"tier": "batch"}},
            "spec": {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 30,
                     "jobTemplate": {"spec": {"backoffLimit": 2, "template": {"spec": {
                         "restartPolicy": "OnFailure",
                         "containers": [{"name": "backup", "image": "busybox", "args": ["run"]}]}}}}}})
        _post(h, f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers", {
            "metadata": {"name": "front", "labels": {"tier": "web"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "front"},
                     "minReplicas": 1, "maxReplicas": 5, "metrics": [
                         {"type": "Resource", "resource": {"name": "cpu", "target": {
                             "type": "Utilization", "averageUtilization": 80}}},
                         {"type": "Resource", "resource": {"name": "memory", "target": {
                             "type": "AverageValue", "averageValue": "100Mi"}}}],
                     "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60, "policies": [
                         {"type": "Pods", "value": 1, "periodSeconds": 30},
                         {"type": "Percent", "value": 10, "periodSeconds": 60}], "selectPolicy": "Min"}}}})
        _post(h, f"/apis/autoscaling/v1/namespaces/{NS}/horizontalpodautoscalers", {
            "metadata": {"name": "plain"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "lone"},
                     "maxReplicas": 3}})
        sa = _post(h, f"/api/v1/namespaces/{NS}/serviceaccounts", {
            "metadata": {"name": "robot", "annotations": {"note": "x"}},
            "imagePullSecrets": [{"name": "pull-a"}, {"name": "pull-b"}],
            "secrets": [{"name": "mounted"}, {"name": "gone"}]})
        _post(h, f"/api/v1/namespaces/{NS}/secrets", {"metadata": {"name": "mounted"}})
        _post(h, f"/api/v1/namespaces/{NS}/secrets", {
            "metadata": {"name": "robot-token", "annotations": {
                "kubernetes.io/service-account.name": "robot",
                "kubernetes.io/service-account.uid": sa["metadata"]["uid"]}},
            "type": "kubernetes.io/service-account-token", "data": {"token": "dG9rZW4tdmFsdWU="}})
        _post(h, f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "bare"}})
        rules = [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
                 {"apiGroups": [""], "resources": ["pods"], "verbs": ["watch", "get"]},
                 {"apiGroups": ["apps", "batch"], "resources": ["deployments", "jobs"], "verbs": ["*"]},
                 {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a", "b"], "verbs": ["update"]}]
        _post(h, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
              {"metadata": {"name": "reader", "labels": {"team": "a"}}, "rules": rules})
        _post(h, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "metadata": {"name": f"{NS}-urls"},
            "rules": [*rules, {"nonResourceURLs": ["/healthz", "/version"], "verbs": ["get"]}]})
        _rich_node_and_pod(h, f"{NS}-rich")
        _workloads(h, node)
        _storage_and_network(h)
        _access_and_generic(h)
        _cluster_classes_and_budgets(h)
        _quota_and_limits(h)
    yield


DESCRIBE_CASES = [
    ["describe", "deployment", "front"],
    ["describe", "deploy"],
    ["describe", "rs"],
    ["describe", "replicaset", "front-new"],
    ["describe", "replicasets.apps/front-old"],
    ["describe", "deployment", "nope"],
    ["describe", "hpa"],
    ["describe", "horizontalpodautoscalers.v1.autoscaling", "plain"],
    ["describe", "sa", "robot"],
    ["describe", "serviceaccount", "bare"],
    ["describe", "role", "reader"],
    ["describe", "clusterrole", f"{NS}-urls"],
    ["describe", "pod", "front-new-a"],
    ["describe", "pods"],
    ["describe", "pod", "nope"],
    ["describe", "node"],
    ["describe", "namespace", NS],
    ["describe", "ns", "nope"],
    ["describe", "service"],
    ["describe", "svc", "web"],
    ["describe", "svc", "lb"],
    ["describe", "svc", "ext"],
    ["describe", "configmap"],
    ["describe", "cm", "settings"],
    ["describe", "secret", "creds"],
    ["describe", "secrets"],
    ["describe", "secret", "robot-token"],
    ["describe", "job", "j"],
    ["describe", "jobs"],
    ["describe", "cronjob", "nightly"],
    ["describe", "cj"],
    ["describe", "statefulset", "db"],
    ["describe", "sts"],
    ["describe", "daemonset", "agent"],
    ["describe", "ds"],
    ["describe", "rc", "legacy"],
    ["describe", "job", "indexed"],
    ["describe", "cronjob", "zoned"],
    ["describe", "replicationcontrollers"],
    ["describe", "ingress", "site"],
    ["describe", "networkpolicy", "web-policy"],
    ["describe", "netpol"],
    ["describe", "ing"],
    ["describe", "endpoints", "web"],
    ["describe", "ep"],
    ["describe", "endpointslice", "web-a"],
    ["describe", "endpointslices"],
    ["describe", "pv", f"{NS}-pv"],
    ["describe", "pvc", "claim"],
    ["describe", "pvc"],
    ["describe", "storageclass", f"{NS}-sc"],
    ["describe", "priorityclass", f"{NS}-pc"],
    ["describe", "pc", "system-node-critical"],
    ["describe", "rolebinding", "read"],
    ["describe", "rolebindings"],
    ["describe", "clusterrolebinding", f"{NS}-urls"],
    ["describe", "crd", f"gadgets.{CRD_GROUP}"],
    ["describe", "gadget", "g1"],
    ["describe", "gadgets"],
    ["describe", "gd", "nope"],
    ["describe", "lease", "lock"],
    ["describe", "events"],
    ["describe", "function", "hello"],
    ["describe", "workflows"],
    ["describe", "workflowrun", "run1"],
    ["describe", "triggers"],
    ["describe", "dns", "shop"],
    ["describe", "slurmcluster", f"{NS}-slurm"],
    ["describe", "pod", "solo"],
    ["describe", "pod", "user"],
    ["describe", "sts", "nope"],
    ["describe", "pod", "rich"],
    ["describe", "pod", "two"],
    ["describe", "node", f"{NS}-rich"],
    ["describe", "pv", "nope"],
    ["describe", "pods", "-l", "app=front"],
    ["describe", "pods", "-l", "app=none"],
    ["describe", "deploy", "fro"],
    ["describe", "pods", "front-new"],
    ["describe", "pods", "so", "two"],
    ["describe", "pod/solo", "svc/web", "cm/nope"],
    ["describe", "pods", "nope", "solo"],
    ["describe", "nodes", "-l", "kubernetes.io/hostname=dparity-rich"],
    ["describe"],
    ["describe", "widgets"],
    ["describe", "tokenreviews"],
    ["describe", "quota", "compute"],
    ["describe", "resourcequotas"],
    ["describe", "limits", "bounds"],
    ["describe", "selfsubjectaccessreviews", "x"],
    ["describe", "ingressclass", f"{NS}-ic"],
    ["describe", "runtimeclass", f"{NS}-rc"],
    ["describe", "csidriver", f"{NS}.csi.example.com"],
    ["describe", "csinode", f"{NS}-csinode"],
    ["describe", "volumeattachment", f"{NS}-va"],
    ["describe", "csistoragecapacities", "cap"],
    ["describe", "pdb", "front-pdb"],
    ["describe", "poddisruptionbudgets"],
    ["describe", "podtemplate", "tmpl"],
    ["describe", "flowschema", "exempt"],
    ["describe", "prioritylevelconfiguration", "workload-low"],
]
LOGS_CASES = [
    ["logs", "two"],
    ["logs", "anno"],
    ["logs", "solo"],
    ["logs", "two", "-c", "c2"],
    ["logs", "two", "c2"],
    ["logs", "two", "-c", "nope"],
    ["logs", "nope"],
    ["logs", "two", "--since=10s"],
    ["logs", "two", "--since", "5m", "-c", "c1"],
    ["logs", "solo", "--since-time=2026-01-01T00:00:00Z"],
    ["logs", "solo", "--since=10s", "--since-time=2026-01-01T00:00:00Z"],
    ["logs", "solo", "--since=-5s"],
    ["logs", "solo", "--since=5"],
    ["logs", "solo", "--tail", "2"],
    ["logs", "deploy/front"],
    ["logs", "deployment/lone", "--pod-running-timeout=1s"],
    ["logs", "rs/front-new", "-c", "side"],
    ["logs", "job/j"],
    ["logs", "cm/cm"],
    ["logs", "solo", "--all-containers"],
    ["logs", "-l", "app=nope"],
    ["logs"],
    ["logs", "-l", "job=j", "-f", "--max-log-requests=0"],
]
#: Cases whose official output comes in Go map order (compared as sorted lines).
UNORDERED_CASES = [
    ["logs", "-l", "app=front"],
    ["logs", "-l", "app=front", "--prefix"],
    ["logs", "-l", "app=front", "--all-containers", "--prefix", "--tail=1"],
    ["logs", "two", "--all-containers", "--prefix"],
    ["logs", "-l", "app=front", "-f", "--max-log-requests=3"],
    ["logs", "-l", "app=front", "-f", "--all-containers"],
]
EXEC_CASES = [
    ["exec", "two", "--", "ls"],
    ["exec", "anno", "--", "ls", "-l"],
    ["exec", "solo", "--", "ls"],
    ["exec", "two", "-c", "nope", "--", "ls"],
    ["exec", "deploy/front", "--", "ls"],
    ["exec", "job/j", "--", "ls"],
    ["exec", "cm/cm", "--", "ls"],
    ["exec", "nope", "--", "ls"],
]
CASES = DESCRIBE_CASES + LOGS_CASES + UNORDERED_CASES + EXEC_CASES

#: The listed differences (:data:`tests.support.kubectl_parity.KNOWN_DIFFERENCES`) these cases meet.
DIFFERENCES: tuple[str, ...] = ()


@pytest.fixture(scope="module")
def results(objects: None, apiserver: APIServer, runs: Runs, tmp_path_factory: pytest.TempPathFactory,
            ) -> dict[tuple[str, tuple[str, ...]], Future[Result]]:
    """Every case submitted at once, for minik8s and the official kubectl 1.32."""
    path, why = find(VERSION)
    if path is None:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("dparity")
    (d / "kubeconfig").write_text(render(apiserver.url).replace("namespace: default", f"namespace: {NS}"))
    env = {**os.environ, "HOME": str(d), "KUBECONFIG": str(d / "kubeconfig"), "TZ": "UTC", "COLUMNS": "200"}
    out: dict[tuple[str, tuple[str, ...]], Future[Result]] = {}
    for args in CASES:
        out[("minik8s", tuple(args))] = runs.minik8s(args, env)
        out[(VERSION, tuple(args))] = runs.official(path, ["--cache-dir", str(d / "cache"), *args], env)
    return out


def _normalise(res: Result, unordered: bool) -> Result:
    out, err = AGE.sub("<age>", res.out), AGE.sub("<age>", res.err)
    if unordered:
        out, err = "".join(sorted(out.splitlines(True))), "".join(sorted(err.splitlines(True)))
    return Result(res.code, out, err)


def _mismatches(cases: list[list[str]], results: dict[tuple[str, tuple[str, ...]], Future[Result]],
                unordered: bool = False) -> list[str]:
    failures = []
    for args in cases:
        official = _normalise(results[(VERSION, tuple(args))].result(), unordered)
        ours = _normalise(results[("minik8s", tuple(args))].result(), unordered)
        official, ours = tolerate(DIFFERENCES, VERSION, official, ours)
        if (official.code, official.out, official.err) != (ours.code, ours.out, ours.err):
            failures.append(f"{args}\n--- official {official.code}\n{official.out}{official.err}"
                            f"--- minik8s {ours.code}\n{ours.out}{ours.err}")
    return failures


def test_describe_matches_official(results: dict) -> None:
    failures = _mismatches(DESCRIBE_CASES, results)
    assert not failures, "\n\n".join(failures)
    # the cases that name something that exists describe it (two failures alike would compare equal)
    for args in DESCRIBE_CASES:
        failing = "so" in args or any(word in arg for arg in args
                                      for word in ("nope", "app=none", "widgets", "reviews"))
        if args[1:] and not failing:
            official = results[(VERSION, tuple(args))].result()
            assert official.code == 0 and official.out.startswith("Name:"), (args, official.err)


def test_logs_match_official(results: dict, kubelet: FakeKubelet) -> None:
    failures = _mismatches(LOGS_CASES, results) + _mismatches(UNORDERED_CASES, results, unordered=True)
    assert not failures, "\n\n".join(failures)
    # both sent --since as sinceSeconds (the stand-in kubelet ignores it)
    assert sum("/two/c1?" in p and "sinceSeconds=300" in p for p in kubelet.requests) == 2, kubelet.requests


def test_exec_matches_official(results: dict) -> None:
    failures = _mismatches(EXEC_CASES, results)
    assert not failures, "\n\n".join(failures)
