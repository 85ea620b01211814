"""Storage: the rules that bind claims to volumes, and the storage annotations.

The PersistentVolume and PersistentVolumeClaim models are core ``v1`` kinds
(:mod:`minik8s.api.core`), the StorageClass model is :mod:`minik8s.api.storageclass`'s; this
module holds the well-known annotations and finalizers, and the pure matching rules the PV
controller and the scheduler's VolumeBinding plugin share (Kubernetes' ``pkg/controller/volume/persistentvolume/util``:
``FindMatchingVolume``, ``CheckVolumeModeMismatches``, ``CheckNodeAffinity``).
All functions take wire-form dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from minik8s.api import nodeaffinity
from minik8s.api.base import Obj
from minik8s.api.quantity import parse_quantity
from minik8s.api.selectors import LabelSelector

# ---------------------------------------------------------------- names Kubernetes uses
#: on a StorageClass: ``"true"`` makes it the default class (claims without a class get it)
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
#: on a PVC: the node the scheduler chose for a WaitForFirstConsumer claim's first pod
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: on a PVC: the provisioner asked to provision its volume (and the older beta spelling)
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
#: on a PVC: the binder finished binding it
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: on a PV or PVC: the binder (not the user) set ``claimRef`` / ``volumeName``
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
#: on a PV: the provisioner that created it
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
ACCESS_MODE_ABBREVIATIONS = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
                             "ReadWriteOncePod": "RWOP"}
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BINDING_MODES = (BINDING_IMMEDIATE, BINDING_WAIT_FOR_FIRST_CONSUMER)
#: a class whose volumes are only ever created by hand (Kubernetes' "no provisioner")
NO_PROVISIONER = "kubernetes.io/no-provisioner"
#: the volume sources a PersistentVolume may have in minik8s
PV_SOURCES = ("hostPath", "local", "nfs")

# ---------------------------------------------------------------- minik8s' local-path provisioner
#: the StorageClass the controller-manager creates at start (k3s ships the same)
LOCAL_PATH_CLASS = "local-path"
LOCAL_PATH_PROVISIONER = "minik8s.io/local-path"
#: on a local-path PV: the node whose kubelet removes its directory when the PV is deleted
ANN_LOCAL_PATH_NODE = "minik8s.io/local-path-node"
#: where provisioned directories live on each node: ``<root>/<pv-name>``
DEFAULT_LOCAL_PATH_ROOT = "/var/lib/minik8s/local-path"


# ---------------------------------------------------------------- small readers
def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def is_default_class(sc: Mapping[str, Any]) -> bool:
    """The class carries ``storageclass.kubernetes.io/is-default-class: "true"``."""
    return (_meta(sc).get("annotations") or {}).get(ANN_DEFAULT_CLASS) == "true"


def default_class(classes: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The default StorageClass (the newest when several are marked, as Kubernetes picks), or None."""
    marked = [sc for sc in classes if is_default_class(sc)]
    if not marked:
        return None
    return max(marked, key=lambda sc: (str(_meta(sc).get("creationTimestamp") or ""), str(_meta(sc).get("name"))))


def claim_class(pvc: Mapping[str, Any]) -> str:
    """The claim's ``spec.storageClassName`` (``""``: no class)."""
    return str(_spec(pvc).get("storageClassName") or "")


def volume_class(pv: Mapping[str, Any]) -> str:
    return str(_spec(pv).get("storageClassName") or "")


def requested_bytes(pvc: Mapping[str, Any]) -> Decimal:
    """``spec.resources.requests.storage`` as a number of bytes (0 when absent or unreadable)."""
    value = ((_spec(pvc).get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return parse_quantity(value) if value is not None else Decimal(0)
    except ValueError:
        return Decimal(0)


def capacity_bytes(pv: Mapping[str, Any]) -> Decimal:
    """``spec.capacity.storage`` as a number of bytes (0 when absent or unreadable)."""
    value = (_spec(pv).get("capacity") or {}).get("storage")
    try:
        return parse_quantity(value) if value is not None else Decimal(0)
    except ValueError:
        return Decimal(0)


def access_modes_text(modes: Iterable[str] | None) -> str:
    """kubectl's ``GetAccessModesAsString``: ``RWO,ROX`` in that fixed order."""
    given = set(modes or ())
    return ",".join(abbr for mode, abbr in ACCESS_MODE_ABBREVIATIONS.items() if mode in given)


def volume_node_affinity_matches(pv: Mapping[str, Any], labels: Mapping[str, str], node_name: str) -> bool:
    """The PV's ``nodeAffinity.required`` admits the node (no affinity: every node)."""
    required = (_spec(pv).get("nodeAffinity") or {}).get("required")
    if not required:
        return True
    return nodeaffinity.node_selector_matches(required, labels, node_name)


def claim_ref_names(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """``pv.spec.claimRef`` names this claim (namespace, name, and uid when the ref has one)."""
    ref = _spec(pv).get("claimRef") or {}
    meta = _meta(pvc)
    if ref.get("name") != meta.get("name") or (ref.get("namespace") or "") != (meta.get("namespace") or ""):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def volume_satisfies(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """Class, volume mode, access modes, label selector and size of ``pv`` fit ``pvc``
    (``claimRef`` and phase are the caller's business)."""
    if volume_class(pv) != claim_class(pvc):
        return False
    if (_spec(pv).get("volumeMode") or "Filesystem") != (_spec(pvc).get("volumeMode") or "Filesystem"):
        return False
    if not set(_spec(pvc).get("accessModes") or ()) <= set(_spec(pv).get("accessModes") or ()):
        return False
    selector = _spec(pvc).get("selector")
    if selector:
        try:
            if not LabelSelector.from_dict(selector).matches(_meta(pv).get("labels") or {}):
                return False
        except ValueError:
            return False
    return capacity_bytes(pv) >= requested_bytes(pvc)


def find_matching_volume(pvc: Mapping[str, Any], volumes: Iterable[Obj],
                         node: tuple[Mapping[str, str], str] | None = None) -> Obj | None:
    """Kubernetes' ``FindMatchingVolume``: the volume to bind ``pvc`` to, or None.

    A volume pre-bound to this claim (``claimRef`` naming it) wins when it fits; otherwise the
    smallest unclaimed, not deleted volume that satisfies the claim (:func:`volume_satisfies`).
    ``node`` (labels, name) limits the choice to volumes whose node affinity admits that node
    (WaitForFirstConsumer claims, once their pod's node is known).
    """
    best: Obj | None = None
    for pv in volumes:
        if _meta(pv).get("deletionTimestamp"):
            continue
        if node is not None and not volume_node_affinity_matches(pv, node[0], node[1]):
            continue
        ref = _spec(pv).get("claimRef")
        if ref:
            if claim_ref_names(pv, pvc) and volume_satisfies(pv, pvc):
                return pv
            continue
        if (pv.get("status") or {}).get("phase") not in (None, "", "Pending", "Available"):
            continue
        if not volume_satisfies(pv, pvc):
            continue
        if best is None or capacity_bytes(pv) < capacity_bytes(best):
            best = pv
    return best


def pod_claim_names(pod: Mapping[str, Any]) -> list[str]:
    """The claims a pod's ``persistentVolumeClaim`` volumes name (in volume order)."""
    out: list[str] = []
    for vol in _spec(pod).get("volumes") or []:
        src = vol.get("persistentVolumeClaim")
        if isinstance(src, dict) and src.get("claimName"):
            out.append(str(src["claimName"]))
    return out


def pod_is_terminated(pod: Mapping[str, Any]) -> bool:
    """Succeeded or Failed: the pod no longer uses its volumes."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
