"""Pod fields the kubelet, the scheduler and the apiserver act on (pure parts): subPathExpr and
mountPropagation (validation, Docker binds), schedulingGates (validation, the created condition,
kubectl's STATUS), readinessGates (the Ready condition), pull secrets (the auth configs Docker
gets), the ServiceAccount's imagePullSecrets, ``enableServiceLinks: false`` and sleep hooks.
The gRPC probe is tested against real health servers in tests/integration/test_kubelet_pod_fields.py."""

from __future__ import annotations

import base64
import json
import time

import pytest

from minik8s.api.columns import pod_status
from minik8s.apiserver.admission import mount_service_account_token
from minik8s.apiserver.strategies.pod import PodStrategy, validate_pod_spec
from minik8s.kubelet.configsources import ContainerConfigError
from minik8s.kubelet.hooks import LifecycleHooks
from minik8s.kubelet.images import image_registry, registry_credentials
from minik8s.kubelet.serviceenv import service_env
from minik8s.kubelet.status import pod_conditions
from minik8s.kubelet.volumes import VolumeManager, expand_sub_path


def spec_with_mount(mount: dict, privileged: bool = False) -> dict:
    container: dict = {"name": "c", "image": "i", "volumeMounts": [{"name": "v", "mountPath": "/m", **mount}]}
    if privileged:
        container["securityContext"] = {"privileged": True}
    return {"containers": [container], "volumes": [{"name": "v", "emptyDir": {}}], "restartPolicy": "Always"}


def messages(spec: dict) -> list[str]:
    return [f"{path}: {'Invalid value: ' + json.dumps(value) + ': ' if value is not None else ''}{msg}"
            for path, value, msg in validate_pod_spec(spec)]


def test_sub_path_expr_and_mount_propagation_validation() -> None:
    assert messages(spec_with_mount({"subPath": "a", "subPathExpr": "$(X)"})) == [
        'spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(X)": '
        "subPathExpr and subPath are mutually exclusive"]
    assert messages(spec_with_mount({"subPathExpr": "../$(X)"})) == [
        "spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: \"../$(X)\": must not contain '..'"]
    assert messages(spec_with_mount({"mountPropagation": "Bidirectional"})) == [
        "spec.containers[0].volumeMounts[0].mountPropagation: "
        "Forbidden: Bidirectional mount propagation is available only to privileged containers"]
    assert messages(spec_with_mount({"mountPropagation": "Bidirectional"}, privileged=True)) == []
    assert messages(spec_with_mount({"mountPropagation": "HostToContainer"})) == []
    assert messages(spec_with_mount({"mountPropagation": "Shared"})) == [
        'spec.containers[0].volumeMounts[0].mountPropagation: Unsupported value: "Shared": '
        'supported values: "Bidirectional", "HostToContainer", "None"']


def test_sub_path_expr_expansion_and_binds(tmp_path) -> None:
    assert expand_sub_path("logs/$(POD)/$$x", {"POD": "web-0"}) == "logs/web-0/$x"
    with pytest.raises(ContainerConfigError, match="missing value for A, B"):
        expand_sub_path("$(B)/$(A)/$(C)", {"A": "", "C": "c"})
    container = {"volumeMounts": [{"name": "v", "mountPath": "/a", "subPathExpr": "$(POD)"},
                                  {"name": "v", "mountPath": "/b", "mountPropagation": "HostToContainer"},
                                  {"name": "v", "mountPath": "/c", "mountPropagation": "Bidirectional",
                                   "readOnly": True},
                                  {"name": "v", "mountPath": "/d", "mountPropagation": "None"}]}
    binds = VolumeManager.binds(container, {"v": str(tmp_path)}, env={"POD": "web-0"})
    assert binds == [f"{tmp_path}/web-0:/a:rw", f"{tmp_path}:/b:rw,rslave", f"{tmp_path}:/c:ro,rshared",
                     f"{tmp_path}:/d:rw"]
    assert (tmp_path / "web-0").is_dir()


def gated_pod() -> dict:
    return {"metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always",
                     "schedulingGates": [{"name": "example.com/a"}, {"name": "example.com/b"}]}}


def test_scheduling_gates() -> None:
    strategy = PodStrategy()
    pod = gated_pod()
    strategy.prepare_for_create(pod)
    assert pod["status"]["conditions"] == [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                                            "message": "Scheduling is blocked due to non-empty scheduling gates"}]
    assert pod_status(pod) == "SchedulingGated"
    old = gated_pod()
    fewer = gated_pod()
    fewer["spec"]["schedulingGates"] = [{"name": "example.com/b"}]
    assert strategy._validate_spec_update(fewer["spec"], old["spec"]) == []
    more = gated_pod()
    more["spec"]["schedulingGates"].append({"name": "example.com/c"})
    assert strategy._validate_spec_update(more["spec"], old["spec"]) == [
        ("spec.schedulingGates[2].name", None,
         "Forbidden: only deletion is allowed, but found new scheduling gate 'example.com/c'")]
    bound = gated_pod()
    bound["spec"]["nodeName"] = "n1"
    assert ("spec.nodeName", None, "Forbidden: cannot be set until all schedulingGates have been cleared") \
        in strategy.validate(bound, None)
    dup = gated_pod()["spec"]
    dup["schedulingGates"].append({"name": "example.com/a"})
    assert ("spec.schedulingGates[2]", None, 'Duplicate value: "example.com/a"') in validate_pod_spec(dup)


def test_readiness_gates_hold_ready() -> None:
    statuses = [{"name": "c", "ready": True}]
    gates = [{"conditionType": "example.com/lb"}, {"conditionType": "example.com/db"}]

    def ready(old: list[dict]) -> tuple:
        conds = pod_conditions(old, statuses, "Running", True, readiness_gates=gates)
        return {c["type"]: (c["status"], c.get("reason"), c.get("message")) for c in conds}["Ready"]

    assert ready([]) == ("False", "ReadinessGatesNotReady",
                         'corresponding condition of pod readiness gate "example.com/lb" does not exist., '
                         'corresponding condition of pod readiness gate "example.com/db" does not exist.')
    half = [{"type": "example.com/lb", "status": "True"}, {"type": "example.com/db", "status": "False"}]
    assert ready(half) == ("False", "ReadinessGatesNotReady",
                           'the status of pod readiness gate "example.com/db" is not "True", but False')
    assert ready([{"type": "example.com/lb", "status": "True"}, {"type": "example.com/db", "status": "True"}]) == (
        "True", None, None)


def docker_secret(auths: dict, key: str = ".dockerconfigjson") -> dict:
    body = {"auths": auths} if key == ".dockerconfigjson" else auths
    return {"data": {key: base64.b64encode(json.dumps(body).encode()).decode()}}


def test_pull_secret_credentials() -> None:
    assert image_registry("nginx") == "docker.io"
    assert image_registry("library/nginx:1.0") == "docker.io"
    assert image_registry("registry.example.com:5000/team/app:1") == "registry.example.com:5000"
    assert image_registry("localhost/app@sha256:00") == "localhost"
    secret = docker_secret({"registry.example.com:5000": {"auth": base64.b64encode(b"bob:pa:ss").decode()},
                            "https://index.docker.io/v1/": {"username": "hub", "password": "x"}})
    assert registry_credentials(secret, "registry.example.com:5000") == [
        {"username": "bob", "password": "pa:ss", "serveraddress": "registry.example.com:5000"}]
    assert registry_credentials(secret, "docker.io") == [
        {"username": "hub", "password": "x", "serveraddress": "https://index.docker.io/v1/"}]
    assert registry_credentials(secret, "other.io") == []
    legacy = docker_secret({"https://other.io/v1/": {"username": "u", "password": "p"}}, ".dockercfg")
    assert registry_credentials(legacy, "other.io") == [
        {"username": "u", "password": "p", "serveraddress": "https://other.io/v1/"}]
    assert registry_credentials({"data": {".dockerconfigjson": "not base64!"}}, "other.io") == []


def test_service_account_image_pull_secrets_and_automount() -> None:
    pod: dict = {"metadata": {"name": "p"},
                 "spec": {"containers": [{"name": "c"}], "automountServiceAccountToken": False}}
    mount_service_account_token(pod, {"imagePullSecrets": [{"name": "reg"}], "automountServiceAccountToken": True})
    assert pod["spec"]["imagePullSecrets"] == [{"name": "reg"}]
    assert "volumes" not in pod["spec"]
    own: dict = {"metadata": {"name": "p"},
                 "spec": {"containers": [{"name": "c"}], "imagePullSecrets": [{"name": "mine"}]}}
    mount_service_account_token(own, {"imagePullSecrets": [{"name": "reg"}], "automountServiceAccountToken": False})
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]
    assert "volumes" not in own["spec"]


def test_enable_service_links_false() -> None:
    services = [{"metadata": {"name": "db", "namespace": "ns"},
                 "spec": {"clusterIP": "10.96.0.9", "ports": [{"port": 5432, "protocol": "TCP"}]}},
                {"metadata": {"name": "kubernetes", "namespace": "default"},
                 "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}}]
    linked = service_env({"metadata": {"namespace": "ns"}, "spec": {}}, services)
    unlinked = service_env({"metadata": {"namespace": "ns"}, "spec": {"enableServiceLinks": False}}, services)
    assert linked["DB_SERVICE_HOST"] == "10.96.0.9" and "DB_PORT" in linked
    assert "DB_SERVICE_HOST" not in unlinked
    assert unlinked["KUBERNETES_SERVICE_HOST"] == "10.96.0.1"  # the apiserver's are always there


async def test_sleep_hooks() -> None:
    hooks = LifecycleHooks(None, None, lambda *args: None)  # type: ignore[arg-type]  # sleep needs neither
    pod = {"metadata": {"name": "p", "namespace": "ns"}}
    container: dict = {"name": "c", "lifecycle": {"postStart": {"sleep": {"seconds": 0}},
                                            "preStop": {"sleep": {"seconds": 1}}}}
    assert await hooks.post_start(pod, container, "id", "") is None
    started = time.monotonic()
    left = await hooks.pre_stop(pod, container, "id", "", 30.0)
    assert time.monotonic() - started >= 1.0
    assert 2.0 <= left <= 29.0
    events: list[tuple] = []
    short = LifecycleHooks(None, None, lambda *args: events.append(args))  # type: ignore[arg-type]
    container["lifecycle"]["preStop"]["sleep"]["seconds"] = 600
    started = time.monotonic()
    assert await short.pre_stop(pod, container, "id", "", 0.2) == 2  # the grace ran out: the signal gets 2 s
    assert time.monotonic() - started < 5
    assert events[0][2:4] == ("FailedPreStopHook", "PreStopHook failed: container terminated before sleep hook "
                                                   "finished")
