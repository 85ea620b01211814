"""The kubelet's ConfigMap/Secret pieces: the atomic writer, volume payloads, env values, volumes."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest

from minik8s.kubelet.atomic_writer import DATA_DIR, AtomicWriter, FileProjection, PayloadError
from minik8s.kubelet.configsources import (
    ConfigError,
    ContainerConfigError,
    references,
    volume_payload,
)
from minik8s.kubelet.container_spec import container_env
from minik8s.kubelet.volumes import VolumeError, VolumeManager

Obj = dict

OBJECTS: dict[tuple[str, str, str], Obj] = {
    ("ConfigMap", "ns", "cfg"): {"kind": "ConfigMap", "data": {"a.conf": "A", "B": "b"},
                                 "binaryData": {"bin": base64.b64encode(b"\x00\x01").decode()}},
    ("Secret", "ns", "sec"): {"kind": "Secret", "data": {"password": base64.b64encode(b"p@ss").decode(),
                                                         "bad=name": base64.b64encode(b"x").decode()}},
}


def lookup(kind: str, namespace: str, name: str) -> Obj | None:
    return OBJECTS.get((kind, namespace, name))


def pod(volumes: list[Obj] | None = None, containers: list[Obj] | None = None) -> Obj:
    return {"metadata": {"uid": "u1", "namespace": "ns", "name": "p"},
            "spec": {"volumes": volumes or [], "containers": containers or [{"name": "c"}]}}


def tree(path: Path) -> dict[str, bytes]:
    return {name: (path / name).read_bytes() for name in os.listdir(path) if not name.startswith("..")}


# ---------------------------------------------------------------- atomic writer
def test_atomic_writer_swaps_everything_at_once(tmp_path: Path) -> None:
    w = AtomicWriter(tmp_path / "vol")
    assert w.write({"a": FileProjection(b"1", 0o644), "dir/b": FileProjection(b"2", 0o600)})
    vol = tmp_path / "vol"
    assert os.readlink(vol / "a") == f"{DATA_DIR}/a" and os.readlink(vol / "dir") == f"{DATA_DIR}/dir"
    assert (vol / "a").read_bytes() == b"1" and (vol / "dir" / "b").read_bytes() == b"2"
    assert stat.S_IMODE((vol / "dir" / "b").stat().st_mode) == 0o600
    first = os.readlink(vol / DATA_DIR)
    assert not w.write({"a": FileProjection(b"1", 0o644), "dir/b": FileProjection(b"2", 0o600)}), "unchanged"
    assert os.readlink(vol / DATA_DIR) == first
    assert w.write({"a": FileProjection(b"new", 0o644), "c": FileProjection(b"3", 0o644)})
    assert os.readlink(vol / DATA_DIR) != first and not (vol / first).exists()
    assert tree(vol) == {"a": b"new", "c": b"3"}, "dir's link went away with its key"
    assert sorted(n for n in os.listdir(vol) if n.startswith("..")) == sorted([DATA_DIR, os.readlink(vol / DATA_DIR)])
    assert w.write({})
    assert tree(vol) == {}


@pytest.mark.parametrize("path", ["/abs", "../x", "a/../../x", "..hidden", ""])
def test_atomic_writer_refuses_paths_outside(tmp_path: Path, path: str) -> None:
    with pytest.raises(PayloadError):
        AtomicWriter(tmp_path).write({path: FileProjection(b"x", 0o644)})


# ---------------------------------------------------------------- payloads
def test_volume_payloads() -> None:
    all_keys = volume_payload("ns", {"name": "v", "configMap": {"name": "cfg"}}, lookup)
    assert {k: (f.data, f.mode) for k, f in all_keys.items()} == {
        "a.conf": (b"A", 0o644), "B": (b"b", 0o644), "bin": (b"\x00\x01", 0o644)}
    items = volume_payload("ns", {"name": "v", "secret": {"secretName": "sec", "defaultMode": 0o400, "items": [
        {"key": "password", "path": "creds/pw", "mode": 0o440}]}}, lookup)
    assert {k: (f.data, f.mode) for k, f in items.items()} == {"creds/pw": (b"p@ss", 0o440)}
    with pytest.raises(ConfigError, match='configmap "nope" not found'):
        volume_payload("ns", {"name": "v", "configMap": {"name": "nope"}}, lookup)
    assert volume_payload("ns", {"name": "v", "configMap": {"name": "nope", "optional": True}}, lookup) == {}
    with pytest.raises(ConfigError, match="references non-existent secret key: nokey"):
        volume_payload("ns", {"name": "v", "secret": {"secretName": "sec", "items": [{"key": "nokey", "path": "x"}]}},
                       lookup)
    with pytest.raises(ConfigError, match="configmap references non-existent config key: nokey"):
        volume_payload("ns", {"name": "v", "configMap": {"name": "cfg", "items": [{"key": "nokey", "path": "x"}]}},
                       lookup)


def test_references() -> None:
    p = pod([{"name": "v", "configMap": {"name": "cfg"}}, {"name": "s", "secret": {"secretName": "sec"}},
             {"name": "e", "emptyDir": {}}],
            [{"name": "c", "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "s2", "key": "k"}}}],
              "envFrom": [{"configMapRef": {"name": "cfg2"}}]}])
    assert references(p) == {("ConfigMap", "cfg"), ("Secret", "sec"), ("Secret", "s2"), ("ConfigMap", "cfg2")}


# ---------------------------------------------------------------- env
def test_env_from_config_maps_and_secrets() -> None:
    c = {"name": "c", "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}, {"secretRef": {"name": "sec"}}],
         "env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "password"}}},
                 {"name": "CFG_B", "value": "overridden"},
                 {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "k", "optional": True}}}]}
    warnings: list[str] = []
    env = container_env(pod(containers=[c]), c, host_ip="", pod_ip="", lookup=lookup, warnings=warnings)
    assert env == {"CFG_a.conf": "A", "CFG_B": "overridden", "CFG_bin": "\x00\x01", "password": "p@ss", "PW": "p@ss"}
    assert warnings == ["Keys [bad=name] from the EnvFrom secret ns/sec were skipped since they are considered "
                        "invalid environment variable names."]


@pytest.mark.parametrize(("env", "message"), [
    ([{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k"}}}], 'configmap "nope" not found'),
    ([{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}}],
     "couldn't find key k in ConfigMap ns/cfg"),
    ([{"name": "X", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "k"}}}],
     "couldn't find key k in Secret ns/sec"),
])
def test_env_missing_sources_are_config_errors(env: list[Obj], message: str) -> None:
    c = {"name": "c", "env": env}
    with pytest.raises(ContainerConfigError, match=message):
        container_env(pod(containers=[c]), c, host_ip="", pod_ip="", lookup=lookup)
    c = {"name": "c", "envFrom": [{"secretRef": {"name": "nope"}}]}
    with pytest.raises(ContainerConfigError, match='secret "nope" not found'):
        container_env(pod(containers=[c]), c, host_ip="", pod_ip="", lookup=lookup)


# ---------------------------------------------------------------- volumes
async def test_config_volumes_on_disk(tmp_path: Path) -> None:
    vm = VolumeManager(tmp_path / "root", lookup)
    p = pod([{"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 0o640}},
             {"name": "sec", "secret": {"secretName": "sec", "items": [{"key": "password", "path": "pw"}]}}])
    paths = await vm.setup(p)
    cfg, sec = Path(paths["cfg"]), Path(paths["sec"])
    assert cfg == tmp_path / "root/pods/u1/volumes/kubernetes.io~configmap/cfg"
    assert tree(cfg) == {"a.conf": b"A", "B": b"b", "bin": b"\x00\x01"}
    assert stat.S_IMODE((cfg / "a.conf").stat().st_mode) == 0o640
    assert tree(sec) == {"pw": b"p@ss"} and stat.S_IMODE((sec / "pw").stat().st_mode) == 0o644
    assert stat.S_IMODE(sec.parent.stat().st_mode) == 0o700, "secrets are not reachable for other host users"
    c = {"name": "c", "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"},
                                       {"name": "sec", "mountPath": "/pw", "subPath": "pw"}]}
    assert VolumeManager.binds(c, paths, VolumeManager.read_only_volumes(p)) == [
        f"{cfg}:/etc/cfg:ro", f"{sec}/pw:/pw:ro"]
    OBJECTS[("ConfigMap", "ns", "cfg")]["data"]["a.conf"] = "A2"
    try:
        assert await vm.refresh(p) == []
        assert (cfg / "a.conf").read_bytes() == b"A2"
    finally:
        OBJECTS[("ConfigMap", "ns", "cfg")]["data"]["a.conf"] = "A"
    gone = pod([{"name": "cfg", "configMap": {"name": "nope"}}])
    assert await vm.refresh(gone) == ["volume 'cfg': configmap \"nope\" not found"]
    with pytest.raises(VolumeError, match='configmap "nope" not found'):
        await vm.setup(gone)
    await vm.cleanup("u1")
    assert not (tmp_path / "root/pods/u1").exists()
