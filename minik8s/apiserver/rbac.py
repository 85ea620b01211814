"""The RBAC and Node authorizers (Kubernetes' ``plugin/pkg/auth/authorizer/{rbac,node}``).

Rules (:func:`rule_allows`, Kubernetes' ``rbac/v1`` helpers): a rule allows a resource request when
its ``verbs``, ``apiGroups`` and ``resources`` each hold ``*`` or the request's value (a
subresource is matched as ``pods/log``, or by ``*/log``), and its ``resourceNames`` are empty or
hold the request's name; a non-resource request when ``verbs`` match and a ``nonResourceURLs``
entry is ``*``, the path, or a prefix ending in ``*``.

:class:`RBACCache` keeps the four RBAC kinds in memory, fed by the apiserver's own store (a list,
then a watch per kind; relisted after a compaction), with ClusterRoleBindings and RoleBindings
indexed by subject (``User``, ``Group``, ``ServiceAccount``), so that a decision reads only the
bindings of the user, its groups and its namespace.  A ClusterRole with an ``aggregationRule``
gets the rules of the ClusterRoles its selectors match (recursively), at once in memory, and the
cache writes them into the stored object (Kubernetes' clusterrole-aggregation controller).

:class:`NodeAuthorizer` lets a kubelet (user ``system:node:<name>``, group ``system:nodes``) do
what minik8s' kubelet does; its own Node and Lease only; the object checks that need the stored
object (pods bound to it) are :func:`node_restriction` (NodeRestriction admission).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import Registry
from minik8s.api.selectors import LabelSelector
from minik8s.apiserver.requestinfo import RequestInfo
from minik8s.auth import UserInfo

log = logging.getLogger("apiserver.rbac")

SA_PREFIX = "system:serviceaccount:"
NODE_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
MASTERS_GROUP = "system:masters"
NODE_LEASE_NAMESPACE = "kube-node-lease"


# ---------------------------------------------------------------- rules
def _has(values: Iterable[str] | None, wanted: str) -> bool:
    values = values or ()
    return "*" in values or wanted in values


def resource_matches(resources: Iterable[str] | None, info: RequestInfo) -> bool:
    """``resources`` holds ``*``, ``resource[/subresource]`` or ``*/subresource``."""
    combined = info.resource_path
    for r in resources or ():
        if r == "*" or r == combined:
            return True
        if info.subresource and r == f"*/{info.subresource}":
            return True
    return False


def url_matches(urls: Iterable[str] | None, path: str) -> bool:
    """``nonResourceURLs`` holds ``*``, ``path``, or a prefix of it followed by ``*``."""
    for u in urls or ():
        if u == "*" or u == path or (u.endswith("*") and path.startswith(u[:-1])):
            return True
    return False


def rule_allows(rule: Obj, info: RequestInfo) -> bool:
    """Whether one PolicyRule (a dict, wire names) allows the request ``info``."""
    if not _has(rule.get("verbs"), info.verb):
        return False
    if not info.resource_request:
        return url_matches(rule.get("nonResourceURLs"), info.path)
    if not _has(rule.get("apiGroups"), info.api_group) or not resource_matches(rule.get("resources"), info):
        return False
    names = rule.get("resourceNames")
    return not names or info.name in names


def rules_allow(rules: Iterable[Obj], info: RequestInfo) -> bool:
    return any(rule_allows(r, info) for r in rules)


def subject_keys(user: UserInfo) -> list[tuple[str, ...]]:
    """The binding-index keys that name ``user``: its User name, each Group, and (for a
    service-account user) its ServiceAccount."""
    keys: list[tuple[str, ...]] = [("User", user.name)]
    keys += [("Group", g) for g in user.groups]
    if user.name.startswith(SA_PREFIX):
        ns, _, name = user.name[len(SA_PREFIX):].partition(":")
        keys.append(("ServiceAccount", ns, name))
    return keys


def _subject_key(subject: Obj, binding_ns: str) -> tuple[str, ...] | None:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return ("ServiceAccount", subject.get("namespace") or binding_ns, str(subject.get("name") or ""))
    if kind in ("User", "Group"):
        return (kind, str(subject.get("name") or ""))
    return None


def forbidden_message(user: UserInfo, info: RequestInfo, reason: str = "") -> str:
    """Kubernetes' 403 message: ``pods "x" is forbidden: User "u" cannot get resource "pods" in API
    group "" in the namespace "ns"`` (``at the cluster scope`` without a namespace; ``cannot get
    path "/x"`` for a non-resource request)."""
    if not info.resource_request:
        msg = f'forbidden: User "{user.name}" cannot {info.verb} path "{info.path}"'
    else:
        where = f'in the namespace "{info.namespace}"' if info.namespace else "at the cluster scope"
        what = info.resource + (f".{info.api_group}" if info.api_group else "")
        head = f'{what} "{info.name}"' if info.name else what
        msg = (f'{head} is forbidden: User "{user.name}" cannot {info.verb} resource "{info.resource_path}" '
               f'in API group "{info.api_group}" {where}')
    return f"{msg}: {reason}" if reason else msg


# ---------------------------------------------------------------- the cache
class RBACCache:
    """Roles, ClusterRoles and their bindings in memory (see the module docstring).

    ``api``: the apiserver's :class:`~minik8s.apiserver.resources.ResourceAPI` (its store is read
    and watched; aggregated rules are written through it).  ``synced`` is set once every kind
    has been listed.
    """

    KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")

    def __init__(self, api: Any, registry: Registry) -> None:
        self.api = api
        self.rts = {k: registry.by_kind("rbac.authorization.k8s.io/v1", k) for k in self.KINDS}
        self.roles: dict[tuple[str, str], Obj] = {}
        self.cluster_roles: dict[str, Obj] = {}
        self.role_bindings: dict[tuple[str, str], Obj] = {}
        self.cluster_role_bindings: dict[str, Obj] = {}
        # subject key → binding names; (namespace, subject key) → RoleBinding names
        self.crb_index: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.rb_index: dict[tuple[str, tuple[str, ...]], set[str]] = defaultdict(set)
        self._effective: dict[str, list[Obj]] = {}
        self._synced_kinds: set[str] = set()
        self.synced = asyncio.Event()
        self._aggregate = asyncio.Event()

    # ---- reading
    def cluster_role_rules(self, name: str) -> list[Obj]:
        """A ClusterRole's rules; an aggregated one's from the roles its selectors match."""
        if name not in self._effective:
            self._effective[name] = self._rules_of(name, set())
        return self._effective[name]

    def _rules_of(self, name: str, seen: set[str]) -> list[Obj]:
        role = self.cluster_roles.get(name)
        if role is None or name in seen:
            return []
        seen.add(name)
        agg = role.get("aggregationRule")
        if not agg:
            return list(role.get("rules") or [])
        rules: list[Obj] = []
        for other_name in sorted(self.aggregated_sources(role)):
            for rule in self._rules_of(other_name, seen):
                if rule not in rules:
                    rules.append(rule)
        return rules

    def aggregated_sources(self, role: Obj) -> list[str]:
        """The ClusterRoles an aggregating ``role``'s selectors match (never itself)."""
        own = (role.get("metadata") or {}).get("name")
        selectors = []
        for sel in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []:
            with contextlib.suppress(ValueError):
                selectors.append(LabelSelector.from_dict(sel))
        return [n for n, r in self.cluster_roles.items() if n != own and any(
            s.matches((r.get("metadata") or {}).get("labels") or {}) for s in selectors)]

    def allows(self, user: UserInfo, info: RequestInfo) -> bool:
        """Whether a ClusterRoleBinding, or a RoleBinding of the request's namespace, grants it."""
        return any(rules_allow(rules, info) for rules in self._granted(user, info.namespace))

    def rules_for(self, user: UserInfo, namespace: str) -> list[Obj]:
        """Every PolicyRule granted to ``user`` cluster-wide or in ``namespace``: those of its
        ClusterRoleBindings' roles, then of its RoleBindings in ``namespace`` (the rules a
        SelfSubjectRulesReview lists, Kubernetes' ``RulesFor``)."""
        return [rule for rules in self._granted(user, namespace) for rule in rules]

    def _granted(self, user: UserInfo, namespace: str | None) -> Iterator[list[Obj]]:
        """The rules of each binding that names ``user`` (once, however many of its subjects name
        it): ClusterRoleBindings, then the RoleBindings of ``namespace``."""
        keys = subject_keys(user)
        for name in {n for key in keys for n in self.crb_index.get(key, ())}:
            ref = self.cluster_role_bindings[name].get("roleRef") or {}
            yield self.cluster_role_rules(ref.get("name", ""))
        if not namespace:
            return
        for name in {n for key in keys for n in self.rb_index.get((namespace, key), ())}:
            ref = self.role_bindings[(namespace, name)].get("roleRef") or {}
            if ref.get("kind") == "Role":
                yield list((self.roles.get((namespace, ref.get("name", ""))) or {}).get("rules") or [])
            else:
                yield self.cluster_role_rules(ref.get("name", ""))

    # ---- writing
    def apply(self, kind: str, event: str, obj: Obj) -> None:
        """Take one object (``event`` ADDED, MODIFIED or DELETED) into the cache."""
        meta = obj.get("metadata") or {}
        ns, name = meta.get("namespace") or "", meta.get("name") or ""
        if kind == "ClusterRole":
            if event == "DELETED":
                self.cluster_roles.pop(name, None)
            else:
                self.cluster_roles[name] = obj
            self._effective.clear()
            self._aggregate.set()
        elif kind == "Role":
            if event == "DELETED":
                self.roles.pop((ns, name), None)
            else:
                self.roles[(ns, name)] = obj
        elif kind == "ClusterRoleBinding":
            old = self.cluster_role_bindings.pop(name, None)
            for key in self._keys(old, ""):
                self.crb_index[key].discard(name)
            if event != "DELETED":
                self.cluster_role_bindings[name] = obj
                for key in self._keys(obj, ""):
                    self.crb_index[key].add(name)
        elif kind == "RoleBinding":
            old = self.role_bindings.pop((ns, name), None)
            for key in self._keys(old, ns):
                self.rb_index[(ns, key)].discard(name)
            if event != "DELETED":
                self.role_bindings[(ns, name)] = obj
                for key in self._keys(obj, ns):
                    self.rb_index[(ns, key)].add(name)

    @staticmethod
    def _keys(binding: Obj | None, ns: str) -> list[tuple[str, ...]]:
        if binding is None:
            return []
        return [k for s in binding.get("subjects") or [] if (k := _subject_key(s, ns)) is not None]

    def _reset(self, kind: str) -> None:
        if kind == "ClusterRole":
            self.cluster_roles.clear()
            self._effective.clear()
        elif kind == "Role":
            self.roles.clear()
        elif kind == "ClusterRoleBinding":
            self.cluster_role_bindings.clear()
            self.crb_index.clear()
        else:
            self.role_bindings.clear()
            self.rb_index.clear()

    # ---- the loops
    async def run(self, stop: asyncio.Event) -> None:
        """List and watch the four kinds, and write aggregated rules, until ``stop`` is set."""
        tasks = [asyncio.create_task(self._reflect(kind)) for kind in self.KINDS]
        tasks.append(asyncio.create_task(self._aggregator()))
        await stop.wait()
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t

    async def _reflect(self, kind: str) -> None:
        rt = self.rts[kind]
        assert rt is not None

        def listed(items: list[Obj]) -> None:
            self._reset(kind)
            for obj in items:
                self.apply(kind, "ADDED", obj)
            self._synced_kinds.add(kind)
            if len(self._synced_kinds) == len(self.KINDS):
                self.synced.set()

        await self.api.store.reflect(rt.storage_prefix(), listed, lambda event, obj: self.apply(kind, event, obj),
                                     f"rbac cache: {kind}")

    async def _aggregator(self) -> None:
        rt = self.rts["ClusterRole"]
        while True:
            await self._aggregate.wait()
            self._aggregate.clear()
            await asyncio.sleep(0.05)  # a burst of changes is one pass
            for name, role in list(self.cluster_roles.items()):
                if not role.get("aggregationRule"):
                    continue
                rules = self._rules_of(name, set())
                if (role.get("rules") or []) == rules:
                    continue
                try:
                    current = await self.api.get(rt, None, name)
                    current["rules"] = rules
                    await self.api.update(rt, None, name, current)
                except errors.APIError as exc:  # a conflict or a deletion: the next event retries
                    log.debug("rbac aggregation of %s: %s", name, exc.message)
                    self._aggregate.set()


# ---------------------------------------------------------------- Node authorizer
#: What a kubelet may do besides its own Node and Lease (the calls minik8s' kubelet makes).
NODE_RULES: list[Obj] = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "delete"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update", "patch"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "update", "patch"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "update", "patch"]},
    # minik8s' kubelet watches ConfigMaps and Secrets cluster-wide for its volumes and env (see docs)
    {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["services", "endpoints", "serviceaccounts"], "verbs": ["get", "list", "watch"]},
    # persistentVolumeClaim volumes: the kubelet resolves claims to their volumes
    {"apiGroups": [""], "resources": ["persistentvolumeclaims", "persistentvolumes"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    # a pod's runtimeClassName names the handler its sandbox runs with; CSI kinds (system:node's rules)
    {"apiGroups": ["node.k8s.io"], "resources": ["runtimeclasses"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["csidrivers"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": ["get"]},
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
]
_NODE_SELF_VERBS = ("get", "create", "update", "patch", "delete")


def node_name(user: UserInfo) -> str | None:
    """The node a kubelet user speaks for (``system:node:<name>`` in ``system:nodes``), else None."""
    if user.name.startswith(NODE_PREFIX) and NODES_GROUP in user.groups:
        return user.name[len(NODE_PREFIX):] or None
    return None


class NodeAuthorizer:
    """Kubernetes' Node authorizer, for minik8s' kubelet: ``decide`` answers (allowed, reason),
    with no opinion (False, "") for users that are not nodes."""

    def decide(self, user: UserInfo, info: RequestInfo) -> tuple[bool, str]:
        node = node_name(user)
        if node is None or not info.resource_request:
            return False, ""
        if info.api_group == "" and info.resource == "nodes" and info.subresource in ("", "status") \
                and info.verb in ("create", "update", "patch", "delete"):
            if info.verb != "create" and info.name != node:
                return False, f'node "{node}" is not allowed to modify node "{info.name}"'
            return True, ""
        if info.api_group == "coordination.k8s.io" and info.resource == "leases":
            if info.namespace == NODE_LEASE_NAMESPACE and info.verb in _NODE_SELF_VERBS \
                    and (info.verb == "create" or info.name == node):
                return True, ""
            return False, "can only access node lease with the same name as the requesting node"
        if info.api_group == "storage.k8s.io" and info.resource == "csinodes":
            # the kubelet keeps its own CSINode (system:node's rule, narrowed as NodeRestriction does)
            if info.verb in _NODE_SELF_VERBS and (info.verb == "create" or info.name == node):
                return True, ""
            return False, f'node "{node}" is not allowed to modify csinode "{info.name}"'
        return rules_allow(NODE_RULES, info), ""


def node_may_create(node: str, body: Any) -> None:
    """NodeRestriction for a kubelet creating a Node: its own only (else Forbidden)."""
    name = ((body.get("metadata") or {}).get("name") or "") if isinstance(body, dict) else ""
    if name != node:
        raise errors.Forbidden(f'nodes "{name}" is forbidden: node "{node}" is not allowed to modify node "{name}"')


async def node_restriction(api: Any, registry: Registry, node: str, info: RequestInfo) -> None:
    """NodeRestriction admission for a kubelet's pod writes: raises Forbidden when node ``node``
    would create a pod (only mirror pods may be, and minik8s has none) or change or delete a pod
    not bound to it (``spec.nodeName``)."""
    if info.resource != "pods" or info.verb not in ("create", "update", "patch", "delete"):
        return
    if info.verb == "create":
        raise errors.Forbidden(f'pods is forbidden: node "{node}" can only create mirror pods')
    rt = registry.by_kind("v1", "Pod")
    assert rt is not None
    pod = await api.get(rt, info.namespace, info.name)
    if ((pod.get("spec") or {}).get("nodeName") or "") != node:
        what = "delete pods" if info.verb == "delete" else "update pods"
        raise errors.Forbidden(f'pods "{info.name}" is forbidden: node "{node}" can only {what} with spec.nodeName '
                               f'set to itself')
