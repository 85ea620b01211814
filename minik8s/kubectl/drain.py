"""``kubectl cordon NODE``, ``kubectl uncordon NODE`` and ``kubectl drain NODE``.

Cordoning sets the Node's ``spec.unschedulable`` (the scheduler then places no new pods
there); uncordoning clears it.  Draining cordons the node and deletes the pods bound to it
(``spec.nodeName``), with kubectl's filters (``k8s.io/kubectl/pkg/drain``):

* DaemonSet pods are refused unless ``--ignore-daemonsets``, which leaves them running;
* mirror (static) pods are left alone;
* pods with ``emptyDir`` volumes are refused unless ``--delete-emptydir-data``;
* pods no controller manages are refused unless ``--force`` (nothing would recreate them);
* finished (Succeeded/Failed) pods always go.

Unlike kubectl, a refused drain is decided before anything is written, so it leaves the
node as it was.  Pods are evicted through the ``pods/eviction`` subresource (policy/v1), as
kubectl does by default, so their PodDisruptionBudgets are honoured: ``evicting pod ns/name`` is
printed for each try, and an eviction the budget refuses (429) is tried again every 5 s with
kubectl's ``error when evicting pods/"name" -n "ns" (will retry after 5s): ...`` line, until it passes
or ``--timeout`` is reached (``global timeout reached``).  ``--disable-eviction`` deletes the pods
instead, bypassing the budgets.  Both honour ``--grace-period`` (default: the pod's own).  Drain
then waits until every pod is really gone (the kubelet finishes a graceful deletion), printing
``pod/<name> evicted`` (or ``deleted``) for each, and ends with ``node/<name> drained``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.client.rest import resource_path
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import SelectorOpt, duration_flag
from minik8s.kubectl.selection import ObjectRef, for_each
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.waiting import gone, wait_gone

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"


# ====================================================================== cordon / uncordon
async def node_refs(s: Session, verb: str, args: list[str], selector: str) -> list[ObjectRef]:
    """The nodes named (``n1``, ``node/n1``) or selected by ``-l``.

    Raises KubectlError with kubectl's usage errors, or when the selector matches nothing.
    """
    rt = s.resource("nodes")
    if args and selector:
        raise KubectlError("cannot specify both a node name and a --selector option")
    if not args and not selector:
        raise KubectlError(f"USAGE: {verb} NODE [flags]")
    if selector:
        listed = await s.client.list_all(rt, label_selector=selector)
        refs = [ObjectRef(rt, None, str((n.get("metadata") or {}).get("name"))) for n in listed.get("items") or []]
        if not refs:
            raise KubectlError(f"no nodes found matching the selector {selector!r}")
        return refs
    names = []
    for arg in args:
        kind, slash, name = arg.partition("/")
        if slash and s.resource(kind) != rt:
            raise KubectlError(f"{verb} works on nodes only, not {arg!r}")
        names.append(name if slash else arg)
    return [ObjectRef(rt, None, name) for name in names]


async def set_unschedulable(s: Session, ref: ObjectRef, desired: bool) -> str:
    """Cordon (``desired``) or uncordon one node; returns ``cordoned``, ``already uncordoned`` ..."""
    node = await s.client.get(ref.rt, ref.name)
    word = "cordoned" if desired else "uncordoned"
    if bool((node.get("spec") or {}).get("unschedulable")) == desired:
        return f"already {word}"
    await s.client.patch(ref.rt, ref.name, {"spec": {"unschedulable": True if desired else None}})
    return word


async def run_cordon(opts: GlobalOptions, verb: str, args: list[str], selector: str) -> int:
    """``cordon`` / ``uncordon`` every named node."""
    async with Session(opts) as s:
        refs = await node_refs(s, verb, args, selector)
        return await for_each(refs, lambda ref: set_unschedulable(s, ref, verb == "cordon"))


NodeArgs = Annotated[list[str] | None, typer.Argument(metavar="NODE", help="node name(s)")]


def cordon(ctx: typer.Context, nodes: NodeArgs = None, selector: SelectorOpt = "") -> None:
    """Mark a node as unschedulable."""
    code = asyncio.run(run_cordon(ctx.obj, "cordon", nodes or [], selector))
    if code:
        raise typer.Exit(code)


def uncordon(ctx: typer.Context, nodes: NodeArgs = None, selector: SelectorOpt = "") -> None:
    """Mark a node as schedulable again."""
    code = asyncio.run(run_cordon(ctx.obj, "uncordon", nodes or [], selector))
    if code:
        raise typer.Exit(code)


# ====================================================================== drain: which pods go
@dataclass
class DrainOptions:
    """The flags of one ``kubectl drain``."""

    force: bool = False
    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    grace_period: int | None = None
    timeout: float = 0.0
    pod_selector: str = ""
    disable_eviction: bool = False


@dataclass
class PodVerdict:
    """What drain does with one pod: ``delete`` it or not, and why (``warning``/``error``/``skip``/``""``)."""

    pod: Obj
    delete: bool
    kind: str = ""
    message: str = ""

    @property
    def ref(self) -> str:
        """``namespace/name``, as kubectl lists pods in drain messages."""
        meta = self.pod.get("metadata") or {}
        return f"{meta.get('namespace')}/{meta.get('name')}"


def _controller_kind(pod: Obj) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("kind") or "")
    return None


def _finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def judge(pod: Obj, o: DrainOptions) -> PodVerdict:
    """kubectl's drain filters in order (DaemonSet, mirror, local storage, unreplicated).

    A refusal or skip stops at that filter; otherwise the last filter's warning (if any)
    stands, as in kubectl's ``GetPodsForDeletion``.
    """
    verdict = PodVerdict(pod, True)
    controller = _controller_kind(pod)
    if controller == "DaemonSet" and not _finished(pod):
        if not o.ignore_daemonsets:
            return PodVerdict(pod, False, "error", DAEMONSET_FATAL)
        return PodVerdict(pod, False, "warning", DAEMONSET_WARNING)
    if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
        return PodVerdict(pod, False, "skip")
    local = any(v.get("emptyDir") is not None for v in (pod.get("spec") or {}).get("volumes") or [])
    if local and not _finished(pod):
        if not o.delete_emptydir_data:
            return PodVerdict(pod, False, "error", LOCAL_STORAGE_FATAL)
        verdict = PodVerdict(pod, True, "warning", LOCAL_STORAGE_WARNING)
    if controller is None and not _finished(pod):
        if not o.force:
            return PodVerdict(pod, False, "error", UNMANAGED_FATAL)
        verdict = PodVerdict(pod, True, "warning", UNMANAGED_WARNING)
    return verdict


def _grouped(verdicts: list[PodVerdict], kind: str) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for v in verdicts:
        if v.kind == kind:
            groups[v.message].append(v.ref)
    return groups


def refusal(verdicts: list[PodVerdict]) -> str | None:
    """``cannot delete <why>: ns/a, ns/b`` (several reasons: ``[..., ...]``), or None when none is refused."""
    found = [f"cannot delete {msg}: {', '.join(pods)}" for msg, pods in _grouped(verdicts, "error").items()]
    if not found:
        return None
    return found[0] if len(found) == 1 else "[" + ", ".join(found) + "]"


def warnings(verdicts: list[PodVerdict]) -> str:
    """``deleting Pods that declare no controller: ns/a; ignoring DaemonSet-managed Pods: ns/b`` ('' if none)."""
    return "; ".join(f"{msg}: {', '.join(pods)}" for msg, pods in _grouped(verdicts, "warning").items())


# ====================================================================== drain: doing it
#: How long kubectl waits before trying again an eviction a disruption budget refused (seconds).
EVICTION_RETRY = 5.0


def _go_duration(seconds: float) -> str:
    """Go's ``time.Duration`` text of whole seconds (``1m0s``, ``20s``), as kubectl prints its timeout."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


async def evict(s: Session, victim: ObjectRef, o: DrainOptions, deadline: float | None) -> None:
    """POST a policy/v1 Eviction for one pod until the apiserver takes it (kubectl's ``evictPods``):
    a 429 (a disruption budget refuses) is reported and tried again after 5 s; a pod already gone
    is done.  Raises KubectlError when ``deadline`` (``time.monotonic()``) passes or another error comes."""
    where = f'pods/"{victim.name}" -n "{victim.namespace}"'
    body: Obj = {"kind": "Eviction", "apiVersion": "policy/v1",
                 "metadata": {"name": victim.name, "namespace": victim.namespace}}
    if o.grace_period is not None:
        body["deleteOptions"] = {"gracePeriodSeconds": o.grace_period}
    path = resource_path(victim.rt, victim.namespace, victim.name, "eviction")
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            raise KubectlError(f"error when evicting {where}: global timeout reached: {_go_duration(o.timeout)}")
        print(f"evicting pod {victim.namespace}/{victim.name}", flush=True)
        try:
            await s.client.request("POST", path, body=body)
            return
        except errors.NotFound:
            return
        except errors.TooManyRequests as exc:
            print(f"error when evicting {where} (will retry after 5s): {exc.message}", file=sys.stderr, flush=True)
        except errors.APIError as exc:
            raise KubectlError(f"error when evicting {where}: {exc.message}") from None
        await asyncio.sleep(EVICTION_RETRY if deadline is None
                            else min(EVICTION_RETRY, max(deadline - time.monotonic(), 0.0)))


async def _report_eviction_failure(s: Session, ref: ObjectRef, victims: list[ObjectRef], why: str) -> None:
    """What kubectl writes when evictions failed (a global timeout): the pods still there, the node
    left to drain, the error; then exit 1 (``typer.Exit``)."""
    pending = [v for v in victims if not await gone(s, v)]
    lines = [f'There are pending pods in node "{ref.name}" when an error occurred: {why}',
             *(f"pod/{v.name}" for v in pending),
             f'error: unable to drain node "{ref.name}" due to error: {why}, continuing command...',
             "There are pending nodes to be drained:", f" {ref.name}", why]
    print("\n".join(lines), file=sys.stderr, flush=True)
    raise typer.Exit(1)


async def drain_node(s: Session, pod_rt: ResourceType, ref: ObjectRef, o: DrainOptions) -> None:
    """Cordon one node, evict (or delete) its pods and wait until they are gone.

    Raises KubectlError ``unable to drain node "n1" due to error: ...`` when pods are
    refused (before anything changed) or when they are not gone within ``o.timeout``.
    """
    await s.client.get(ref.rt, ref.name)  # NotFound before anything else
    listed = await s.client.list_all(pod_rt, None, label_selector=o.pod_selector or None,
                                     field_selector=f"spec.nodeName={ref.name}")
    verdicts = [judge(pod, o) for pod in listed.get("items") or []]
    refused = refusal(verdicts)
    if refused:
        raise KubectlError(f'unable to drain node "{ref.name}" due to error: {refused}')
    print(f"{ref.ref} {await set_unschedulable(s, ref, True)}", flush=True)
    warned = warnings(verdicts)
    if warned:
        print(f"Warning: {warned}", file=sys.stderr, flush=True)
    victims: list[ObjectRef] = []
    for v in verdicts:
        if v.delete:
            meta = v.pod.get("metadata") or {}
            victims.append(ObjectRef(pod_rt, meta.get("namespace"), str(meta.get("name")), meta.get("uid")))
    deadline = time.monotonic() + o.timeout if o.timeout > 0 else None
    if o.disable_eviction:
        for victim in victims:
            try:
                await s.client.delete(pod_rt, victim.name, victim.namespace, grace_period_seconds=o.grace_period,
                                      preconditions={"uid": victim.uid} if victim.uid else None)
            except errors.NotFound:
                pass
    else:
        results = await asyncio.gather(*(evict(s, victim, o, deadline) for victim in victims),
                                       return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        for r in failed:
            if not isinstance(r, KubectlError):
                raise r
        if failed:
            await _report_eviction_failure(s, ref, victims, ", ".join(str(r) for r in failed))
    word = "deleted" if o.disable_eviction else "evicted"
    left = await wait_gone(s, victims, max(deadline - time.monotonic(), 0.001) if deadline is not None else 0,
                           on_gone=lambda v: print(f"{v.ref} {word}", flush=True))
    if left:
        pending = ", ".join(f"{v.namespace}/{v.name}" for v in left)
        raise KubectlError(f'unable to drain node "{ref.name}" due to error: timed out waiting for the '
                           f"condition (pods still terminating: {pending})")


async def run_drain(opts: GlobalOptions, args: list[str], selector: str, o: DrainOptions) -> int:
    """``drain`` every named node in turn; stops at the first node that cannot be drained."""
    async with Session(opts) as s:
        refs = await node_refs(s, "drain", args, selector)
        pod_rt = s.resource("pods")

        async def act(ref: ObjectRef) -> str:
            await drain_node(s, pod_rt, ref, o)
            return "drained"

        return await for_each(refs, act)


def drain(
    ctx: typer.Context,
    nodes: NodeArgs = None,
    selector: SelectorOpt = "",
    force: Annotated[bool, typer.Option("--force", help="also delete pods no controller manages")] = False,
    ignore_daemonsets: Annotated[bool, typer.Option("--ignore-daemonsets",
                                                    help="leave DaemonSet-managed pods running")] = False,
    delete_emptydir_data: Annotated[bool, typer.Option("--delete-emptydir-data",
                                                       help="also delete pods with emptyDir volumes")] = False,
    grace_period: Annotated[int, typer.Option("--grace-period",
                                              help="seconds each pod gets to stop (-1: its own)")] = -1,
    timeout: Annotated[str, typer.Option("--timeout", help="give up after this long (e.g. 2m; 0: never)")] = "0s",
    pod_selector: Annotated[str, typer.Option("--pod-selector", help="only pods matching this label selector")] = "",
    disable_eviction: Annotated[bool, typer.Option(
        "--disable-eviction", help="delete pods instead of evicting them, bypassing PodDisruptionBudgets")] = False,
) -> None:
    """Drain a node in preparation for maintenance: cordon it, then evict its pods."""
    o = DrainOptions(force=force, ignore_daemonsets=ignore_daemonsets, delete_emptydir_data=delete_emptydir_data,
                     grace_period=grace_period if grace_period >= 0 else None, timeout=duration_flag(timeout),
                     pod_selector=pod_selector, disable_eviction=disable_eviction)
    code = asyncio.run(run_drain(ctx.obj, nodes or [], selector, o))
    if code:
        raise typer.Exit(code)
