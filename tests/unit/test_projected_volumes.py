"""downwardAPI and projected volumes: defaults and validation (422 causes), payloads on disk."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest

from minik8s.api.core import Volume
from minik8s.apiserver.strategies.pod import default_pod_spec, validate_pod_spec
from minik8s.kubelet.configsources import references
from minik8s.kubelet.container_spec import format_map, resource_field_value
from minik8s.kubelet.volumes import VolumeError, VolumeManager

Obj = dict
MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"


def causes(volumes: list[Obj]) -> set[tuple[str, str]]:
    spec = {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}
    default_pod_spec(spec)
    return {(f, m) for f, _, m in validate_pod_spec(spec)}


def test_defaults_and_a_valid_spec_round_trip_through_the_model() -> None:
    spec = {"containers": [{"name": "c", "image": "i"}], "volumes": [
        {"name": "d", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                                                {"path": "mem", "resourceFieldRef": {"containerName": "c",
                                                 "resource": "limits.memory", "divisor": "1Mi"}}]}},
        {"name": "p", "projected": {"sources": [
            {"configMap": {"name": "cm", "items": [{"key": "k", "path": "a"}]}},
            {"secret": {"name": "s", "optional": True}},
            {"downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"serviceAccountToken": {"path": "token", "audience": "api"}}]}}]}
    default_pod_spec(spec)
    assert validate_pod_spec(spec) == []
    d, p = spec["volumes"]
    assert "emptyDir" not in d and "emptyDir" not in p
    assert d["downwardAPI"]["defaultMode"] == 0o644 and p["projected"]["defaultMode"] == 0o644
    assert d["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"] == "v1"
    assert p["projected"]["sources"][3]["serviceAccountToken"]["expirationSeconds"] == 3600
    assert Volume.from_dict(p).to_dict() == p and Volume.from_dict(d).to_dict() == d


def test_downward_api_validation() -> None:
    got = causes([{"name": "d", "downwardAPI": {"defaultMode": 0o1000, "items": [
        {"path": "/abs", "fieldRef": {"fieldPath": "status.podIP"}, "mode": 0o1777},
        {"path": "../x", "resourceFieldRef": {"resource": "limits.gpu"}},
        {"path": "x"},
        {"path": "y", "fieldRef": {"fieldPath": "metadata.name"},
         "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu"}},
        {"path": "x", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "1Mi"}},
        {"path": "z", "fieldRef": {"fieldPath": "metadata.labels['bad key']"}}]}}])
    base = "spec.volumes[0].downwardAPI"
    expected = {
        (f"{base}.defaultMode", MODE_MSG),
        (f"{base}.items[0].path", "must be a relative path"),
        (f"{base}.items[0].fieldRef.fieldPath", 'Unsupported value: "status.podIP": supported values: '
         '"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"'),
        (f"{base}.items[0].mode", MODE_MSG),
        (f"{base}.items[1].path", "must not contain '..'"),
        (f"{base}.items[1].resourceFieldRef.containerName", "Required value"),
        (f"{base}.items[2]", "Required value: one of fieldRef and resourceFieldRef is required"),
        (f"{base}.items[3]", "fieldRef and resourceFieldRef can not be specified simultaneously"),
        (f"{base}.items[4].resourceFieldRef.divisor",
         "only divisor's values 1m, 1 are supported with the cpu resource"),
        (f"{base}.items[4].path", "conflicting duplicate paths"),
    }
    assert expected <= got
    assert (f"{base}.items[1].resourceFieldRef.resource", 'Unsupported value: "limits.gpu": supported values: '
            '"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", '
            '"requests.ephemeral-storage", "requests.memory"') in got
    assert any(f == f"{base}.items[5].fieldRef" for f, _ in got)


def test_projected_validation() -> None:
    got = causes([{"name": "p", "projected": {"defaultMode": -1, "sources": [
        {},
        {"configMap": {"name": "cm", "items": [{"key": "k", "path": "same"}]},
         "secret": {"name": "s"}},
        {"secret": {"items": [{"key": "", "path": "same", "mode": 0o1000}]}},
        {"downwardAPI": {"items": [{"path": "..hidden", "fieldRef": {"fieldPath": "metadata.uid"}}]}},
        {"serviceAccountToken": {"path": "", "expirationSeconds": 60}},
        {"serviceAccountToken": {"path": "/abs"}}]}}])
    base = "spec.volumes[0].projected"
    assert got == {
        (f"{base}.defaultMode", MODE_MSG),
        (f"{base}.sources[0]", "Required value: must specify one of: `secret`, `configMap`, `downwardAPI`, "
                               "`serviceAccountToken`"),
        (f"{base}.sources[1]", "Forbidden: may not specify more than 1 volume type"),
        (f"{base}.sources[2].secret.name", "Required value"),
        (f"{base}.sources[2].secret.items[0].key", "Required value"),
        (f"{base}.sources[2].secret.items[0].mode", MODE_MSG),
        (base, "conflicting duplicate paths"),
        (f"{base}.sources[3].downwardAPI.items[0].path", "must not start with '..'"),
        (f"{base}.sources[4].serviceAccountToken.expirationSeconds", "may not specify a duration less than 10 minutes"),
        (f"{base}.sources[4].serviceAccountToken.path", "Required value"),
        (f"{base}.sources[5].serviceAccountToken.path", "must be a relative path"),
    }
    assert causes([{"name": "p", "projected": {"sources": []}, "emptyDir": {}}]) == {
        ("spec.volumes[0].projected", "Forbidden: may not specify more than 1 volume type")}


# ---------------------------------------------------------------- kubelet side
OBJECTS: dict[tuple[str, str, str], Obj] = {
    ("ConfigMap", "ns", "cfg"): {"kind": "ConfigMap", "data": {"a.conf": "A", "B": "b"}},
    ("Secret", "ns", "sec"): {"kind": "Secret", "data": {"password": base64.b64encode(b"p@ss").decode()}},
}


def lookup(kind: str, namespace: str, name: str) -> Obj | None:
    return OBJECTS.get((kind, namespace, name))


def pod(volumes: list[Obj]) -> Obj:
    return {"metadata": {"uid": "u1", "namespace": "ns", "name": "p", "labels": {"b": "2", "a": 'say "hi"\n'},
                         "annotations": {"note": "x"}},
            "spec": {"volumes": volumes, "containers": [
                {"name": "c", "resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "250m"}}}]}}


def tree(path: Path) -> dict[str, bytes]:
    out = {}
    for root, dirs, files in os.walk(path, followlinks=True):
        dirs[:] = [d for d in dirs if not d.startswith("..")]
        for name in files:
            out[str((Path(root) / name).relative_to(path))] = (Path(root) / name).read_bytes()
    return out


def test_format_map_and_resource_values() -> None:
    assert format_map({"b": "2", "a": 'q"\\\n\x01'}) == 'a="q\\"\\\\\\n\\x01"\nb="2"'
    c = {"name": "c", "resources": {"limits": {"cpu": "1500m"}, "requests": {"memory": "1Gi"}}}
    alloc = {"cpu": "4", "memory": "8Gi"}
    assert resource_field_value(c, {"resource": "limits.cpu"}) == "2"
    assert resource_field_value(c, {"resource": "limits.cpu", "divisor": "1m"}) == "1500"
    assert resource_field_value(c, {"resource": "limits.memory", "divisor": "1Mi"}, alloc) == "8192"
    assert resource_field_value(c, {"resource": "requests.cpu"}, alloc) == "0"
    assert resource_field_value(c, {"resource": "requests.memory", "divisor": "1Mi"}) == "1024"


async def test_downward_and_projected_volumes_on_disk(tmp_path: Path) -> None:
    vm = VolumeManager(tmp_path / "root", lookup, lambda: {"cpu": "8", "memory": "1Gi"})
    p = pod([
        {"name": "d", "downwardAPI": {"defaultMode": 0o600, "items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "meta/name", "fieldRef": {"fieldPath": "metadata.name"}, "mode": 0o444},
            {"path": "cpu_limit", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu"}},
            {"path": "mem", "resourceFieldRef": {"containerName": "c", "resource": "limits.memory",
                                                 "divisor": "1Mi"}}]}},
        {"name": "p", "projected": {"defaultMode": 0o640, "sources": [
            {"configMap": {"name": "cfg", "items": [{"key": "a.conf", "path": "conf/a.conf", "mode": 0o400}]}},
            {"secret": {"name": "sec"}},
            {"secret": {"name": "absent", "optional": True}},
            {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}])
    assert references(p) == {("ConfigMap", "cfg"), ("Secret", "sec"), ("Secret", "absent")}
    try:
        paths = await vm.setup(p)
        d, proj = Path(paths["d"]), Path(paths["p"])
        assert d == tmp_path / "root/pods/u1/volumes/kubernetes.io~downward-api/d"
        assert proj == tmp_path / "root/pods/u1/volumes/kubernetes.io~projected/p"
        assert tree(d) == {"labels": b'a="say \\"hi\\"\\n"\nb="2"', "meta/name": b"p", "cpu_limit": b"8",
                           "mem": b"64"}
        assert stat.S_IMODE((d / "labels").stat().st_mode) == 0o600
        assert stat.S_IMODE((d / "meta/name").stat().st_mode) == 0o444
        assert tree(proj) == {"conf/a.conf": b"A", "password": b"p@ss", "ns": b"ns"}
        assert stat.S_IMODE((proj / "conf/a.conf").stat().st_mode) == 0o400
        assert stat.S_IMODE((proj / "password").stat().st_mode) == 0o640
        assert stat.S_IMODE(proj.parent.stat().st_mode) == 0o700
        assert VolumeManager.read_only_volumes(p) == {"d", "p"}
        c = {"name": "c", "volumeMounts": [{"name": "d", "mountPath": "/etc/pod", "readOnly": False},
                                           {"name": "p", "mountPath": "/etc/pw", "subPath": "password"}]}
        assert VolumeManager.binds(c, paths, VolumeManager.read_only_volumes(p)) == [
            f"{d}:/etc/pod:ro", f"{proj}/password:/etc/pw:ro"]

        p["metadata"]["labels"] = {"a": "1"}
        assert await vm.refresh(p) == []
        assert (d / "labels").read_bytes() == b'a="1"'

        token = pod([{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}])
        # without an apiserver client the kubelet cannot ask for the token, and says so
        with pytest.raises(VolumeError, match="no apiserver client to request tokens with"):
            await vm.setup(token)
    finally:
        await vm.cleanup("u1")  # unmounts the tmpfs
    assert not (tmp_path / "root/pods/u1").exists()
