"""Persistent storage on this node: claims and volumes as pods use them, NFS support, and
the removal of deleted local-path volumes' directories.

:class:`StorageSources` keeps PersistentVolumeClaims and PersistentVolumes in informers (as
:class:`~minik8s.kubelet.configsources.ConfigSources` does ConfigMaps): a claim that changes
queues the pods using it, so a pod waiting for its claim to be bound starts as soon as it is
(the periodic pod sync retries anyway).  Lookups never go to the apiserver.

Local-path volumes (:mod:`minik8s.controllers.localpath`) are made by the kubelet of their node
when a pod first mounts one (:func:`make_local_path_dir`): the directory ``<root>/<pv-name>`` is
created world-writable, mode 0777 (whatever the umask), owned by root.  That is what Rancher's
local-path-provisioner (k3s' default StorageClass) does — its setup script runs ``mkdir -m 0777 -p``
— and for the same reason: a pod running as a non-root user (``runAsUser: 1000``) must be able to
write its own claim, and Kubernetes gives no other way for this volume type.  ``fsGroup`` does not
help and is not applied: local-path volumes are ``hostPath`` volumes, and Kubernetes applies
``fsGroup`` (the recursive chgrp + setgid of ``SetVolumeOwnership``) only to volume plugins that
support ownership management — emptyDir, configMap, secret, projected, block/CSI devices — never to
hostPath, so pods behave here as on k3s.  Files a pod writes keep its uid and gid.  A directory that
already exists is left as it is (its data and whatever mode a pod gave it); directories made by a
kubelet before this rule were 0755 root-owned: ``chmod 0777`` them on the node for non-root pods.

When a PersistentVolume provisioned by
``minik8s.io/local-path`` for this node is deleted (its reclaim policy was Delete), the kubelet
removes its directory ``<local-path root>/<pv-name>``; at start, once the volumes are listed, it
also removes directories under the root that no volume names any more (deleted while the kubelet
was down).  Only a directory whose path is exactly ``<root>/<pv-name>`` is ever removed, so a
volume that names another path cannot make the kubelet delete it.

NFS: :func:`nfs_supported` tells whether the kernel has the NFS client (``nfs`` in
``/proc/filesystems``, else ``modprobe nfs`` succeeds and then it is there).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from minik8s.api import storage as st
from minik8s.api.base import Obj
from minik8s.client.informer import Informer
from minik8s.client.rest import Client

log = logging.getLogger("kubelet.storage")

#: The mode of a local-path volume's directory: Rancher's local-path-provisioner's ``mkdir -m 0777``.
LOCAL_PATH_MODE = 0o777


def nfs_supported(filesystems: Path = Path("/proc/filesystems"),
                  modprobe: Callable[[], bool] | None = None) -> bool:
    """Whether ``mount -t nfs`` can work here: ``nfs`` (or ``nfs4``) is a registered filesystem,
    or loading the ``nfs`` module succeeds and registers it.  ``modprobe`` (tests) replaces
    running ``modprobe nfs``."""
    def registered() -> bool:
        try:
            text = filesystems.read_text()
        except OSError:
            return False
        return any(line.split()[-1] in ("nfs", "nfs4") for line in text.splitlines() if line.split())

    if registered():
        return True
    loader = modprobe or _modprobe_nfs
    return loader() and registered()


def _modprobe_nfs() -> bool:
    try:
        return subprocess.run(["modprobe", "nfs"], capture_output=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def local_path_dir(pv: Obj, node_name: str, root: Path) -> Path | None:
    """The directory of a local-path volume of this node that the kubelet may remove, or None:
    provisioned by ``minik8s.io/local-path`` for ``node_name``, its ``hostPath`` exactly
    ``<root>/<pv-name>``."""
    meta = pv.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    name = str(meta.get("name") or "")
    if annotations.get(st.ANN_PROVISIONED_BY) != st.LOCAL_PATH_PROVISIONER:
        return None
    if annotations.get(st.ANN_LOCAL_PATH_NODE) != node_name:
        return None
    if not name or "/" in name or name in (".", ".."):
        return None
    path = ((pv.get("spec") or {}).get("hostPath") or {}).get("path")
    expected = root / name
    if not path or Path(path) != expected:
        return None
    return expected


def make_local_path_dir(path: Path) -> bool:
    """Create the local-path volume directory ``path`` (mode :data:`LOCAL_PATH_MODE`, 0777, set with
    chmod so the umask does not narrow it; missing parents 0755) unless it exists.  Returns whether
    it was created.  Raises OSError (a file of that name, no permission)."""
    if path.is_dir():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=LOCAL_PATH_MODE)
    except FileExistsError:
        if path.is_dir():
            return False  # another pod's mount made it just now
        raise
    os.chmod(path, LOCAL_PATH_MODE)
    log.info("created the directory of local-path volume %s (mode 0777)", path)
    return True


class StorageSources:
    """Informers of claims and volumes; ``on_claim_change(namespace, name)`` runs when a claim
    changes; local-path directories of this node are removed when their volume goes."""

    def __init__(self, client: Client, node_name: str, local_path_root: Path,
                 on_claim_change: Callable[[str, str], None]) -> None:
        self.node_name = node_name
        self.root = Path(local_path_root)
        self.claims = Informer(client, client.kind("v1", "PersistentVolumeClaim"))
        self.volumes = Informer(client, client.kind("v1", "PersistentVolume"))

        def claim_changed(obj: Obj) -> None:
            meta = obj.get("metadata") or {}
            on_claim_change(str(meta.get("namespace") or ""), str(meta.get("name") or ""))

        self.claims.add_handler(claim_changed, lambda _old, new: claim_changed(new), claim_changed)
        self.volumes.add_handler(None, None, self._on_volume_deleted)
        self._tasks: set[asyncio.Task[None]] = set()

    def claim(self, namespace: str, name: str) -> Obj | None:
        """The cached claim ``namespace/name``."""
        return self.claims.get(f"{namespace}/{name}")

    def volume(self, name: str) -> Obj | None:
        """The cached volume ``name``."""
        return self.volumes.get(name)

    def local_path(self, pv: Obj) -> Path | None:
        """The directory of ``pv`` when it is a local-path volume of this node (:func:`local_path_dir`)."""
        return local_path_dir(pv, self.node_name, self.root)

    def has_synced(self) -> bool:
        return self.claims.has_synced() and self.volumes.has_synced()

    def _on_volume_deleted(self, pv: Obj) -> None:
        path = local_path_dir(pv, self.node_name, self.root)
        if path is None:
            return
        task = asyncio.get_running_loop().create_task(self._remove(path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _remove(path: Path) -> None:
        if path.exists():
            await asyncio.to_thread(shutil.rmtree, path, True)
            log.info("removed the directory of deleted local-path volume %s", path)

    async def sweep(self) -> None:
        """Remove directories under the root that no volume names (deleted while we were away)."""
        await self.volumes.wait_synced()
        try:
            entries = [p for p in self.root.iterdir() if p.is_dir() and p.name.startswith("pvc-")]
        except OSError:
            return
        for path in entries:
            if self.volumes.get(path.name) is None:
                await self._remove(path)

    async def run(self) -> None:
        """Run both informers (forever); sweep the local-path root once they listed."""
        tasks = [asyncio.ensure_future(self.claims.run()), asyncio.ensure_future(self.volumes.run())]
        try:
            await self.sweep()
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
