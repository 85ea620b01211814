"""A pod's volumes: the volume types Kubernetes knows, their defaults and the validation of each
source's own fields, with Kubernetes 1.32's field paths and messages (``validateVolumeSource``
and the ``validate<Type>VolumeSource`` functions of ``pkg/apis/core/validation``).

minik8s' kubelet mounts only ``emptyDir``, ``hostPath``, ``configMap``, ``secret``,
``downwardAPI``, ``projected``, ``persistentVolumeClaim`` and ``nfs``; the other sources (cloud
disks, ``csi``, ``ephemeral``...) are accepted and validated as Kubernetes does, so that manifests
written for Kubernetes are answered alike. ``configMap``/``secret``/``downwardAPI``/``projected``
are checked by :mod:`.podsources`, ``nfs`` by :mod:`.storage`; this module checks the others:

* ``emptyDir.sizeLimit`` not negative; ``hostPath.path`` required, without ``..``, ``type`` one
  of Kubernetes' host path types; ``gitRepo.repository`` required, ``directory`` a relative
  path without ``..``;
* the required fields of ``gcePersistentDisk`` (``pdName``), ``awsElasticBlockStore``
  (``volumeID``), ``iscsi`` (``targetPortal``, ``iqn``), ``glusterfs`` (``endpoints``, ``path``),
  ``rbd`` and ``cephfs`` (``monitors``), ``rbd.image``, ``cinder.volumeID``,
  ``azureFile`` (``secretName``, ``shareName``), ``vsphereVolume.volumePath``,
  ``quobyte`` (``volume``, ``registry`` as host:port pairs), ``flexVolume.driver`` (options outside the
  ``kubernetes.io`` / ``k8s.io`` namespaces), ``azureDisk`` (``diskName``, ``diskURI``),
  ``photonPersistentDisk.pdID``, ``portworxVolume.volumeID``, ``scaleIO`` (``gateway``,
  ``system``, ``volumeName``), ``storageos.volumeName``, ``csi.driver`` (a CSI driver name),
  ``ephemeral.volumeClaimTemplate`` (a claim template: its metadata's labels and annotations
  and a valid claim spec), ``persistentVolumeClaim.claimName``;
* a volume of several types: each type after the first refused, only the first one's fields checked
  (``gcePersistentDisk``'s under ``persistentDisk``, a second ``cephfs`` named ``cephFS`` and a second
  ``downwardAPI`` ``downwarAPI``: Kubernetes' own paths);
* partitions and LUNs in range, ``flocker``'s one dataset, ``fc``'s targets or WWIDs, ``iscsi``'s
  IQN and initiator name formats and CHAP secret, ``azureDisk``'s caching mode, kind and disk URI, secret
  references with a name.

Causes are ``(field path, bad value or None, message)``; ``path`` is ``<spec>.volumes[i]``.
"""

from __future__ import annotations

import re
from typing import Any

from minik8s.api import validation as v
from minik8s.api.base import Obj
from minik8s.apiserver.strategies.base import REQUIRED, Cause, non_negative_quantity_errors, unsupported
from minik8s.apiserver.strategies.csi import csi_driver_name_errors
from minik8s.apiserver.strategies.storage import pvc_spec_errors

#: every volume type of ``corev1.VolumeSource``, in Kubernetes' ``validateVolumeSource`` order
#: (the second one set is the one refused: ``may not specify more than 1 volume type``)
VOLUME_TYPES = ("emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret",
                "nfs", "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs",
                "quobyte", "downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume",
                "photonPersistentDisk", "portworxVolume", "azureDisk", "storageos", "projected", "scaleIO", "csi",
                "ephemeral")
#: the path Kubernetes names a second volume type by where it is not the field's name (sic)
_FORBIDDEN_PATHS = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
#: the path Kubernetes validates a source's fields under where it is not the field's name (sic)
_SOURCE_PATHS = {"gcePersistentDisk": "persistentDisk"}
#: ``hostPath.type`` values (Kubernetes lists them sorted; ``""`` is no check)
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                   "Socket")
AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")
PARTITION_RANGE = "must be between 1 and 255, inclusive"
LUN_RANGE = "must be between 0 and 255, inclusive"
QUOBYTE_REGISTRY = "must be a host:port pair or multiple pairs separated by commas"
_IQN = re.compile(r"iqn\.\d{4}-\d{2}\.[A-Za-z0-9.-]+(:[^,;*&$|\s]+)")
_EUI = re.compile(r"eui.[A-Za-z0-9]{16}")
_NAA = re.compile(r"naa.[A-Za-z0-9]{32}")
#: the sources with just required string fields: ``(source, (field, ...))``
_REQUIRED_FIELDS = (
    ("gcePersistentDisk", ("pdName",)),
    ("awsElasticBlockStore", ("volumeID",)),
    ("glusterfs", ("endpoints", "path")),
    ("rbd", ("monitors", "image")),
    ("cinder", ("volumeID",)),
    ("cephfs", ("monitors",)),
    ("flexVolume", ("driver",)),
    ("azureFile", ("secretName", "shareName")),
    ("vsphereVolume", ("volumePath",)),
    ("azureDisk", ("diskName", "diskURI")),
    ("photonPersistentDisk", ("pdID",)),
    ("portworxVolume", ("volumeID",)),
    ("scaleIO", ("gateway", "system", "volumeName")),
    ("persistentVolumeClaim", ("claimName",)),
)
#: the defaults Kubernetes gives some sources' fields (``SetDefaults_<Type>VolumeSource``)
SOURCE_DEFAULTS: dict[str, dict[str, Any]] = {
    "rbd": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    "iscsi": {"iscsiInterface": "default"},
    "azureDisk": {"cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"},
    "scaleIO": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
}
#: the secret references whose ``name`` is required when they are given
_SECRET_REFS = (("cinder", "secretRef"), ("storageos", "secretRef"), ("csi", "nodePublishSecretRef"))


def default_volume_types(spec: Obj) -> None:
    """``SetDefaults_Volume`` and the source defaults Kubernetes stores: a volume without a type is
    an ``emptyDir``; ``rbd`` pool ``rbd``, user ``admin``, keyring ``/etc/ceph/keyring``;
    ``iscsi.iscsiInterface`` ``default``; ``azureDisk`` caching ``ReadWrite``, fsType ``ext4``,
    readOnly false, kind ``Shared``; ``scaleIO`` storageMode ``ThinProvisioned``, fsType ``xfs``; an
    ``ephemeral`` claim template's ``volumeMode`` ``Filesystem``."""
    for vol in spec.get("volumes") or []:
        if not isinstance(vol, dict):
            continue
        if not any(k in vol for k in VOLUME_TYPES):
            vol["emptyDir"] = {}
        for source, values in SOURCE_DEFAULTS.items():
            if isinstance(vol.get(source), dict):
                for key, value in values.items():
                    if vol[source].get(key) in (None, ""):
                        vol[source][key] = value
        template = (vol.get("ephemeral") or {}).get("volumeClaimTemplate") if isinstance(vol.get("ephemeral"),
                                                                                          dict) else None
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            template["spec"].setdefault("volumeMode", "Filesystem")


def _no_backsteps(value: str, path: str) -> list[Cause]:
    """``validatePathNoBacksteps``: no ``..`` element."""
    return [(path, value, "must not contain '..'")] if ".." in value.replace("\\", "/").split("/") else []


def _range(value: Any, low: int, high: int, path: str, message: str) -> list[Cause]:
    if isinstance(value, int) and not low <= value <= high:
        return [(path, value, message)]
    return []


def _iscsi_errors(src: Obj, path: str) -> list[Cause]:
    """``validateISCSIVolumeSource``: portal and IQN required, the IQN in iqn/eui/naa form, LUN
    0..255, a ``secretRef`` with CHAP authentication."""
    causes: list[Cause] = []
    if not src.get("targetPortal"):
        causes.append((f"{path}.targetPortal", None, REQUIRED))
    iqn = str(src.get("iqn") or "")
    if not iqn:
        causes.append((f"{path}.iqn", None, REQUIRED))
    elif not iqn.startswith(("iqn", "eui", "naa")):
        causes.append((f"{path}.iqn", iqn, "must be valid format starting with iqn, eui, or naa"))
    elif not _iqn_format_ok(iqn):
        causes.append((f"{path}.iqn", iqn, "must be valid format"))
    causes += _range(src.get("lun", 0), 0, 255, f"{path}.lun", LUN_RANGE)
    if (src.get("chapAuthDiscovery") or src.get("chapAuthSession")) and src.get("secretRef") is None:
        causes.append((f"{path}.secretRef", None, REQUIRED))
    initiator = src.get("initiatorName")
    if isinstance(initiator, str):
        if not initiator.startswith(("iqn", "eui", "naa")):
            causes.append((f"{path}.initiatorname", initiator, "must be valid format starting with iqn, eui, or naa"))
        elif not _iqn_format_ok(initiator):
            causes.append((f"{path}.initiatorname", initiator, "must be valid format"))
    return causes


def _iqn_format_ok(name: str) -> bool:
    """An iSCSI qualified name in the iqn, eui or naa format its prefix names."""
    return bool({"iqn": _IQN, "eui": _EUI, "naa": _NAA}[name[:3]].fullmatch(name))


def _host_port_pairs_ok(registry: str) -> bool:
    """Go's ``net.SplitHostPort`` accepts each comma-separated pair: ``host:port`` or ``[v6]:port``."""
    for pair in registry.split(","):
        if pair.startswith("["):
            if "]:" not in pair or pair.count("]") != 1:
                return False
        elif pair.count(":") != 1:
            return False
    return True


def _fc_errors(src: Obj, path: str) -> list[Cause]:
    """``validateFCVolumeSource``: targetWWNs (with a LUN in 0..255) or wwids, not both."""
    wwns, wwids = src.get("targetWWNs") or [], src.get("wwids") or []
    if not wwns and not wwids:
        return [(f"{path}.targetWWNs", None, f"{REQUIRED}: must specify either targetWWNs or wwids, but not both")]
    if wwns and wwids:
        return [(f"{path}.targetWWNs", wwns, "targetWWNs and wwids can not be specified simultaneously")]
    if wwns:
        if src.get("lun") is None:
            return [(f"{path}.lun", None, f"{REQUIRED}: lun is required if targetWWNs is specified")]
        return _range(src["lun"], 0, 255, f"{path}.lun", LUN_RANGE)
    return []


def _flocker_errors(src: Obj, path: str) -> list[Cause]:
    """``validateFlockerVolumeSource``: exactly one of datasetName (without ``/``) and datasetUUID."""
    name, uuid = src.get("datasetName") or "", src.get("datasetUUID") or ""
    if not name and not uuid:
        return [(path, None, f"{REQUIRED}: one of datasetName and datasetUUID is required")]
    if name and uuid:
        return [(path, "resource", "datasetName and datasetUUID can not be specified simultaneously")]
    if "/" in name:
        return [(f"{path}.datasetName", name, "must not contain '/'")]
    return []


def _azure_disk_errors(src: Obj, path: str) -> list[Cause]:
    """``validateAzureDisk``: caching mode and kind known; a Managed disk's URI an ARM path, another
    kind's a blob URL (the kind defaults to Shared)."""
    causes: list[Cause] = []
    mode, kind, uri = src.get("cachingMode"), src.get("kind"), str(src.get("diskURI") or "")
    if mode is not None and mode not in AZURE_CACHING_MODES:
        causes.append((f"{path}.cachingMode", None, unsupported(mode, AZURE_CACHING_MODES)))
    if kind is not None and kind not in AZURE_DISK_KINDS:
        causes.append((f"{path}.kind", None, unsupported(kind, AZURE_DISK_KINDS)))
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        causes.append((f"{path}.diskURI", None, unsupported(
            uri, ("/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",))))
    if kind is not None and kind != "Managed" and not uri.startswith("https://"):
        causes.append((f"{path}.diskURI", None, unsupported(
            uri, ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",))))
    return causes


def _ephemeral_errors(src: Obj, path: str) -> list[Cause]:
    """``validateEphemeralVolumeSource``: a ``volumeClaimTemplate`` with valid labels, annotations
    and claim spec."""
    template = src.get("volumeClaimTemplate")
    tp = f"{path}.volumeClaimTemplate"
    if not isinstance(template, dict):
        return [(tp, None, REQUIRED)]
    meta = template.get("metadata") or {}
    causes: list[Cause] = list(v.validate_annotations(meta.get("annotations"), f"{tp}.metadata.annotations"))
    causes += v.validate_labels(meta.get("labels"), f"{tp}.metadata.labels")
    return causes + pvc_spec_errors(template.get("spec") or {}, f"{tp}.spec")


def other_volume_errors(vol: Obj, path: str) -> list[Cause]:
    """The checks of one volume's type and source fields (module docstring); ``path`` is
    ``<spec>.volumes[i]``."""
    sources = [k for k in VOLUME_TYPES if vol.get(k) is not None]
    causes: list[Cause] = [(f"{path}.{_FORBIDDEN_PATHS.get(k, k)}", None,
                            "Forbidden: may not specify more than 1 volume type") for k in sources[1:]]
    # only the first type's fields are checked, each under its path
    src = {k: vol[k] for k in sources[:1] if isinstance(vol[k], dict)}
    sp = {k: f"{path}.{_SOURCE_PATHS.get(k, k)}" for k in src}
    if "emptyDir" in src and src["emptyDir"].get("sizeLimit") is not None:
        if non_negative_quantity_errors(src["emptyDir"]["sizeLimit"], "sizeLimit"):
            causes.append((f"{path}.emptyDir.sizeLimit", None,
                           "Forbidden: SizeLimit field must be a valid resource quantity"))
    if "hostPath" in src:
        host, hp = src["hostPath"], f"{path}.hostPath"
        kind = host.get("type")
        if not host.get("path"):
            causes.append((f"{hp}.path", None, REQUIRED))
        else:
            causes += _no_backsteps(str(host["path"]), f"{hp}.path")
            if kind is not None and kind not in HOST_PATH_TYPES:
                causes.append((f"{hp}.type", None, unsupported(kind, HOST_PATH_TYPES)))
    if "gitRepo" in src:
        git = src["gitRepo"]
        if not git.get("repository"):
            causes.append((f"{path}.gitRepo.repository", None, REQUIRED))
        directory = str(git.get("directory") or "")
        if directory.startswith("/"):
            causes.append((f"{path}.gitRepo.directory", directory, "must be a relative path"))
        causes += _no_backsteps(directory, f"{path}.gitRepo.directory")
    for source, fields in _REQUIRED_FIELDS:
        for fld in fields if source in src else ():
            if not src[source].get(fld):
                causes.append((f"{sp[source]}.{fld}", None, REQUIRED))
    for source in ("gcePersistentDisk", "awsElasticBlockStore"):
        if source in src:
            causes += _range(src[source].get("partition"), 0, 255, f"{sp[source]}.partition", PARTITION_RANGE)
    if "quobyte" in src:
        registry = str(src["quobyte"].get("registry") or "")
        if not registry:
            causes.append((f"{path}.quobyte.registry", None, f"{REQUIRED}: {QUOBYTE_REGISTRY}"))
        elif not _host_port_pairs_ok(registry):
            causes.append((f"{path}.quobyte.registry", registry, QUOBYTE_REGISTRY))
        if not src["quobyte"].get("volume"):
            causes.append((f"{path}.quobyte.volume", None, REQUIRED))
    if "flexVolume" in src:
        for key in src["flexVolume"].get("options") or {}:
            namespace = str(key).split("/", 1)[0] if "/" in str(key) else str(key)
            if ("." + namespace.lower()).endswith((".kubernetes.io", ".k8s.io")):
                causes.append((f"{path}.flexVolume.options[{key}]", key,
                               "kubernetes.io and k8s.io namespaces are reserved"))
    for source, ref in _SECRET_REFS:
        if source in src and isinstance(src[source].get(ref), dict) and not src[source][ref].get("name"):
            causes.append((f"{path}.{source}.{ref}.name", None, REQUIRED))
    if "iscsi" in src:
        causes += _iscsi_errors(src["iscsi"], f"{path}.iscsi")
        name_portal = f'{vol.get("name") or ""}:{src["iscsi"].get("targetPortal") or ""}'
        if src["iscsi"].get("initiatorName") is not None and len(name_portal) > 64:
            causes.append((f"{path}.name", vol.get("name"), "Total length of <volume name>:<iscsi.targetPortal> "
                           "must be under 64 characters if iscsi.initiatorName is specified."))
    if "fc" in src:
        causes += _fc_errors(src["fc"], f"{path}.fc")
    if "flocker" in src:
        causes += _flocker_errors(src["flocker"], f"{path}.flocker")
    if "azureDisk" in src:
        causes += _azure_disk_errors(src["azureDisk"], f"{path}.azureDisk")
    if "storageos" in src:
        sos, op = src["storageos"], f"{path}.storageos"
        if not sos.get("volumeName"):
            causes.append((f"{op}.volumeName", None, REQUIRED))
        else:
            causes += [(f"{op}.volumeName", sos["volumeName"], m) for m in v.dns1123_label_errors(sos["volumeName"])]
        if sos.get("volumeNamespace"):
            causes += [(f"{op}.volumeNamespace", sos["volumeNamespace"], m)
                       for m in v.dns1123_label_errors(sos["volumeNamespace"])]
    if "csi" in src:
        causes += csi_driver_name_errors(src["csi"].get("driver"), f"{path}.csi.driver")
        secret = src["csi"].get("nodePublishSecretRef")
        if isinstance(secret, dict) and secret.get("name"):  # (the name's path is csi.name: sic)
            causes += [(f"{path}.csi.name", secret["name"], m) for m in v.dns1123_subdomain_errors(str(secret["name"]))]
    if "ephemeral" in src:
        causes += _ephemeral_errors(src["ephemeral"], f"{path}.ephemeral")
    return causes
