"""Models (wire names), the kinds table, strategies (defaults/validation), errors and kubeconfig."""

from __future__ import annotations

from pathlib import Path

import pytest

from minik8s.api import errors
from minik8s.api.core import Node, Pod
from minik8s.api.core import qos_class as pod_qos_class
from minik8s.api.registry import default_registry
from minik8s.apiserver.strategies import default_strategies
from minik8s.apiserver.strategies.pod import PodStrategy
from minik8s.client.kubeconfig import KubeconfigError, load, render


def test_pod_round_trip_uses_kubernetes_field_names() -> None:
    wire = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]},
        "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Never",
                                 "livenessProbe": {"httpGet": {"port": "http", "path": "/"}, "periodSeconds": 3},
                                 "ports": [{"containerPort": 80, "hostIP": "0.0.0.0", "hostPort": 8080}]}],
                 "nodeName": "n1"},
        "status": {"podIP": "10.244.0.5", "hostIP": "1.2.3.4", "podIPs": [{"ip": "10.244.0.5"}],
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 2, "imageID": "x",
                                          "containerID": "docker://abc",
                                          "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]},
        "unknownTopLevel": "dropped",
    }
    pod = Pod.from_dict(wire)
    assert pod.status is not None and pod.status.pod_ip == "10.244.0.5"
    assert pod.spec.containers[0].liveness_probe.http_get.port == "http"  # type: ignore[union-attr]
    out = pod.to_dict()
    assert "unknownTopLevel" not in out
    del wire["unknownTopLevel"]
    assert out == wire


def test_node_pod_cidr_alias() -> None:
    node = Node.from_dict({"metadata": {"name": "n"}, "spec": {"podCIDR": "10.244.1.0/24"},
                           "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}})
    assert node.to_dict()["spec"] == {"podCIDR": "10.244.1.0/24"}
    assert node.to_dict()["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == 10250


def test_registry_resolves_names_users_type() -> None:
    reg = default_registry()
    for name in ("pods", "pod", "po", "Pod", "PODS"):
        assert reg.resolve(name).kind == "Pod"  # type: ignore[union-attr]
    assert reg.resolve("leases.coordination.k8s.io").kind == "Lease"  # type: ignore[union-attr]
    assert reg.resolve("widgets") is None
    pods = reg.resolve("po")
    assert pods is not None and pods.storage_key("default", "web") == "/registry/pods/default/web"
    nodes = reg.resolve("no")
    assert nodes is not None and nodes.storage_key(None, "n1") == "/registry/nodes/n1"


def test_pod_defaults_and_qos() -> None:
    obj = {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
         "readinessProbe": {"tcpSocket": {"port": 80}}}], "volumes": [{"name": "v"}]}}
    s = PodStrategy()
    s.default(obj)
    c = obj["spec"]["containers"][0]
    assert c["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert c["readinessProbe"]["periodSeconds"] == 10 and c["readinessProbe"]["failureThreshold"] == 3
    assert obj["spec"]["volumes"][0] == {"name": "v", "emptyDir": {}}
    assert pod_qos_class(obj["spec"]) == "Guaranteed"
    assert pod_qos_class({"containers": [{"name": "c"}]}) == "BestEffort"
    assert pod_qos_class({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}) == "Burstable"
    assert obj["spec"]["enableServiceLinks"] is True


def test_pod_template_defaults_are_not_the_pods() -> None:
    """As Kubernetes' SetDefaults_Pod: requests from limits and enableServiceLinks only on a Pod."""
    from minik8s.apiserver.strategies.pod import default_pod_spec

    spec = {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}
    default_pod_spec(spec)
    assert spec["containers"][0]["resources"] == {"limits": {"cpu": "1"}} and "enableServiceLinks" not in spec


def test_service_type_dependent_fields() -> None:
    """allocateLoadBalancerNodePorts defaults to true on a LoadBalancer and is refused elsewhere; a
    type change drops what the old type had and the client left as it was."""
    from minik8s.apiserver.strategies.service import ServiceStrategy

    s = ServiceStrategy()
    lb = {"metadata": {"name": "s", "namespace": "d"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    s.default(lb)
    assert lb["spec"]["allocateLoadBalancerNodePorts"] is True and lb["spec"]["externalTrafficPolicy"] == "Cluster"
    lb["spec"]["ports"][0]["nodePort"] = 30080
    lb["spec"]["loadBalancerClass"] = "example.com/lb"
    changed = {"metadata": lb["metadata"], "spec": {**lb["spec"], "type": "ClusterIP",
                                                   "ports": [dict(lb["spec"]["ports"][0])]}}
    s.prepare_for_update(changed, lb)
    assert changed["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert not {"allocateLoadBalancerNodePorts", "loadBalancerClass", "externalTrafficPolicy"} & set(changed["spec"])
    assert s.validate(changed, lb) == []
    clusterip = {"metadata": lb["metadata"], "spec": {"type": "ClusterIP", "ports": [{"port": 80, "protocol": "TCP"}],
                                                      "allocateLoadBalancerNodePorts": False}}
    assert ("spec.allocateLoadBalancerNodePorts", None,
            "Forbidden: may only be used when `type` is 'LoadBalancer'") in s.validate(clusterip, None)


@pytest.mark.parametrize(("spec", "field"), [
    ({"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]},
     "spec.containers[0].resources.requests"),
    ({"containers": [{"name": "c", "image": "i", "volumeMounts": [{"name": "nope", "mountPath": "/x"}]}]},
     "spec.containers[0].volumeMounts[0].name"),
    ({"containers": [{"name": "c", "image": "i", "livenessProbe": {"periodSeconds": 3}}]},
     "spec.containers[0].livenessProbe"),
    ({"containers": [{"name": "c", "image": "i"}], "tolerations": [{"operator": "Maybe"}]},
     "spec.tolerations[0].operator"),
    ({"containers": [{"name": "UPPER", "image": "i"}]}, "spec.containers[0].name"),
])
def test_pod_validation_causes(spec: dict, field: str) -> None:
    obj = {"metadata": {"name": "p"}, "spec": spec}
    s = default_strategies()["Pod"]
    s.default(obj)
    assert field in [c[0] for c in s.validate(obj, None)]


def test_errors_map_both_ways() -> None:
    err = errors.invalid("Pod", "p", [("spec.x", None, "Required value")])
    status = err.to_status()
    assert status["code"] == 422 and status["message"] == 'Pod "p" is invalid: spec.x: Required value'
    back = errors.from_status(422, status)
    assert isinstance(back, errors.Invalid) and back.message == status["message"]
    assert isinstance(errors.from_status(409, {"kind": "Status", "reason": "AlreadyExists"}), errors.AlreadyExists)
    assert isinstance(errors.from_status(404, "plain text"), errors.NotFound)
    # NewInvalid: the message names the group-qualified kind, the details carry kind and group apart
    # (kubectl then prints 'The Deployment "d" is invalid')
    apps = errors.invalid("Deployment.apps", "d", [("spec.replicas", -1, "must be greater than or equal to 0")])
    assert apps.to_status()["message"].startswith('Deployment.apps "d" is invalid: spec.replicas: Invalid value: -1')
    assert apps.to_status()["details"] == {
        "name": "d", "group": "apps", "kind": "Deployment",
        "causes": [{"reason": "FieldValueInvalid", "message": "Invalid value: -1: must be greater than or equal to 0",
                    "field": "spec.replicas"}]}
    assert status["details"]["kind"] == "Pod" and "group" not in status["details"]


def test_kubeconfig_render_and_load(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(render("https://127.0.0.1:6443", token="t0k", ca_file="ca.crt"))
    cfg = load(str(path))
    assert cfg.server == "https://127.0.0.1:6443" and cfg.token == "t0k"
    assert cfg.ca_file == str(tmp_path / "ca.crt")  # relative to the kubeconfig's folder
    with pytest.raises(KubeconfigError, match="does not exist"):
        load(str(tmp_path / "missing"))
    path.write_text("current-context: nope\n")
    with pytest.raises(KubeconfigError, match="context was not found for specified context: nope"):
        load(str(path))
