"""``kubectl describe priorityclass``: a PriorityClass (scheduling.k8s.io/v1) in kubectl's layout
(``pkg/describe``'s ``describePriorityClass``)."""

from __future__ import annotations

from minik8s.api import columns as cols
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.sections import Writer, meta_of, write_events
from minik8s.kubectl.session import Session


async def describe_priority_class(s: Session, rt: ResourceType, pc: Obj) -> str:
    """Name, value, whether it is the default, the preemption policy, description, annotations, events."""
    meta = meta_of(pc)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Value:\t{pc.get('value') or 0}")
    w.write(0, f"GlobalDefault:\t{str(bool(pc.get('globalDefault'))).lower()}")
    w.write(0, f"PreemptionPolicy:\t{pc.get('preemptionPolicy') or ''}")
    w.write(0, f"Description:\t{pc.get('description') or ''}")
    w.write(0, f"Annotations:\t{cols.join_labels(meta.get('annotations'))}")
    write_events(w, await fetch_events(s, pc, rt))
    return w.text()
