"""VolumeBinding: pods with PersistentVolumeClaims go where their volumes can be reached.

Kubernetes' ``volumebinding`` plugin, reduced to what minik8s' binder needs:

* PreFilter: every claim the pod names must exist and not be being deleted
  (``persistentvolumeclaim "x" not found`` / ``persistentvolumeclaim "x" is being deleted``); an
  unbound claim whose class binds ``Immediate`` (or that has no class) makes the pod wait:
  ``pod has unbound immediate PersistentVolumeClaims``, until the binder binds it.
* Filter: a bound claim's volume must admit the node in its ``nodeAffinity``
  (``node(s) had volume node affinity conflict``); an unbound WaitForFirstConsumer claim needs,
  on that node, an Available volume that fits or a class that provisions dynamically
  (``node(s) didn't find available persistent volumes to bind``).
* After the cycle, before the pod is bound, the scheduler writes the chosen node into
  ``volume.kubernetes.io/selected-node`` on each unbound WaitForFirstConsumer claim
  (:func:`claims_to_select`), which the binder and the provisioner wait for.  Unlike
  Kubernetes, the pod's binding does not wait for the claims to be bound: the kubelet retries
  the mount (FailedMount) until they are.
"""

from __future__ import annotations

from minik8s.api import storage as st
from minik8s.api.base import Obj
from minik8s.scheduler.framework import (
    ClusterEvent,
    CycleState,
    FilterPlugin,
    PreFilterPlugin,
    Status,
)
from minik8s.scheduler.nodeinfo import NodeInfo, PodInfo, StorageObjects

UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
NODE_CONFLICT = "node(s) had volume node affinity conflict"
NO_VOLUME = "node(s) didn't find available persistent volumes to bind"
STATE_KEY = "PreFilterVolumeBinding"


def _claim_state(pod: Obj, storage: StorageObjects) -> tuple[Status, list[Obj], list[Obj]]:
    """``(status, bound volumes, delayed claims)`` of the pod's claims."""
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    bound: list[Obj] = []
    delayed: list[Obj] = []
    for name in st.pod_claim_names(pod):
        pvc = storage.claim(namespace, name)
        if pvc is None:
            return Status.unschedulable(f'persistentvolumeclaim "{name}" not found', unresolvable=True), [], []
        if (pvc.get("metadata") or {}).get("deletionTimestamp"):
            return Status.unschedulable(f'persistentvolumeclaim "{name}" is being deleted',
                                        unresolvable=True), [], []
        volume_name = (pvc.get("spec") or {}).get("volumeName")
        if volume_name:
            pv = storage.volume(str(volume_name))
            if pv is None:
                return Status.unschedulable(f'persistentvolume "{volume_name}" not found',
                                            unresolvable=True), [], []
            bound.append(pv)
            continue
        class_name = st.claim_class(pvc)
        sc = storage.storage_class(class_name) if class_name else None
        if sc is None or sc.get("volumeBindingMode") != st.BINDING_WAIT_FOR_FIRST_CONSUMER:
            return Status.unschedulable(UNBOUND_IMMEDIATE, unresolvable=True), [], []
        delayed.append(pvc)
    return Status.success(), bound, delayed


def claims_to_select(pod: Obj, storage: StorageObjects | None, node: str) -> list[Obj]:
    """The pod's unbound WaitForFirstConsumer claims whose ``selected-node`` is not ``node`` yet."""
    if storage is None:
        return []
    status, _, delayed = _claim_state(pod, storage)
    if not status.is_success():
        return []
    return [pvc for pvc in delayed
            if ((pvc.get("metadata") or {}).get("annotations") or {}).get(st.ANN_SELECTED_NODE) != node]


class VolumeBinding(PreFilterPlugin, FilterPlugin):
    """Checks the pod's PersistentVolumeClaims (see the module docstring)."""

    name = "VolumeBinding"
    events = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.PVC_CHANGE,
                        ClusterEvent.PV_CHANGE, ClusterEvent.STORAGE_CLASS_CHANGE})

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        storage = state.snapshot.storage
        if storage is None or not st.pod_claim_names(pod.pod):
            return Status.skip()
        status, bound, delayed = _claim_state(pod.pod, storage)
        if not status.is_success():
            return status
        state.write(STATE_KEY, (bound, delayed, storage))
        return Status.success()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        bound, delayed, storage = state.read(STATE_KEY)
        for pv in bound:
            if not st.volume_node_affinity_matches(pv, node.labels, node.name):
                return Status.unschedulable(NODE_CONFLICT, unresolvable=True)
        for pvc in delayed:
            if st.find_matching_volume(pvc, storage.volumes(), (node.labels, node.name)) is not None:
                continue
            sc = storage.storage_class(st.claim_class(pvc)) or {}
            if sc.get("provisioner") and sc.get("provisioner") != st.NO_PROVISIONER:
                continue
            return Status.unschedulable(NO_VOLUME)
        return Status.success()
