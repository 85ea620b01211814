"""``kubectl describe`` for the workload kinds: a Deployment, a ReplicaSet, a StatefulSet, a
DaemonSet and a ReplicationController in kubectl's layouts (``pkg/describe``'s DeploymentDescriber,
ReplicaSetDescriber, StatefulSetDescriber, DaemonSetDescriber, ReplicationControllerDescriber)."""

from __future__ import annotations

from typing import Any

from minik8s.api import columns as cols
from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import controlled_by, fetch_events
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import Writer, meta_of, write_annotations, write_events, write_labels, write_pod_template
from minik8s.kubectl.session import Session

#: The label the Deployment controller adds to its ReplicaSets' templates (ignored when comparing templates).
POD_TEMPLATE_HASH = "pod-template-hash"


def write_workload_conditions(w: Writer, conditions: list[Obj]) -> None:
    """A Deployment's or ReplicaSet's Conditions table (Type Status Reason, no Message)."""
    if not conditions:
        return
    w.write(0, "Conditions:")
    w.write(1, "Type\tStatus\tReason")
    w.write(1, "----\t------\t------")
    for c in conditions:
        w.write(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason') or ''}")


def template_without_hash(template: Obj | None) -> Obj:
    """A pod template without the ``pod-template-hash`` label (kubectl's ``EqualIgnoreHash``)."""
    template = dict(template or {})
    meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != POD_TEMPLATE_HASH}
    meta["labels"] = labels or None
    template["metadata"] = {k: v for k, v in meta.items() if v not in (None, {}, [])}
    return template


def split_replica_sets(deployment: Obj, replica_sets: list[Obj]) -> tuple[list[Obj], Obj | None]:
    """``(old, new)`` among the ReplicaSets a Deployment controls (``deploymentutil.GetAllReplicaSets``).

    Keeps those whose controller owner reference has the Deployment's uid, sorted by
    creationTimestamp then name; the new one is the first whose template equals the Deployment's
    apart from ``pod-template-hash``; the old ones are all the others (``allOldRSs``).
    """
    uid = meta_of(deployment).get("uid")
    owned = [rs for rs in replica_sets
             if any(r.get("controller") and r.get("uid") == uid for r in meta_of(rs).get("ownerReferences") or [])]
    owned.sort(key=lambda rs: (str(meta_of(rs).get("creationTimestamp") or ""), str(meta_of(rs).get("name"))))
    wanted = template_without_hash((deployment.get("spec") or {}).get("template"))
    new = next((rs for rs in owned if template_without_hash((rs.get("spec") or {}).get("template")) == wanted), None)
    return [rs for rs in owned if rs is not new], new


def replica_sets_text(replica_sets: list[Obj]) -> str:
    """``web-5d8f (2/2 replicas created), ...`` (kubectl's ``printReplicaSetsByLabels``), or ``<none>``."""
    parts = [f"{meta_of(rs).get('name')} ({(rs.get('status') or {}).get('replicas') or 0}/"
             f"{(rs.get('spec') or {}).get('replicas', 1)} replicas created)" for rs in replica_sets]
    return ", ".join(parts) or NONE


def int_or_string(value: Any, default: str) -> str:
    """An IntOrString as Go's ``String()`` prints it (``25%``, ``1``)."""
    return default if value is None else str(value)


async def describe_deployment(s: Session, rt: ResourceType, d: Obj) -> str:
    """A Deployment in kubectl's layout: replicas, strategy, pod template, conditions, its ReplicaSets, events."""
    meta, spec, status = meta_of(d), d.get("spec") or {}, d.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, f"CreationTimestamp:\t{describe_time(meta.get('creationTimestamp'))}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    selector = cols.format_selector(spec.get("selector"))
    w.write(0, f"Selector:\t{'' if selector == NONE else selector}")
    w.write(0, f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('updatedReplicas') or 0} updated | "
               f"{status.get('replicas') or 0} total | {status.get('availableReplicas') or 0} available | "
               f"{status.get('unavailableReplicas') or 0} unavailable")
    strategy = spec.get("strategy") or {}
    w.write(0, f"StrategyType:\t{strategy.get('type') or ''}")
    w.write(0, f"MinReadySeconds:\t{spec.get('minReadySeconds') or 0}")
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        w.write(0, f"RollingUpdateStrategy:\t{int_or_string(rolling.get('maxUnavailable'), '0')} max unavailable, "
                   f"{int_or_string(rolling.get('maxSurge'), '0')} max surge")
    write_pod_template(w, spec.get("template"))
    write_workload_conditions(w, status.get("conditions") or [])
    try:
        rs_rt = s.registry.by_kind("apps/v1", "ReplicaSet")
        listed = await s.client.list_all(rs_rt, meta.get("namespace"), label_selector=selector
                                         if selector != NONE else None) if rs_rt is not None else {}
        old, new = split_replica_sets(d, list(listed.get("items") or []))
    except errors.APIError:
        old, new = [], None
    if old or new is not None:
        w.write(0, f"OldReplicaSets:\t{replica_sets_text(old)}")
        w.write(0, f"NewReplicaSet:\t{replica_sets_text([new] if new is not None else [])}")
    write_events(w, await fetch_events(s, d, rt))
    return w.text()


def pod_phase_counts(pods: list[Obj], owner_uid: str | None) -> tuple[int, int, int, int]:
    """``(running, waiting, succeeded, failed)`` among the pods whose controller is ``owner_uid``
    (kubectl's ``getPodStatusForController``: Pending counts as waiting)."""
    counts = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    for pod in pods:
        refs = [r for r in meta_of(pod).get("ownerReferences") or [] if r.get("controller")]
        if not refs or refs[0].get("uid") != owner_uid:
            continue
        phase = (pod.get("status") or {}).get("phase")
        if phase in counts:
            counts[phase] += 1
    return counts["Running"], counts["Pending"], counts["Succeeded"], counts["Failed"]


async def describe_replica_set(s: Session, rt: ResourceType, rs: Obj) -> str:
    """A ReplicaSet in kubectl's layout: selector, owner, replicas, its pods' phases, pod template, events."""
    meta, spec, status = meta_of(rs), rs.get("spec") or {}, rs.get("status") or {}
    selector = cols.format_selector(spec.get("selector"))
    pods_text: str
    try:
        listed = await s.client.list_all(s.resource("pods"), meta.get("namespace"),
                                         label_selector=selector if selector != NONE else None)
        running, waiting, succeeded, failed = pod_phase_counts(list(listed.get("items") or []), meta.get("uid"))
        pods_text = f"{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed"
    except errors.APIError as exc:
        pods_text = f"error in fetching pods: {exc}"
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, f"Selector:\t{selector}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    if controlled_by(rs):
        w.write(0, f"Controlled By:\t{controlled_by(rs)}")
    w.write(0, f"Replicas:\t{status.get('replicas') or 0} current / {spec.get('replicas', 1)} desired")
    w.write(0, f"Pods Status:\t{pods_text}")
    write_pod_template(w, spec.get("template"))
    write_workload_conditions(w, status.get("conditions") or [])
    write_events(w, await fetch_events(s, rs, rt))
    return w.text()


async def _pod_status_text(s: Session, obj: Obj, selector: str) -> str:
    """``N Running / N Waiting / N Succeeded / N Failed`` for the pods ``obj`` controls among those
    ``selector`` matches (kubectl's ``getPodStatusForController``)."""
    listed = await s.client.list_all(s.resource("pods"), meta_of(obj).get("namespace"),
                                     label_selector=selector if selector != NONE else None)
    running, waiting, succeeded, failed = pod_phase_counts(list(listed.get("items") or []), meta_of(obj).get("uid"))
    return f"{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed"


def format_labels(labels: dict[str, Any] | None) -> str:
    """A label map as ``labels.FormatLabels`` writes it: ``a=1,b=2`` sorted, ``<none>`` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or NONE


def write_volume_claim_templates(w: Writer, templates: list[Obj]) -> None:
    """A StatefulSet's Volume Claims: each template's name, class, labels, annotations, requested
    capacity (``<default>`` when none) and access modes (Go's ``[ReadWriteOnce]``)."""
    if not templates:
        w.write(0, f"Volume Claims:\t{NONE}")
        return
    w.write(0, "Volume Claims:")
    for pvc in templates:
        meta, spec = meta_of(pvc), pvc.get("spec") or {}
        w.write(1, f"Name:\t{meta.get('name') or ''}")
        w.write(1, f"StorageClass:\t{claim_class(pvc)}")
        write_labels(w, "  Labels", meta.get("labels"))
        write_labels(w, "  Annotations", meta.get("annotations"))
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        w.write(1, f"Capacity:\t{storage if storage is not None else '<default>'}")
        w.write(1, f"Access Modes:\t[{' '.join(spec.get('accessModes') or [])}]")


def claim_class(pvc: Obj) -> str:
    """A claim's storage class: the beta annotation first, else ``spec.storageClassName``, else ``""``
    (``storageutil.GetPersistentVolumeClaimClass``)."""
    beta = (meta_of(pvc).get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class")
    if beta is not None:
        return str(beta)
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


async def describe_stateful_set(s: Session, rt: ResourceType, sts: Obj) -> str:
    """A StatefulSet in kubectl's layout: creation time, selector, replicas, update strategy (with a
    rolling update's partition), its pods' phases, pod template, volume claim templates, events."""
    meta, spec, status = meta_of(sts), sts.get("spec") or {}, sts.get("status") or {}
    selector = cols.format_selector(spec.get("selector"))
    pods = await _pod_status_text(s, sts, selector)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, f"CreationTimestamp:\t{describe_time(meta.get('creationTimestamp'))}")
    w.write(0, f"Selector:\t{'' if selector == NONE else selector}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('replicas') or 0} total")
    strategy = spec.get("updateStrategy") or {}
    w.write(0, f"Update Strategy:\t{strategy.get('type') or ''}")
    rolling = strategy.get("rollingUpdate")
    if rolling is not None and rolling.get("partition") is not None:
        w.write(1, f"Partition:\t{rolling['partition']}")
        if rolling.get("maxUnavailable") is not None:
            w.write(1, f"MaxUnavailable:\t{rolling['maxUnavailable']}")
    w.write(0, f"Pods Status:\t{pods}")
    write_pod_template(w, spec.get("template"))
    write_volume_claim_templates(w, spec.get("volumeClaimTemplates") or [])
    write_events(w, await fetch_events(s, sts, rt))
    return w.text()


async def describe_daemon_set(s: Session, rt: ResourceType, ds: Obj) -> str:
    """A DaemonSet in kubectl's layout (no Namespace line, as kubectl 1.32): selector, node selector,
    the scheduling counts, its pods' phases, pod template, events."""
    meta, spec, status = meta_of(ds), ds.get("spec") or {}, ds.get("status") or {}
    selector = cols.format_selector(spec.get("selector"))
    pods = await _pod_status_text(s, ds, selector)
    template_spec = (spec.get("template") or {}).get("spec") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Selector:\t{'' if selector == NONE else selector}")
    w.write(0, f"Node-Selector:\t{format_labels(template_spec.get('nodeSelector'))}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    for key, label in (("desiredNumberScheduled", "Desired Number of Nodes Scheduled"),
                       ("currentNumberScheduled", "Current Number of Nodes Scheduled"),
                       ("updatedNumberScheduled", "Number of Nodes Scheduled with Up-to-date Pods"),
                       ("numberAvailable", "Number of Nodes Scheduled with Available Pods"),
                       ("numberMisscheduled", "Number of Nodes Misscheduled")):
        w.write(0, f"{label}: {status.get(key) or 0}")
    w.write(0, f"Pods Status:\t{pods}")
    write_pod_template(w, spec.get("template"))
    write_events(w, await fetch_events(s, ds, rt))
    return w.text()


async def describe_replication_controller(s: Session, rt: ResourceType, rc: Obj) -> str:
    """A ReplicationController in kubectl's layout: its map selector, replicas, its pods' phases,
    pod template, conditions, events."""
    meta, spec, status = meta_of(rc), rc.get("spec") or {}, rc.get("status") or {}
    selector = format_labels(spec.get("selector"))
    pods = await _pod_status_text(s, rc, selector)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, f"Selector:\t{selector}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Replicas:\t{status.get('replicas') or 0} current / {spec.get('replicas', 1)} desired")
    w.write(0, f"Pods Status:\t{pods}")
    write_pod_template(w, spec.get("template"))
    write_workload_conditions(w, status.get("conditions") or [])
    write_events(w, await fetch_events(s, rc, rt))
    return w.text()
