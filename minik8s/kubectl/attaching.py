"""Which pod and container ``kubectl logs`` and ``kubectl exec`` act on (kubectl's ``polymorphichelpers``
and ``podcmd``).

``POD``, ``pod/NAME`` or ``TYPE/NAME`` of a kind with a pod selector (Deployment, ReplicaSet,
StatefulSet, DaemonSet, Job, ReplicationController, Service): for a workload the first of its pods,
waiting up to ``--pod-running-timeout`` for one (``GetFirstPod``), in the order kubectl picks
(:func:`logging_order` for logs, :func:`attach_order` for exec).  Without ``-c``, the container is
the one the ``kubectl.kubernetes.io/default-container`` annotation names, else the first one, and
kubectl says so on stderr (:func:`default_container`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import format_selector
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.resolve import resource_type
from minik8s.kubectl.session import Session

DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container"
#: Kinds whose pods kubectl finds through ``spec.selector`` (a LabelSelector, or a map for these two).
SELECTOR_KINDS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController", "Service"}
MAP_SELECTOR_KINDS = {"ReplicationController", "Service"}


class NoSelector(KubectlError):
    """A kind kubectl cannot find pods of (``selector for *v1.ConfigMap not implemented``)."""


def go_type(rt: ResourceType) -> str:
    """The Go type kubectl names in its messages: ``*v1.ConfigMap``."""
    return f"*{rt.version}.{rt.kind}"


def all_container_names(pod: Obj) -> str:
    """``c1, c2, dbg (ephem), setup (init)`` (``podcmd.AllContainerNames``)."""
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or []]
    names += [f"{c.get('name')} (ephem)" for c in spec.get("ephemeralContainers") or []]
    names += [f"{c.get('name')} (init)" for c in spec.get("initContainers") or []]
    return ", ".join(names)


def container_names(pod: Obj) -> list[str]:
    """Every container of the pod: init, regular, then ephemeral ones (``--all-containers``' order)."""
    spec = pod.get("spec") or {}
    return [str(c.get("name")) for key in ("initContainers", "containers", "ephemeralContainers")
            for c in spec.get(key) or []]


def default_container(pod: Obj, for_logs: bool = True) -> tuple[str, str | None]:
    """``(container, notice)`` when no ``-c`` was given: the annotated default container if the pod
    has it, else the first container; ``notice`` is what kubectl prints on stderr
    (``Defaulted container "c1" out of: c1, c2``; ``logs`` also says when the annotated name was not
    found), or None.

    Raises KubectlError when the pod has no containers.
    """
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    containers = spec.get("containers") or []
    if not containers:
        raise KubectlError(f"pod {meta.get('namespace')}/{meta.get('name')} does not have any containers")
    notice = None
    wanted = (meta.get("annotations") or {}).get(DEFAULT_CONTAINER_ANNOTATION)
    if wanted:
        if wanted in container_names(pod):
            return wanted, None
        if for_logs:
            notice = f'Default container name "{wanted}" not found in pod {meta.get("name")}'
    first = str(containers[0].get("name"))
    if len(containers) > 1 or spec.get("initContainers") or spec.get("ephemeralContainers"):
        defaulted = f'Defaulted container "{first}" out of: {all_container_names(pod)}'
        notice = f"{notice}\n{defaulted}" if notice else defaulted
    return first, notice


def exec_container(pod: Obj, container: str | None) -> str:
    """The container ``exec`` and ``cp`` run in: ``container`` (KubectlError, in kubectl's words, when
    the pod has none of that name), else the default one, announced on stderr as kubectl does."""
    if not container:
        container, notice = default_container(pod, for_logs=False)
        if notice:
            print(notice, file=sys.stderr, flush=True)
        return container
    if container not in container_names(pod):
        raise KubectlError(f"container {container} is not valid for pod {(pod.get('metadata') or {}).get('name')}")
    return container


def selector_of(rt: ResourceType, obj: Obj) -> str:
    """The label selector of a workload's pods (``SelectorsForObject``).

    Raises NoSelector for kinds without one and for a Service without a selector.
    """
    if rt.kind not in SELECTOR_KINDS:
        raise NoSelector(f"selector for {go_type(rt)} not implemented")
    selector = (obj.get("spec") or {}).get("selector")
    if rt.kind in MAP_SELECTOR_KINDS:
        if not selector:
            if rt.kind == "Service":
                name = (obj.get("metadata") or {}).get("name")
                raise NoSelector(f"invalid service '{name}': Service is defined without a selector")
            return ""
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    text = format_selector(selector)
    return "" if text == "<none>" else text


def _ready_since(pod: Obj) -> tuple[bool, str]:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True", str(c.get("lastTransitionTime") or "")
    return False, ""


def _max_restarts(pod: Obj) -> int:
    return max([int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or []]
               or [0])


def _time_key(stamp: str, newest_first: bool) -> tuple[int, Any]:
    """Sorts set times oldest first (or newest first), unset times last."""
    if not stamp:
        return (1, 0)
    try:
        seconds = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return (1, 0)
    return (0, -seconds if newest_first else seconds)


def logging_order(pod: Obj) -> tuple[Any, ...]:
    """Sort key of ``podutils.ByLogging``: assigned, Running < Unknown < Pending, ready, ready for
    longer, more restarts, older."""
    phase = {"Running": 0, "Unknown": 1, "Pending": 2}.get(str((pod.get("status") or {}).get("phase")), 0)
    ready, since = _ready_since(pod)
    return (not (pod.get("spec") or {}).get("nodeName"), phase, not ready,
            _time_key(since, False) if ready else (0, 0), -_max_restarts(pod),
            _time_key(str((pod.get("metadata") or {}).get("creationTimestamp") or ""), False))


def attach_order(pod: Obj) -> tuple[Any, ...]:
    """Sort key of ``sort.Reverse(podutils.ActivePods)``: the most active pod first (assigned, Running
    > Unknown > Pending, ready, ready for longer, fewer restarts, older)."""
    phase = {"Pending": 0, "Unknown": 1, "Running": 2}.get(str((pod.get("status") or {}).get("phase")), 0)
    ready, since = _ready_since(pod)
    return (not (pod.get("spec") or {}).get("nodeName"), -phase, not ready,
            _time_key(since, False) if ready else (0, 0), _max_restarts(pod),
            _time_key(str((pod.get("metadata") or {}).get("creationTimestamp") or ""), False))


async def first_pod(s: Session, namespace: str, selector: str, timeout: float,
                    for_logs: bool) -> tuple[Obj, int]:
    """``(pod, how many matched)``: the first of the pods ``selector`` matches (``GetFirstPod``),
    waiting up to ``timeout`` seconds for one; KubectlError ``timed out waiting for the condition``."""
    pods_rt = s.resource("pods")
    key = logging_order if for_logs else attach_order
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        listed = await s.client.list(pods_rt, namespace, label_selector=selector or None)
        pods = list(listed.get("items") or [])
        if pods:
            return sorted(pods, key=key)[0], len(pods)
        left = deadline - loop.time()
        if left <= 0:
            raise KubectlError("timed out waiting for the condition")
        version = (listed.get("metadata") or {}).get("resourceVersion")
        try:  # until something changes among those pods, or the time is up
            async with asyncio.timeout(left):
                async for _ in s.client.watch(pods_rt, namespace, resource_version=version,
                                              label_selector=selector or None, allow_bookmarks=False):
                    break
        except TimeoutError:
            pass
        except errors.APIError:
            pass


async def resolve_pod(s: Session, arg: str, timeout: float, for_logs: bool) -> tuple[Obj, str | None]:
    """The pod ``arg`` (``NAME``, ``pod/NAME``, ``TYPE/NAME``) stands for, and the ``Found N pods,
    using pod/NAME`` line kubectl prints for a workload with several (logs only).

    Raises the server's errors (NotFound), NoSelector and KubectlError.
    """
    type_name, slash, name = arg.partition("/")
    if not slash:
        type_name, name = "pods", arg
    if not name:
        raise KubectlError(f"arguments in resource/name form must have a single resource and name: {arg}")
    rt = resource_type(s.registry, type_name)
    obj = await s.client.get(rt, name, s.namespace if rt.namespaced else None)
    if rt.kind == "Pod" and rt.group == "":
        return obj, None
    try:
        selector = selector_of(rt, obj)
    except NoSelector as exc:
        verb = "get the logs from" if for_logs else "attach to"
        raise KubectlError(f"cannot {verb} {go_type(rt)}: {exc.message}") from None
    namespace = (obj.get("metadata") or {}).get("namespace") or s.namespace
    pod, count = await first_pod(s, namespace, selector, timeout, for_logs)
    found = f"Found {count} pods, using pod/{(pod.get('metadata') or {}).get('name')}" \
        if for_logs and count > 1 else None
    return pod, found
