"""Pod-spec fields minik8s stores but does not honour (minik8s.apiserver.unhonoured): which
fields warn, with which paths, and docs/api.md's list equal to the module's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from minik8s.api.base import Obj
from minik8s.apiserver.unhonoured import SERVICE_UNHONOURED, UNHONOURED, unhonoured_warnings

ROOT = Path(__file__).resolve().parents[2]


def pod_spec(**extra: object) -> Obj:
    spec: Obj = {"containers": [{"name": "app", "image": "busybox"}]}
    spec.update(extra)
    return spec


def test_a_pod_warns_about_each_unhonoured_field_at_its_path() -> None:
    spec = pod_spec(
        volumes=[{"name": "data", "emptyDir": {}},
                 {"name": "disk", "awsElasticBlockStore": {"volumeID": "vol-1"}},
                 {"name": "inline", "csi": {"driver": "x.csi.k8s.io"}}],
        securityContext={"windowsOptions": {"runAsUserName": "admin"}}, hostUsers=False,
        initContainers=[{"name": "init", "image": "busybox",
                         "securityContext": {"windowsOptions": {"hostProcess": False}},
                         "volumeMounts": [{"name": "data", "mountPath": "/d", "recursiveReadOnly": "IfPossible"}]}])
    warnings = unhonoured_warnings({"kind": "Pod", "spec": spec})
    assert warnings == [
        "spec.volumes[1].awsElasticBlockStore: not supported by minik8s; stored, but the kubelet cannot mount this "
        "volume type (the pod waits in ContainerCreating, FailedMount)",
        "spec.volumes[2].csi: not supported by minik8s; stored, but the kubelet cannot mount this volume type (the "
        "pod waits in ContainerCreating, FailedMount)",
        "spec.securityContext.windowsOptions: not supported by minik8s; stored but not used (minik8s runs Linux "
        "containers only)",
        "spec.initContainers[0].securityContext.windowsOptions: not supported by minik8s; stored but not used "
        "(minik8s runs Linux containers only)",
        "spec.hostUsers: not supported by minik8s; stored but not used (no user namespaces: pods share the host's "
        "users)",
        "spec.initContainers[0].volumeMounts[0].recursiveReadOnly: not supported by minik8s; stored but not used "
        "(a read-only mount is read-only at its top only)",
    ]


@pytest.mark.parametrize("extra", [
    {"hostUsers": True}, {"os": {"name": "linux"}}, {"resourceClaims": []}, {"volumes": [
        {"name": "a", "hostPath": {"path": "/tmp"}}, {"name": "b", "nfs": {"server": "s", "path": "/"}},
        {"name": "c", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "d", "projected": {"sources": []}}]},
    {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}, "supplementalGroupsPolicy": "Merge"}},
])
def test_honoured_values_do_not_warn(extra: Obj) -> None:
    assert unhonoured_warnings({"kind": "Pod", "spec": pod_spec(**extra)}) == []


@pytest.mark.parametrize(("kind", "wrap", "prefix"), [
    ("Deployment", lambda t: {"spec": {"template": t}}, "spec.template.spec"),
    ("StatefulSet", lambda t: {"spec": {"template": t}}, "spec.template.spec"),
    ("CronJob", lambda t: {"spec": {"jobTemplate": {"spec": {"template": t}}}}, "spec.jobTemplate.spec.template.spec"),
    ("PodTemplate", lambda t: {"template": t}, "template.spec"),
])
def test_templates_warn_with_their_full_paths(kind: str, wrap: object, prefix: str) -> None:
    template = {"spec": pod_spec(os={"name": "windows"})}
    obj = {"kind": kind, **wrap(template)}  # type: ignore[operator]
    assert unhonoured_warnings(obj) == [f"{prefix}.os.name: not supported by minik8s; stored but not used (every "
                                        "minik8s node runs Linux)"]


def test_other_kinds_and_missing_templates_do_not_warn() -> None:
    assert unhonoured_warnings({"kind": "ConfigMap", "data": {"hostUsers": "false"}}) == []
    assert unhonoured_warnings({"kind": "Deployment", "spec": {}}) == []


def test_docs_api_lists_exactly_the_unhonoured_fields() -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("### Stored but not honoured", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (.+?) \| (.+?) \|$", section, re.M)
    expected = [(e.path, e.why, ", ".join(f"`{json.dumps(v, separators=(', ', ': '))}`" for v in e.unless) or "—")
                for e in UNHONOURED + SERVICE_UNHONOURED]
    assert rows == expected


def test_service_external_ips_warn() -> None:
    svc = {"kind": "Service", "spec": {"ports": [{"port": 80}], "externalIPs": ["192.0.2.7", "192.0.2.8"]}}
    assert unhonoured_warnings(svc) == [
        f"spec.externalIPs[{i}]: not supported by minik8s; stored but not routed (the proxy captures ClusterIPs "
        "and NodePorts only)" for i in (0, 1)]
    assert unhonoured_warnings({"kind": "Service", "spec": {"ports": [{"port": 80}]}}) == []
