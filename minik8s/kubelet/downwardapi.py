"""The files of ``downwardAPI`` volumes (and of a projected volume's ``downwardAPI`` source).

Kubernetes' ``pkg/volume/downwardapi`` ``CollectData``: each item becomes the file ``path``
holding one value, with permission bits ``mode``, else the volume's ``defaultMode`` (0644):

- ``fieldRef``: ``metadata.name``, ``metadata.namespace``, ``metadata.uid``,
  ``metadata.labels``/``metadata.annotations`` (every entry as a sorted ``key="value"`` line)
  or one of them (``metadata.labels['k']``);
- ``resourceFieldRef``: a resource of the container ``containerName`` (``limits.cpu``,
  ``requests.memory``, ...) in units of ``divisor``; a missing limit is the node's allocatable
  amount, a missing request ``0``.

Values come from :mod:`minik8s.kubelet.container_spec` (the same resolution as env
``valueFrom``).  The kubelet rewrites the files on every pod sync, so a label or annotation
change reaches them within seconds, atomically (:mod:`minik8s.kubelet.atomic_writer`).
"""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.kubelet.atomic_writer import FileProjection
from minik8s.kubelet.configsources import ConfigError
from minik8s.kubelet.container_spec import field_value, resource_field_value


def _container(pod: Obj, name: str) -> Obj:
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if c.get("name") == name:
            return c
    meta = pod.get("metadata") or {}
    raise ConfigError(f"container {name!r} not found in pod {meta.get('namespace')}/{meta.get('name')}")


def downward_api_payload(pod: Obj, items: list[Obj], default_mode: int,
                         allocatable: dict[str, str] | None = None) -> dict[str, FileProjection]:
    """Path → file for downwardAPI ``items`` of ``pod``; ``allocatable`` is the node's
    (``{"cpu": "4", "memory": "16Gi", ...}``) for missing limits.

    Raises ConfigError for a ``resourceFieldRef`` naming no container of the pod.
    """
    payload: dict[str, FileProjection] = {}
    for item in items:
        value: str
        if item.get("fieldRef"):
            value = field_value(pod, str(item["fieldRef"].get("fieldPath") or ""))
        elif item.get("resourceFieldRef"):
            ref: dict[str, Any] = item["resourceFieldRef"]
            value = resource_field_value(_container(pod, str(ref.get("containerName") or "")), ref, allocatable)
        else:
            continue
        mode = item.get("mode")
        payload[str(item.get("path") or "")] = FileProjection(value.encode(), default_mode if mode is None
                                                              else int(mode))
    return payload
