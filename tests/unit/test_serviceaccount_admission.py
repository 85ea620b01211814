"""The ServiceAccount admission plugin and the kubelet's Service variables (pure functions)."""

from __future__ import annotations

import pytest

from minik8s.apiserver.admission import MOUNT_PATH, mount_service_account_token, parse_plugins
from minik8s.kubelet.serviceenv import service_env


def pod(**spec: object) -> dict:
    return {"metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "initContainers": [{"name": "i", "image": "i"}],
                     **spec}}


def test_the_token_volume_is_mounted_in_every_container() -> None:
    p = pod()
    mount_service_account_token(p, {"metadata": {"name": "default"}})
    spec = p["spec"]
    assert spec["serviceAccountName"] == "default"
    [volume] = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == len("kube-api-access-") + 5
    sources = volume["projected"]["sources"]
    assert sources[0] == {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
    assert sources[1]["configMap"]["name"] == "kube-root-ca.crt"
    assert sources[2]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == "metadata.namespace"
    for c in spec["containers"] + spec["initContainers"]:
        assert c["volumeMounts"] == [{"name": volume["name"], "mountPath": MOUNT_PATH, "readOnly": True}]


@pytest.mark.parametrize("spec,account", [
    ({"automountServiceAccountToken": False}, None),
    ({}, {"automountServiceAccountToken": False}),
    ({"containers": [{"name": "c", "image": "i", "volumeMounts": [{"name": "x", "mountPath": MOUNT_PATH}]}],
      "volumes": [{"name": "x", "emptyDir": {}}]}, None),
])
def test_opting_out(spec: dict, account: dict | None) -> None:
    p = pod(**spec)
    before = [v["name"] for v in p["spec"].get("volumes") or []]
    mount_service_account_token(p, account)
    assert [v["name"] for v in p["spec"].get("volumes") or []] == before


def test_the_pod_says_yes_over_its_account() -> None:
    p = pod(automountServiceAccountToken=True)
    mount_service_account_token(p, {"automountServiceAccountToken": False})
    assert len(p["spec"]["volumes"]) == 1


def test_plugins_flag() -> None:
    # DefaultTolerationSeconds is on by default (kube-apiserver's default-on set)
    defaults = {"DefaultTolerationSeconds", "Priority", "RuntimeClass", "LimitRanger", "ResourceQuota"}
    assert parse_plugins("ServiceAccount") == {"ServiceAccount"} | defaults
    assert parse_plugins(None) == defaults
    assert parse_plugins("ServiceAccount", "DefaultTolerationSeconds,LimitRanger,Priority,RuntimeClass") == {
        "ServiceAccount", "ResourceQuota"}
    with pytest.raises(ValueError, match="unknown plugin"):
        parse_plugins("ServiceAccount,NamespaceLifecycle2")
    with pytest.raises(ValueError, match="--disable-admission-plugins: unknown plugin"):
        parse_plugins(None, "Nope")
    with pytest.raises(ValueError, match="both enabled and disabled"):
        parse_plugins("ServiceAccount", "ServiceAccount")


def svc(ns: str, name: str, ip: str, *ports: dict) -> dict:
    return {"metadata": {"namespace": ns, "name": name}, "spec": {"clusterIP": ip, "ports": list(ports)}}


def test_service_variables() -> None:
    services = [svc("default", "kubernetes", "10.96.0.1", {"name": "https", "port": 443, "protocol": "TCP"}),
                svc("ns", "my-db", "10.96.0.7", {"name": "sql", "port": 5432}, {"port": 9000, "protocol": "UDP"}),
                svc("ns", "headless", "None", {"port": 80}), svc("other", "far", "10.96.0.9", {"port": 1})]
    env = service_env(pod(), services)
    assert env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1" and env["KUBERNETES_SERVICE_PORT"] == "443"
    assert env["KUBERNETES_SERVICE_PORT_HTTPS"] == "443"
    assert env["KUBERNETES_PORT"] == "tcp://10.96.0.1:443"
    assert env["MY_DB_SERVICE_HOST"] == "10.96.0.7" and env["MY_DB_SERVICE_PORT_SQL"] == "5432"
    assert env["MY_DB_PORT_9000_UDP"] == "udp://10.96.0.7:9000" and env["MY_DB_PORT_9000_UDP_ADDR"] == "10.96.0.7"
    assert not any(k.startswith(("HEADLESS_", "FAR_")) for k in env)
    # enableServiceLinks: false keeps only the apiserver's
    assert {k.split("_")[0] for k in service_env(pod(enableServiceLinks=False), services)} == {"KUBERNETES"}
