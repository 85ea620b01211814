"""The data of a DaemonSet's or StatefulSet's ControllerRevision: the patch that restores its pod template.

What the controllers store (``getPatch`` in ``pkg/controller/daemon/update.go`` and
``statefulset/stateful_set_utils.go``) and kubectl compares byte for byte in ``rollout undo``
(``daemonSetMatch``, ``statefulsetMatch``): ``{"spec": {"template": {..., "$patch": "replace"}}}`` as
Go's ``json.Marshal`` writes the typed template through a map — every map's keys sorted, and the fields a
typed ``PodTemplateSpec`` always writes (``metadata.creationTimestamp: null``, each container's
``resources: {}``) present.  No pydantic here: kubectl imports it.
"""

from __future__ import annotations

import copy
from typing import Any

from minik8s.api.base import Obj

#: The container lists of a pod spec, whose items always carry ``resources``.
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def sorted_keys(value: Any) -> Any:
    """``value`` with every map's keys in sorted order (Go's encoding of a ``map[string]interface{}``)."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def typed_template(template: Obj) -> Obj:
    """A copy of ``template`` with the fields Go's encoding of a typed ``PodTemplateSpec`` always writes."""
    template = copy.deepcopy(template)
    template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    spec = template.get("spec")
    if isinstance(spec, dict):
        for field in CONTAINER_LISTS:
            for container in spec.get(field) or []:
                if isinstance(container, dict):
                    container.setdefault("resources", {})
    return template


def revision_data(owner: Obj) -> Obj:
    """The ControllerRevision data of ``owner``'s current template (a DaemonSet or StatefulSet)."""
    template = typed_template((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return sorted_keys({"spec": {"template": template}})


def revision_template(revision: Obj) -> Obj:
    """The pod template a ControllerRevision's data restores (the data applied to its owner: the template
    under ``spec.template``, without ``$patch``)."""
    template = copy.deepcopy((((revision.get("data") or {}).get("spec") or {}).get("template")) or {})
    template.pop("$patch", None)
    return template
