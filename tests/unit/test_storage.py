"""Storage without a cluster: binding rules, validation and defaults of PV/PVC/StorageClass, the
VolumeBinding scheduler plugin, kubectl columns, and the kubelet's claim/NFS/local-path rules."""

from __future__ import annotations

import copy
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from minik8s.api import columns as cols
from minik8s.api import storage as st
from minik8s.api.base import Obj
from minik8s.apiserver.strategies.pod import validate_pod_spec
from minik8s.apiserver.strategies.storage import (
    PVC_SPEC_IMMUTABLE,
    PersistentVolumeClaimStrategy,
    PersistentVolumeStrategy,
    StorageClassStrategy,
)
from minik8s.kubelet.storage import local_path_dir, make_local_path_dir, nfs_supported
from minik8s.kubelet.volumes import VolumeError, VolumeManager
from minik8s.scheduler.framework import CycleState, FitError, Framework, PluginRow
from minik8s.scheduler.nodeinfo import PodInfo, Snapshot, StorageObjects
from minik8s.scheduler.plugins.volume_binding import NODE_CONFLICT, UNBOUND_IMMEDIATE, VolumeBinding, claims_to_select


# ---------------------------------------------------------------------------- builders
def pv(name: str, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), cls: str = "", *,
       labels: dict[str, str] | None = None, claim: tuple[str, str, str] | None = None, phase: str = "Available",
       node: str | None = None, **spec: Any) -> Obj:
    body: Obj = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
                 "hostPath": {"path": f"/data/{name}"}, "persistentVolumeReclaimPolicy": "Retain", **spec}
    if claim:
        body["claimRef"] = {"namespace": claim[0], "name": claim[1], "uid": claim[2]}
    if node:
        body["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": body, "status": {"phase": phase}}


def pvc(name: str, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), cls: str | None = "", *,
        ns: str = "default", selector: Obj | None = None, volume: str | None = None,
        annotations: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if selector:
        spec["selector"] = selector
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "annotations": annotations or {}},
            "spec": spec, "status": {"phase": "Bound" if volume else "Pending"}}


def sc(name: str, mode: str = "Immediate", provisioner: str = "example.com/p", default: bool = False) -> Obj:
    meta: Obj = {"name": name}
    if default:
        meta["annotations"] = {st.ANN_DEFAULT_CLASS: "true"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": provisioner, "reclaimPolicy": "Delete", "volumeBindingMode": mode}


def node(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod_with_claims(*claims: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                                 for i, c in enumerate(claims)]},
            "status": {"phase": "Pending"}}


def storage_of(claims: list[Obj], volumes: list[Obj], classes: list[Obj]) -> StorageObjects:
    by_claim = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in claims}
    by_volume = {v["metadata"]["name"]: v for v in volumes}
    by_class = {c["metadata"]["name"]: c for c in classes}
    return StorageObjects(claim=lambda ns, n: by_claim.get((ns, n)), volume=by_volume.get,
                          storage_class=by_class.get, volumes=lambda: list(volumes))


# ---------------------------------------------------------------------------- binding rules
def test_smallest_fitting_volume_wins() -> None:
    volumes = [pv("big", "10Gi"), pv("small", "2Gi"), pv("tiny", "500Mi"), pv("fits", "5Gi")]
    assert st.find_matching_volume(pvc("c", "1Gi"), volumes)["metadata"]["name"] == "small"  # type: ignore[index]
    assert st.find_matching_volume(pvc("c", "20Gi"), volumes) is None


def test_class_access_modes_selector_and_mode_must_fit() -> None:
    volumes = [pv("fast", "1Gi", cls="fast"), pv("rox", "1Gi", ("ReadOnlyMany",)),
               pv("labelled", "3Gi", labels={"tier": "gold"}), pv("block", "1Gi", volumeMode="Block")]
    assert st.find_matching_volume(pvc("c", cls="fast"), volumes)["metadata"]["name"] == "fast"  # type: ignore[index]
    assert st.find_matching_volume(pvc("c", modes=("ReadWriteMany",)), volumes) is None
    chosen = st.find_matching_volume(pvc("c", selector={"matchLabels": {"tier": "gold"}}), volumes)
    assert chosen is not None and chosen["metadata"]["name"] == "labelled"
    assert st.find_matching_volume(pvc("c", modes=("ReadOnlyMany",)), volumes)["metadata"]["name"] == "rox"  # type: ignore[index]


def test_claimed_bound_and_deleting_volumes_are_skipped_but_prebinding_wins() -> None:
    deleting = pv("deleting", "1Gi")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    volumes = [pv("other", "1Gi", claim=("default", "someone", "x")), deleting, pv("released", "1Gi", phase="Released")]
    assert st.find_matching_volume(pvc("c"), volumes) is None
    prebound = pv("mine", "8Gi", claim=("default", "c", ""), phase="Available")
    assert st.find_matching_volume(pvc("c"), [pv("smaller", "1Gi"), prebound])["metadata"]["name"] == "mine"  # type: ignore[index]
    # pre-bound by uid to an older claim of the same name: not ours
    assert st.find_matching_volume(pvc("c"), [pv("old", claim=("default", "c", "older-uid"))]) is None


def test_node_affinity_limits_volumes_for_a_selected_node() -> None:
    volumes = [pv("on-a", "1Gi", node="a"), pv("on-b", "2Gi", node="b")]
    chosen = st.find_matching_volume(pvc("c"), volumes, ({"kubernetes.io/hostname": "b"}, "b"))
    assert chosen is not None and chosen["metadata"]["name"] == "on-b"
    assert st.find_matching_volume(pvc("c"), volumes, ({"kubernetes.io/hostname": "z"}, "z")) is None


def test_default_class_and_access_mode_text() -> None:
    older, newer = sc("a", default=True), sc("b", default=True)
    older["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    newer["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    assert st.default_class([sc("plain"), older, newer])["metadata"]["name"] == "b"  # type: ignore[index]
    assert st.default_class([sc("plain")]) is None
    assert st.access_modes_text(["ReadWriteMany", "ReadWriteOnce"]) == "RWO,RWX"


# ---------------------------------------------------------------------------- strategies
def causes(strategy: Any, obj: Obj, old: Obj | None = None) -> list[tuple[str, str]]:
    return [(field, message) for field, _value, message in strategy.validate(obj, old)]


def test_persistent_volume_defaults_and_validation() -> None:
    s = PersistentVolumeStrategy()
    obj: Obj = {"metadata": {"name": "v"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                                    "hostPath": {"path": "/srv/v"}}}
    s.prepare_for_create(obj)
    s.default(obj)
    assert obj["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and obj["spec"]["volumeMode"] == "Filesystem"
    assert obj["status"] == {"phase": "Pending"} and obj["metadata"]["finalizers"] == [st.PV_PROTECTION_FINALIZER]
    assert causes(s, obj) == []
    bad = copy.deepcopy(obj)
    del bad["spec"]["hostPath"]
    bad["spec"]["persistentVolumeReclaimPolicy"] = "Keep"
    bad["spec"]["accessModes"] = []
    bad["spec"]["capacity"] = {"storage": "0"}
    assert ("spec", "Required value: must specify a volume type") in causes(s, bad)
    assert ("spec.accessModes", "Required value") in causes(s, bad)
    assert ("spec.capacity.storage", "must be greater than zero") in causes(s, bad)
    assert ("spec.persistentVolumeReclaimPolicy",
            'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"') in causes(s, bad)
    local = copy.deepcopy(obj)
    local["spec"]["local"] = {"path": "/mnt/disk"}
    del local["spec"]["hostPath"]
    assert ("spec.nodeAffinity", "Required value: Local volume requires node affinity") in causes(s, local)
    two = copy.deepcopy(obj)
    two["spec"]["nfs"] = {"server": "fs", "path": "exports"}
    assert ("spec.nfs", "Forbidden: may not specify more than 1 volume type") in causes(s, two)
    assert ("spec.nfs.path", "must be an absolute path") in causes(s, two)
    changed = copy.deepcopy(obj)
    changed["spec"]["hostPath"]["path"] = "/elsewhere"
    assert ("spec.persistentvolumesource", "Forbidden: spec.persistentvolumesource is forbidden to be changed") \
        in causes(s, changed, obj)


def test_persistent_volume_claim_validation_and_update_rules() -> None:
    s = PersistentVolumeClaimStrategy()
    obj: Obj = {"metadata": {"name": "c", "namespace": "default"}, "spec": {}}
    s.prepare_for_create(obj)
    s.default(obj)
    assert obj["metadata"]["finalizers"] == [st.PVC_PROTECTION_FINALIZER] and obj["status"]["phase"] == "Pending"
    assert ("spec.accessModes", "Required value: at least 1 access mode is required") in causes(s, obj)
    assert ("spec.resources[storage]", "Required value") in causes(s, obj)
    obj["spec"]["accessModes"] = ["ReadWriteOnce", "WriteSometimes"]
    obj["spec"]["resources"] = {"requests": {"storage": "1Gi"}}
    mode_errors = [message for field, message in causes(s, obj) if field == "spec.accessModes"]
    assert mode_errors[0].startswith('Unsupported value: "WriteSometimes"')
    obj["spec"]["accessModes"] = ["ReadWriteOnce"]
    assert causes(s, obj) == []
    bound = copy.deepcopy(obj)
    bound["spec"]["volumeName"] = "v1"  # the binder sets an empty volumeName: allowed
    assert causes(s, bound, obj) == []
    resized = copy.deepcopy(bound)
    resized["spec"]["accessModes"] = ["ReadWriteMany"]
    assert ("spec", PVC_SPEC_IMMUTABLE) in causes(s, resized, bound)
    rebound = copy.deepcopy(bound)
    rebound["spec"]["volumeName"] = "v2"
    assert ("spec", PVC_SPEC_IMMUTABLE) in causes(s, rebound, bound)


async def test_default_storage_class_admission() -> None:
    class Store:
        async def list(self, prefix: str) -> tuple[list[Obj], int, None]:
            assert prefix == "/registry/storageclasses/"
            return [sc("plain"), sc("local-path", default=True)], 1, None

    s = PersistentVolumeClaimStrategy()
    unset = pvc("c", cls=None)
    await s.allocate(Store(), unset, None)
    assert unset["spec"]["storageClassName"] == "local-path"
    empty = pvc("c", cls="")
    await s.allocate(Store(), empty, None)
    assert empty["spec"]["storageClassName"] == ""  # "" asks for no class


def test_storage_class_defaults_and_immutability() -> None:
    s = StorageClassStrategy()
    obj: Obj = {"metadata": {"name": "x"}, "provisioner": "example.com/p"}
    s.default(obj)
    assert obj["reclaimPolicy"] == "Delete" and obj["volumeBindingMode"] == "Immediate"
    assert causes(s, obj) == []
    assert ("provisioner", "Required value") in causes(s, {"metadata": {"name": "x"}, "reclaimPolicy": "Delete",
                                                           "volumeBindingMode": "Immediate"})
    changed = {**obj, "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}
    assert ("reclaimPolicy", "Forbidden: updates to reclaimPolicy are forbidden.") in causes(s, changed, obj)
    assert ("volumeBindingMode", "field is immutable") in causes(s, changed, obj)


def test_pod_volumes_persistent_volume_claim_and_nfs() -> None:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {}}, {"name": "share", "nfs": {"path": "x"}}]}
    found = [(field, message) for field, _v, message in validate_pod_spec(spec)]
    assert ("spec.volumes[0].persistentVolumeClaim.claimName", "Required value") in found
    assert ("spec.volumes[1].nfs.server", "Required value") in found
    assert ("spec.volumes[1].nfs.path", "must be an absolute path") in found


# ---------------------------------------------------------------------------- columns
def test_kubectl_columns() -> None:
    volume = pv("v1", "5Gi", ("ReadWriteOnce", "ReadOnlyMany"), cls="local-path", claim=("ns", "data", "u"),
                phase="Bound")
    heads = [c.header for c in cols.columns_for("PersistentVolume")]
    assert heads == ["CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
                     "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    row = cols.cells(cols.columns_for("PersistentVolume"), volume, cols.dt.datetime.now(cols.dt.UTC))
    assert row[:8] == ["5Gi", "RWO,ROX", "Retain", "Bound", "ns/data", "local-path", "<unset>", ""]
    claim = pvc("data", volume="v1")
    claim["status"] = {"phase": "Bound", "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"]}
    assert [c.header for c in cols.columns_for("PersistentVolumeClaim")] == [
        "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"]
    assert cols.cells(cols.columns_for("PersistentVolumeClaim"), claim, cols.dt.datetime.now(cols.dt.UTC))[:4] == \
        ["Bound", "v1", "5Gi", "RWO"]
    assert [c.header for c in cols.columns_for("StorageClass")] == [
        "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"]
    assert cols.name_cell("StorageClass", sc("local-path", default=True)) == "local-path (default)"
    assert cols.table("StorageClass", [sc("x")])["rows"][0]["cells"][:5] == \
        ["x", "example.com/p", "Delete", "Immediate", "false"]


# ---------------------------------------------------------------------------- scheduler
def schedule(pod: Obj, nodes: list[Obj], storage: StorageObjects) -> str:
    snapshot = Snapshot.build(nodes)
    snapshot.storage = storage
    return Framework([PluginRow(VolumeBinding)]).schedule(PodInfo(pod), snapshot).node


def test_unbound_immediate_claim_makes_the_pod_wait() -> None:
    storage = storage_of([pvc("data", cls="fast")], [], [sc("fast")])
    with pytest.raises(FitError) as err:
        schedule(pod_with_claims("data"), [node("a")], storage)
    assert err.value.message == f"0/1 nodes are available: {UNBOUND_IMMEDIATE}."
    with pytest.raises(FitError) as err:
        schedule(pod_with_claims("missing"), [node("a")], storage)
    assert 'persistentvolumeclaim "missing" not found' in err.value.message


def test_bound_volume_node_affinity_restricts_nodes() -> None:
    storage = storage_of([pvc("data", volume="v")], [pv("v", node="b", claim=("default", "data", "uid-data"))], [])
    assert schedule(pod_with_claims("data"), [node("a"), node("b"), node("c")], storage) == "b"
    with pytest.raises(FitError) as err:
        schedule(pod_with_claims("data"), [node("a"), node("c")], storage)
    assert err.value.message == f"0/2 nodes are available: 2 {NODE_CONFLICT}."


def test_wait_for_first_consumer_claims() -> None:
    wffc = sc("local", "WaitForFirstConsumer", provisioner=st.NO_PROVISIONER)
    storage = storage_of([pvc("data", cls="local")], [pv("v", cls="local", node="c")], [wffc])
    assert schedule(pod_with_claims("data"), [node("a"), node("c")], storage) == "c"
    dynamic = storage_of([pvc("data", cls="lp")], [], [sc("lp", "WaitForFirstConsumer", st.LOCAL_PATH_PROVISIONER)])
    assert schedule(pod_with_claims("data"), [node("a")], dynamic) == "a"
    assert [c["metadata"]["name"] for c in claims_to_select(pod_with_claims("data"), dynamic, "a")] == ["data"]
    annotated = storage_of([pvc("data", cls="lp", annotations={st.ANN_SELECTED_NODE: "a"})], [],
                           [sc("lp", "WaitForFirstConsumer", st.LOCAL_PATH_PROVISIONER)])
    assert claims_to_select(pod_with_claims("data"), annotated, "a") == []
    state = CycleState(Snapshot.build([node("a")]))
    assert VolumeBinding().pre_filter(state, PodInfo(pod_with_claims())).is_skip()


# ---------------------------------------------------------------------------- kubelet
def test_nfs_client_detection(tmp_path: Path) -> None:
    """Only the detection is tested: no NFS server is reachable from the test machines."""
    fs = tmp_path / "filesystems"
    fs.write_text("nodev\tsysfs\nnodev\ttmpfs\n\text4\n")
    assert nfs_supported(fs, modprobe=lambda: False) is False
    loaded: list[bool] = []

    def modprobe() -> bool:
        loaded.append(True)
        fs.write_text(fs.read_text() + "nodev\tnfs\nnodev\tnfs4\n")
        return True

    assert nfs_supported(fs, modprobe=modprobe) is True and loaded == [True]
    assert nfs_supported(fs, modprobe=lambda: False) is True
    assert nfs_supported(tmp_path / "absent", modprobe=lambda: True) is False


def test_kubelet_resolves_claims_and_refuses_nfs_without_a_client(tmp_path: Path) -> None:
    data = tmp_path / "data"
    claims = {("default", "bound"): pvc("bound", volume="v"), ("default", "pending"): pvc("pending")}
    volumes = {"v": pv("v", claim=("default", "bound", "uid-bound"), hostPath={"path": str(data),
                                                                            "type": "DirectoryOrCreate"})}
    vm = VolumeManager(tmp_path / "kubelet", claims=lambda ns, n: claims.get((ns, n)), volumes=volumes.get,
                       nfs_check=lambda: False)
    pod = pod_with_claims("bound")
    pod["spec"]["volumes"][0]["persistentVolumeClaim"]["readOnly"] = True
    assert vm._setup(pod) == {"v0": str(data)} and data.is_dir()
    assert VolumeManager.read_only_volumes(pod) == {"v0"}
    with pytest.raises(VolumeError, match="error processing PVC default/pending: PVC is not bound"):
        vm._setup(pod_with_claims("pending"))
    with pytest.raises(VolumeError, match='persistentvolumeclaim "nope" not found'):
        vm._setup(pod_with_claims("nope"))
    nfs_pod = pod_with_claims()
    nfs_pod["spec"]["volumes"] = [{"name": "share", "nfs": {"server": "fs", "path": "/exports"}}]
    with pytest.raises(VolumeError, match="no NFS client"):
        vm._setup(nfs_pod)


def test_local_path_directories_removed_only_at_their_exact_place(tmp_path: Path) -> None:
    root = tmp_path / "lp"
    ok = {"metadata": {"name": "pvc-1", "annotations": {st.ANN_PROVISIONED_BY: st.LOCAL_PATH_PROVISIONER,
                                                        st.ANN_LOCAL_PATH_NODE: "n1"}},
          "spec": {"hostPath": {"path": str(root / "pvc-1")}}}
    assert local_path_dir(ok, "n1", root) == root / "pvc-1"
    assert local_path_dir(ok, "n2", root) is None  # another node's
    elsewhere = copy.deepcopy(ok)
    elsewhere["spec"]["hostPath"]["path"] = "/etc"
    assert local_path_dir(elsewhere, "n1", root) is None
    by_hand = copy.deepcopy(ok)
    by_hand["metadata"]["annotations"].pop(st.ANN_PROVISIONED_BY)
    assert local_path_dir(by_hand, "n1", root) is None


def test_local_path_directories_are_made_world_writable_and_other_host_paths_0755(tmp_path: Path) -> None:
    """Issue 25: Rancher's local-path-provisioner's ``mkdir -m 0777``, whatever the umask; a hostPath
    volume that is not a local-path one keeps Kubernetes' DirectoryOrCreate 0755."""
    root = tmp_path / "lp"
    local = pv("pvc-1", claim=("default", "bound", "uid-bound"),
               hostPath={"path": str(root / "pvc-1"), "type": "DirectoryOrCreate"})
    local["metadata"]["annotations"] = {st.ANN_PROVISIONED_BY: st.LOCAL_PATH_PROVISIONER, st.ANN_LOCAL_PATH_NODE: "n1"}
    other = pv("v", claim=("default", "other", "uid-other"),
               hostPath={"path": str(tmp_path / "plain"), "type": "DirectoryOrCreate"})
    claims = {("default", "bound"): pvc("bound", volume="pvc-1"), ("default", "other"): pvc("other", volume="v")}
    volumes = {"pvc-1": local, "v": other}
    vm = VolumeManager(tmp_path / "kubelet", claims=lambda ns, n: claims.get((ns, n)), volumes=volumes.get,
                       local_path=lambda p: local_path_dir(p, "n1", root))
    old = os.umask(0o077)
    try:
        assert vm._setup(pod_with_claims("bound")) == {"v0": str(root / "pvc-1")}
        assert vm._setup(pod_with_claims("other")) == {"v0": str(tmp_path / "plain")}
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / "pvc-1").stat().st_mode) == 0o777
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) & 0o022 == 0  # not world-writable
    # an existing directory is left as it is (data and mode)
    os.chmod(root / "pvc-1", 0o750)
    assert not make_local_path_dir(root / "pvc-1")
    assert stat.S_IMODE((root / "pvc-1").stat().st_mode) == 0o750
