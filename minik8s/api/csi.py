"""``storage.k8s.io/v1`` CSI kinds: CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment.

What each is for (Kubernetes' meanings, ``k8s.io/api/storage/v1``):

- **CSIDriver** (cluster-scoped): how Kubernetes talks to a CSI driver (``attachRequired``,
  ``podInfoOnMount``, ``volumeLifecycleModes``, ``fsGroupPolicy``, ...);
- **CSINode** (cluster-scoped, named after its Node): the CSI drivers installed on a node.  Every
  kubelet creates and keeps its own, owned by its Node (:mod:`minik8s.kubelet.node`); minik8s'
  nodes have no CSI plugins, so ``spec.drivers`` is empty;
- **CSIStorageCapacity** (namespaced): a driver's capacity for a StorageClass in a topology segment;
- **VolumeAttachment** (cluster-scoped): a request to attach a volume to a node, and its result.

minik8s serves, validates and stores them (so CSI drivers' manifests install); no component of
its own attaches CSI volumes.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from minik8s.api.meta import LabelSelector, TypedObject
from minik8s.api.model import Model

#: The in-tree volume plugins whose migration to CSI is on in Kubernetes 1.32: the kubelet's
#: ``storage.alpha.kubernetes.io/migrated-plugins`` annotation on its CSINode.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
MIGRATED_PLUGINS = ("kubernetes.io/aws-ebs", "kubernetes.io/azure-disk", "kubernetes.io/azure-file",
                    "kubernetes.io/cinder", "kubernetes.io/gce-pd", "kubernetes.io/portworx-volume",
                    "kubernetes.io/vsphere-volume")
FS_GROUP_POLICIES = ("ReadWriteOnceWithFSType", "File", "None")
VOLUME_LIFECYCLE_MODES = ("Persistent", "Ephemeral")


class TokenRequest(Model):
    audience: str
    expiration_seconds: int | None = None


class CSIDriverSpec(Model):
    attach_required: bool | None = None
    pod_info_on_mount: bool | None = None
    volume_lifecycle_modes: list[str] | None = None
    storage_capacity: bool | None = None
    fs_group_policy: str | None = None
    token_requests: list[TokenRequest] | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = None


class CSIDriver(TypedObject):
    """``storage.k8s.io/v1`` CSIDriver (cluster-scoped; the name is the driver's)."""

    spec: CSIDriverSpec


class VolumeNodeResources(Model):
    count: int | None = None


class CSINodeDriver(Model):
    name: str
    node_id: str = Field(default="", alias="nodeID")
    topology_keys: list[str] | None = None
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(Model):
    drivers: list[CSINodeDriver] | None = None


class CSINode(TypedObject):
    """``storage.k8s.io/v1`` CSINode (cluster-scoped, named after its Node)."""

    spec: CSINodeSpec


class CSIStorageCapacity(TypedObject):
    """``storage.k8s.io/v1`` CSIStorageCapacity (namespaced, no spec): ``storageClassName`` is required."""

    storage_class_name: str
    node_topology: LabelSelector | None = None
    capacity: Any | None = None
    maximum_volume_size: Any | None = None


class VolumeAttachmentSource(Model):
    persistent_volume_name: str | None = None
    inline_volume_spec: dict[str, Any] | None = None


class VolumeAttachmentSpec(Model):
    attacher: str
    source: VolumeAttachmentSource
    node_name: str


class VolumeAttachmentStatus(Model):
    attached: bool = False
    attachment_metadata: dict[str, str] | None = None


class VolumeAttachment(TypedObject):
    """``storage.k8s.io/v1`` VolumeAttachment (cluster-scoped; ``status`` subresource)."""

    spec: VolumeAttachmentSpec
    status: VolumeAttachmentStatus | None = None
