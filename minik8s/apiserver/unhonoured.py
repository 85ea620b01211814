"""Pod-spec and Service fields minik8s stores but does not honour, and the ``Warning`` each write gets.

Issue 27: a field minik8s cannot honour is stored and answered with a warning, never
silently dropped and never refused.  :data:`UNHONOURED` is the one list (docs/api.md, "Stored
but not honoured", repeats it; a unit test keeps the two equal): each entry a path in the
PodSpec (``[*]`` = every element of a list; ``containers[*]`` stands for every container
list: ``containers``, ``initContainers`` and ``ephemeralContainers``), the values that are
honoured after all (``unless``: ``hostUsers: true`` is what every pod gets anyway) and what
happens instead.  The list was drawn from what the kubelet (:mod:`minik8s.kubelet.volumes`,
:mod:`minik8s.kubelet.container_spec`, :mod:`minik8s.kubelet.sync`), the scheduler and the
proxies read: a field none of them reads is listed, unless its default is what minik8s does.

:func:`unhonoured_warnings` gives the warnings of a Pod, or of the pod template of a
Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, ReplicationController or
PodTemplate, as Kubernetes words its own pod warnings (``GetWarningsForPodTemplate``): the
field's full path in the object, a colon, the reason —
``spec.template.spec.volumes[0].awsElasticBlockStore: not supported by minik8s; stored, but
the kubelet cannot mount this volume type (the pod waits in ContainerCreating, FailedMount)``.
The apiserver sends them as ``Warning: 299 - "..."`` headers (kubectl prints ``Warning: ...``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minik8s.api.base import Obj
from minik8s.apiserver.podsecurity import TEMPLATE_PATHS


@dataclass(frozen=True)
class Unhonoured:
    """A PodSpec ``path`` minik8s stores but does not honour: ``why`` ends the warning; values in
    ``unless`` are honoured (no warning).  An absent field, ``null`` or ``[]`` never warns."""

    path: str
    why: str
    unless: tuple[Any, ...] = ()


_UNMOUNTABLE = ("stored, but the kubelet cannot mount this volume type (the pod waits in ContainerCreating, "
                "FailedMount)")
#: Volume sources the kubelet does not mount (it mounts hostPath, emptyDir, configMap, secret,
#: downwardAPI, projected, persistentVolumeClaim and nfs).
UNMOUNTABLE_VOLUMES = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "ephemeral", "fc", "flexVolume",
    "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "image", "iscsi", "photonPersistentDisk",
    "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume")
_LINUX = "stored but not used (minik8s runs Linux containers only)"
_APPARMOR = "stored but not applied (containers run with the AppArmor profile Docker gives them, as RuntimeDefault)"
_RUNTIME_DEFAULT = ({"type": "RuntimeDefault"},)

UNHONOURED: tuple[Unhonoured, ...] = (
    *(Unhonoured(f"volumes[*].{source}", _UNMOUNTABLE) for source in UNMOUNTABLE_VOLUMES),
    Unhonoured("os.name", "stored but not used (every minik8s node runs Linux)", ("linux",)),
    Unhonoured("securityContext.windowsOptions", _LINUX),
    Unhonoured("containers[*].securityContext.windowsOptions", _LINUX),
    Unhonoured("securityContext.appArmorProfile", _APPARMOR, _RUNTIME_DEFAULT),
    Unhonoured("containers[*].securityContext.appArmorProfile", _APPARMOR, _RUNTIME_DEFAULT),
    Unhonoured("securityContext.supplementalGroupsPolicy", "stored but not used (the image's groups are always "
                                                           "merged in, as with Merge)", ("Merge",)),
    Unhonoured("hostUsers", "stored but not used (no user namespaces: pods share the host's users)", (True,)),
    Unhonoured("resourceClaims", "stored but not used (no dynamic resource allocation)"),
    Unhonoured("containers[*].resources.claims", "stored but not used (no dynamic resource allocation)"),
    Unhonoured("containers[*].resizePolicy", "stored but not used (no in-place resize: resources apply as "
                                             "the container starts)"),
    Unhonoured("containers[*].volumeDevices", "stored but not used (no raw block volumes)"),
    Unhonoured("containers[*].volumeMounts[*].recursiveReadOnly", "stored but not used (a read-only mount is "
                                                                  "read-only at its top only)", ("Disabled",)),
)

#: ServiceSpec fields, the same way (paths in the ServiceSpec).
SERVICE_UNHONOURED: tuple[Unhonoured, ...] = (
    Unhonoured("externalIPs[*]", "stored but not routed (the proxy captures ClusterIPs and NodePorts only)"),
)

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
#: Where each kind keeps its pod template (Pods are their own).
TEMPLATES: dict[str, tuple[str, ...]] = {**TEMPLATE_PATHS, "PodTemplate": ("template",)}


def _absent(value: Any) -> bool:
    return value is None or value == []


def _walk(node: Any, parts: list[str], path: str) -> list[tuple[str, Any]]:
    """(concrete path, value) for every element ``parts`` reaches from ``node``."""
    if not parts:
        return [(path, node)]
    part, rest = parts[0], parts[1:]
    many = part.endswith("[*]")
    key = part.removesuffix("[*]")
    if not isinstance(node, dict) or _absent(node.get(key)):
        return []
    child = node[key]
    here = f"{path}.{key}" if path else key
    if not many:
        return _walk(child, rest, here)
    if not isinstance(child, list):
        return []
    return [hit for i, item in enumerate(child) for hit in _walk(item, rest, f"{here}[{i}]")]


def pod_spec_warnings(spec: Obj, prefix: str) -> list[str]:
    """The warnings of one PodSpec, each path written after ``prefix`` (``spec`` for a Pod)."""
    out: list[str] = []
    for entry in UNHONOURED:
        lists = CONTAINER_LISTS if entry.path.startswith("containers[*]") else ("",)
        for container_list in lists:
            path = entry.path.replace("containers[*]", f"{container_list}[*]", 1) if container_list else entry.path
            for where, value in _walk(spec, path.split("."), prefix):
                if value not in entry.unless:
                    out.append(f"{where}: not supported by minik8s; {entry.why}")
    return out


def unhonoured_warnings(obj: Obj) -> list[str]:
    """The warnings for a Pod, a pod-template-bearing object or a Service (none for other kinds)."""
    kind = str(obj.get("kind") or "")
    if kind == "Service":
        spec = obj.get("spec")
        return [f"{where}: not supported by minik8s; {entry.why}" for entry in SERVICE_UNHONOURED
                for where, _ in _walk(spec, entry.path.split("."), "spec")] if isinstance(spec, dict) else []
    path: tuple[str, ...] = ("spec",) if kind == "Pod" else (*TEMPLATES[kind], "spec") if kind in TEMPLATES else ()
    if not path:
        return []
    node: Any = obj
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return pod_spec_warnings(node, ".".join(path)) if isinstance(node, dict) else []
