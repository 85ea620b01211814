"""PersistentVolume, PersistentVolumeClaim and StorageClass strategies
(Kubernetes' ``pkg/registry/core/persistentvolume{,claim}``, ``pkg/registry/storage/storageclass``,
``ValidatePersistentVolume*``, ``ValidateStorageClass*`` and two admission plugins).

- PersistentVolume (cluster-scoped): ``status.phase`` starts ``Pending``;
  ``persistentVolumeReclaimPolicy`` defaults to ``Retain``, ``volumeMode`` to ``Filesystem``;
  exactly one source (``hostPath``, ``local``, ``nfs``: ``spec: Required value: must specify a
  volume type``); ``capacity.storage`` and ``accessModes`` are required; a ``local`` volume needs
  ``nodeAffinity`` (``Required value: Local volume requires node affinity``); the source and the
  volume mode never change.
- PersistentVolumeClaim: ``status.phase`` starts ``Pending``; ``volumeMode`` ``Filesystem``;
  ``accessModes`` and ``resources.requests.storage`` (> 0) are required; after creation the spec
  is immutable except that an empty ``volumeName`` may be set (the binder does) and an unset
  ``storageClassName`` may be set.  The DefaultStorageClass admission plugin: a claim created
  without ``storageClassName`` (absent, not ``""``) gets the default StorageClass's name.
- Both get their protection finalizer on create (the StorageObjectInUseProtection admission
  plugin): ``kubernetes.io/pv-protection`` / ``kubernetes.io/pvc-protection``.
- StorageClass: ``reclaimPolicy`` defaults to ``Delete``, ``volumeBindingMode`` to
  ``Immediate``; ``provisioner`` is required; ``parameters``, ``provisioner``, ``reclaimPolicy``
  and ``volumeBindingMode`` never change.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from minik8s.api import storage as st
from minik8s.api import validation as v
from minik8s.api.quantity import parse_quantity
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, selector_errors, unsupported

IMMUTABLE = "field is immutable"
PVC_SPEC_IMMUTABLE = ("Forbidden: spec is immutable after creation except resources.requests and "
                      "volumeAttributesClassName for bound claims")


def _add_finalizer(obj: Obj, finalizer: str) -> None:
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)


def _access_mode_errors(modes: Any, path: str, required_message: str = "") -> list[Cause]:
    if not modes:
        return [(path, None, f"{REQUIRED}: {required_message}" if required_message else REQUIRED)]
    causes: list[Cause] = []
    for mode in modes:
        if mode not in st.ACCESS_MODES:
            causes.append((path, mode, unsupported(mode, st.ACCESS_MODES)))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        causes.append((path, None, "Forbidden: may not use ReadWriteOncePod with other access modes"))
    return causes


def _positive_storage(value: Any, path: str) -> list[Cause]:
    try:
        amount = parse_quantity(value)
    except (ValueError, TypeError):
        return [(path, value, "quantities must match the regular expression "
                              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    if amount <= Decimal(0):
        return [(path, value, "must be greater than zero")]
    return []


def _absolute_path_errors(value: Any, path: str) -> list[Cause]:
    if not value:
        return [(path, None, REQUIRED)]
    if not str(value).startswith("/"):
        return [(path, value, "must be an absolute path")]
    if ".." in str(value).split("/"):
        return [(path, value, "must not contain '..'")]
    return []


def nfs_errors(nfs: Obj, path: str) -> list[Cause]:
    """``validateNFSVolumeSource``: ``server`` required, ``path`` required and absolute."""
    causes: list[Cause] = []
    if not nfs.get("server"):
        causes.append((f"{path}.server", None, REQUIRED))
    if not nfs.get("path"):
        causes.append((f"{path}.path", None, REQUIRED))
    elif not str(nfs["path"]).startswith("/"):
        causes.append((f"{path}.path", nfs["path"], "must be an absolute path"))
    return causes


class PersistentVolumeStrategy(Strategy):
    """core/v1 PersistentVolume: as in the module docstring."""

    has_status = True
    namespace_scoped = False

    def prepare_for_create(self, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}
        _add_finalizer(obj, st.PV_PROTECTION_FINALIZER)

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {}).setdefault("phase", "Pending")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        causes += _access_mode_errors(spec.get("accessModes"), "spec.accessModes")
        capacity = spec.get("capacity") or {}
        if not capacity:
            causes.append(("spec.capacity", None, REQUIRED))
        for key, value in capacity.items():
            if key != "storage":
                causes.append(("spec.capacity", key, unsupported(key, ("storage",))))
            else:
                causes += _positive_storage(value, "spec.capacity.storage")
        policy = spec.get("persistentVolumeReclaimPolicy")
        if policy not in st.RECLAIM_POLICIES:
            causes.append(("spec.persistentVolumeReclaimPolicy", policy, unsupported(policy, st.RECLAIM_POLICIES)))
        if spec.get("volumeMode") not in st.VOLUME_MODES:
            causes.append(("spec.volumeMode", spec.get("volumeMode"), unsupported(spec.get("volumeMode"),
                                                                                   st.VOLUME_MODES)))
        if spec.get("storageClassName"):
            causes += [("spec.storageClassName", spec["storageClassName"], m)
                       for m in v.dns1123_subdomain_errors(spec["storageClassName"])]
        sources = [k for k in st.PV_SOURCES if spec.get(k) is not None]
        if not sources:
            causes.append(("spec", None, f"{REQUIRED}: must specify a volume type"))
        elif len(sources) > 1:
            causes.append((f"spec.{sources[1]}", None, "Forbidden: may not specify more than 1 volume type"))
        if isinstance(spec.get("hostPath"), dict):
            causes += _absolute_path_errors(spec["hostPath"].get("path"), "spec.hostPath.path")
        if isinstance(spec.get("local"), dict):
            causes += _absolute_path_errors(spec["local"].get("path"), "spec.local.path")
            if not (spec.get("nodeAffinity") or {}).get("required"):
                causes.append(("spec.nodeAffinity", None, f"{REQUIRED}: Local volume requires node affinity"))
        if isinstance(spec.get("nfs"), dict):
            causes += nfs_errors(spec["nfs"], "spec.nfs")
        affinity = spec.get("nodeAffinity")
        if affinity is not None and not ((affinity.get("required") or {}).get("nodeSelectorTerms")):
            causes.append(("spec.nodeAffinity.required.nodeSelectorTerms", None,
                           f"{REQUIRED}: must have at least one node selector term"))
        ref = spec.get("claimRef")
        if ref is not None and not ref.get("name"):
            causes.append(("spec.claimRef.name", None, REQUIRED))
        if old is not None:
            old_spec = old.get("spec") or {}
            if any(spec.get(k) != old_spec.get(k) for k in st.PV_SOURCES):
                causes.append(("spec.persistentvolumesource", None,
                               "Forbidden: spec.persistentvolumesource is forbidden to be changed"))
            if spec.get("volumeMode") != old_spec.get("volumeMode"):
                causes.append(("spec.volumeMode", spec.get("volumeMode"), IMMUTABLE))
            if old_spec.get("nodeAffinity") and spec.get("nodeAffinity") != old_spec.get("nodeAffinity"):
                causes.append(("spec.nodeAffinity", None, IMMUTABLE))
        return causes


def pvc_spec_errors(spec: Obj, path: str) -> list[Cause]:
    """``ValidatePersistentVolumeClaimSpec`` (a claim's, or an ephemeral volume's claim template's,
    ``path`` its spec): access modes, selector, a positive storage request, volume mode, class name.
    ``volumeMode`` is checked only when set (a claim gets ``Filesystem`` by default)."""
    causes = _access_mode_errors(spec.get("accessModes"), f"{path}.accessModes", "at least 1 access mode is required")
    causes += selector_errors(spec.get("selector"), f"{path}.selector")
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        causes.append((f"{path}.resources[storage]", None, REQUIRED))
    else:
        causes += _positive_storage(storage, f"{path}.resources[storage]")
    mode = spec.get("volumeMode")
    if mode is not None and mode not in st.VOLUME_MODES:
        causes.append((f"{path}.volumeMode", mode, unsupported(mode, st.VOLUME_MODES)))
    if spec.get("storageClassName"):
        causes += [(f"{path}.storageClassName", spec["storageClassName"], m)
                   for m in v.dns1123_subdomain_errors(spec["storageClassName"])]
    return causes


class PersistentVolumeClaimStrategy(Strategy):
    """core/v1 PersistentVolumeClaim: as in the module docstring."""

    has_status = True

    def prepare_for_create(self, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}
        _add_finalizer(obj, st.PVC_PROTECTION_FINALIZER)

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("volumeMode", "Filesystem")
        spec.setdefault("resources", {})
        obj.setdefault("status", {}).setdefault("phase", "Pending")

    async def allocate(self, store: Any, obj: Obj, old: Obj | None) -> list[str]:
        """The DefaultStorageClass admission: a new claim without ``storageClassName`` gets the
        default class's name (nothing when there is no default class)."""
        spec = obj.setdefault("spec", {})
        if old is None and spec.get("storageClassName") is None:
            classes, _, _ = await store.list("/registry/storageclasses/")
            chosen = st.default_class(classes)
            if chosen is not None:
                spec["storageClassName"] = chosen["metadata"]["name"]
        return []

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = self.validate_metadata(obj) + pvc_spec_errors(spec, "spec")
        if old is not None:
            old_spec = copy.deepcopy(old.get("spec") or {})
            if not old_spec.get("volumeName"):
                old_spec["volumeName"] = spec.get("volumeName")
            if old_spec.get("storageClassName") is None:
                old_spec["storageClassName"] = spec.get("storageClassName")
            new_spec = {k: val for k, val in spec.items() if val is not None}
            old_spec = {k: val for k, val in old_spec.items() if val is not None}
            if new_spec != old_spec:
                causes.append(("spec", None, PVC_SPEC_IMMUTABLE))
        return causes


class StorageClassStrategy(Strategy):
    """storage.k8s.io/v1 StorageClass: as in the module docstring."""

    namespace_scoped = False

    def default(self, obj: Obj) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", st.BINDING_IMMEDIATE)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        provisioner = obj.get("provisioner")
        if not provisioner:
            causes.append(("provisioner", None, REQUIRED))
        else:
            causes += [("provisioner", provisioner, m) for m in v.qualified_name_errors(provisioner)]
        if obj.get("reclaimPolicy") not in ("Delete", "Retain"):
            causes.append(("reclaimPolicy", obj.get("reclaimPolicy"),
                           unsupported(obj.get("reclaimPolicy"), ("Delete", "Retain"))))
        if obj.get("volumeBindingMode") not in st.BINDING_MODES:
            causes.append(("volumeBindingMode", obj.get("volumeBindingMode"),
                           unsupported(obj.get("volumeBindingMode"), st.BINDING_MODES)))
        if old is not None:
            if (obj.get("parameters") or {}) != (old.get("parameters") or {}):
                causes.append(("parameters", None, "Forbidden: updates to parameters are forbidden."))
            if obj.get("provisioner") != old.get("provisioner"):
                causes.append(("provisioner", None, "Forbidden: updates to provisioner are forbidden."))
            if obj.get("reclaimPolicy") != old.get("reclaimPolicy"):
                causes.append(("reclaimPolicy", None, "Forbidden: updates to reclaimPolicy are forbidden."))
            if obj.get("volumeBindingMode") != old.get("volumeBindingMode"):
                causes.append(("volumeBindingMode", obj.get("volumeBindingMode"), IMMUTABLE))
        return causes


def storage_strategies() -> dict[str, Strategy]:
    """The three kinds' strategies, by kind."""
    return {"PersistentVolume": PersistentVolumeStrategy(),
            "PersistentVolumeClaim": PersistentVolumeClaimStrategy(),
            "StorageClass": StorageClassStrategy()}
