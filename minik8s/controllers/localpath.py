"""The local-path provisioner: a directory on the claim's node for every ``local-path`` claim.

minik8s' counterpart of Rancher's local-path-provisioner (which k3s ships as its default
StorageClass).  At start it creates the StorageClass ``local-path`` (provisioner
``minik8s.io/local-path``, ``volumeBindingMode: WaitForFirstConsumer``, ``reclaimPolicy: Delete``,
the default class) unless one of that name exists.

A claim is provisioned when its class's provisioner is ``minik8s.io/local-path``, it is not
bound, and the scheduler has chosen its first pod's node (annotation
``volume.kubernetes.io/selected-node``): the provisioner creates the PersistentVolume
``pvc-<claim uid>`` with ``hostPath`` ``<root>/pvc-<claim uid>`` (``type: DirectoryOrCreate``:
the kubelet of the node makes the directory when a pod first mounts it), the claim's size and access modes, the
class's reclaim policy, node affinity ``kubernetes.io/hostname In [<node>]`` and a ``claimRef``
naming the claim, so the binder binds the two (event ``ProvisioningSucceeded``).  A claim of an
``Immediate`` class of this provisioner cannot be placed (event ``ProvisioningFailed``).

Making the directory and removing it when such a volume is deleted (reclaim policy Delete) are
the job of the kubelet of that node (:mod:`minik8s.kubelet.storage`): it already runs there as
root and watches volumes, so no helper pod, image or extra privilege is needed, and a kubelet
that was down catches up when it starts.

Who may write the volume: the directory is made world-writable (0777), as Rancher's provisioner
makes it (its helper pod runs ``mkdir -m 0777 -p``), so a pod running as any user
(``runAsUser: 1000``), with or without ``fsGroup``, writes its claim.  ``fsGroup`` is not applied
to it: the volume is a ``hostPath`` volume, and Kubernetes applies ``fsGroup`` only to volume
types that support ownership management, never to hostPath — the same pod behaves the same on
k3s.  Narrower modes belong to a provisioner with per-volume ownership (CSI), not this one.
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


def local_path_class() -> Obj:
    """The ``local-path`` StorageClass as the controller-manager creates it."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": st.LOCAL_PATH_CLASS, "annotations": {st.ANN_DEFAULT_CLASS: "true"}},
            "provisioner": st.LOCAL_PATH_PROVISIONER, "reclaimPolicy": "Delete",
            "volumeBindingMode": st.BINDING_WAIT_FOR_FIRST_CONSUMER, "allowVolumeExpansion": False}


class LocalPathProvisioner(Controller):
    """Provisions ``hostPath`` volumes under ``root`` for claims of ``minik8s.io/local-path`` classes."""

    name = "local-path-provisioner"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 root: str = st.DEFAULT_LOCAL_PATH_ROOT, create_class: bool = True) -> None:
        super().__init__(client, factory, recorder)
        self.root = root.rstrip("/") or "/"
        self.create_class = create_class
        self.pv_rt = client.kind("v1", "PersistentVolume")
        self.pvc_rt = client.kind("v1", "PersistentVolumeClaim")
        self.sc_rt = client.kind("storage.k8s.io/v1", "StorageClass")
        self.claims = factory.informer(self.pvc_rt)
        self.classes = factory.informer(self.sc_rt)
        self.volumes = factory.informer(self.pv_rt)
        self.claims.add_handler(self._on_claim, lambda _o, cur: self._on_claim(cur), None)

    def _on_claim(self, pvc: Obj) -> None:
        if not (pvc.get("spec") or {}).get("volumeName"):
            self.enqueue(object_key(pvc))

    async def run(self, workers: int = 1) -> None:
        """Create the ``local-path`` class (once), then provision."""
        if self.create_class:
            await self.factory.wait_for_cache_sync()
            await self.ensure_class()
        await super().run(workers)

    async def ensure_class(self) -> None:
        """Create the ``local-path`` StorageClass unless it exists."""
        if self.classes.get(st.LOCAL_PATH_CLASS) is not None:
            return
        try:
            await self.client.create(self.sc_rt, local_path_class())
            self.log.info("storageclass %s created", st.LOCAL_PATH_CLASS)
        except errors.AlreadyExists:
            pass
        except errors.APIError as exc:
            self.log.warning("cannot create storageclass %s: %s", st.LOCAL_PATH_CLASS, exc)

    def volume_name(self, pvc: Obj) -> str:
        """``pvc-<claim uid>``, as Kubernetes names provisioned volumes."""
        return f"pvc-{meta_of(pvc).get('uid')}"

    async def sync(self, key: str) -> None:
        """Provision a volume for claim ``key`` when it is ours, unbound and its node is chosen."""
        pvc = self.claims.get(key)
        if pvc is None:
            return
        meta, spec = meta_of(pvc), pvc.get("spec") or {}
        if spec.get("volumeName") or meta.get("deletionTimestamp"):
            return
        sc = self.classes.get(st.claim_class(pvc)) if st.claim_class(pvc) else None
        if sc is None or sc.get("provisioner") != st.LOCAL_PATH_PROVISIONER:
            return
        node = (meta.get("annotations") or {}).get(st.ANN_SELECTED_NODE)
        if sc.get("volumeBindingMode") != st.BINDING_WAIT_FOR_FIRST_CONSUMER:
            self.event(pvc, "Warning", "ProvisioningFailed",
                       "configuration error, no node was specified: the local-path provisioner needs "
                       "volumeBindingMode WaitForFirstConsumer")
            return
        if not node:
            return
        name = self.volume_name(pvc)
        if self.volumes.get(name) is not None:
            return
        if st.find_matching_volume(pvc, self.volumes.list(), ({"kubernetes.io/hostname": node}, node)) is not None:
            return  # an existing volume fits: the binder takes it
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        pv = {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {st.ANN_PROVISIONED_BY: st.LOCAL_PATH_PROVISIONER,
                                                       st.ANN_LOCAL_PATH_NODE: node}},
            "spec": {
                "capacity": {"storage": storage},
                "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
                "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
                "storageClassName": sc["metadata"]["name"],
                "volumeMode": spec.get("volumeMode") or "Filesystem",
                "hostPath": {"path": f"{self.root}/{name}", "type": "DirectoryOrCreate"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}},
                "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta.get("namespace"),
                             "name": meta.get("name"), "uid": meta.get("uid")},
            },
        }
        try:
            await self.client.create(self.pv_rt, pv)
        except errors.AlreadyExists:
            return
        self.log.info("provisioned volume %s for claim %s on node %s", name, key, node)
        self.event(pvc, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}")
