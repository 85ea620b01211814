"""The PersistentVolume binder: claims to volumes, phases, reclaim.

Kubernetes' ``pkg/controller/volume/persistentvolume`` (``PersistentVolumeController``,
``syncClaim``/``syncVolume``).  Keys are ``pvc/<namespace>/<name>`` and ``pv/<name>``; a claim
or volume change queues it and the objects it names on the other side.

Claims (``syncClaim``):

- unbound (no ``spec.volumeName``): with a WaitForFirstConsumer class the claim waits until the
  scheduler writes ``volume.kubernetes.io/selected-node`` (event ``WaitForFirstConsumer``);
  then the smallest Available volume that fits (:func:`minik8s.api.storage.find_matching_volume`:
  class, access modes, selector, size, pre-binding ``claimRef``, and the selected node for the
  volume's node affinity) is bound: the volume gets ``claimRef`` and phase ``Bound``, the claim
  ``volumeName``, phase ``Bound``, ``status.capacity`` and ``status.accessModes``.  With no fit and
  a class with a provisioner the claim is annotated ``volume.kubernetes.io/storage-provisioner``
  (event ``ExternalProvisioning``: the provisioner makes a volume pre-bound to it); otherwise it
  stays Pending (event ``FailedBinding``).
- pre-bound by the user (``spec.volumeName`` set, phase Pending): bound to that volume when it is
  unclaimed or claimed by this claim and fits.
- bound: a volume that disappeared makes the claim ``Lost`` (event ``ClaimLost``).

Volumes (``syncVolume``): no ``claimRef``: ``Available``; a ``claimRef`` whose claim is gone (or
is another object of the same name): ``Released``, then reclaimed per
``persistentVolumeReclaimPolicy``: ``Retain`` keeps it Released, ``Delete`` deletes the object
(a local-path volume's directory is removed by the kubelet of its node when it sees the
deletion), ``Recycle`` is not supported (phase ``Failed``, event ``VolumeFailedRecycle``).
"""

from __future__ import annotations

import copy
from typing import Any

from minik8s.api import errors
from minik8s.api import storage as st
from minik8s.api.base import Obj, now_rfc3339
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

PVC_KEY, PV_KEY = "pvc/", "pv/"


def _claim_key(namespace: str, name: str) -> str:
    return f"{PVC_KEY}{namespace}/{name}"


class PersistentVolumeController(Controller):
    """Binds PersistentVolumeClaims to PersistentVolumes and reclaims released volumes."""

    name = "persistentvolume-binder-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.pv_rt = client.kind("v1", "PersistentVolume")
        self.pvc_rt = client.kind("v1", "PersistentVolumeClaim")
        self.sc_rt = client.kind("storage.k8s.io/v1", "StorageClass")
        self.volumes = factory.informer(self.pv_rt)
        self.claims = factory.informer(self.pvc_rt)
        self.classes = factory.informer(self.sc_rt)
        self.nodes = factory.informer(client.kind("v1", "Node"))
        self.volumes.add_handler(self._on_volume, lambda _o, cur: self._on_volume(cur), self._on_volume)
        self.claims.add_handler(self._on_claim, lambda _o, cur: self._on_claim(cur), self._on_claim)
        self.classes.add_handler(lambda _sc: self._requeue_pending(), None, None)

    # ------------------------------------------------------------------ handlers
    def _on_volume(self, pv: Obj) -> None:
        self.enqueue(PV_KEY + str(meta_of(pv).get("name") or ""))
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        if ref.get("name"):
            self.enqueue(_claim_key(str(ref.get("namespace") or ""), str(ref["name"])))
        if not ref:
            self._requeue_pending()

    def _on_claim(self, pvc: Obj) -> None:
        meta = meta_of(pvc)
        self.enqueue(_claim_key(str(meta.get("namespace") or ""), str(meta.get("name") or "")))
        volume = (pvc.get("spec") or {}).get("volumeName")
        if volume:
            self.enqueue(PV_KEY + str(volume))
        for pv in self.volumes.list():
            ref = (pv.get("spec") or {}).get("claimRef") or {}
            if ref.get("name") == meta.get("name") and ref.get("namespace") == meta.get("namespace"):
                self.enqueue(PV_KEY + str(meta_of(pv).get("name") or ""))

    def _requeue_pending(self) -> None:
        """A volume became free or a class appeared: pending claims may bind now."""
        for pvc in self.claims.list():
            if (pvc.get("status") or {}).get("phase") in (None, "", "Pending"):
                meta = meta_of(pvc)
                self.enqueue(_claim_key(str(meta.get("namespace") or ""), str(meta.get("name") or "")))

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        """Sync one claim (``pvc/ns/name``) or volume (``pv/name``); raise to be retried."""
        if key.startswith(PVC_KEY):
            pvc = self.claims.get(key[len(PVC_KEY):])
            if pvc is not None:
                await self._sync_claim(pvc)
        elif key.startswith(PV_KEY):
            pv = self.volumes.get(key[len(PV_KEY):])
            if pv is not None:
                await self._sync_volume(pv)

    # ------------------------------------------------------------------ claims
    async def _sync_claim(self, pvc: Obj) -> None:
        spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
        volume_name = spec.get("volumeName")
        if not volume_name:
            await self._sync_unbound_claim(pvc)
            return
        pv = self.volumes.get(str(volume_name))
        if pv is None:
            if status.get("phase") == "Bound":
                await self._claim_status(pvc, "Lost", None)
                self.event(pvc, "Warning", "ClaimLost",
                           "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
            elif status.get("phase") != "Lost":
                self.event(pvc, "Normal", "FailedBinding", f'volume "{volume_name}" not found')
            return
        ref = (pv.get("spec") or {}).get("claimRef")
        if not ref:
            if not st.volume_satisfies(pv, pvc):
                self.event(pvc, "Warning", "VolumeMismatch", "Cannot bind to requested volume "
                           f'"{volume_name}": requested volume does not satisfy the claim')
                return
            await self._bind(pv, pvc, by_controller=False)
            return
        if st.claim_ref_names(pv, pvc):
            await self._bind(pv, pvc, by_controller=False)
            return
        if status.get("phase") == "Bound":
            await self._claim_status(pvc, "Lost", None)
            self.event(pvc, "Warning", "ClaimMisbound",
                       "Two claims are bound to the same volume, this one is bound incorrectly")
        else:
            self.event(pvc, "Warning", "FailedBinding", f'volume "{volume_name}" already bound to a different claim.')

    async def _sync_unbound_claim(self, pvc: Obj) -> None:
        meta = meta_of(pvc)
        class_name = st.claim_class(pvc)
        sc = self.classes.get(class_name) if class_name else None
        node: tuple[dict[str, str], str] | None = None
        if sc is not None and sc.get("volumeBindingMode") == st.BINDING_WAIT_FOR_FIRST_CONSUMER:
            selected = (meta.get("annotations") or {}).get(st.ANN_SELECTED_NODE)
            if not selected:
                self.event(pvc, "Normal", "WaitForFirstConsumer",
                           "waiting for first consumer to be created before binding")
                return
            node_obj = self.nodes.get(str(selected))
            labels = (meta_of(node_obj).get("labels") or {}) if node_obj else {"kubernetes.io/hostname": selected}
            node = (dict(labels), str(selected))
        pv = st.find_matching_volume(pvc, self.volumes.list(), node)
        if pv is not None:
            await self._bind(pv, pvc, by_controller=True)
            return
        if sc is not None and sc.get("provisioner") and sc.get("provisioner") != st.NO_PROVISIONER:
            provisioner = str(sc["provisioner"])
            annotations = meta.get("annotations") or {}
            if annotations.get(st.ANN_STORAGE_PROVISIONER) != provisioner:
                await self.client.patch(self.pvc_rt, meta["name"], {"metadata": {"annotations": {
                    st.ANN_STORAGE_PROVISIONER: provisioner, st.ANN_BETA_STORAGE_PROVISIONER: provisioner}}},
                    meta.get("namespace"))
                self.event(pvc, "Normal", "ExternalProvisioning",
                           f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
                           "or manually by the system administrator. If volume creation is delayed, please verify "
                           "that the provisioner is running and correctly registered.")
            return
        if class_name and sc is None:
            self.event(pvc, "Warning", "ProvisioningFailed", f'storageclass.storage.k8s.io "{class_name}" not found')
        elif class_name:
            self.event(pvc, "Normal", "FailedBinding", "no persistent volumes available for this claim")
        else:
            self.event(pvc, "Normal", "FailedBinding",
                       "no persistent volumes available for this claim and no storage class is set")

    async def _bind(self, pv: Obj, pvc: Obj, by_controller: bool) -> None:
        """Kubernetes' ``bind``: the volume's claimRef and phase, then the claim's volumeName and phase."""
        cmeta = meta_of(pvc)
        pv_name = str(meta_of(pv)["name"])
        ref = {"kind": "PersistentVolumeClaim", "namespace": cmeta.get("namespace"), "name": cmeta.get("name"),
               "uid": cmeta.get("uid"), "apiVersion": "v1", "resourceVersion": cmeta.get("resourceVersion")}
        current_ref = (pv.get("spec") or {}).get("claimRef") or {}
        if current_ref.get("uid") != ref["uid"] or current_ref.get("name") != ref["name"]:
            new_pv = copy.deepcopy(pv)
            new_pv["spec"]["claimRef"] = ref
            if by_controller and not current_ref:
                new_pv["metadata"].setdefault("annotations", {})[st.ANN_BOUND_BY_CONTROLLER] = "yes"
            pv = await self.client.update(self.pv_rt, new_pv)
        if (pv.get("status") or {}).get("phase") != "Bound":
            pv = await self._volume_status(pv, "Bound")
        spec = pvc.get("spec") or {}
        annotations = cmeta.get("annotations") or {}
        if spec.get("volumeName") != pv_name or annotations.get(st.ANN_BIND_COMPLETED) != "yes":
            new_pvc = copy.deepcopy(pvc)
            new_pvc["spec"]["volumeName"] = pv_name
            ann = new_pvc["metadata"].setdefault("annotations", {})
            ann[st.ANN_BIND_COMPLETED] = "yes"
            if by_controller and not spec.get("volumeName"):
                ann[st.ANN_BOUND_BY_CONTROLLER] = "yes"
            pvc = await self.client.update(self.pvc_rt, new_pvc)
        if (pvc.get("status") or {}).get("phase") != "Bound":
            await self._claim_status(pvc, "Bound", pv)
            self.log.info("bound claim %s/%s to volume %s", cmeta.get("namespace"), cmeta.get("name"), pv_name)

    async def _claim_status(self, pvc: Obj, phase: str, pv: Obj | None) -> None:
        new = copy.deepcopy(pvc)
        status: dict[str, Any] = {**(new.get("status") or {}), "phase": phase}
        if pv is not None:
            pv_spec = pv.get("spec") or {}
            status["accessModes"] = list(pv_spec.get("accessModes") or [])
            status["capacity"] = dict(pv_spec.get("capacity") or {})
        new["status"] = status
        await self.client.update_status(self.pvc_rt, new)

    async def _volume_status(self, pv: Obj, phase: str, message: str = "", reason: str = "") -> Obj:
        new = copy.deepcopy(pv)
        status: dict[str, Any] = {"phase": phase, "lastPhaseTransitionTime": now_rfc3339()}
        if message:
            status["message"] = message
        if reason:
            status["reason"] = reason
        new["status"] = status
        return await self.client.update_status(self.pv_rt, new)

    # ------------------------------------------------------------------ volumes
    async def _sync_volume(self, pv: Obj) -> None:
        spec, phase = pv.get("spec") or {}, (pv.get("status") or {}).get("phase")
        ref = spec.get("claimRef")
        if not ref:
            if phase != "Available" and not meta_of(pv).get("deletionTimestamp"):
                await self._volume_status(pv, "Available")
            return
        claim_key = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}"
        pvc = self.claims.get(claim_key)
        if pvc is not None and ref.get("uid") and meta_of(pvc).get("uid") != ref.get("uid"):
            pvc = None  # a new claim of the same name: ours is gone
        if pvc is None and not ref.get("uid"):
            # pre-bound to a claim that does not exist yet: offered to it alone
            if phase not in ("Available",):
                await self._volume_status(pv, "Available")
            return
        if pvc is None:
            # The cache may be behind: ask the apiserver before releasing anything.
            try:
                live = await self.client.get(self.pvc_rt, str(ref.get("name")), ref.get("namespace"))
            except errors.NotFound:
                live = None
            if live is not None and meta_of(live).get("uid") == ref.get("uid"):
                return
            if phase not in ("Released", "Failed"):
                pv = await self._volume_status(pv, "Released")
                self.log.info("volume %s released (claim %s gone)", meta_of(pv).get("name"), claim_key)
            await self._reclaim(pv)
            return
        if (pvc.get("spec") or {}).get("volumeName") == meta_of(pv).get("name"):
            if phase != "Bound":
                await self._volume_status(pv, "Bound")
            return
        if not (pvc.get("spec") or {}).get("volumeName"):
            self.enqueue(_claim_key(str(ref.get("namespace") or ""), str(ref.get("name") or "")))
            return
        # The claim is bound to another volume.
        if (meta_of(pv).get("annotations") or {}).get(st.ANN_BOUND_BY_CONTROLLER):
            new = copy.deepcopy(pv)
            new["spec"].pop("claimRef", None)
            new["metadata"]["annotations"].pop(st.ANN_BOUND_BY_CONTROLLER, None)
            pv = await self.client.update(self.pv_rt, new)
            await self._volume_status(pv, "Available")

    async def _reclaim(self, pv: Obj) -> None:
        """``persistentVolumeReclaimPolicy`` of a Released volume."""
        name = str(meta_of(pv).get("name"))
        policy = (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"
        if policy == "Retain":
            return
        if policy == "Delete":
            if meta_of(pv).get("deletionTimestamp"):
                return
            try:
                await self.client.delete(self.pv_rt, name)
            except errors.NotFound:
                return
            self.log.info("volume %s deleted (reclaim policy Delete)", name)
            return
        if (pv.get("status") or {}).get("phase") != "Failed":
            message = "Recycle is not supported by minik8s"
            await self._volume_status(pv, "Failed", message)
            self.event(pv, "Warning", "VolumeFailedRecycle", message)
