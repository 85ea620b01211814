"""Pod security: Pod Security Admission's checks and messages, securityContext validation and
its mapping onto Docker create parameters, the kubelet's runAsNonRoot check, fsGroup ownership."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from minik8s.apiserver import podsecurity as psa
from minik8s.apiserver.strategies.namespace import NamespaceStrategy
from minik8s.apiserver.strategies.pod import default_pod_spec, validate_pod_spec
from minik8s.kubelet.configsources import ContainerConfigError
from minik8s.kubelet.container_spec import needs_image_user, security_config, verify_run_as_non_root
from minik8s.kubelet.volumes import set_volume_ownership

RESTRICTED_SC = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                 "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}


def spec(containers: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {"containers": containers or [{"name": "c", "image": "busybox"}], **extra}


def ctr(name: str = "c", **sc: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "securityContext": sc}


def violations(s: dict[str, Any], level: str) -> list[tuple[str, str]]:
    return psa.evaluate(s, psa.LevelVersion(level))


BASELINE_CASES = [
    (spec(hostNetwork=True, hostPID=True), ("host namespaces", "hostNetwork=true, hostPID=true")),
    (spec([ctr(privileged=True)]), ("privileged", 'container "c" must not set securityContext.privileged=true')),
    (spec([ctr("a", privileged=True), ctr("b", privileged=True)]),
     ("privileged", 'containers "a", "b" must not set securityContext.privileged=true')),
    (spec([ctr(capabilities={"add": ["SYS_ADMIN", "NET_ADMIN", "CHOWN"]})]),
     ("non-default capabilities",
      'container "c" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add')),
    (spec(volumes=[{"name": "h", "hostPath": {"path": "/"}}]), ("hostPath volumes", 'volume "h"')),
    (spec([{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]}]),
     ("hostPort", 'container "c" uses hostPort 8080')),
    (spec([ctr(procMount="Unmasked")]),
     ("procMount", 'container "c" must not set securityContext.procMount to "Unmasked"')),
    (spec([ctr(seccompProfile={"type": "Unconfined"})], securityContext={"seccompProfile": {"type": "Unconfined"}}),
     ("seccompProfile", 'pod and container "c" must not set securityContext.seccompProfile.type to "Unconfined"')),
    (spec(securityContext={"sysctls": [{"name": "net.core.somaxconn", "value": "1"},
                                       {"name": "net.ipv4.tcp_syncookies", "value": "1"}]}),
     ("forbidden sysctls", "net.core.somaxconn")),
]


@pytest.mark.parametrize(("pod_spec", "expected"), BASELINE_CASES)
def test_baseline_checks(pod_spec: dict[str, Any], expected: tuple[str, str]) -> None:
    assert violations(pod_spec, "baseline") == [expected]
    assert violations(pod_spec, "privileged") == []


def test_restricted_checks_and_their_order() -> None:
    found = violations(spec([ctr(runAsUser=0, capabilities={"add": ["NET_BIND_SERVICE", "NET_RAW"]})],
                            volumes=[{"name": "h", "hostPath": {"path": "/tmp"}}, {"name": "e", "emptyDir": {}}]),
                       "restricted")
    assert found == [
        ("non-default capabilities", 'container "c" must not include "NET_RAW" in securityContext.capabilities.add'),
        ("allowPrivilegeEscalation != false",
         'container "c" must set securityContext.allowPrivilegeEscalation=false'),
        ("unrestricted capabilities", 'container "c" must set securityContext.capabilities.drop=["ALL"]; '
                                      'container "c" must not include "NET_RAW" in securityContext.capabilities.add'),
        ("restricted volume types", 'volume "h" uses restricted volume type "hostPath"'),
        ("runAsNonRoot != true", 'pod or container "c" must set securityContext.runAsNonRoot=true'),
        ("runAsUser=0", 'container "c" must not set runAsUser=0'),
        ("seccompProfile", 'pod or container "c" must set securityContext.seccompProfile.type to '
                           '"RuntimeDefault" or "Localhost"'),
    ]


def test_restricted_pod_passes_and_pod_level_settings_count() -> None:
    assert violations(spec([ctr(**RESTRICTED_SC)]), "restricted") == []
    pod_level = spec([ctr(allowPrivilegeEscalation=False, capabilities={"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]})],
                     securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "Localhost",
                                                                               "localhostProfile": "p.json"}})
    assert violations(pod_level, "restricted") == []
    bad = spec([ctr(**{**RESTRICTED_SC, "runAsNonRoot": False})], securityContext={"runAsNonRoot": False})
    assert violations(bad, "restricted") == [
        ("runAsNonRoot != true", 'pod and container "c" must not set securityContext.runAsNonRoot=false')]


def test_admit_modes_messages_and_versions(caplog: pytest.LogCaptureFixture,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    pod = {"kind": "Pod", "metadata": {"name": "x", "namespace": "ns"},
           "spec": spec([ctr(allowPrivilegeEscalation=False, capabilities={"drop": ["ALL"]},
                             seccompProfile={"type": "RuntimeDefault"})])}
    labels = {"pod-security.kubernetes.io/enforce": "restricted",
              "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "v1.30",
              "pod-security.kubernetes.io/audit": "baseline"}
    decision = psa.admit(pod, labels)
    assert decision.forbidden == ('pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot '
                                  '!= true (pod or container "c" must set securityContext.runAsNonRoot=true)')
    assert decision.warnings == ['would violate PodSecurity "restricted:v1.30": runAsNonRoot != true '
                                 '(pod or container "c" must set securityContext.runAsNonRoot=true)']
    # a version before a check existed skips it; an unknown level is evaluated as restricted
    assert psa.evaluate(spec([ctr(runAsUser=0, **RESTRICTED_SC)]), psa.LevelVersion("restricted", "v1.22")) == []
    assert psa.policy({"pod-security.kubernetes.io/enforce": "bogus"}) == {"enforce": psa.LevelVersion("restricted")}
    # audit: a log line; workloads get warn/audit but never enforce
    deploy = {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
              "spec": {"template": {"spec": spec([ctr(privileged=True)])}}}
    monkeypatch.setattr(psa.log, "disabled", False)  # other tests' logging set-up may disable it
    psa.log.addHandler(caplog.handler)
    try:
        with caplog.at_level("WARNING", logger="minik8s.apiserver.podsecurity"):
            decision = psa.admit(deploy, {"pod-security.kubernetes.io/enforce": "baseline",
                                          "pod-security.kubernetes.io/warn": "baseline",
                                          "pod-security.kubernetes.io/audit": "baseline"})
    finally:
        psa.log.removeHandler(caplog.handler)
    assert decision.forbidden is None
    assert decision.warnings == ['would violate PodSecurity "baseline:latest": privileged '
                                 '(container "c" must not set securityContext.privileged=true)']
    assert 'pod-security audit: Deployment ns/d would violate PodSecurity "baseline:latest": privileged' in caplog.text
    assert psa.admit({"kind": "ConfigMap"}, labels).forbidden is None


def test_namespace_labels_are_validated() -> None:
    ns = {"metadata": {"name": "n", "labels": {"pod-security.kubernetes.io/enforce": "strict",
                                               "pod-security.kubernetes.io/warn-version": "1.30"}}}
    causes = NamespaceStrategy().validate(ns, None)
    assert ("metadata.labels[pod-security.kubernetes.io/enforce]", "strict",
            "must be one of privileged, baseline, restricted") in causes
    assert any(c[0] == "metadata.labels[pod-security.kubernetes.io/warn-version]" for c in causes)


def messages(pod_spec: dict[str, Any]) -> list[tuple[str, Any, str]]:
    default_pod_spec(pod_spec)
    return [c for c in validate_pod_spec(pod_spec) if "securityContext" in c[0]]


def test_security_context_validation() -> None:
    assert messages(spec([ctr(**RESTRICTED_SC, runAsUser=1000, runAsGroup=1000)],
                         securityContext={"fsGroup": 2000, "supplementalGroups": [3000]})) == []
    assert messages(spec([ctr(runAsUser=-1)], securityContext={"fsGroup": -2, "supplementalGroups": [1, -3]})) == [
        ("spec.securityContext.fsGroup", -2, "must be between 0 and 2147483647, inclusive"),
        ("spec.securityContext.supplementalGroups[1]", -3, "must be between 0 and 2147483647, inclusive"),
        ("spec.containers[0].securityContext.runAsUser", -1, "must be between 0 and 2147483647, inclusive"),
    ]
    assert messages(spec([ctr(seccompProfile={"type": "Localhost"}, procMount="Weird")],
                         securityContext={"seccompProfile": {"type": "Other"}})) == [
        ("spec.securityContext.seccompProfile.type", None,
         'Unsupported value: "Other": supported values: "Localhost", "RuntimeDefault", "Unconfined"'),
        ("spec.containers[0].securityContext.seccompProfile.localhostProfile", None,
         "Required value: must be set when seccomp type is Localhost"),
        ("spec.containers[0].securityContext.procMount", None,
         'Unsupported value: "Weird": supported values: "Default", "Unmasked"'),
    ]
    found = messages(spec([ctr(allowPrivilegeEscalation=False, privileged=True,
                               capabilities={"add": ["CAP_SYS_ADMIN"]})],
                          securityContext={"sysctls": [{"name": "Bad!", "value": "1"}]}))
    assert [m for _, _, m in found][1:] == [
        "Invalid value: cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
        "Invalid value: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"]
    assert found[0][0] == "spec.securityContext.sysctls[0].name"


def test_docker_mapping_container_overrides_pod() -> None:
    pod_spec = spec(securityContext={"runAsUser": 1000, "runAsGroup": 3000, "supplementalGroups": [4000],
                                     "fsGroup": 2000, "seccompProfile": {"type": "Unconfined"}})
    container = ctr(runAsUser=1001, readOnlyRootFilesystem=True, allowPrivilegeEscalation=False,
                    capabilities={"add": ["NET_ADMIN"], "drop": ["ALL"]})
    host, user = security_config(container, pod_spec)
    assert user == "1001:3000"
    assert host == {"cap_add": ["NET_ADMIN"], "cap_drop": ["ALL"], "read_only": True,
                    "group_add": ["4000", "2000"], "security_opt": ["no-new-privileges", "seccomp=unconfined"]}
    host, user = security_config(ctr(privileged=True, seccompProfile={"type": "RuntimeDefault"}, procMount="Default"),
                                 spec())
    assert (host, user) == ({"privileged": True}, None)
    # a group alone keeps the image's user
    assert security_config(ctr(runAsGroup=5), spec(), image_user="app:app")[1] == "app:5"
    assert needs_image_user(ctr(runAsGroup=5), spec())


def test_localhost_seccomp_profile(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text('{"defaultAction": "SCMP_ACT_ALLOW"}')
    host, _ = security_config(ctr(seccompProfile={"type": "Localhost", "localhostProfile": "p.json"}), spec(),
                              seccomp_dir=tmp_path)
    assert host["security_opt"] == ['seccomp={"defaultAction": "SCMP_ACT_ALLOW"}']
    with pytest.raises(ContainerConfigError, match="cannot load seccomp profile"):
        security_config(ctr(seccompProfile={"type": "Localhost", "localhostProfile": "nope.json"}), spec(),
                        seccomp_dir=tmp_path)


def test_run_as_non_root_verification() -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
           "spec": spec(securityContext={"runAsNonRoot": True})}
    c = pod["spec"]["containers"][0]
    for image_user in ("", "0", "0:0", None):
        with pytest.raises(ContainerConfigError) as info:
            verify_run_as_non_root(pod, c, image_user)
        assert str(info.value) == \
            'container has runAsNonRoot and image will run as root (pod: "p_ns(u1)", container: c)'
    with pytest.raises(ContainerConfigError, match=r"image has non-numeric user \(nobody\), cannot verify user"):
        verify_run_as_non_root(pod, c, "nobody")
    with pytest.raises(ContainerConfigError, match="container's runAsUser breaks non-root policy"):
        verify_run_as_non_root(pod, ctr(runAsUser=0), None)
    verify_run_as_non_root(pod, c, "1000")
    verify_run_as_non_root(pod, ctr(runAsUser=1000), None)
    verify_run_as_non_root(pod, ctr(runAsNonRoot=False), "")  # the container's false wins


def test_fs_group_ownership(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("x")
    os.chmod(tmp_path / "d" / "f", 0o600)
    os.symlink("d/f", tmp_path / "link")
    gid = os.getgid()
    set_volume_ownership(tmp_path, gid, read_only=False)
    assert stat.S_IMODE(os.stat(tmp_path / "d" / "f").st_mode) == 0o660
    assert os.stat(tmp_path / "d").st_mode & stat.S_ISGID
    assert os.stat(tmp_path).st_gid == gid
    ro = tmp_path / "d" / "f"
    os.chmod(ro, 0o400)
    set_volume_ownership(tmp_path, gid, read_only=True)
    assert stat.S_IMODE(os.stat(ro).st_mode) == 0o440
