"""``kubectl describe pod``: a Pod in kubectl's layout (``pkg/describe``'s PodDescriber)."""

from __future__ import annotations

from minik8s.api.base import Obj
from minik8s.api.columns import NONE, since
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import controlled_by, fetch_events
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import (
    Writer,
    meta_of,
    write_annotations,
    write_containers,
    write_events,
    write_labels,
    write_tolerations,
    write_volumes,
)
from minik8s.kubectl.session import Session


async def describe_pod(s: Session, rt: ResourceType, pod: Obj) -> str:
    """A Pod in kubectl's layout."""
    meta, spec, status = meta_of(pod), pod.get("spec") or {}, pod.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    if spec.get("priority") is not None:
        w.write(0, f"Priority:\t{spec['priority']}")
    if spec.get("priorityClassName"):
        w.write(0, f"Priority Class Name:\t{spec['priorityClassName']}")
    if spec.get("serviceAccountName"):
        w.write(0, f"Service Account:\t{spec['serviceAccountName']}")
    node = spec.get("nodeName")
    w.write(0, f"Node:\t{node + '/' + (status.get('hostIP') or '') if node else NONE}")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{describe_time(status['startTime'])}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Failed", "Succeeded"):
        w.write(0, f"Status:\tTerminating (lasts {since(meta['deletionTimestamp'])})")
        w.write(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s")
    else:
        w.write(0, f"Status:\t{status.get('phase') or ''}")
    if status.get("reason"):
        w.write(0, f"Reason:\t{status['reason']}")
    if status.get("message"):
        w.write(0, f"Message:\t{status['message']}")
    w.write(0, f"IP:\t{status.get('podIP') or ''}")
    ips = [i.get("ip") for i in status.get("podIPs") or [] if i.get("ip")]
    if not ips and status.get("podIP"):
        ips = [status["podIP"]]
    if ips:
        w.write(0, "IPs:")
        for ip in ips:
            w.write(1, f"IP:\t{ip}")
    else:
        w.write(0, f"IPs:\t{NONE}")
    if controlled_by(pod):
        w.write(0, f"Controlled By:\t{controlled_by(pod)}")
    if status.get("nominatedNodeName"):
        w.write(0, f"NominatedNodeName:\t{status['nominatedNodeName']}")
    if spec.get("initContainers"):
        write_containers(w, "Init Containers", spec["initContainers"], status.get("initContainerStatuses") or [],
                         pod=pod)
    write_containers(w, "Containers", spec.get("containers") or [], status.get("containerStatuses") or [], pod=pod)
    if spec.get("ephemeralContainers"):  # as kubectl: shown as containers (no targetContainerName)
        write_containers(w, "Ephemeral Containers", spec["ephemeralContainers"],
                         status.get("ephemeralContainerStatuses") or [], pod=pod)
    if status.get("conditions"):
        w.write(0, "Conditions:")
        w.write(1, "Type\tStatus")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')} \t{c.get('status')} ")
    write_volumes(w, spec.get("volumes") or [])
    w.write(0, f"QoS Class:\t{status.get('qosClass') or ''}")
    write_labels(w, "Node-Selectors", spec.get("nodeSelector"))
    write_tolerations(w, "Tolerations", spec.get("tolerations") or [])
    write_events(w, await fetch_events(s, pod, rt))
    return w.text()

