"""Authorization end to end: an apiserver with ``--authorization-mode=Node,RBAC`` and static tokens.

Users bound to view/edit/admin are answered as Kubernetes answers them; a service-account token
works as a credential once a RoleBinding allows it; a node cannot touch another node's pods;
impersonation; the official kubectl's ``auth can-i`` and ``auth whoami``.
"""

from __future__ import annotations

import ssl
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from minik8s.client.kubeconfig import render
from tests.realkubectl import RealKubectl, find
from tests.support.kubectl import Kubectl
from tests.support.kubectl_parity import tolerate
from tests.support.processes import APIServer, Etcd, wait_http
from tests.support.waiting import wait_for_sync

USERS = {"admin": "system:masters", "alice": "", "bob": "", "carol": "", "dave": "",
         "system:node:a": "system:nodes", "system:node:b": "system:nodes"}
RBAC = "/apis/rbac.authorization.k8s.io/v1"
CA: dict[str, str] = {}  # the serving certificate of each server (self-signed)


def token(user: str) -> str:
    return "t-" + user.replace(":", "-")


@pytest.fixture(scope="module")
def server(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[APIServer]:
    d = tmp_path_factory.mktemp("rbac")
    # kubectl sends tokens over HTTPS only
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "server.key"),
                    "-out", str(d / "server.crt"), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    (d / "tokens.csv").write_text("".join(f'{token(u)},{u},{i},"{g}"\n' for i, (u, g) in enumerate(USERS.items())))
    srv = APIServer(etcd, d, scheme="https", extra=[
        "--authorization-mode", "Node,RBAC", "--token-auth-file", str(d / "tokens.csv"),
        "--tls-cert-file", str(d / "server.crt"), "--tls-private-key-file", str(d / "server.key")])
    CA[srv.url] = str(d / "server.crt")
    wait_http(f"{srv.url}/readyz", verify=ssl.create_default_context(cafile=CA[srv.url]))
    yield srv
    srv.stop()


def call(server: APIServer, user: str | None, method: str, path: str, body: dict | None = None,
         headers: dict | None = None) -> httpx.Response:
    h = dict(headers or {})
    if user is not None:
        h["Authorization"] = f"Bearer {token(user) if not user.startswith('ey') else user}"
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    return httpx.request(method, server.url + path, json=body, headers={"Content-Type": ctype, **h}, timeout=10,
                         verify=ssl.create_default_context(cafile=CA[server.url]))


@pytest.fixture(scope="module")
def ns(server: APIServer) -> str:
    name = f"rbac-{uuid.uuid4().hex[:6]}"
    assert call(server, "admin", "POST", "/api/v1/namespaces", {"metadata": {"name": name}}).status_code == 201
    for user, role in (("alice", "view"), ("bob", "edit"), ("carol", "admin")):
        r = call(server, "admin", "POST", f"{RBAC}/namespaces/{name}/rolebindings", {
            "metadata": {"name": f"{user}-{role}"}, "subjects": [
                {"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
            "roleRef": {"kind": "ClusterRole", "name": role, "apiGroup": "rbac.authorization.k8s.io"}})
        assert r.status_code == 201, r.text
    return name


POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_bootstrap_policy_is_in_place(server: APIServer) -> None:
    r = call(server, "admin", "GET", f"{RBAC}/clusterroles")
    names = {i["metadata"]["name"] for i in r.json()["items"]}
    assert {"cluster-admin", "admin", "edit", "view", "system:kube-scheduler", "system:kube-controller-manager",
            "system:node-proxier", "system:kube-dns", "system:basic-user", "system:discovery",
            "system:public-info-viewer"} <= names
    view = wait_for_sync(lambda: call(server, "admin", "GET", f"{RBAC}/clusterroles/view").json().get("rules"),
                         what="view's aggregated rules written")
    assert any("pods" in r.get("resources", []) and "list" in r["verbs"] for r in view)


@pytest.mark.parametrize(("user", "method", "path", "want"), [
    ("alice", "GET", "pods", 200), ("alice", "POST", "pods", 403), ("alice", "GET", "secrets", 403),
    ("alice", "GET", "roles", 403),
    ("bob", "GET", "pods", 200), ("bob", "POST", "configmaps", 201), ("bob", "GET", "secrets", 200),
    ("bob", "POST", "roles", 403),
    ("carol", "POST", "roles", 201), ("carol", "GET", "rolebindings", 200), ("carol", "DELETE", "pods", 200),
    ("dave", "GET", "pods", 403), ("alice", "GET", "nodes", 403),
])
def test_role_matrix(server: APIServer, ns: str, user: str, method: str, path: str, want: int) -> None:
    base = {"roles": f"{RBAC}/namespaces/{ns}/roles", "rolebindings": f"{RBAC}/namespaces/{ns}/rolebindings",
            "nodes": "/api/v1/nodes"}.get(path, f"/api/v1/namespaces/{ns}/{path}")
    body = {"pods": POD, "configmaps": {"metadata": {"generateName": "c-"}},
            "roles": {"metadata": {"generateName": "r-"}, "rules": []}}.get(path) if method == "POST" else None
    r = wait_for_sync(lambda: (res := call(server, user, method, base, body)).status_code == want and res,
                      timeout=10, what=f"{user} {method} {path} -> {want}")
    if want == 403:
        verb = {"GET": "list", "POST": "create"}[method]
        resource = base.rsplit("/", 1)[-1]
        group = "rbac.authorization.k8s.io" if path.startswith("role") else ""
        where = "at the cluster scope" if path == "nodes" else f'in the namespace "{ns}"'
        qualified = f"{resource}.{group}" if group else resource
        assert r.json()["message"] == (f'{qualified} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
                                       f'in API group "{group}" {where}')
        assert r.json()["reason"] == "Forbidden"


def test_service_account_token_lists_pods_only_when_bound(server: APIServer, ns: str) -> None:
    assert call(server, "admin", "POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                {"metadata": {"name": "robot"}}).status_code == 201
    r = call(server, "admin", "POST", f"/api/v1/namespaces/{ns}/serviceaccounts/robot/token", {})
    jwt = r.json()["status"]["token"]
    denied = call(server, jwt, "GET", f"/api/v1/namespaces/{ns}/pods")
    assert denied.status_code == 403 and f'User "system:serviceaccount:{ns}:robot"' in denied.json()["message"]
    assert call(server, "admin", "POST", f"{RBAC}/namespaces/{ns}/rolebindings", {
        "metadata": {"name": "robot-view"}, "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": ns}],
        "roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"}}).status_code == 201
    wait_for_sync(lambda: call(server, jwt, "GET", f"/api/v1/namespaces/{ns}/pods").status_code == 200,
                  what="the token lists pods")
    assert call(server, jwt, "GET", "/api/v1/namespaces/default/pods").status_code == 403
    assert call(server, "not.a.jwt", "GET", f"/api/v1/namespaces/{ns}/pods").status_code == 401


def test_node_cannot_touch_another_nodes_pods(server: APIServer, ns: str) -> None:
    for pod, node in (("on-a", "a"), ("on-b", "b")):
        body = {**POD, "metadata": {"name": pod}, "spec": {**POD["spec"], "nodeName": node}}
        assert call(server, "admin", "POST", f"/api/v1/namespaces/{ns}/pods", body).status_code == 201
    status = {"status": {"phase": "Running"}}
    ok = call(server, "system:node:a", "PATCH", f"/api/v1/namespaces/{ns}/pods/on-a/status", status)
    assert ok.status_code == 200, ok.text
    r = call(server, "system:node:a", "PATCH", f"/api/v1/namespaces/{ns}/pods/on-b/status", status)
    assert r.status_code == 403
    assert r.json()["message"] == ('pods "on-b" is forbidden: node "a" can only update pods with spec.nodeName set to '
                                   'itself')
    assert call(server, "system:node:a", "DELETE", f"/api/v1/namespaces/{ns}/pods/on-b").status_code == 403
    assert call(server, "system:node:a", "GET", f"/api/v1/namespaces/{ns}/pods/on-b").status_code == 200
    node_b = {"metadata": {"name": "b"}}
    assert call(server, "system:node:a", "POST", "/api/v1/nodes", node_b).status_code == 403
    assert call(server, "system:node:b", "POST", "/api/v1/nodes", node_b).status_code in (201, 409)
    r = call(server, "system:node:a", "PATCH", "/api/v1/nodes/b/status", status)
    assert r.status_code == 403 and 'node "a" is not allowed to modify node "b"' in r.json()["message"]
    assert call(server, "system:node:b", "PATCH", "/api/v1/nodes/b", {"metadata": {"labels": {"x": "y"}}}
                ).status_code == 200
    lease = {"metadata": {"name": "a"}, "spec": {"holderIdentity": "a"}}
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    assert call(server, "system:node:a", "POST", lease_path, lease).status_code in (201, 409)
    assert call(server, "system:node:b", "PUT", f"{lease_path}/a", lease).status_code == 403


def test_impersonation_and_reviews(server: APIServer, ns: str) -> None:
    r = call(server, "admin", "GET", f"/api/v1/namespaces/{ns}/pods", headers={"Impersonate-User": "alice"})
    assert r.status_code == 200
    r = call(server, "admin", "POST", f"/api/v1/namespaces/{ns}/pods", POD, headers={"Impersonate-User": "alice"})
    assert r.status_code == 403 and 'User "alice" cannot create resource "pods"' in r.json()["message"]
    r = call(server, "alice", "GET", f"/api/v1/namespaces/{ns}/pods", headers={"Impersonate-User": "bob"})
    assert r.status_code == 403 and r.json()["message"].startswith(
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group ""')
    sar = {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "spec": {
        "user": "bob", "resourceAttributes": {"namespace": ns, "verb": "delete", "resource": "pods"}}}
    r = call(server, "admin", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar)
    assert r.status_code == 201 and r.json()["status"]["allowed"] is True
    sar["spec"]["user"] = "alice"
    assert call(server, "admin", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                sar).json()["status"]["allowed"] is False
    assert call(server, "alice", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                sar).status_code == 403  # only the self reviews are for everyone
    r = call(server, "dave", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
             {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1"})
    assert r.status_code == 201 and r.json()["status"]["userInfo"]["username"] == "dave"
    bad = {"kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": "bad"},
           "rules": [{"apiGroups": [""], "resources": ["pods"]}]}
    r = call(server, "admin", "POST", f"{RBAC}/namespaces/{ns}/roles", bad)
    assert r.status_code == 422 and r.json()["message"].startswith(
        'Role.rbac.authorization.k8s.io "bad" is invalid: rules[0].verbs: Required value')
    bad["rules"] = [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]
    r = call(server, "admin", "POST", f"{RBAC}/namespaces/{ns}/roles", bad)
    assert r.status_code == 422 and r.json()["message"] == (
        'Role.rbac.authorization.k8s.io "bad" is invalid: rules[0].verbs: Required value: '
        'verbs must contain at least one value')


def test_local_subject_access_review(server: APIServer, ns: str) -> None:
    """A namespace's admin (the ``admin`` role's aggregated rule) may ask who can do what there."""
    path = f"/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews"
    lsar = {"kind": "LocalSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "spec": {
        "user": "bob", "resourceAttributes": {"namespace": ns, "verb": "delete", "resource": "pods"}}}
    r = call(server, "carol", "POST", path, lsar)
    assert r.status_code == 201, r.text
    assert r.json()["metadata"] == {"namespace": ns, "creationTimestamp": None}
    assert r.json()["status"]["allowed"] is True
    lsar["spec"]["user"] = "alice"
    assert call(server, "carol", "POST", path, lsar).json()["status"]["allowed"] is False
    r = call(server, "bob", "POST", path, lsar)  # edit has no localsubjectaccessreviews
    assert r.status_code == 403 and 'cannot create resource "localsubjectaccessreviews"' in r.json()["message"]
    lsar["spec"]["resourceAttributes"]["namespace"] = ""
    r = call(server, "carol", "POST", path, lsar)
    assert r.status_code == 422 and r.json()["message"] == (
        'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: '
        'spec.resourceAttributes.namespace: Invalid value: "": must match metadata.namespace')
    lsar["spec"] = {"user": "alice", "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}
    r = call(server, "carol", "POST", path, lsar)
    assert r.status_code == 422 and r.json()["details"]["causes"][-1]["field"] == "spec.nonResourceAttributes"
    assert r.json()["message"].endswith("disallowed on this kind of request")
    r = call(server, "carol", "POST", path, {"spec": {"user": "alice"}})
    assert r.status_code == 422 and r.json()["message"].startswith(
        'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: ')
    lsar = {**lsar, "metadata": {"namespace": "elsewhere"}}
    r = call(server, "carol", "POST", path, lsar)
    assert r.status_code == 400 and r.json()["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request")


@pytest.mark.parametrize("version", ["1.32", "1.37"])
def test_real_kubectl_auth_can_i_and_whoami(server: APIServer, ns: str, tmp_path: Path, version: str) -> None:
    path, why = find(version)
    if path is None:
        pytest.skip(why)
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(render(server.url, token=token("bob"), ca_file=CA[server.url]))
    kubectl = RealKubectl(path, version, cfg, ns)
    wait_for_sync(lambda: kubectl("auth", "can-i", "create", "deployments").out.strip() == "yes",
                  what="bob may create deployments")
    no = kubectl("auth", "can-i", "create", "roles")
    assert no.code == 1 and no.out.strip() == "no"
    assert kubectl("auth", "can-i", "list", "pods", "--as", "alice").code != 0  # bob may not impersonate
    cfg.write_text(render(server.url, token=token("admin"), ca_file=CA[server.url]))
    assert kubectl("auth", "can-i", "delete", "pods", "--as", "alice").out.strip() == "no"
    assert kubectl("auth", "can-i", "list", "pods", "--as", "alice").out.strip() == "yes"
    who = kubectl.ok("auth", "whoami", "-o", "json", "--as", "dave", "--as-group", "team")
    assert '"username": "dave"' in who.out and '"team"' in who.out
    assert "system:masters" in kubectl.ok("auth", "whoami").out
    # kubectl's generators send protobuf bodies; the binding's table has Kubernetes' columns
    kubectl.ok("create", "rolebinding", f"eve-view-{version}", "--clusterrole=view", "--user=eve")
    wide = kubectl.ok("get", "rolebinding", f"eve-view-{version}", "-o", "wide").out.splitlines()
    assert wide[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert wide[1].split()[1] == "ClusterRole/view" and wide[1].split()[3] == "eve"
    wait_for_sync(lambda: kubectl("auth", "can-i", "list", "pods", "--as", "eve").out.strip() == "yes",
                  what="eve may list pods")
    assert kubectl.ok("get", "clusterrole", "view").out.split()[:3] == ["NAME", "CREATED", "AT"]


#: ``auth`` invocations whose output minik8s' kubectl must print as the official one does, by user
CAN_I_RUNS = [
    ("bob", ["auth", "can-i", "--list"]),
    ("alice", ["auth", "can-i", "--list", "--no-headers"]),
    ("dave", ["auth", "can-i", "--list"]),
    ("admin", ["auth", "can-i", "--list"]),
    ("admin", ["auth", "can-i", "--list", "--as", "carol"]),
    ("admin", ["auth", "can-i", "--list", "--as", "dave", "--as-group", "team", "--as-group", "system:authenticated"]),
    ("admin", ["auth", "whoami", "-o", "json", "--as", "dave", "--as-group", "team", "--as-uid", "42"]),
    ("admin", ["get", "pods", "--as", "alice", "-o", "name"]),
    ("admin", ["create", "configmap", "x", "--as", "alice"]),
    ("bob", ["get", "pods", "--as", "alice"]),
    ("admin", ["get", "pods", "--as-group", "team"]),  # groups without a user to impersonate
    ("admin", ["auth", "can-i", "--list", "-A"]),
    ("admin", ["auth", "can-i", "--list", "pods"]),
]


@pytest.mark.parametrize("version", ["1.32", "1.37"])
def test_can_i_list_and_impersonation_match_the_official_kubectl(server: APIServer, ns: str, tmp_path: Path,
                                                                  version: str) -> None:
    """``auth can-i --list`` (a SelfSubjectRulesReview: each user's rules in the namespace, broken
    down, merged and sorted as kubectl does) and ``--as``/``--as-group``/``--as-uid``: the same
    output, errors and exit codes from minik8s' kubectl as from the official one."""
    path, why = find(version)
    if path is None:
        pytest.skip(why)
    for user, args in CAN_I_RUNS:
        cfg = tmp_path / f"kubeconfig-{user}"
        cfg.write_text(render(server.url, token=token(user), ca_file=CA[server.url]))
        official, mine = tolerate(["1.37-whoami-metadata"], version, RealKubectl(path, version, cfg, ns)(*args),
                                  Kubectl(cfg, ns)(*args))
        assert (mine.code, mine.out, mine.err) == (official.code, official.out, official.err), (user, args)
    assert "configmaps" in Kubectl(tmp_path / "kubeconfig-bob", ns).ok("auth", "can-i", "--list").out


def test_official_python_client_reads_a_rules_review(server: APIServer, ns: str) -> None:
    """The ``kubernetes`` client's models require ``resourceRules``, ``nonResourceRules`` and
    ``incomplete``: the answer has them, a user's RoleBinding's rules among them."""
    import kubernetes.client as k8s

    cfg = k8s.Configuration()
    cfg.host = server.url
    cfg.ssl_ca_cert = CA[server.url]
    cfg.api_key = {"authorization": f"Bearer {token('alice')}"}
    with k8s.ApiClient(cfg) as api:
        review = k8s.AuthorizationV1Api(api).create_self_subject_rules_review(
            k8s.V1SelfSubjectRulesReview(spec=k8s.V1SelfSubjectRulesReviewSpec(namespace=ns)))
    assert review.status.incomplete is False
    assert any("pods" in (r.resources or []) and "list" in r.verbs for r in review.status.resource_rules)
    assert any("/version" in (r.non_resource_urls or []) for r in review.status.non_resource_rules)
    r = call(server, "alice", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
             {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1", "spec": {}})
    assert r.status_code == 400 and r.json()["message"] == "no namespace on request"

