"""The table of API kinds: one :class:`ResourceType` row per kind.

Adding a kind to minik8s is a model plus a row here (and, if it needs special
defaulting or validation, a strategy in the apiserver): the apiserver's routes,
discovery, storage keys and kubectl's name resolution are all driven by it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from minik8s.api.apiextensions import CustomResourceDefinition, is_established
from minik8s.api.apps import DaemonSet, Deployment, ReplicaSet, StatefulSet
from minik8s.api.authentication import SelfSubjectReview, TokenReview
from minik8s.api.authorization import SelfSubjectAccessReview, SubjectAccessReview
from minik8s.api.autoscaling import HorizontalPodAutoscaler
from minik8s.api.batch import CronJob, Job
from minik8s.api.config import ConfigMap, Secret
from minik8s.api.coordination import Lease
from minik8s.api.core import (
    Binding,
    Endpoints,
    Event,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    ReplicationController,
    Service,
    ServiceAccount,
)
from minik8s.api.gpujobs import GPUJob, SlurmCluster
from minik8s.api.meta import TypedObject
from minik8s.api.metrics import NodeMetrics, PodMetrics
from minik8s.api.networking import DNS, Ingress
from minik8s.api.rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from minik8s.api.serverless import Function, Trigger, Workflow, WorkflowRun
from minik8s.api.storage import StorageClass

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def storage_base(group: str, plural: str) -> str:
    """etcd key prefix of every object of ``plural`` in ``group`` (``""`` = core), ending in ``/``.

    Kubernetes' own groups (the core group, ``apps``, ``*.k8s.io``) store under ``/registry/{plural}/``;
    other groups under ``/registry/{group}/{plural}/``, as kube-apiserver does for CRDs.
    """
    builtin = "." not in group or group.endswith(".k8s.io")
    return f"/registry/{plural}/" if builtin else f"/registry/{group}/{plural}/"


@dataclass(frozen=True)
class CustomResource:
    """What the row of a custom resource's version carries beyond discovery, from its CRD.

    Kept as JSON text so that rows stay hashable and compare by content (a changed schema is a
    changed row).  ``crd``: the CRD's name; ``storage_version``: the version objects are stored in
    (every served version reads and writes the same objects, only ``apiVersion`` differs:
    conversion ``None``); ``*_path``: the scale subresource's JSON paths (``.spec.replicas``);
    ``terminating``: the CRD is being deleted (create answers 405).
    """

    crd: str
    storage_version: str
    schema_json: str = ""
    columns_json: str = "[]"
    spec_replicas_path: str = ""
    status_replicas_path: str = ""
    label_selector_path: str = ""
    terminating: bool = False

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The version's ``openAPIV3Schema`` (``{}`` when it has none)."""
        return dict(json.loads(self.schema_json)) if self.schema_json else {}

    @cached_property
    def printer_columns(self) -> list[dict[str, Any]]:
        """The version's ``additionalPrinterColumns``."""
        return list(json.loads(self.columns_json))


@dataclass(frozen=True)
class ResourceType:
    """One kind of the API, as discovery describes it (``metav1.APIResource``).

    ``group`` is ``""`` for the core group; ``subresources`` names what exists
    under ``{plural}/{name}/`` (``status``, ``binding``, ``log``, ``exec``, ``scale``).
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model: type[TypedObject]
    short_names: tuple[str, ...] = ()
    subresources: frozenset[str] = field(default_factory=frozenset)
    verbs: tuple[str, ...] = ALL_VERBS
    categories: tuple[str, ...] = ()
    #: set on the rows of custom resources (from their CustomResourceDefinition)
    custom: CustomResource | None = None

    @property
    def api_version(self) -> str:
        """``v1`` for the core group, else ``group/version``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def group_version(self) -> tuple[str, str]:
        return (self.group, self.version)

    def storage_prefix(self, namespace: str | None = None) -> str:
        """etcd key prefix: ``/registry/{plural}/`` or ``/registry/{plural}/{namespace}/``.

        Kubernetes' own groups (``apps``, ``*.k8s.io``) store under ``/registry/{plural}/``;
        minik8s' own group under ``/registry/{group}/{plural}/``, as kube-apiserver does for CRDs.
        """
        base = storage_base(self.group, self.plural)
        if self.namespaced and namespace:
            return f"{base}{namespace}/"
        return base

    def storage_key(self, namespace: str | None, name: str) -> str:
        """etcd key of one object (``/registry/pods/default/web``, ``/registry/nodes/n1``)."""
        if self.namespaced:
            return f"{self.storage_prefix(namespace)}{name}"
        return f"{self.storage_prefix()}{name}"


class Registry:
    """All known kinds, looked up by group/version/plural or by any name a user types."""

    def __init__(self, types: list[ResourceType]) -> None:
        self.types = list(types)

    def add(self, rt: ResourceType) -> None:
        """Register one more kind (later issues add ReplicaSet, Service, ... this way)."""
        self.types.append(rt)

    def replace(self, old: list[ResourceType], new: list[ResourceType]) -> None:
        """Swap the rows ``old`` for ``new`` in one step (custom resources of a changed CRD)."""
        if old == new:
            return
        self.types = [rt for rt in self.types if rt not in old] + new

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        for rt in self.types:
            if rt.group == group and rt.version == version and rt.plural == plural:
                return rt
        return None

    def by_kind(self, api_version: str | None, kind: str) -> ResourceType | None:
        """Find by ``apiVersion`` (``v1``, ``apps/v1``) and ``kind``; ``api_version`` None matches any."""
        for rt in self.types:
            if rt.kind == kind and (api_version is None or rt.api_version == api_version):
                return rt
        return None

    def resolve(self, name: str) -> ResourceType | None:
        """Resolve what a user types: ``pods``, ``pod``, ``po``, ``Pod``, ``leases.coordination.k8s.io``."""
        lowered = name.lower()
        resource, _, group = lowered.partition(".")
        for rt in self.types:
            if group and group not in (rt.group, rt.version, f"{rt.version}.{rt.group}"):
                continue
            if resource in (rt.plural, rt.singular, rt.kind.lower()) or resource in rt.short_names:
                return rt
        return None

    def group_versions(self) -> list[tuple[str, str]]:
        """Every (group, version) served, core first, in registration order."""
        seen: list[tuple[str, str]] = []
        for rt in self.types:
            if rt.group_version not in seen:
                seen.append(rt.group_version)
        return seen


def from_discovery(doc: dict[str, Any], group: str, version: str) -> list[ResourceType]:
    """The rows of one discovery ``APIResourceList`` (``GET /apis/{group}/{version}``), subresources
    (``widgets/status``) folded into their parent's ``subresources``.

    Rows of kinds a client meets only at run time (custom resources) carry the plain
    :class:`~minik8s.api.meta.TypedObject` model: clients pass their objects through as dicts."""
    subs: dict[str, set[str]] = {}
    for res in doc.get("resources") or []:
        parent, _, sub = str(res.get("name") or "").partition("/")
        if sub:
            subs.setdefault(parent, set()).add(sub)
    rows = []
    for res in doc.get("resources") or []:
        name = str(res.get("name") or "")
        if not name or "/" in name:
            continue
        kind = str(res.get("kind") or "")
        rows.append(ResourceType(
            group, version, kind, name, str(res.get("singularName") or kind.lower()), bool(res.get("namespaced")),
            TypedObject, short_names=tuple(res.get("shortNames") or ()),
            subresources=frozenset(subs.get(name, set())), verbs=tuple(res.get("verbs") or ()),
            categories=tuple(res.get("categories") or ())))
    return rows


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
                                          "ephemeralcontainers"}),
                 categories=("all",)),
    ResourceType("", "v1", "Node", "nodes", "node", False, Node, short_names=("no",),
                 subresources=frozenset({"status"})),
    ResourceType("", "v1", "Event", "events", "event", True, Event, short_names=("ev",)),
    ResourceType("", "v1", "Binding", "bindings", "binding", True, Binding, verbs=("create",)),
    ResourceType("", "v1", "Service", "services", "service", True, Service, short_names=("svc",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("", "v1", "Endpoints", "endpoints", "endpoints", True, Endpoints, short_names=("ep",)),
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
    ResourceType("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", False, StorageClass,
                 short_names=("sc",)),
    ResourceType("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", "tokenreview", False, TokenReview,
                 verbs=("create",)),
    ResourceType("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", "selfsubjectreview",
                 False, SelfSubjectReview, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews",
                 "subjectaccessreview", False, SubjectAccessReview, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
                 "selfsubjectaccessreview", False, SelfSubjectAccessReview, verbs=("create",)),
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
    ResourceType("apps", "v1", "ReplicaSet", "replicasets", "replicaset", True, ReplicaSet, short_names=("rs",),
                 subresources=frozenset({"status", "scale"}), categories=("all",)),
    ResourceType("apps", "v1", "Deployment", "deployments", "deployment", True, Deployment,
                 short_names=("deploy",), subresources=frozenset({"status", "scale"}), categories=("all",)),
    ResourceType("apps", "v1", "DaemonSet", "daemonsets", "daemonset", True, DaemonSet, short_names=("ds",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("apps", "v1", "StatefulSet", "statefulsets", "statefulset", True, StatefulSet, short_names=("sts",),
                 subresources=frozenset({"status", "scale"}), categories=("all",)),
    ResourceType("batch", "v1", "Job", "jobs", "job", True, Job, subresources=frozenset({"status"}),
                 categories=("all",)),
    ResourceType("batch", "v1", "CronJob", "cronjobs", "cronjob", True, CronJob, short_names=("cj",),
                 subresources=frozenset({"status"}), categories=("all",)),
    ResourceType("networking.k8s.io", "v1", "Ingress", "ingresses", "ingress", True, Ingress, short_names=("ing",),
                 subresources=frozenset({"status"})),
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
