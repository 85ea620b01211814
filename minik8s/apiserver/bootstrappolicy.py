"""The ClusterRoles and ClusterRoleBindings the apiserver keeps in place when RBAC is on
(kube-apiserver's ``rbac/bootstrap-roles`` post-start hook, ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``).

Each object carries the label ``kubernetes.io/bootstrapping: rbac-defaults`` and the annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``; a missing one is created, and one whose
annotation is still ``"true"`` gets its rules and subjects back when they were changed (set the
annotation to ``"false"`` to keep your own).  The rules name what minik8s' components call:

- ``cluster-admin`` (everything; bound to the group ``system:masters``), ``admin``, ``edit``,
  ``view`` (aggregated from ``system:aggregate-to-{admin,edit,view}`` and any ClusterRole labelled
  ``rbac.authorization.k8s.io/aggregate-to-<role>: "true"``);
- ``system:basic-user`` (the self reviews), ``system:discovery`` and ``system:public-info-viewer``
  for authenticated users (the latter also for the unauthenticated);
- ``system:kube-scheduler``, ``system:kube-controller-manager``, ``system:node-proxier`` (bound to
  the user ``system:kube-proxy``), ``system:kube-dns`` and ``system:minik8s-gateway``, bound to the
  users the appliance's certificates name (``roles/pki``).
"""

from __future__ import annotations

from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import Registry

GROUP = "rbac.authorization.k8s.io"
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
ALL = READ + WRITE

#: minik8s' own kinds (minik8s.io/v1), which admin/edit/view cover like the built-in ones.
OWN = ["dnses", "gpujobs", "functions", "workflows", "workflowruns", "triggers"]


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def _url_rule(urls: list[str], verbs: list[str]) -> Obj:
    return {"nonResourceURLs": urls, "verbs": verbs}


def _role(name: str, rules: list[Obj], labels: dict[str, str] | None = None, aggregate: str | None = None) -> Obj:
    meta = {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults", **(labels or {})},
            "annotations": {AUTOUPDATE: "true"}}
    role: Obj = {"metadata": meta, "rules": rules}
    if aggregate:
        role["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{aggregate}": "true"}}]}
        role["rules"] = []
    return role


def _binding(name: str, role: str, subjects: list[tuple[str, str]]) -> Obj:
    subs = [{"kind": kind, "apiGroup": GROUP, "name": n} if kind != "ServiceAccount" else
            {"kind": kind, "namespace": n.split("/")[0], "name": n.split("/")[1]} for kind, n in subjects]
    return {"metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                         "annotations": {AUTOUPDATE: "true"}},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role}, "subjects": subs}


_VIEW_CORE = ["pods", "pods/log", "pods/status", "services", "services/status", "endpoints", "configmaps",
              "serviceaccounts", "events", "replicationcontrollers", "replicationcontrollers/scale",
              "replicationcontrollers/status", "namespaces", "namespaces/status", "limitranges", "resourcequotas",
              "resourcequotas/status"]
_VIEW_GROUPS: list[tuple[str, list[str]]] = [
    ("apps", ["deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
              "replicasets/status", "daemonsets", "daemonsets/status", "controllerrevisions"]),
    ("batch", ["jobs", "jobs/status", "cronjobs", "cronjobs/status"]),
    ("autoscaling", ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    ("networking.k8s.io", ["ingresses", "ingresses/status", "networkpolicies"]),
    ("policy", ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    ("discovery.k8s.io", ["endpointslices"]),
    ("minik8s.io", OWN + [f"{r}/status" for r in OWN]),
    ("metrics.k8s.io", ["pods", "nodes"]),
]
_EDIT_CORE = ["pods", "pods/exec", "pods/attach", "pods/portforward", "pods/eviction", "services", "endpoints",
              "configmaps", "secrets", "serviceaccounts", "replicationcontrollers", "replicationcontrollers/scale",
              "persistentvolumeclaims"]
_EDIT_GROUPS: list[tuple[str, list[str]]] = [
    ("apps", ["deployments", "deployments/scale", "replicasets", "replicasets/scale", "daemonsets"]),
    ("batch", ["jobs", "cronjobs"]),
    ("autoscaling", ["horizontalpodautoscalers"]),
    ("networking.k8s.io", ["ingresses", "networkpolicies"]),
    ("policy", ["poddisruptionbudgets"]),
    ("minik8s.io", OWN),
]
_DISCOVERY = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version", "/version/",
              "/openapi", "/openapi/*"]
_PUBLIC = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
_EVENTS = [_rule([""], ["events"], ["create", "patch", "update"]),
           _rule(["events.k8s.io"], ["events"], ["create", "patch", "update"])]


def cluster_roles() -> list[Obj]:
    """Every bootstrap ClusterRole."""
    return [
        _role("cluster-admin", [_rule(["*"], ["*"], ["*"]), _url_rule(["*"], ["*"])]),
        _role("admin", [], aggregate="admin"),
        _role("edit", [], {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}, aggregate="edit"),
        _role("view", [], {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}, aggregate="view"),
        _role("system:aggregate-to-admin", [
            _rule([GROUP], ["roles", "rolebindings"], ALL),
            _rule(["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]),
        ], {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}),
        _role("system:aggregate-to-edit", [
            _rule([""], _EDIT_CORE, WRITE),
            _rule([""], ["secrets"], READ),
            _rule([""], ["serviceaccounts"], ["impersonate"]),
            _rule([""], ["serviceaccounts/token"], ["create"]),
            *[_rule([g], rs, WRITE) for g, rs in _EDIT_GROUPS],
        ], {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
        _role("system:aggregate-to-view", [
            _rule([""], _VIEW_CORE, READ),
            *[_rule([g], rs, READ) for g, rs in _VIEW_GROUPS],
        ], {"rbac.authorization.k8s.io/aggregate-to-view": "true"}),
        _role("system:basic-user", [
            _rule(["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
            _rule(["authentication.k8s.io"], ["selfsubjectreviews"], ["create"]),
        ]),
        _role("system:discovery", [_url_rule(_DISCOVERY, ["get"])]),
        _role("system:public-info-viewer", [_url_rule(_PUBLIC, ["get"])]),
        _role("system:kube-scheduler", [
            *_EVENTS,
            _rule(["coordination.k8s.io"], ["leases"], ["create", "get", "update"]),
            _rule([""], ["pods"], ["delete", "get", "list", "watch", "patch", "update"]),
            _rule([""], ["pods/binding", "bindings"], ["create"]),
            _rule([""], ["pods/status"], ["patch", "update"]),
            _rule([""], ["nodes", "namespaces", "services", "replicationcontrollers", "persistentvolumes"], READ),
            _rule(["apps"], ["replicasets", "daemonsets", "statefulsets"], READ),
            # VolumeBinding: the selected-node annotation on WaitForFirstConsumer claims
            _rule([""], ["persistentvolumeclaims"], ["get", "list", "watch", "patch", "update"]),
            _rule(["storage.k8s.io"], ["storageclasses"], READ),
            # DefaultPreemption weighs PodDisruptionBudgets
            _rule(["policy"], ["poddisruptionbudgets"], READ),
            _rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
            _rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
        ]),
        # minik8s' controller-manager runs every controller under one identity (Kubernetes gives
        # each its own service account): it reads and writes every kind it manages.
        _role("system:kube-controller-manager", [
            _rule(["", "apps", "batch", "autoscaling", "networking.k8s.io", "coordination.k8s.io", "minik8s.io",
                   "events.k8s.io", "storage.k8s.io", "policy", "discovery.k8s.io",
                   "certificates.k8s.io"], ["*"], ALL),
            _rule([GROUP], ["clusterroles", "roles", "clusterrolebindings", "rolebindings"], READ),
            _rule(["metrics.k8s.io"], ["pods", "nodes"], READ),
            # csrapproving approves kubelet client requests, csrsigning signs for the well-known signers
            # (Kubernetes' system:controller:certificate-controller)
            {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
             "resourceNames": ["kubernetes.io/kube-apiserver-client-kubelet"]},
            {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["sign"],
             "resourceNames": ["kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
                               "kubernetes.io/kubelet-serving"]},
            # the garbage collector follows ownerReferences through every kind, custom resources
            # included, and the HPA scales any scale subresource (Kubernetes' generic-garbage-collector
            # and horizontal-pod-autoscaler roles)
            _rule(["*"], ["*"], ["get", "list", "watch", "patch", "update", "delete"]),
            _rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
            _rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
        ]),
        _role("system:node-proxier", [
            *_EVENTS,
            _rule([""], ["services", "endpoints", "nodes"], READ),
            _rule(["discovery.k8s.io"], ["endpointslices"], READ),
            # the proxy enforces NetworkPolicies (minik8s.proxy.netpol): it reads them, pods and namespaces
            _rule([""], ["pods", "namespaces"], READ),
            _rule(["networking.k8s.io"], ["networkpolicies"], READ),
        ]),
        _role("system:kube-dns", [
            _rule([""], ["services", "endpoints", "pods", "namespaces"], READ),
            _rule(["discovery.k8s.io"], ["endpointslices"], READ),
            # each server keeps the kube-dns Service and its own address in the Endpoints
            _rule([""], ["services", "endpoints"], ["create", "update", "patch"]),
            _rule(["networking.k8s.io"], ["ingresses"], READ),
            _rule(["minik8s.io"], ["dnses"], READ),
            _rule(["minik8s.io"], ["dnses/status"], ["patch", "update"]),
            _rule(["networking.k8s.io"], ["ingresses/status"], ["patch", "update"]),
        ]),
        _role("system:minik8s-gateway", [
            *_EVENTS,
            _rule(["minik8s.io"], ["functions", "workflows", "triggers"], READ),
            _rule(["minik8s.io"], ["workflowruns", "workflowruns/status", "functions/status", "triggers/status"],
                  ["create", "get", "list", "watch", "patch", "update"]),
            _rule(["apps"], ["deployments", "deployments/scale"], ["get", "list", "watch", "patch", "update"]),
            _rule([""], ["pods", "services", "endpoints"], READ),
            # kube-system/minik8s-gateway and its Endpoints; PerInvocation calls run in pods of their own
            _rule([""], ["services", "endpoints"], ["create", "update", "patch"]),
            _rule([""], ["pods"], ["create", "delete"]),
            _rule(["*"], ["*"], READ),  # Triggers watch the kinds their sources name
            _rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
        ]),
    ]


def cluster_role_bindings() -> list[Obj]:
    """Every bootstrap ClusterRoleBinding (to the appliance's certificate users and groups)."""
    return [
        _binding("cluster-admin", "cluster-admin", [("Group", "system:masters")]),
        _binding("system:basic-user", "system:basic-user", [("Group", "system:authenticated")]),
        _binding("system:discovery", "system:discovery", [("Group", "system:authenticated")]),
        _binding("system:public-info-viewer", "system:public-info-viewer",
                 [("Group", "system:authenticated"), ("Group", "system:unauthenticated")]),
        _binding("system:kube-scheduler", "system:kube-scheduler", [("User", "system:kube-scheduler")]),
        _binding("system:kube-controller-manager", "system:kube-controller-manager",
                 [("User", "system:kube-controller-manager")]),
        _binding("system:node-proxier", "system:node-proxier", [("User", "system:kube-proxy")]),
        _binding("system:kube-dns", "system:kube-dns",
                 [("User", "system:kube-dns"), ("ServiceAccount", "kube-system/kube-dns")]),
        _binding("system:minik8s-gateway", "system:minik8s-gateway", [("User", "system:minik8s-gateway")]),
    ]


async def ensure(api: Any, registry: Registry) -> None:
    """Create the missing bootstrap objects and restore changed ones still marked autoupdate."""
    for kind, objs in (("ClusterRole", cluster_roles()), ("ClusterRoleBinding", cluster_role_bindings())):
        rt = registry.by_kind(f"{GROUP}/v1", kind)
        assert rt is not None
        fields = ("rules", "aggregationRule") if kind == "ClusterRole" else ("roleRef", "subjects")
        for obj in objs:
            name = obj["metadata"]["name"]
            try:
                current = await api.get(rt, None, name)
            except errors.NotFound:
                try:
                    await api.create(rt, None, obj)
                except errors.AlreadyExists:
                    pass
                continue
            if ((current.get("metadata") or {}).get("annotations") or {}).get(AUTOUPDATE) != "true":
                continue
            wanted = {f: obj.get(f) for f in fields if not (f == "rules" and obj.get("aggregationRule"))}
            if all(current.get(f) == value for f, value in wanted.items()):
                continue
            current.update(wanted)
            try:
                await api.update(rt, None, name, current)
            except errors.Conflict:
                pass
