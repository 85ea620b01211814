"""RBAC rule matching, RequestInfo, the Node authorizer and the RBAC strategies (no processes)."""

from __future__ import annotations

import asyncio

import pytest

from minik8s.apiserver import requestinfo
from minik8s.apiserver.authorization import APIServerAuthorizer, parse_modes
from minik8s.apiserver.bootstrappolicy import cluster_role_bindings, cluster_roles
from minik8s.apiserver.rbac import NodeAuthorizer, RBACCache, forbidden_message, rule_allows
from minik8s.apiserver.requestinfo import RequestInfo
from minik8s.apiserver.strategies.rbac import ClusterRoleBindingStrategy, RoleBindingStrategy, RoleStrategy
from minik8s.auth import UserInfo


@pytest.mark.parametrize(("method", "path", "watch", "want"), [
    ("GET", "/api/v1/namespaces/ns/pods", False, ("list", "", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", True, ("watch", "", "ns", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/ns/pods", False, ("watch", "", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods/p/log", False, ("get", "", "ns", "pods", "log", "p")),
    ("POST", "/api/v1/namespaces/ns/pods/p/exec", False, ("create", "", "ns", "pods", "exec", "p")),
    ("PATCH", "/api/v1/namespaces/ns/pods/p/ephemeralcontainers", False,
     ("patch", "", "ns", "pods", "ephemeralcontainers", "p")),
    ("DELETE", "/apis/apps/v1/namespaces/ns/deployments", False, ("deletecollection", "apps", "ns", "deployments",
                                                                  "", "")),
    ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale", False, ("patch", "apps", "ns", "deployments",
                                                                         "scale", "d")),
    ("GET", "/api/v1/namespaces/ns", False, ("get", "", "ns", "namespaces", "", "ns")),
    ("PUT", "/api/v1/namespaces/ns/status", False, ("update", "", "ns", "namespaces", "status", "ns")),
    ("GET", "/api/v1/nodes/n1", False, ("get", "", "", "nodes", "", "n1")),
    ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", False,
     ("create", "authorization.k8s.io", "", "selfsubjectaccessreviews", "", "")),
])
def test_request_info_of_resource_paths(method: str, path: str, watch: bool, want: tuple[str, ...]) -> None:
    info = requestinfo.parse(method, path, watch)
    assert info.resource_request
    assert (info.verb, info.api_group, info.namespace, info.resource, info.subresource, info.name) == want


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/healthz",
                                  "/openapi/v2", "/version"])
def test_request_info_of_non_resource_paths(path: str) -> None:
    info = requestinfo.parse("GET", path)
    assert not info.resource_request and info.verb == "get" and info.path == path


def _res(verb: str, resource: str, group: str = "", ns: str = "ns", name: str = "", sub: str = "") -> RequestInfo:
    return RequestInfo(verb, resource_request=True, api_group=group, namespace=ns, resource=resource,
                       subresource=sub, name=name)


def test_rule_matching_verbs_groups_resources_names_and_wildcards() -> None:
    rule = {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]}
    assert rule_allows(rule, _res("get", "pods", name="p"))
    assert rule_allows(rule, _res("get", "pods", name="p", sub="log"))
    assert not rule_allows(rule, _res("create", "pods", name="p", sub="exec"))
    assert not rule_allows(rule, _res("delete", "pods", name="p"))
    assert not rule_allows(rule, _res("get", "deployments", "apps", name="d"))
    assert not rule_allows(rule, _res("get", "pods", "apps", name="p"))
    star = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    assert rule_allows(star, _res("deletecollection", "jobs", "batch"))
    assert rule_allows(star, _res("create", "pods", sub="exec", name="p"))
    sub = {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["patch"]}
    assert rule_allows(sub, _res("patch", "deployments", "apps", name="d", sub="scale"))
    assert not rule_allows(sub, _res("patch", "deployments", "apps", name="d"))
    named = {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["one"], "verbs": ["get", "list"]}
    assert rule_allows(named, _res("get", "configmaps", name="one"))
    assert not rule_allows(named, _res("get", "configmaps", name="two"))
    assert not rule_allows(named, _res("list", "configmaps"))  # a list names nothing
    urls = {"nonResourceURLs": ["/healthz", "/apis/*"], "verbs": ["get"]}
    assert rule_allows(urls, RequestInfo("get", path="/healthz"))
    assert rule_allows(urls, RequestInfo("get", path="/apis/apps/v1"))
    assert not rule_allows(urls, RequestInfo("get", path="/api"))
    assert not rule_allows(urls, RequestInfo("post", path="/healthz"))
    assert not rule_allows(urls, _res("get", "pods"))  # URL rules never match resources


def test_forbidden_messages_are_kubernetes() -> None:
    u = UserInfo("alice")
    assert forbidden_message(u, _res("get", "pods", name="p")) == (
        'pods "p" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "ns"')
    assert forbidden_message(u, _res("list", "deployments", "apps")) == (
        'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" in '
        'the namespace "ns"')
    assert forbidden_message(u, _res("delete", "nodes", ns="", name="n1")) == (
        'nodes "n1" is forbidden: User "alice" cannot delete resource "nodes" in API group "" at the cluster scope')
    assert forbidden_message(u, _res("create", "pods", name="p", sub="exec")).endswith(
        'cannot create resource "pods/exec" in API group "" in the namespace "ns"')
    assert forbidden_message(u, RequestInfo("get", path="/metrics")) == (
        'forbidden: User "alice" cannot get path "/metrics"')


def _cache_with(objs: list[tuple[str, dict]]) -> RBACCache:
    async def build() -> RBACCache:
        cache = RBACCache(None, __import__("minik8s.api.registry", fromlist=["x"]).default_registry())
        for kind, obj in objs:
            cache.apply(kind, "ADDED", obj)
        cache.synced.set()
        return cache
    return asyncio.run(build())


def test_cache_indexes_bindings_by_subject_and_aggregates_cluster_roles() -> None:
    objs = [("ClusterRole", r) for r in cluster_roles()] + [("ClusterRoleBinding", b) for b in cluster_role_bindings()]
    objs += [
        ("RoleBinding", {"metadata": {"name": "v", "namespace": "ns"}, "subjects": [
            {"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "robot"}],
            "roleRef": {"kind": "ClusterRole", "name": "view"}}),
        ("Role", {"metadata": {"name": "cm", "namespace": "ns"},
                  "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]}),
        ("RoleBinding", {"metadata": {"name": "cm", "namespace": "ns"},
                         "subjects": [{"kind": "Group", "name": "devs"}], "roleRef": {"kind": "Role", "name": "cm"}}),
    ]
    cache = _cache_with(objs)
    authz = APIServerAuthorizer(("Node", "RBAC"), cache)
    alice = UserInfo("alice", groups=("system:authenticated",))
    robot = UserInfo("system:serviceaccount:ns:robot", groups=("system:serviceaccounts", "system:authenticated"))
    assert authz.decide(alice, _res("list", "pods"))[0]
    assert authz.decide(robot, _res("watch", "deployments", "apps"))[0]
    assert not authz.decide(alice, _res("list", "pods", ns="other"))[0]
    assert not authz.decide(alice, _res("delete", "pods", name="p"))[0]
    assert not authz.decide(alice, _res("get", "secrets", name="s"))[0]  # view never reads secrets
    assert authz.decide(alice, RequestInfo("get", path="/apis/apps/v1"))[0]  # system:discovery
    assert authz.decide(alice, _res("create", "selfsubjectaccessreviews", "authorization.k8s.io", ns=""))[0]
    assert authz.decide(UserInfo("bob", groups=("devs",)), _res("delete", "configmaps", name="c"))[0]
    assert authz.decide(UserInfo("root", groups=("system:masters",)), _res("delete", "nodes", ns="", name="n"))[0]
    # the aggregated roles carry their sources' rules, and edit ⊇ view, admin ⊇ edit
    view = cache.cluster_role_rules("view")
    assert view and all(r in cache.cluster_role_rules("edit") for r in view)
    assert all(r in cache.cluster_role_rules("admin") for r in cache.cluster_role_rules("edit"))
    # a binding's change moves its index entries
    cache.apply("RoleBinding", "MODIFIED", {"metadata": {"name": "v", "namespace": "ns"}, "subjects": [
        {"kind": "User", "name": "carol"}], "roleRef": {"kind": "ClusterRole", "name": "view"}})
    assert not authz.decide(alice, _res("list", "pods"))[0]
    assert authz.decide(UserInfo("carol"), _res("list", "pods"))[0]
    cache.apply("RoleBinding", "DELETED", {"metadata": {"name": "v", "namespace": "ns"}})
    assert not authz.decide(UserInfo("carol"), _res("list", "pods"))[0]
    # a new ClusterRole labelled aggregate-to-view widens view at once
    cache.apply("ClusterRole", "ADDED", {"metadata": {"name": "x", "labels": {
        "rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}]})
    widgets = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}
    assert widgets in cache.cluster_role_rules("admin")


def test_node_authorizer() -> None:
    node = NodeAuthorizer()
    a = UserInfo("system:node:a", groups=("system:nodes", "system:authenticated"))
    assert node.decide(a, _res("list", "pods", ns=""))[0]
    assert node.decide(a, _res("patch", "nodes", ns="", name="a", sub="status"))[0]
    assert node.decide(a, _res("create", "nodes", ns=""))[0]
    assert node.decide(a, _res("get", "nodes", ns="", name="b"))[0]  # reading other nodes is fine
    ok, why = node.decide(a, _res("patch", "nodes", ns="", name="b", sub="status"))
    assert not ok and why == 'node "a" is not allowed to modify node "b"'
    assert node.decide(a, _res("update", "leases", "coordination.k8s.io", ns="kube-node-lease", name="a"))[0]
    assert not node.decide(a, _res("update", "leases", "coordination.k8s.io", ns="kube-node-lease", name="b"))[0]
    assert not node.decide(a, _res("create", "pods"))[0]
    assert not node.decide(a, _res("delete", "namespaces", ns="", name="x"))[0]
    assert node.decide(UserInfo("system:node:a"), _res("list", "pods")) == (False, "")  # not in system:nodes


def test_modes_and_impersonation() -> None:
    assert parse_modes("Node,RBAC") == ("Node", "RBAC") and parse_modes("AlwaysAllow") == ("AlwaysAllow",)
    for bad in ("", "ABAC", "AlwaysAllow,RBAC", "RBAC,RBAC"):
        with pytest.raises(ValueError):
            parse_modes(bad)
    cache = _cache_with([("ClusterRole", {"metadata": {"name": "imp"}, "rules": [
        {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["bob"]}]}),
        ("ClusterRoleBinding", {"metadata": {"name": "imp"}, "subjects": [{"kind": "User", "name": "alice"}],
                                "roleRef": {"kind": "ClusterRole", "name": "imp"}})])
    authz = APIServerAuthorizer(("RBAC",), cache)
    scope = {"type": "http", "headers": [(b"impersonate-user", b"bob")]}
    user, refusal = authz.impersonate(UserInfo("alice"), scope)
    assert refusal is None and user.name == "bob" and "system:authenticated" in user.groups
    user, refusal = authz.impersonate(UserInfo("alice"), {"headers": [(b"impersonate-user", b"carol")]})
    assert user.name == "alice" and refusal is not None and refusal.startswith(
        'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group ""')
    _, refusal = authz.impersonate(UserInfo("alice"), {"headers": [(b"impersonate-user", b"bob"),
                                                                   (b"impersonate-group", b"system:masters")]})
    assert refusal is not None and 'groups "system:masters" is forbidden' in refusal


def test_rbac_validation_messages() -> None:
    role = {"metadata": {"name": "r/x", "namespace": "ns"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["get"], "nonResourceURLs": ["/x"]},
        {"verbs": ["get"]}]}
    causes = RoleStrategy().validate(role, None)
    assert ("metadata.name", "r/x", "may not contain '/'") in causes
    assert ("rules[0].verbs", None, "Required value: verbs must contain at least one value") in causes
    assert ("rules[1].nonResourceURLs", ["/x"], "namespaced rules cannot apply to non-resource URLs") in causes
    assert ("rules[2].apiGroups", None, "Required value: resource rules must supply at least one api group") in causes
    binding = {"metadata": {"name": "b", "namespace": "ns"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Pod", "name": "x"},
               "subjects": [{"kind": "User", "name": "u"}, {"kind": "Robot", "name": "r"}]}
    causes = RoleBindingStrategy().validate(binding, None)
    assert ("roleRef.kind", None, 'Unsupported value: "Pod": supported values: "Role", "ClusterRole"') in causes
    assert ("subjects[0].apiGroup", None,
            'Unsupported value: "": supported values: "rbac.authorization.k8s.io"') in causes
    assert ("subjects[1].kind", None,
            'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"') in causes
    crb = {"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                  "name": "view"},
           "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}
    assert ClusterRoleBindingStrategy().validate(crb, None) == [("subjects[0].namespace", None, "Required value")]
    changed = {**crb, "roleRef": {**crb["roleRef"], "name": "edit"}}
    assert ("roleRef", changed["roleRef"], "cannot change roleRef") in ClusterRoleBindingStrategy().validate(
        changed, crb)


def test_service_account_tokens_authenticate_only_with_rbac(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With AlwaysAllow a service-account JWT is no credential (every pod holds one); with RBAC it is."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from minik8s.apiserver.app import create_app
    from minik8s.apiserver.serviceaccounts import TokenIssuer
    from minik8s.apiserver.storage import Store
    from minik8s.auth import Authenticator

    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    for modes, accepted in ((("AlwaysAllow",), False), (("Node", "RBAC"), True)):
        auth = Authenticator({"t": UserInfo("admin")})
        create_app(Store(), authenticator=auth, metrics_resolution=None, token_issuer=TokenIssuer(key),
                   authorization_modes=modes)
        assert (auth.reviewer is not None) is accepted, modes


def test_ephemeral_containers_are_a_subresource_of_their_own() -> None:
    """``kubectl debug`` needs ``pods/ephemeralcontainers``: a rule on ``pods`` does not grant it."""
    info = requestinfo.parse("PATCH", "/api/v1/namespaces/ns/pods/p/ephemeralcontainers")
    assert not rule_allows({"verbs": ["patch"], "apiGroups": [""], "resources": ["pods"]}, info)
    assert rule_allows({"verbs": ["patch"], "apiGroups": [""], "resources": ["pods/ephemeralcontainers"]}, info)
    assert rule_allows({"verbs": ["patch"], "apiGroups": [""], "resources": ["*/ephemeralcontainers"]}, info)
