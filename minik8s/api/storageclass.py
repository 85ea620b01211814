"""``storage.k8s.io/v1`` StorageClass: the validation model (the rules that use it, and its
annotations, are :mod:`minik8s.api.storage`'s)."""

from __future__ import annotations

from typing import Any

from minik8s.api.meta import TypedObject


class StorageClass(TypedObject):
    """``storage.k8s.io/v1`` StorageClass (cluster-scoped, no spec): ``provisioner`` makes the
    volumes of its claims; ``reclaimPolicy`` (Delete by default) goes to those volumes;
    ``volumeBindingMode`` Immediate (default) or WaitForFirstConsumer (bind once a pod using the
    claim is scheduled, on that pod's node)."""

    provisioner: str
    parameters: dict[str, str] | None = None
    reclaim_policy: str | None = None
    mount_options: list[str] | None = None
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None
    allowed_topologies: list[dict[str, Any]] | None = None
