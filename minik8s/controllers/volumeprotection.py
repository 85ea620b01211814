"""Storage object in-use protection: the ``kubernetes.io/pvc-protection`` and
``kubernetes.io/pv-protection`` finalizers.

Kubernetes' ``pkg/controller/volume/pvcprotection`` and ``pvprotection``.  The apiserver adds
the finalizers when a claim or volume is created (the StorageObjectInUseProtection admission);
these controllers add them to objects that lack them and remove them once deleting is safe:

- a PersistentVolumeClaim being deleted keeps its finalizer while a pod that is not terminated
  (not Succeeded or Failed) uses it in a ``persistentVolumeClaim`` volume: the informer's pods
  are asked first, then, if they show none, the apiserver (the cache may lag behind a pod just
  created);
- a PersistentVolume being deleted keeps its finalizer while it is ``Bound``.
"""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api import storage as st
from minik8s.api.base import Obj, object_key
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

CLAIM_INDEX = "pvcByName"


def pod_claims_index(pod: Obj) -> list[str]:
    """Index function: ``namespace/claim`` of every claim the pod's volumes name."""
    namespace = meta_of(pod).get("namespace") or ""
    return [f"{namespace}/{name}" for name in st.pod_claim_names(pod)]


async def _set_finalizer(client: Client, rt: object, obj: Obj, finalizer: str, present: bool) -> None:
    """Add or remove ``finalizer`` with a resourceVersion-guarded update (409 → retried by the caller)."""
    meta = meta_of(obj)
    finalizers = [f for f in meta.get("finalizers") or [] if f != finalizer]
    if present:
        finalizers.append(finalizer)
    patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta.get("resourceVersion")}}
    try:
        await client.patch(rt, meta["name"], patch, meta.get("namespace"))  # type: ignore[arg-type]
    except errors.NotFound:
        return


class PVCProtectionController(Controller):
    """Removes ``kubernetes.io/pvc-protection`` from deleted claims no running pod uses."""

    name = "pvc-protection-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.pvc_rt = client.kind("v1", "PersistentVolumeClaim")
        self.pod_rt = client.kind("v1", "Pod")
        self.claims = factory.informer(self.pvc_rt)
        self.pods = factory.informer(self.pod_rt, {CLAIM_INDEX: pod_claims_index})
        self.claims.add_handler(self._on_claim, lambda _o, cur: self._on_claim(cur), None)
        self.pods.add_handler(None, lambda old, cur: self._on_pod(cur), self._on_pod_deleted)

    def _on_claim(self, pvc: Obj) -> None:
        meta = meta_of(pvc)
        if meta.get("deletionTimestamp") or st.PVC_PROTECTION_FINALIZER not in (meta.get("finalizers") or []):
            self.enqueue(object_key(pvc))

    def _on_pod(self, pod: Obj) -> None:
        """A pod went away or finished: the claims it used may be free now."""
        if meta_of(pod).get("deletionTimestamp") is None and not st.pod_is_terminated(pod):
            return
        for key in pod_claims_index(pod):
            self.enqueue(key)

    def _on_pod_deleted(self, pod: Obj) -> None:
        for key in pod_claims_index(pod):
            self.enqueue(key)

    def _in_use(self, namespace: str, name: str, pods: list[Obj]) -> bool:
        return any(not st.pod_is_terminated(p) and name in st.pod_claim_names(p)
                   and meta_of(p).get("namespace") == namespace for p in pods)

    async def sync(self, key: str) -> None:
        """Add the finalizer to a live claim, or remove it from a deleted one no pod uses."""
        pvc = self.claims.get(key)
        if pvc is None:
            return
        meta = meta_of(pvc)
        has = st.PVC_PROTECTION_FINALIZER in (meta.get("finalizers") or [])
        if not meta.get("deletionTimestamp"):
            if not has:
                await _set_finalizer(self.client, self.pvc_rt, pvc, st.PVC_PROTECTION_FINALIZER, True)
            return
        if not has:
            return
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if self._in_use(namespace, name, self.pods.by_index(CLAIM_INDEX, key)):
            self.log.debug("claim %s still used by a pod", key)
            return
        live = (await self.client.list(self.pod_rt, namespace)).get("items") or []
        if self._in_use(namespace, name, live):
            return
        await _set_finalizer(self.client, self.pvc_rt, pvc, st.PVC_PROTECTION_FINALIZER, False)
        self.log.info("claim %s no longer used: protection finalizer removed", key)


class PVProtectionController(Controller):
    """Removes ``kubernetes.io/pv-protection`` from deleted volumes that are not Bound."""

    name = "pv-protection-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.pv_rt = client.kind("v1", "PersistentVolume")
        self.volumes = factory.informer(self.pv_rt)
        self.volumes.add_handler(self._on_volume, lambda _o, cur: self._on_volume(cur), None)

    def _on_volume(self, pv: Obj) -> None:
        meta = meta_of(pv)
        if meta.get("deletionTimestamp") or st.PV_PROTECTION_FINALIZER not in (meta.get("finalizers") or []):
            self.enqueue(object_key(pv))

    async def sync(self, key: str) -> None:
        """Add the finalizer to a live volume, or remove it from a deleted one that is not Bound."""
        pv = self.volumes.get(key)
        if pv is None:
            return
        meta = meta_of(pv)
        has = st.PV_PROTECTION_FINALIZER in (meta.get("finalizers") or [])
        if not meta.get("deletionTimestamp"):
            if not has:
                await _set_finalizer(self.client, self.pv_rt, pv, st.PV_PROTECTION_FINALIZER, True)
            return
        if has and (pv.get("status") or {}).get("phase") != "Bound":
            await _set_finalizer(self.client, self.pv_rt, pv, st.PV_PROTECTION_FINALIZER, False)
            self.log.info("volume %s not bound: protection finalizer removed", key)
