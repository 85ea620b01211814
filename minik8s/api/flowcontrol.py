"""``flowcontrol.apiserver.k8s.io/v1`` FlowSchema and PriorityLevelConfiguration (API Priority and
Fairness): which requests go to which priority level, and each level's share of the server.

A FlowSchema's ``rules`` match a request by who sends it (``subjects``: users, groups, service
accounts) and what it asks (``resourceRules``: verbs, API groups, resources, namespaces;
``nonResourceRules``: verbs, URLs); the matching schema of lowest ``matchingPrecedence`` names the
priority level.  Kubernetes' mandatory and suggested objects (``apiserver/pkg/apis/flowcontrol/
bootstrap/default.go``) are :data:`MANDATORY_PRIORITY_LEVELS`, :data:`SUGGESTED_PRIORITY_LEVELS`,
:data:`MANDATORY_FLOW_SCHEMAS` and :data:`SUGGESTED_FLOW_SCHEMAS`; :func:`schema_matches` is
``matchesFlowSchema``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from minik8s.api.base import Obj
from minik8s.api.meta import TypedObject

GROUP_VERSION = "flowcontrol.apiserver.k8s.io/v1"
AUTOUPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"
EXEMPT, LIMITED = "Exempt", "Limited"
PRIORITY_LEVEL_TYPES = (EXEMPT, LIMITED)
DISTINGUISHER_METHODS = ("ByNamespace", "ByUser")
LIMIT_RESPONSE_TYPES = ("Queue", "Reject")
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
#: ``flowcontrol.NameAll``, ``VerbAll``, ``APIGroupAll``, ``ResourceAll``, ``NonResourceAll``, ``NamespaceEvery``
ALL = "*"
MAX_MATCHING_PRECEDENCE = 10000


class FlowSchema(TypedObject):
    """``flowcontrol.apiserver.k8s.io/v1`` FlowSchema (cluster-scoped): ``spec`` (the priority level,
    ``matchingPrecedence``, ``distinguisherMethod``, ``rules``) and ``status.conditions``."""

    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None


class PriorityLevelConfiguration(TypedObject):
    """``flowcontrol.apiserver.k8s.io/v1`` PriorityLevelConfiguration (cluster-scoped): ``spec.type``
    ``Exempt`` or ``Limited`` (``limited.nominalConcurrencyShares``, ``lendablePercent``,
    ``limitResponse``)."""

    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None


# ------------------------------------------------------------------ bootstrap objects
def _meta(name: str, kind: str) -> Obj:
    return {"apiVersion": GROUP_VERSION, "kind": kind,
            "metadata": {"name": name, "annotations": {AUTOUPDATE_ANNOTATION: "true"}}}


def _queued(shares: int, lendable: int, queues: int, hand_size: int) -> Obj:
    return {"type": LIMITED, "limited": {
        "nominalConcurrencyShares": shares, "lendablePercent": lendable,
        "limitResponse": {"type": "Queue", "queuing": {"queues": queues, "handSize": hand_size,
                                                       "queueLengthLimit": 50}}}}


def _level(name: str, spec: Obj) -> Obj:
    return {**_meta(name, "PriorityLevelConfiguration"), "spec": spec}


MANDATORY_PRIORITY_LEVELS: tuple[Obj, ...] = (
    _level("exempt", {"type": EXEMPT, "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
    _level("catch-all", {"type": LIMITED, "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                                                      "limitResponse": {"type": "Reject"}}}),
)
SUGGESTED_PRIORITY_LEVELS: tuple[Obj, ...] = (
    _level("system", _queued(30, 33, 64, 6)),
    _level("node-high", _queued(40, 25, 64, 6)),
    _level("leader-election", _queued(10, 0, 16, 4)),
    _level("workload-high", _queued(40, 50, 128, 6)),
    _level("workload-low", _queued(100, 90, 128, 6)),
    _level("global-default", _queued(20, 50, 128, 6)),
)


def _users(*names: str) -> list[Obj]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


def _groups(*names: str) -> list[Obj]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def _service_accounts(namespace: str, *names: str) -> list[Obj]:
    return [{"kind": "ServiceAccount", "serviceAccount": {"namespace": namespace, "name": n}} for n in names]


def _resources(verbs: list[str], groups: list[str], resources: list[str], namespaces: list[str],
               cluster_scope: bool) -> Obj:
    rule: Obj = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if cluster_scope:
        rule["clusterScope"] = True
    if namespaces:
        rule["namespaces"] = namespaces
    return rule


_EVERY_RESOURCE = _resources([ALL], [ALL], [ALL], [ALL], True)
_EVERY_URL = {"verbs": [ALL], "nonResourceURLs": [ALL]}


def _schema(name: str, level: str, precedence: int, method: str | None, subjects: list[Obj],
            resource_rules: Iterable[Obj] = (), non_resource_rules: Iterable[Obj] = ()) -> Obj:
    rule: Obj = {"subjects": subjects}
    if resource_rules:
        rule["resourceRules"] = list(resource_rules)
    if non_resource_rules:
        rule["nonResourceRules"] = list(non_resource_rules)
    spec: Obj = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence,
                 "rules": [rule]}
    if method is not None:
        spec["distinguisherMethod"] = {"type": method}
    return {**_meta(name, "FlowSchema"), "spec": spec}


_EVERYONE = ("system:unauthenticated", "system:authenticated")
_KCM, _SCHED = "system:kube-controller-manager", "system:kube-scheduler"

MANDATORY_FLOW_SCHEMAS: tuple[Obj, ...] = (
    _schema("exempt", "exempt", 1, None, _groups("system:masters"), [_EVERY_RESOURCE], [_EVERY_URL]),
    _schema("catch-all", "catch-all", MAX_MATCHING_PRECEDENCE, "ByUser", _groups(*_EVERYONE),
            [_EVERY_RESOURCE], [_EVERY_URL]),
)
SUGGESTED_FLOW_SCHEMAS: tuple[Obj, ...] = (
    _schema("probes", "exempt", 2, None, _groups(*_EVERYONE),
            non_resource_rules=[{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]),
    # minik8s' own (before Kubernetes' suggested ones): whoever writes them, leader Leases in kube-system
    # and node heartbeats never wait behind workload writes, also with authentication off
    _schema("minik8s-leader-election", "leader-election", 50, "ByUser", _groups(*_EVERYONE),
            [_resources([ALL], ["coordination.k8s.io"], ["leases"], ["kube-system"], False)]),
    _schema("minik8s-node-heartbeats", "node-high", 60, "ByUser", _groups(*_EVERYONE),
            [_resources([ALL], [""], ["nodes", "nodes/status"], [], True),
             _resources([ALL], ["coordination.k8s.io"], ["leases"], ["kube-node-lease"], False)]),
    _schema("system-leader-election", "leader-election", 100, "ByUser",
            _users(_KCM, _SCHED) + _service_accounts("kube-system", "kube-controller-manager", "kube-scheduler"),
            [_resources(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], [ALL], False)]),
    _schema("endpoint-controller", "workload-high", 150, "ByUser",
            _users(_KCM) + _service_accounts("kube-system", "endpoint-controller"),
            [_resources(["get", "create", "update"], [""], ["endpoints"], [ALL], False)]),
    _schema("workload-leader-election", "leader-election", 200, "ByUser", _service_accounts("kube-system", ALL),
            [_resources(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], [ALL], False)]),
    _schema("system-node-high", "node-high", 400, "ByUser", _groups("system:nodes"),
            [_resources([ALL], [""], ["nodes", "nodes/status"], [ALL], True),
             _resources([ALL], ["coordination.k8s.io"], ["leases"], [ALL], False)]),
    _schema("system-nodes", "system", 500, "ByUser", _groups("system:nodes"), [_EVERY_RESOURCE], [_EVERY_URL]),
    _schema("kube-controller-manager", "workload-high", 800, "ByNamespace", _users(_KCM),
            [_EVERY_RESOURCE], [_EVERY_URL]),
    _schema("kube-scheduler", "workload-high", 800, "ByNamespace", _users(_SCHED), [_EVERY_RESOURCE], [_EVERY_URL]),
    _schema("kube-system-service-accounts", "workload-high", 900, "ByNamespace",
            _service_accounts("kube-system", ALL), [_EVERY_RESOURCE], [_EVERY_URL]),
    _schema("service-accounts", "workload-low", 9000, "ByUser", _groups("system:serviceaccounts"),
            [_EVERY_RESOURCE], [_EVERY_URL]),
    _schema("global-default", "global-default", 9900, "ByUser", _groups(*_EVERYONE), [_EVERY_RESOURCE],
            [_EVERY_URL]),
)


# ------------------------------------------------------------------ matching
def _subject_matches(subject: Obj, user: str, groups: tuple[str, ...]) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        name = (subject.get("user") or {}).get("name")
        return name in (ALL, user)
    if kind == "Group":
        name = (subject.get("group") or {}).get("name")
        return name == ALL or name in groups
    if kind == "ServiceAccount":
        sa = subject.get("serviceAccount") or {}
        ns, name = sa.get("namespace"), sa.get("name")
        prefix = f"system:serviceaccount:{ns}:"
        return user.startswith(prefix) and name in (ALL, user[len(prefix):])
    return False


def _has(values: Any, value: str) -> bool:
    values = values or []
    return ALL in values or value in values


def _resource_rule_matches(rule: Obj, verb: str, api_group: str, resource: str, namespace: str) -> bool:
    if not (_has(rule.get("verbs"), verb) and _has(rule.get("apiGroups"), api_group)
            and _has(rule.get("resources"), resource)):
        return False
    if not namespace:
        return bool(rule.get("clusterScope"))
    return _has(rule.get("namespaces"), namespace)


def _url_matches(patterns: Any, path: str) -> bool:
    for pattern in patterns or []:
        if pattern in (ALL, path) or (pattern.endswith("/*") and path.startswith(pattern[:-1])) \
                or (pattern.endswith("/*") and path == pattern[:-2]):
            return True
    return False


def schema_matches(spec: Obj, user: str, groups: Iterable[str], info: Any) -> bool:
    """Whether a FlowSchema's ``spec`` matches a request (``matchesFlowSchema``): some rule has a
    subject naming the user and a resource rule (``info.resource_request``) or non-resource rule
    matching ``info`` (a :class:`~minik8s.apiserver.requestinfo.RequestInfo`)."""
    groups = tuple(groups)
    for rule in spec.get("rules") or []:
        if not any(_subject_matches(s, user, groups) for s in rule.get("subjects") or []):
            continue
        if info.resource_request:
            resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
            if any(_resource_rule_matches(r, info.verb, info.api_group, resource, info.namespace)
                   for r in rule.get("resourceRules") or []):
                return True
        elif any(_has(r.get("verbs"), info.verb) and _url_matches(r.get("nonResourceURLs"), info.path)
                 for r in rule.get("nonResourceRules") or []):
            return True
    return False
