"""``minik8s up`` is secure by default: on the node's address the apiserver and the kubelet
speak HTTPS only and refuse callers without a client certificate of the cluster CA (public
health and version excepted, as in Kubernetes); the user's kubeconfig carries the admin
certificate and is private; pods reach the apiserver through the ``kubernetes`` Service as their
service account, authorized by RBAC; Secrets are encrypted in etcd."""

from __future__ import annotations

import base64
import json
import os
import ssl
import stat
import subprocess

import httpx
import pytest
import yaml

from tests.support.cluster import Cluster, wait_for


def unverified() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def test_listeners_off_loopback_want_client_certificates(cluster: Cluster) -> None:
    saved = json.loads((cluster.data_dir / "cluster.json").read_text())
    node_ip, kubelet, api = saved["node_ip"], saved["kubelet_port"], saved["apiserver_port"]
    with pytest.raises(httpx.HTTPError):  # no plain HTTP
        httpx.get(f"http://{node_ip}:{kubelet}/pods", timeout=5)
    with httpx.Client(verify=unverified(), timeout=5) as anonymous:
        assert anonymous.get(f"https://{node_ip}:{kubelet}/pods").status_code == 401
        assert anonymous.get(f"https://{node_ip}:{api}/api/v1/pods").status_code == 401
        assert anonymous.get(f"https://{node_ip}:{api}/version").status_code == 200
    # the node's serving certificates verify against the cluster CA, by the node's address
    with httpx.Client(verify=cluster.ssl_context(), timeout=5) as admin:
        assert admin.get(f"https://{node_ip}:{api}/api/v1/namespaces/default/pods").status_code == 200
    mode = stat.S_IMODE(cluster.kubeconfig.stat().st_mode)
    assert mode == 0o600, oct(mode)
    assert stat.S_IMODE((cluster.data_dir / "pki").stat().st_mode) == 0o700
    endpoints = cluster.get_json("endpoints", "kubernetes", "-n", "default")
    assert endpoints["subsets"][0]["addresses"] == [{"ip": node_ip}]
    assert endpoints["subsets"][0]["ports"][0]["port"] == api


CALL_API = """
import json, os, ssl, urllib.request, urllib.error
sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
ns = open(sa + "namespace").read()
url = "https://%s:%s/api/v1/namespaces/%s/pods" % (os.environ["KUBERNETES_SERVICE_HOST"],
                                                   os.environ["KUBERNETES_SERVICE_PORT"], ns)
request = urllib.request.Request(url, headers={"Authorization": "Bearer " + open(sa + "token").read()})
try:
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=sa + "ca.crt"), timeout=10) as r:
        print(r.status, len(json.load(r)["items"]))
except urllib.error.HTTPError as e:
    print(e.code, json.load(e)["message"])
"""


def test_pods_call_the_apiserver_as_their_service_account(cluster: Cluster) -> None:
    """Every pod gets its ServiceAccount's token, the cluster CA and its namespace at
    /var/run/secrets/kubernetes.io/serviceaccount and KUBERNETES_SERVICE_HOST/PORT (what
    ``load_incluster_config()`` reads); RBAC lets it list pods only once a RoleBinding allows it."""
    with cluster.namespace("sa", wait=True) as ns:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "client", "namespace": ns},
               "spec": {"containers": [{"name": "c", "image": "minik8s/python", "command": ["sleep", "3600"]}]}}
        cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(pod))
        cluster.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod/client", "--timeout=120s", timeout=150)
        created = cluster.get_json("pod", "client", "-n", ns)
        assert created["spec"]["serviceAccountName"] == "default"
        assert [v["name"] for v in created["spec"]["volumes"]][0].startswith("kube-api-access-")

        def call() -> str:
            return cluster.kubectl("exec", "-n", ns, "client", "--", "python3", "-c", CALL_API).stdout.strip()

        denied = call()
        assert denied.startswith("403") and f"system:serviceaccount:{ns}:default" in denied, denied
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "default-view", "namespace": ns},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                   "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]}
        cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(binding))
        assert wait_for(lambda: call() == "200 1", 30, what="the pod allowed to list its namespace's pods")


def test_secrets_are_encrypted_in_etcd(cluster: Cluster) -> None:
    """``minik8s up`` stores Secrets encrypted (AES-GCM, its own key): etcd holds ciphertext with
    Kubernetes' prefix, the API answers the plain data."""
    name = f"enc-{os.urandom(3).hex()}"
    cluster.kubectl("create", "secret", "generic", name, "--from-literal=password=s3cr3t-value")
    try:
        etcd_port = json.loads((cluster.data_dir / "cluster.json").read_text())["etcd_port"]
        raw = subprocess.run(["etcdctl", "--endpoints", f"http://127.0.0.1:{etcd_port}", "get",
                              f"/registry/secrets/default/{name}", "--print-value-only"],
                             capture_output=True, timeout=30, check=True).stdout
        assert raw.startswith(b"k8s:enc:aesgcm:v1:key1:") and b"s3cr3t" not in raw and b"czNjcjN0" not in raw
        secret = cluster.get_json("secret", name)
        assert base64.b64decode(secret["data"]["password"]) == b"s3cr3t-value"
    finally:
        cluster.kubectl("delete", "secret", name, check=False)
