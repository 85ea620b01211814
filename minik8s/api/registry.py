"""The table of API kinds minik8s serves: one :class:`~minik8s.api.resourcetypes.ResourceType` row
per kind, with its validation model.

Adding a kind to minik8s is a model plus a row here (and, if it needs special
defaulting or validation, a strategy in the apiserver): the apiserver's routes,
discovery and storage keys are all driven by it.  Clients (kubectl) build their rows from the
server's discovery instead (:func:`~minik8s.api.resourcetypes.from_discovery`).
"""

from __future__ import annotations

from typing import Any

from minik8s.api.apiextensions import CustomResourceDefinition, is_established
from minik8s.api.apps import ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet
from minik8s.api.authentication import SelfSubjectReview, TokenReview
from minik8s.api.authorization import (
    LocalSubjectAccessReview,
    SelfSubjectAccessReview,
    SelfSubjectRulesReview,
    SubjectAccessReview,
)
from minik8s.api.autoscaling import HorizontalPodAutoscaler
from minik8s.api.batch import CronJob, Job
from minik8s.api.certificates import CertificateSigningRequest
from minik8s.api.config import ConfigMap, Secret
from minik8s.api.coordination import Lease
from minik8s.api.core import (
    Binding,
    ComponentStatus,
    Endpoints,
    Event,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodTemplate,
    ReplicationController,
    Service,
    ServiceAccount,
)
from minik8s.api.csi import CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
from minik8s.api.discovery import EndpointSlice
from minik8s.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from minik8s.api.gpujobs import GPUJob, SlurmCluster
from minik8s.api.meta import TypedObject
from minik8s.api.metrics import NodeMetrics, PodMetrics
from minik8s.api.networking import DNS, Ingress, IngressClass, NetworkPolicy
from minik8s.api.policy import PodDisruptionBudget
from minik8s.api.quota import LimitRange, ResourceQuota
from minik8s.api.rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from minik8s.api.resourcetypes import Registry, ResourceType
from minik8s.api.runtimeclass import RuntimeClass
from minik8s.api.scheduling import PriorityClass
from minik8s.api.serverless import Function, Trigger, Workflow, WorkflowRun
from minik8s.api.storageclass import StorageClass


def crd_resource(crd: dict[str, Any]) -> ResourceType | None:
    """The row of an Established CustomResourceDefinition's storage version (by its accepted names),
    what a controller watching every kind (the garbage collector) watches its objects through;
    None while the CRD is not Established."""
    if not is_established(crd):
        return None
    spec = crd.get("spec") or {}
    names = (crd.get("status") or {}).get("acceptedNames") or spec.get("names") or {}
    version = next((v.get("name") for v in spec.get("versions") or [] if v.get("storage")), None)
    if not version or not names.get("kind") or not names.get("plural"):
        return None
    kind = str(names["kind"])
    return ResourceType(str(spec.get("group")), str(version), kind, str(names["plural"]),
                        str(names.get("singular") or kind.lower()), spec.get("scope") == "Namespaced", TypedObject)


CORE_TYPES = [
    ResourceType("", "v1", "Namespace", "namespaces", "namespace", False, Namespace,
                 short_names=("ns",), subresources=frozenset({"status"}),
                 verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    ResourceType("", "v1", "Pod", "pods", "pod", True, Pod, short_names=("po",),
                 subresources=frozenset({"status", "binding", "log", "exec", "attach", "portforward",
                                          "ephemeralcontainers", "eviction"}),
                 categories=("all",)),
    ResourceType("", "v1", "Node", "nodes", "node", False, Node, short_names=("no",),
                 subresources=frozenset({"status"})),
    ResourceType("", "v1", "Event", "events", "event", True, Event, short_names=("ev",)),
    ResourceType("", "v1", "Binding", "bindings", "binding", True, Binding, verbs=("create",)),
    ResourceType("", "v1", "ComponentStatus", "componentstatuses", "componentstatus", False, ComponentStatus,
                 short_names=("cs",), verbs=("get", "list")),
    ResourceType("", "v1", "Service", "services", "service", True, Service, short_names=("svc",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("", "v1", "Endpoints", "endpoints", "endpoints", True, Endpoints, short_names=("ep",)),
    ResourceType("", "v1", "PodTemplate", "podtemplates", "podtemplate", True, PodTemplate),
    ResourceType("", "v1", "ConfigMap", "configmaps", "configmap", True, ConfigMap, short_names=("cm",)),
    ResourceType("", "v1", "Secret", "secrets", "secret", True, Secret),
    ResourceType("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", True, ServiceAccount,
                 short_names=("sa",), subresources=frozenset({"token"})),
    ResourceType("", "v1", "ReplicationController", "replicationcontrollers", "replicationcontroller", True,
                 ReplicationController, short_names=("rc",), subresources=frozenset({"status", "scale"}),
                 categories=("all",)),
    ResourceType("", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", False, PersistentVolume,
                 short_names=("pv",), subresources=frozenset({"status"})),
    ResourceType("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", True,
                 PersistentVolumeClaim, short_names=("pvc",), subresources=frozenset({"status"})),
    ResourceType("", "v1", "ResourceQuota", "resourcequotas", "resourcequota", True, ResourceQuota,
                 short_names=("quota",), subresources=frozenset({"status"})),
    ResourceType("", "v1", "LimitRange", "limitranges", "limitrange", True, LimitRange, short_names=("limits",)),
    ResourceType("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", False, StorageClass,
                 short_names=("sc",)),
    ResourceType("storage.k8s.io", "v1", "CSIDriver", "csidrivers", "csidriver", False, CSIDriver),
    ResourceType("storage.k8s.io", "v1", "CSINode", "csinodes", "csinode", False, CSINode),
    ResourceType("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", "csistoragecapacity", True,
                 CSIStorageCapacity),
    ResourceType("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", "volumeattachment", False,
                 VolumeAttachment, subresources=frozenset({"status"})),
    ResourceType("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
                 "certificatesigningrequest", False, CertificateSigningRequest, short_names=("csr",),
                 subresources=frozenset({"status", "approval"})),
    ResourceType("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", "runtimeclass", False, RuntimeClass),
    ResourceType("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", "tokenreview", False, TokenReview,
                 verbs=("create",)),
    ResourceType("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", "selfsubjectreview",
                 False, SelfSubjectReview, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews",
                 "subjectaccessreview", False, SubjectAccessReview, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews",
                 "localsubjectaccessreview", True, LocalSubjectAccessReview, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
                 "selfsubjectaccessreview", False, SelfSubjectAccessReview, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
                 "selfsubjectrulesreview", False, SelfSubjectRulesReview, verbs=("create",)),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole", False,
                 ClusterRole),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
                 "clusterrolebinding", False, ClusterRoleBinding),
    ResourceType("rbac.authorization.k8s.io", "v1", "Role", "roles", "role", True, Role),
    ResourceType("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding", True, RoleBinding),
    ResourceType("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
                 "customresourcedefinition", False, CustomResourceDefinition, short_names=("crd", "crds"),
                 subresources=frozenset({"status"})),
    ResourceType("coordination.k8s.io", "v1", "Lease", "leases", "lease", True, Lease),
    ResourceType("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", True,
                 PodDisruptionBudget, short_names=("pdb",), subresources=frozenset({"status"})),
    ResourceType("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", "priorityclass", False,
                 PriorityClass, short_names=("pc",)),
    ResourceType("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", "flowschema", False, FlowSchema,
                 subresources=frozenset({"status"})),
    ResourceType("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration", "prioritylevelconfigurations",
                 "prioritylevelconfiguration", False, PriorityLevelConfiguration, subresources=frozenset({"status"})),
    ResourceType("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice", True, EndpointSlice),
    ResourceType("apps", "v1", "ReplicaSet", "replicasets", "replicaset", True, ReplicaSet, short_names=("rs",),
                 subresources=frozenset({"status", "scale"}), categories=("all",)),
    ResourceType("apps", "v1", "Deployment", "deployments", "deployment", True, Deployment,
                 short_names=("deploy",), subresources=frozenset({"status", "scale"}), categories=("all",)),
    ResourceType("apps", "v1", "DaemonSet", "daemonsets", "daemonset", True, DaemonSet, short_names=("ds",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("apps", "v1", "StatefulSet", "statefulsets", "statefulset", True, StatefulSet, short_names=("sts",),
                 subresources=frozenset({"status", "scale"}), categories=("all",)),
    ResourceType("apps", "v1", "ControllerRevision", "controllerrevisions", "controllerrevision", True,
                 ControllerRevision),
    ResourceType("batch", "v1", "Job", "jobs", "job", True, Job, subresources=frozenset({"status"}),
                 categories=("all",)),
    ResourceType("batch", "v1", "CronJob", "cronjobs", "cronjob", True, CronJob, short_names=("cj",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("networking.k8s.io", "v1", "Ingress", "ingresses", "ingress", True, Ingress, short_names=("ing",),
                 subresources=frozenset({"status"})),
    ResourceType("networking.k8s.io", "v1", "IngressClass", "ingressclasses", "ingressclass", False, IngressClass),
    ResourceType("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", "networkpolicy", True, NetworkPolicy,
                 short_names=("netpol",)),
    ResourceType("minik8s.io", "v1", "DNS", "dnses", "dns", True, DNS, subresources=frozenset({"status"}),
                 categories=("all",)),
    ResourceType("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                 "horizontalpodautoscaler", True, HorizontalPodAutoscaler, short_names=("hpa",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("minik8s.io", "v1", "SlurmCluster", "slurmclusters", "slurmcluster", False, SlurmCluster,
                 subresources=frozenset({"status"})),
    ResourceType("minik8s.io", "v1", "GPUJob", "gpujobs", "gpujob", True, GPUJob, short_names=("gj",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("minik8s.io", "v1", "Function", "functions", "function", True, Function, short_names=("fn",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("minik8s.io", "v1", "Workflow", "workflows", "workflow", True, Workflow, short_names=("wf",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("minik8s.io", "v1", "WorkflowRun", "workflowruns", "workflowrun", True, WorkflowRun,
                 short_names=("wfr",), subresources=frozenset({"status"})),
    ResourceType("minik8s.io", "v1", "Trigger", "triggers", "trigger", True, Trigger,
                 subresources=frozenset({"status"}), categories=("all",)),
]

#: ``metrics.k8s.io/v1beta1``: computed from the kubelets' stats by
#: :mod:`minik8s.apiserver.metrics`, never stored in etcd, so not part of
#: :func:`default_registry` (whose rows the generic etcd-backed handlers serve); discovery
#: lists them next to the stored kinds.  Use them with ``resource_path`` to build URLs.
METRICS_TYPES = [
    ResourceType("metrics.k8s.io", "v1beta1", "PodMetrics", "pods", "", True, PodMetrics, verbs=("get", "list")),
    ResourceType("metrics.k8s.io", "v1beta1", "NodeMetrics", "nodes", "", False, NodeMetrics, verbs=("get", "list")),
]


def default_registry() -> Registry:
    """A fresh registry with every kind minik8s serves."""
    return Registry(list(CORE_TYPES))
