"""The ``Priority`` admission plugin: Kubernetes' ``plugin/pkg/admission/priority``.

Pods being created:

- with ``spec.priorityClassName``: that PriorityClass's ``value`` becomes ``spec.priority`` and its
  ``preemptionPolicy`` ``spec.preemptionPolicy``; a class that does not exist is refused
  (403 ``pods "x" is forbidden: no PriorityClass with name y was found``);
- without one: the ``globalDefault`` class's (its name is written to ``priorityClassName``; of several
  defaults, the lowest value's), else priority 0 and ``PreemptLowerPriority``;
- a ``spec.priority`` or ``spec.preemptionPolicy`` the client set that differs from the resolved one
  is refused (403).

Pods being updated keep the priority and preemption policy they were created with when the update
leaves them out (validation refuses changing them).

PriorityClasses being created or updated: a second ``globalDefault`` class is refused (403
``PriorityClass x is already marked as default. Only one default can exist``).

As in Kubernetes 1.32 the system classes may be used in any namespace (limiting them is a
ResourceQuota's job, not this plugin's).
"""

from __future__ import annotations

from typing import Any

from minik8s.api import errors
from minik8s.api import scheduling as s
from minik8s.api.base import Obj

PLUGIN_NAME = "Priority"
PRIORITY_CLASS_RESOURCE = "priorityclasses.scheduling.k8s.io"


def _forbidden(resource: str, pod_or_class: Obj, message: str) -> errors.Forbidden:
    """``admission.NewForbidden``: the object's name (its ``generateName`` while the name is still to be
    generated) in ``<resource> "<name>" is forbidden: <message>``."""
    meta = pod_or_class.get("metadata") or {}
    name = meta.get("name") or ""
    generate = meta.get("generateName") or ""
    if generate and name.startswith(generate) and len(name) == len(generate) + 5:
        name = generate  # minik8s generates the name before admission; Kubernetes after
    kind = resource.split(".", 1)[0]
    return errors.Forbidden(f'{resource} "{name or "Unknown"}" is forbidden: {message}',
                            {"name": name, "kind": kind, **({"group": resource.split(".", 1)[1]}
                                                             if "." in resource else {})})


async def _classes(api: Any, consistent: bool = False) -> list[Obj]:
    """Every PriorityClass: from the watch cache (pods), or at least as recent as etcd (``consistent``:
    a second default must not slip in just after the first)."""
    rt = api.registry.by_kind("scheduling.k8s.io/v1", "PriorityClass")
    return list(await api.list_all(rt, consistent=consistent))


def default_class(classes: list[Obj]) -> Obj | None:
    """The ``globalDefault`` class; of several (a race), the one with the lowest value."""
    found: Obj | None = None
    for pc in classes:
        if pc.get("globalDefault") and (found is None or int(found.get("value") or 0) > int(pc.get("value") or 0)):
            found = pc
    return found


async def admit_pod(api: Any, pod: Obj, old: Obj | None) -> None:
    """Resolve (create) or keep (update) the pod's priority; ``pod`` is changed in place.

    Raises:
        errors.Forbidden: an unknown class, or a priority / preemption policy that disagrees with it.
    """
    spec = pod.setdefault("spec", {})
    if old is not None:
        old_spec = old.get("spec") or {}
        for fld in ("priority", "preemptionPolicy"):
            if spec.get(fld) is None and old_spec.get(fld) is not None:
                spec[fld] = old_spec[fld]
        return
    name = spec.get("priorityClassName") or ""
    policy: str | None
    if not name:
        pc = default_class(await _classes(api))
        if pc is None:
            priority, policy = s.DEFAULT_PRIORITY, s.PREEMPT_LOWER_PRIORITY
        else:
            spec["priorityClassName"] = pc["metadata"]["name"]
            priority, policy = int(pc.get("value") or 0), pc.get("preemptionPolicy")
    else:
        try:
            pc = await api.get(api.registry.by_kind("scheduling.k8s.io/v1", "PriorityClass"), None, name)
        except errors.NotFound:
            raise _forbidden("pods", pod, f"no PriorityClass with name {name} was found") from None
        priority, policy = int(pc.get("value") or 0), pc.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden("pods", pod, f"the integer value of priority ({given}) must not be provided in pod spec; "
                                      f"priority admission controller computed {priority} from the given "
                                      "PriorityClass name")
    spec["priority"] = priority
    if policy is not None:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise _forbidden("pods", pod, f"the string value of PreemptionPolicy ({given_policy}) must not be "
                                          f"provided in pod spec; priority admission controller computed {policy} "
                                          "from the given PriorityClass name")
        spec["preemptionPolicy"] = policy


async def validate_priority_class(api: Any, pc: Obj, old: Obj | None) -> None:
    """Refuse a second ``globalDefault`` class (create, or an update making another class the default).

    Raises:
        errors.Forbidden: another class is the default already.
    """
    if not pc.get("globalDefault"):
        return
    current = default_class(await _classes(api, consistent=True))
    if current is None:
        return
    if old is None or current["metadata"]["name"] != (pc.get("metadata") or {}).get("name"):
        raise _forbidden(PRIORITY_CLASS_RESOURCE, pc, f"PriorityClass {current['metadata']['name']} is already "
                                                      "marked as default. Only one default can exist")
