"""``kubectl describe pdb``: a PodDisruptionBudget (policy/v1) in kubectl's layout
(``pkg/describe``'s ``describePodDisruptionBudgetV1``)."""

from __future__ import annotations

from minik8s.api import columns as cols
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.sections import Writer, meta_of, write_events
from minik8s.kubectl.session import Session


async def describe_pdb(s: Session, rt: ResourceType, pdb: Obj) -> str:
    """Name, namespace, the budget (min available or max unavailable), selector, the status counts, events."""
    meta, spec, status = meta_of(pdb), pdb.get("spec") or {}, pdb.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    if spec.get("minAvailable") is not None:
        w.write(0, f"Min available:\t{spec['minAvailable']}")
    elif spec.get("maxUnavailable") is not None:
        w.write(0, f"Max unavailable:\t{spec['maxUnavailable']}")
    selector = spec.get("selector")
    w.write(0, f"Selector:\t{cols.format_selector(selector) if selector is not None else '<unset>'}")
    w.write(0, "Status:")
    w.write(2, f"Allowed disruptions:\t{status.get('disruptionsAllowed') or 0}")
    w.write(2, f"Current:\t{status.get('currentHealthy') or 0}")
    w.write(2, f"Desired:\t{status.get('desiredHealthy') or 0}")
    w.write(2, f"Total:\t{status.get('expectedPods') or 0}")
    write_events(w, await fetch_events(s, pdb, rt))
    return w.text()
