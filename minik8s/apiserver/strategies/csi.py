"""storage.k8s.io/v1 CSIDriver, CSINode, CSIStorageCapacity and VolumeAttachment
(``pkg/registry/storage/*``, ``pkg/apis/storage/validation``).

- CSIDriver (cluster-scoped): the name is a CSI driver name (a DNS-1123 subdomain of at most 63
  characters: ``name: Too long: may not be more than 63 bytes``); ``SetDefaults_CSIDriver``:
  ``attachRequired: true``, ``podInfoOnMount: false``, ``storageCapacity: false``,
  ``fsGroupPolicy: ReadWriteOnceWithFSType``, ``volumeLifecycleModes: [Persistent]``,
  ``requiresRepublish: false``, ``seLinuxMount: false``; supported ``fsGroupPolicy`` and modes; token
  requests with distinct audiences and ``expirationSeconds`` between 10 minutes and 2^32 s;
  ``attachRequired`` and ``volumeLifecycleModes`` never change.
- CSINode (cluster-scoped): every driver has a CSI driver name (distinct), a ``nodeID`` (at most
  256 characters), qualified-name ``topologyKeys`` and a non-negative ``allocatable.count``; a
  driver's ``nodeID``, ``topologyKeys`` and ``allocatable`` never change.
- CSIStorageCapacity: ``storageClassName`` is required (a DNS-1123 subdomain); ``capacity`` and
  ``maximumVolumeSize`` are non-negative; only they may change.
- VolumeAttachment (cluster-scoped, ``status`` subresource): ``spec.attacher`` is a CSI driver name,
  ``spec.source`` exactly one of ``persistentVolumeName`` and ``inlineVolumeSpec``,
  ``spec.nodeName`` a node name; the spec never changes.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import csi
from minik8s.api import validation as v
from minik8s.apiserver.strategies.base import (
    REQUIRED,
    Cause,
    Obj,
    Strategy,
    non_negative_quantity_errors,
    selector_errors,
    unsupported,
)

IMMUTABLE = "field is immutable"
MAX_DRIVER_NAME = 63
MAX_NODE_ID = 256
MIN_TOKEN_SECONDS = 600
MAX_TOKEN_SECONDS = 1 << 32


def csi_driver_name_errors(name: Any, path: str) -> list[Cause]:
    """``ValidateCSIDriverName``: required, at most 63 characters, a DNS-1123 subdomain once lower-cased."""
    name = str(name or "")
    causes: list[Cause] = []
    if not name:
        causes.append((path, None, REQUIRED))
    if len(name) > MAX_DRIVER_NAME:
        causes.append((path, None, f"Too long: may not be more than {MAX_DRIVER_NAME} bytes"))
    causes += [(path, name, m) for m in v.dns1123_subdomain_errors(name.lower())]
    return causes


class CSIDriverStrategy(Strategy):
    """CSIDriver: as in the module docstring."""

    namespace_scoped = False

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        for fld, value in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                           ("fsGroupPolicy", "ReadWriteOnceWithFSType"), ("requiresRepublish", False),
                           ("seLinuxMount", False)):
            if spec.get(fld) is None:
                spec[fld] = value
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]

    def validate_metadata(self, obj: Obj) -> list[Cause]:
        causes = [c for c in super().validate_metadata(obj) if c[0] != "metadata.name"]
        return csi_driver_name_errors((obj.get("metadata") or {}).get("name"), "name") + causes

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        policy = spec.get("fsGroupPolicy")
        if policy is not None and policy not in csi.FS_GROUP_POLICIES:
            causes.append(("spec.fsGroupPolicy", None, unsupported(policy, csi.FS_GROUP_POLICIES)))
        for mode in spec.get("volumeLifecycleModes") or []:
            if mode not in csi.VOLUME_LIFECYCLE_MODES:
                causes.append(("spec.volumeLifecycleModes", None, unsupported(mode, csi.VOLUME_LIFECYCLE_MODES)))
        audiences: set[str] = set()
        for i, request in enumerate(spec.get("tokenRequests") or []):
            audience = request.get("audience") or ""
            if audience in audiences:
                causes.append((f"spec.tokenRequests[{i}].audience", audience, "Duplicate value"))
            audiences.add(audience)
            seconds = request.get("expirationSeconds")
            if seconds is not None and seconds < MIN_TOKEN_SECONDS:
                causes.append((f"spec.tokenRequests[{i}].expirationSeconds", seconds,
                               "may not specify a duration less than 10 minutes"))
            elif seconds is not None and seconds > MAX_TOKEN_SECONDS:
                causes.append((f"spec.tokenRequests[{i}].expirationSeconds", seconds,
                               "may not specify a duration larger than 2^32 seconds"))
        if old is not None:
            old_spec = old.get("spec") or {}
            if spec.get("attachRequired") != old_spec.get("attachRequired"):
                causes.append(("spec.attachRequired", spec.get("attachRequired"), IMMUTABLE))
            if spec.get("volumeLifecycleModes") != old_spec.get("volumeLifecycleModes"):
                causes.append(("spec.volumeLifecycleModes", spec.get("volumeLifecycleModes"), IMMUTABLE))
        return causes


class CSINodeStrategy(Strategy):
    """CSINode: as in the module docstring."""

    namespace_scoped = False

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("drivers") is None:
            spec["drivers"] = []

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        seen: set[str] = set()
        drivers = (obj.get("spec") or {}).get("drivers") or []
        for i, driver in enumerate(drivers):
            dp = f"spec.drivers[{i}]"
            name = driver.get("name") or ""
            causes += csi_driver_name_errors(name, f"{dp}.name")
            if name in seen:
                causes.append((f"{dp}.name", name, "Duplicate value"))
            seen.add(name)
            node_id = driver.get("nodeID") or ""
            if not node_id:
                causes.append((f"{dp}.nodeID", None, f"{REQUIRED}: nodeID of {name} must be provided"))
            elif len(node_id) > MAX_NODE_ID:
                causes.append((f"{dp}.nodeID", node_id, f"must be {MAX_NODE_ID} characters or less"))
            for j, key in enumerate(driver.get("topologyKeys") or []):
                causes += [(f"{dp}.topologyKeys[{j}]", key, m) for m in v.qualified_name_errors(key)]
            count = (driver.get("allocatable") or {}).get("count")
            if count is not None and count < 0:
                causes.append((f"{dp}.allocatable.count", count, "must be greater than or equal to 0"))
        if old is not None:
            before = {d.get("name"): d for d in (old.get("spec") or {}).get("drivers") or []}
            for i, driver in enumerate(drivers):
                was = before.get(driver.get("name"))
                if was is None:
                    continue
                for fld in ("nodeID", "topologyKeys", "allocatable"):
                    if driver.get(fld) != was.get(fld):
                        causes.append((f"spec.drivers[{i}].{fld}", driver.get(fld), IMMUTABLE))
        return causes


class CSIStorageCapacityStrategy(Strategy):
    """CSIStorageCapacity: as in the module docstring."""

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        return False  # no spec

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        name = obj.get("storageClassName")
        if not name:
            causes.append(("storageClassName", None, REQUIRED))
        else:
            causes += [("storageClassName", name, m) for m in v.dns1123_subdomain_errors(name)]
        causes += selector_errors(obj.get("nodeTopology"), "nodeTopology")
        causes += non_negative_quantity_errors(obj.get("capacity"), "capacity")
        causes += non_negative_quantity_errors(obj.get("maximumVolumeSize"), "maximumVolumeSize")
        if old is not None:
            for fld in ("storageClassName", "nodeTopology"):
                if obj.get(fld) != old.get(fld):
                    causes.append((fld, obj.get(fld), IMMUTABLE))
        return causes


class VolumeAttachmentStrategy(Strategy):
    """VolumeAttachment: as in the module docstring."""

    namespace_scoped = False
    has_status = True

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        if not spec.get("attacher"):
            causes.append(("spec.attacher", None, REQUIRED))
        else:
            causes += csi_driver_name_errors(spec["attacher"], "spec.attacher")
        source = spec.get("source") or {}
        pv, inline = source.get("persistentVolumeName"), source.get("inlineVolumeSpec")
        exactly_one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
        if pv is None and inline is None:
            causes.append(("spec.source", None, f"{REQUIRED}: {exactly_one}"))
        elif pv is not None and inline is not None:
            causes.append(("spec.source", None, f"Forbidden: {exactly_one}"))
        elif pv is not None and not pv:
            causes.append(("spec.source.persistentVolumeName", None,
                           f"{REQUIRED}: must specify non empty persistentVolumeName"))
        elif inline is not None and not (inline or {}).get("csi"):
            causes.append(("spec.source.inlineVolumeSpec", None,
                           f"{REQUIRED}: must specify csi for inlineVolumeSpec"))
        node = str(spec.get("nodeName") or "")
        causes += [("spec.nodeName", node, m) for m in v.dns1123_subdomain_errors(node)]
        if old is not None and spec != (old.get("spec") or {}):
            causes.append(("spec", None, f"Invalid value: {IMMUTABLE}"))
        return causes


def csi_strategies() -> dict[str, Strategy]:
    """The four kinds' strategies, by kind."""
    return {"CSIDriver": CSIDriverStrategy(), "CSINode": CSINodeStrategy(),
            "CSIStorageCapacity": CSIStorageCapacityStrategy(), "VolumeAttachment": VolumeAttachmentStrategy()}
