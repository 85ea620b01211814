"""Docker labels and names of the containers the kubelet creates.

Every container carries the labels Kubernetes' dockershim used
(``io.kubernetes.pod.uid``, ``io.kubernetes.pod.name``, ``io.kubernetes.pod.namespace``,
``io.kubernetes.container.name`` — ``POD`` for the pause container —,
``io.kubernetes.container.restartCount``) plus ``minik8s.io/managed=true`` and
``minik8s.io/node=<node>``, so several kubelets can share one Docker Engine and a
restarted kubelet finds its containers (and their restart counts) again.

Names follow ``k8s_<container>_<pod>_<namespace>_<uid>_<attempt>``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

MANAGED = "minik8s.io/managed"
NODE = "minik8s.io/node"
POD_UID = "io.kubernetes.pod.uid"
POD_NAME = "io.kubernetes.pod.name"
POD_NAMESPACE = "io.kubernetes.pod.namespace"
CONTAINER_NAME = "io.kubernetes.container.name"
RESTART_COUNT = "io.kubernetes.container.restartCount"
CONTAINER_HASH = "io.kubernetes.container.hash"
GRACE_PERIOD = "io.kubernetes.pod.terminationGracePeriod"

#: ``io.kubernetes.container.name`` of the pause ("sandbox") container.
SANDBOX = "POD"


def container_name(container: str, pod: str, namespace: str, uid: str, attempt: int) -> str:
    """Docker name ``k8s_<container>_<pod>_<namespace>_<uid>_<attempt>`` (unique per Engine)."""
    return f"k8s_{container}_{pod}_{namespace}_{uid}_{attempt}"


def labels(node: str, pod: dict[str, Any], container: str, restart_count: int,
           spec_hash: str | None = None) -> dict[str, str]:
    """The labels of one container of ``pod`` (a wire-form Pod dict)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    out = {
        MANAGED: "true",
        NODE: node,
        POD_UID: meta.get("uid") or "",
        POD_NAME: meta.get("name") or "",
        POD_NAMESPACE: meta.get("namespace") or "",
        CONTAINER_NAME: container,
        RESTART_COUNT: str(restart_count),
        GRACE_PERIOD: str(spec.get("terminationGracePeriodSeconds", 30)),
    }
    if spec_hash:
        out[CONTAINER_HASH] = spec_hash
    return out


def node_filter(node: str, **extra: str) -> list[str]:
    """Docker ``label`` filters selecting this node's containers (plus ``key=value`` extras)."""
    found = [f"{MANAGED}=true", f"{NODE}={node}"]
    for key, value in extra.items():
        found.append(f"{key}={value}")
    return found


def spec_hash(container: dict[str, Any]) -> str:
    """A short hash of the mutable part of a container spec (its ``image``).

    Pods are immutable but for container images, so a changed hash means the image was
    updated and, as in Kubernetes, the container is killed and started again.  Only the
    name and image are hashed so that new API defaults never restart running containers.
    """
    doc = {"name": container.get("name"), "image": container.get("image")}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def pod_key(namespace: str, name: str) -> str:
    """The work queue key ``namespace/name``."""
    return f"{namespace}/{name}"
