"""``kubectl describe`` for the apps kinds: a Deployment and a ReplicaSet in kubectl's layouts
(``pkg/describe``'s DeploymentDescriber and ReplicaSetDescriber)."""

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
