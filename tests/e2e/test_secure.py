"""``minik8s up`` is secure by default: on the node's address the apiserver and the kubelet
speak HTTPS only and refuse callers without a client certificate of the cluster CA (public
health and version excepted, as in Kubernetes); the user's kubeconfig carries the admin
certificate and is private; pods reach the apiserver through the ``kubernetes`` Service."""

from __future__ import annotations

import json
import ssl
import stat

import httpx
import pytest

from tests.e2e.conftest import Cluster


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
