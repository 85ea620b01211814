"""The ``RuntimeClass`` admission plugin: Kubernetes' ``plugin/pkg/admission/runtimeclass``.

Pods being created (not updated, not subresources):

- with ``spec.runtimeClassName``: that RuntimeClass must exist (403 ``pods "x" is forbidden: pod
  rejected: RuntimeClass "y" not found``); its ``overhead.podFixed`` becomes ``spec.overhead`` (a
  different ``spec.overhead`` the client set is refused: ``pod rejected: Pod's Overhead doesn't match
  RuntimeClass's defined Overhead``); its ``scheduling.nodeSelector`` is merged into the pod's (a key
  the pod sets to another value is refused: ``conflict: runtimeClass.scheduling.nodeSelector[k] = a;
  pod.spec.nodeSelector[k] = b``) and its ``scheduling.tolerations`` into the pod's
  (``tolerations.MergeTolerations``: a toleration another one covers is dropped);
- a ``spec.overhead`` without a RuntimeClass that defines one is refused (``pod rejected: Pod Overhead
  set without corresponding RuntimeClass defined Overhead``), the plugin's validating half.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.quantity import parse_quantity
from minik8s.api.runtimeclass import RUNTIME_CLASS_API_VERSION

PLUGIN_NAME = "RuntimeClass"


def _forbidden(pod: Obj, message: str) -> errors.Forbidden:
    """``admission.NewForbidden`` for a pod (its ``generateName`` while the name is still generated)."""
    meta = pod.get("metadata") or {}
    name = meta.get("name") or ""
    generate = meta.get("generateName") or ""
    if generate and name.startswith(generate) and len(name) == len(generate) + 5:
        name = generate  # minik8s generates the name before admission; Kubernetes after
    return errors.Forbidden(f'pods "{name or "Unknown"}" is forbidden: {message}', {"name": name, "kind": "pods"})


def _quantities(resources: Any) -> dict[str, Decimal]:
    """A resource list as numbers (``Semantic.DeepEqual`` compares quantities by value)."""
    out: dict[str, Decimal] = {}
    for name, qty in (resources or {}).items():
        try:
            out[name] = parse_quantity(qty)
        except ValueError:
            out[name] = Decimal("NaN")
    return out


def _is_superset(ss: Obj, t: Obj) -> bool:
    """``tolerations.isSuperset``: whether toleration ``ss`` tolerates everything ``t`` does."""
    if ss == t:
        return True
    if t.get("key") != ss.get("key") and (ss.get("key") or ss.get("operator") != "Exists"):
        return False
    if t.get("effect") != ss.get("effect") and ss.get("effect"):
        return False
    if ss.get("effect") == "NoExecute" and ss.get("tolerationSeconds") is not None:
        if t.get("tolerationSeconds") is None or t["tolerationSeconds"] > ss["tolerationSeconds"]:
            return False
    operator = ss.get("operator") or "Equal"
    if operator == "Equal":
        return t.get("operator") == "Equal" and t.get("value") == ss.get("value")
    return operator == "Exists"


def merge_tolerations(first: list[Obj], second: list[Obj]) -> list[Obj]:
    """``tolerations.MergeTolerations``: both lists, without the tolerations another one covers (of
    equal ones, the first is kept)."""
    every = list(first) + list(second)
    merged: list[Obj] = []
    for i, t in enumerate(every):
        if any(_is_superset(kept, t) for kept in merged):
            continue
        if any(t != later and _is_superset(later, t) for later in every[i + 1:]):
            continue
        merged.append(t)
    return merged


async def admit_pod(api: Any, pod: Obj) -> None:
    """Apply the plugin to a Pod being created (changed in place; ``api`` is the ResourceAPI).

    Raises:
        errors.Forbidden: as in the module docstring.
    """
    spec = pod.setdefault("spec", {})
    name = spec.get("runtimeClassName")
    runtime_class: Obj | None = None
    if name:
        try:
            runtime_class = await api.get(api.registry.by_kind(RUNTIME_CLASS_API_VERSION, "RuntimeClass"), None, name)
        except errors.NotFound:
            raise _forbidden(pod, f'pod rejected: RuntimeClass "{name}" not found') from None
    pod_fixed = ((runtime_class or {}).get("overhead") or {}).get("podFixed")
    if runtime_class is not None and (runtime_class.get("overhead") or {}).get("podFixed") is not None:
        if spec.get("overhead") and _quantities(spec["overhead"]) != _quantities(pod_fixed):
            raise _forbidden(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
        spec["overhead"] = copy.deepcopy(pod_fixed)
    elif spec.get("overhead") is not None:
        raise _forbidden(pod, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
    scheduling = (runtime_class or {}).get("scheduling")
    if not scheduling:
        return
    selector = spec.get("nodeSelector")
    wanted = scheduling.get("nodeSelector") or {}
    if selector is None:
        selector = copy.deepcopy(wanted) or None
    else:
        for key, value in wanted.items():
            if key in selector and selector[key] != value:
                raise _forbidden(pod, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                      f"pod.spec.nodeSelector[{key}] = {selector[key]}")
            selector[key] = value
    if selector is not None:
        spec["nodeSelector"] = selector
    tolerations = merge_tolerations(spec.get("tolerations") or [], copy.deepcopy(scheduling.get("tolerations") or []))
    if tolerations:
        spec["tolerations"] = tolerations
