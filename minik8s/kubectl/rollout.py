"""``kubectl rollout status|history|undo|restart|pause|resume`` for Deployments (``status`` and
``restart`` for DaemonSets and StatefulSets too).

kubectl's ``polymorphichelpers`` for ``apps/v1`` Deployments, on wire-form dicts:

* **status** follows the Deployment with a watch and prints kubectl's progress lines
  (observedGeneration against generation, then updated, old and available replicas),
  ending with ``deployment "web" successfully rolled out``; a Progressing condition with
  reason ProgressDeadlineExceeded is an error, as is ``--timeout``.
* **history** reads the Deployment's ReplicaSets (those it controls, by ownerReference
  uid): each one's ``deployment.kubernetes.io/revision`` and ``kubernetes.io/change-cause``.
* **undo** sets the Deployment's pod template to an old ReplicaSet's template minus the
  ``pod-template-hash`` label (the Deployment controller then reuses that ReplicaSet and
  raises its revision), and copies that ReplicaSet's annotations (change-cause) back.
* **restart** stamps ``kubectl.kubernetes.io/restartedAt`` on the pod template, which
  makes a new ReplicaSet; **pause** / **resume** flip ``spec.paused``.
* For a DaemonSet, **status** prints kubectl's ``DaemonSetStatusViewer`` lines (updated, then
  available pods against ``desiredNumberScheduled``; only for the RollingUpdate strategy) and
  **restart** stamps the same annotation, which the DaemonSet controller rolls out.
* For a StatefulSet, **status** prints kubectl's ``StatefulSetStatusViewer`` lines (ready pods
  against ``replicas``, then the partitioned roll-out or the revisions; only for the RollingUpdate
  strategy) and **restart** stamps the annotation too.
* For a DaemonSet or StatefulSet, **history** and **undo** read the ControllerRevisions it controls
  (``DaemonSetHistoryViewer``, ``StatefulSetHistoryViewer``, their rollbackers): the table has each
  revision's number and change-cause annotation, ``--revision`` prints the template its data
  restores (tabs unaligned, as kubectl's ``printTemplate``), and undo sends that data (the template
  with ``$patch: replace``) as a strategic merge patch, or says ``skipped rollback`` when the
  template already matches it.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.api.revisions import revision_data, revision_template
from minik8s.api.selectors import LabelSelector
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.manifests import LAST_APPLIED
from minik8s.kubectl.options import FilesOpt, RecursiveOpt, SelectorOpt, duration_flag
from minik8s.kubectl.resolve import plural_ref
from minik8s.kubectl.sections import Writer, write_pod_template
from minik8s.kubectl.selection import ObjectRef, for_each, select
from minik8s.kubectl.session import GlobalOptions, Session

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
CHANGE_CAUSE = "kubernetes.io/change-cause"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
POD_TEMPLATE_HASH = "pod-template-hash"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
#: Deployment annotations a rollback keeps from the Deployment instead of taking the ReplicaSet's.
ROLLBACK_KEEP = (LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO)

app = typer.Typer(name="rollout", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Manage the rollout of one or many resources (Deployments, DaemonSets, StatefulSets).")


# ====================================================================== pure helpers
def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def group_kind(rt: ResourceType) -> str:
    """``Deployment.apps``, ``Pod`` (Go's ``GroupKind.String()``, used in kubectl's messages)."""
    return f"{rt.kind}.{rt.group}" if rt.group else rt.kind


def is_deployment(rt: ResourceType) -> bool:
    """The type is ``apps`` Deployment (the only kind with rollouts here)."""
    return rt.group == "apps" and rt.kind == "Deployment"


def is_daemonset(rt: ResourceType) -> bool:
    """The type is ``apps`` DaemonSet (``rollout status`` and ``rollout restart`` only)."""
    return rt.group == "apps" and rt.kind == "DaemonSet"


def has_revisions(rt: ResourceType) -> bool:
    """The type keeps its history in ControllerRevisions (``apps`` DaemonSet and StatefulSet)."""
    return rt.group == "apps" and rt.kind in ("DaemonSet", "StatefulSet")


def is_statefulset(rt: ResourceType) -> bool:
    """The type is ``apps`` StatefulSet (``rollout status`` and ``rollout restart`` only)."""
    return rt.group == "apps" and rt.kind == "StatefulSet"


def statefulset_status_message(sts: Obj) -> tuple[str, bool]:
    """kubectl's ``StatefulSetStatusViewer.Status``: (the progress line, rollout finished).

    Raises KubectlError for a StatefulSet whose updateStrategy is not RollingUpdate.
    """
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    strategy = spec.get("updateStrategy") or {}
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        raise KubectlError("rollout status is only available for RollingUpdate strategy type")
    observed = int(status.get("observedGeneration") or 0)
    if observed == 0 or int(_meta(sts).get("generation") or 0) > observed:
        return "Waiting for statefulset spec update to be observed...", False
    replicas = spec.get("replicas")
    ready = int(status.get("readyReplicas") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    if replicas is not None and ready < int(replicas):
        return f"Waiting for {int(replicas) - ready} pods to be ready...", False
    rolling = strategy.get("rollingUpdate")
    if isinstance(rolling, dict):
        partition = rolling.get("partition")
        if replicas is not None and partition is not None and updated < int(replicas) - int(partition):
            return (f"Waiting for partitioned roll out to finish: {updated} out of "
                    f"{int(replicas) - int(partition)} new pods have been updated..."), False
        return f"partitioned roll out complete: {updated} new pods have been updated...", True
    if status.get("updateRevision") != status.get("currentRevision"):
        return (f"waiting for statefulset rolling update to complete {updated} pods at revision "
                f"{status.get('updateRevision')}..."), False
    return (f"statefulset rolling update complete {int(status.get('currentReplicas') or 0)} pods at revision "
            f"{status.get('currentRevision')}..."), True


def daemonset_status_message(ds: Obj) -> tuple[str, bool]:
    """kubectl's ``DaemonSetStatusViewer.Status``: (the progress line, rollout finished).

    Raises KubectlError for a DaemonSet whose updateStrategy is not RollingUpdate.
    """
    name = _meta(ds).get("name") or ""
    spec, status = ds.get("spec") or {}, ds.get("status") or {}
    if ((spec.get("updateStrategy") or {}).get("type") or "RollingUpdate") != "RollingUpdate":
        raise KubectlError("rollout status is only available for RollingUpdate strategy type")
    if int(_meta(ds).get("generation") or 0) > int(status.get("observedGeneration") or 0):
        return "Waiting for daemon set spec update to be observed...", False
    desired = int(status.get("desiredNumberScheduled") or 0)
    updated = int(status.get("updatedNumberScheduled") or 0)
    available = int(status.get("numberAvailable") or 0)
    prefix = f'Waiting for daemon set "{name}" rollout to finish: '
    if updated < desired:
        return f"{prefix}{updated} out of {desired} new pods have been updated...", False
    if available < desired:
        return f"{prefix}{available} of {desired} updated pods are available...", False
    return f'daemon set "{name}" successfully rolled out', True


def revision_of(obj: Obj) -> int:
    """The ``deployment.kubernetes.io/revision`` annotation (0 when unset); ValueError when not a number."""
    raw = (_meta(obj).get("annotations") or {}).get(REVISION)
    return int(raw) if raw not in (None, "") else 0


def status_message(d: Obj, revision: int = 0) -> tuple[str, bool]:
    """kubectl's ``DeploymentStatusViewer.Status``: (the progress line, rollout finished).

    Raises KubectlError when ``revision`` (> 0) is not the running revision and when the
    Deployment's Progressing condition says ProgressDeadlineExceeded.
    """
    name = _meta(d).get("name") or ""
    if revision > 0:
        try:
            running = revision_of(d)
        except ValueError as exc:
            raise KubectlError(f'cannot get the revision of deployment "{name}": {exc}') from None
        if running != revision:
            raise KubectlError(f"desired revision ({revision}) is different from the running revision ({running})")
    spec, status = d.get("spec") or {}, d.get("status") or {}
    if int(_meta(d).get("generation") or 0) > int(status.get("observedGeneration") or 0):
        return "Waiting for deployment spec update to be observed...", False
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == TIMED_OUT_REASON:
            raise KubectlError(f'deployment "{name}" exceeded its progress deadline')
    replicas = spec.get("replicas")
    updated = int(status.get("updatedReplicas") or 0)
    current = int(status.get("replicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    prefix = f'Waiting for deployment "{name}" rollout to finish: '
    if replicas is not None and updated < int(replicas):
        return f"{prefix}{updated} out of {replicas} new replicas have been updated...", False
    if current > updated:
        return f"{prefix}{current - updated} old replicas are pending termination...", False
    if available < updated:
        return f"{prefix}{available} of {updated} updated replicas are available...", False
    return f'deployment "{name}" successfully rolled out', True


def controlled_by(obj: Obj, owner: Obj) -> bool:
    """``obj`` has a controller ownerReference to ``owner``'s uid (``metav1.IsControlledBy``)."""
    uid = _meta(owner).get("uid")
    return any(ref.get("controller") and ref.get("uid") == uid for ref in _meta(obj).get("ownerReferences") or [])


def history(rss: list[Obj]) -> dict[int, Obj]:
    """Revision → pod template (annotated with the ReplicaSet's change-cause), as ``ViewHistory`` builds it.

    ReplicaSets whose revision annotation is not a number are left out.
    """
    out: dict[int, Obj] = {}
    for rs in rss:
        try:
            rev = revision_of(rs)
        except ValueError:
            continue
        template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
        cause = (_meta(rs).get("annotations") or {}).get(CHANGE_CAUSE)
        if cause:
            template.setdefault("metadata", {}).setdefault("annotations", {})[CHANGE_CAUSE] = cause
        out[rev] = template
    return out


def history_text(rss: list[Obj], revision: int = 0) -> str:
    """The body ``rollout history`` prints: the REVISION / CHANGE-CAUSE table, or one revision's template.

    Raises KubectlError ``unable to find the specified revision`` for a ``revision`` not in the history.
    """
    info = history(rss)
    if revision > 0:
        if revision not in info:
            raise KubectlError("unable to find the specified revision")
        w = Writer()
        write_pod_template(w, info[revision])
        return w.text()
    if not info:
        return "No rollout history found."
    rows = [["REVISION", "CHANGE-CAUSE"]]
    for rev in sorted(info):
        cause = (_meta(info[rev]).get("annotations") or {}).get(CHANGE_CAUSE) or NONE
        rows.append([str(rev), cause])
    return "\n".join(printing.tabwrite(rows, minwidth=0, padding=2)) + "\n"


def rollback_target(d: Obj, rss: list[Obj], to_revision: int) -> Obj:
    """The ReplicaSet ``rollout undo`` returns to: revision ``to_revision``, or (0) the one before the latest.

    Raises KubectlError ``unable to find specified revision N in history`` or
    ``no rollout history found for deployment "web"`` (kubectl's ``deploymentRevision``).
    """
    if to_revision < 0:
        raise KubectlError(f"unable to find specified revision {to_revision} in history")
    ranked: list[tuple[int, Obj]] = []
    for rs in rss:
        try:
            ranked.append((revision_of(rs), rs))
        except ValueError:
            continue
    if to_revision > 0:
        for rev, rs in ranked:
            if rev == to_revision:
                return rs
        raise KubectlError(f"unable to find specified revision {to_revision} in history")
    ranked.sort(key=lambda pair: pair[0])
    if len(ranked) < 2:
        raise KubectlError(f'no rollout history found for deployment "{_meta(d).get("name")}"')
    return ranked[-2][1]


def template_without_hash(rs: Obj) -> Obj:
    """A ReplicaSet's pod template minus the ``pod-template-hash`` label (what the Deployment held)."""
    template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
    labels = (template.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
    return template


def rollback_patch(d: Obj, rs: Obj) -> list[Obj]:
    """The JSON patch ``rollout undo`` sends: the ReplicaSet's template, and its annotations
    over the Deployment's (but for the revision bookkeeping ones, which stay)."""
    current = _meta(d).get("annotations") or {}
    annotations = {k: current[k] for k in ROLLBACK_KEEP if k in current}
    annotations.update({k: v for k, v in (_meta(rs).get("annotations") or {}).items() if k not in ROLLBACK_KEEP})
    return [{"op": "replace", "path": "/spec/template", "value": template_without_hash(rs)},
            {"op": "add", "path": "/metadata/annotations", "value": annotations}]


def revisions_history_text(revisions: list[Obj], revision: int = 0) -> str:
    """``printHistory`` of ControllerRevisions: the REVISION / CHANGE-CAUSE table (each revision's
    ``kubernetes.io/change-cause``), or the template of revision ``revision``.

    Raises KubectlError ``unable to find the specified revision``.
    """
    info = {int(r.get("revision") or 0): r for r in revisions}
    if not info:
        return "No rollout history found."
    if revision > 0:
        if revision not in info:
            raise KubectlError("unable to find the specified revision")
        w = Writer(aligned=False)  # kubectl's printTemplate: a PrefixWriter without a tabwriter
        write_pod_template(w, revision_template(info[revision]))
        return w.text()
    rows = [["REVISION", "CHANGE-CAUSE"]]
    for rev in sorted(info):
        rows.append([str(rev), (_meta(info[rev]).get("annotations") or {}).get(CHANGE_CAUSE) or NONE])
    return "\n".join(printing.tabwrite(rows, minwidth=0, padding=2)) + "\n"


def revision_rollback_target(revisions: list[Obj], to_revision: int) -> Obj:
    """The ControllerRevision ``rollout undo`` returns to (``findHistory``): ``to_revision``, or (0) the
    second highest.

    Raises KubectlError ``no last revision to roll back to`` or ``unable to find specified revision N
    in history``.
    """
    if to_revision < 0:
        raise KubectlError(f"unable to find specified revision {to_revision} in history")
    if to_revision == 0:
        if len(revisions) <= 1:
            raise KubectlError("no last revision to roll back to")
        return sorted(revisions, key=lambda r: int(r.get("revision") or 0))[-2]
    for rev in revisions:
        if int(rev.get("revision") or 0) == to_revision:
            return rev
    raise KubectlError(f"unable to find specified revision {to_revision} in history")


# ====================================================================== API helpers
async def owned_revisions(s: Session, obj: Obj) -> list[Obj]:
    """The ControllerRevisions ``obj`` controls (``controlledHistoryV1``: selected by its selector,
    controller ownerReference to its uid)."""
    rt = s.registry.by_kind("apps/v1", "ControllerRevision")
    if rt is None:
        raise KubectlError("the server doesn't have a resource type \"controllerrevisions\"")
    try:
        selector = str(LabelSelector.from_dict((obj.get("spec") or {}).get("selector")))
    except ValueError as exc:
        raise KubectlError(f"invalid selector of {_meta(obj).get('name')}: {exc}") from None
    listed = await s.client.list_all(rt, _meta(obj).get("namespace"), label_selector=selector or None)
    return [r for r in listed.get("items") or [] if controlled_by(r, obj)]



async def owned_replicasets(s: Session, d: Obj) -> list[Obj]:
    """The ReplicaSets ``d`` controls (selected by its selector, controller ownerReference to its uid)."""
    rs_rt = s.registry.by_kind("apps/v1", "ReplicaSet")
    if rs_rt is None:
        raise KubectlError("the server doesn't have a resource type \"replicasets\"")
    try:
        selector = str(LabelSelector.from_dict((d.get("spec") or {}).get("selector")))
    except ValueError as exc:
        raise KubectlError(f"invalid selector of deployment {_meta(d).get('name')}: {exc}") from None
    listed = await s.client.list_all(rs_rt, _meta(d).get("namespace"), label_selector=selector or None)
    return [rs for rs in listed.get("items") or [] if controlled_by(rs, d)]


async def fetch_deployment(s: Session, ref: ObjectRef, unsupported: str) -> Obj:
    """GET the Deployment ``ref`` names; KubectlError ``unsupported`` when ``ref`` is another kind."""
    if not is_deployment(ref.rt):
        raise KubectlError(unsupported)
    return await s.client.get(ref.rt, ref.name, ref.namespace)


async def targets(s: Session, args: list[str], files: list[str], recursive: bool, selector: str) -> list[ObjectRef]:
    """The objects a rollout subcommand names (``deployment/web``, ``deployment web``, ``-f``, ``-l``)."""
    refs = await select(s, args, files, recursive, selector, verb="rollout")
    if not refs:
        raise KubectlError("no objects passed to rollout")
    return refs


async def run_each(opts: GlobalOptions, args: list[str], files: list[str], recursive: bool, selector: str,
                   action: Callable[[Session, ObjectRef], Awaitable[str]]) -> int:
    """Resolve the named objects and run ``action`` on each (printing ``<ref> <result>``, see ``for_each``)."""
    async with Session(opts) as s:
        refs = await targets(s, args, files, recursive, selector)
        return await for_each(refs, lambda ref: action(s, ref))


def _run(coro: Any) -> None:
    code = asyncio.run(coro)
    if code:
        raise typer.Exit(code)


# ====================================================================== status
class StatusPrinter:
    """Prints each new progress line once; remembers whether the rollout is done."""

    def __init__(self, revision: int, daemonset: bool = False, statefulset: bool = False) -> None:
        self.revision = revision
        self.daemonset = daemonset
        self.statefulset = statefulset
        self.last = ""

    def show(self, d: Obj) -> bool:
        """Print ``d``'s status line if it changed; True when the rollout finished."""
        if self.statefulset:
            message, done = statefulset_status_message(d)
        elif self.daemonset:
            message, done = daemonset_status_message(d)
        else:
            message, done = status_message(d, self.revision)
        if message != self.last:
            print(message, flush=True)
            self.last = message
        return done


async def follow(s: Session, ref: ObjectRef, watch: bool, revision: int) -> None:
    """Print the rollout's progress until it finishes (or once, without ``watch``).

    Lists the Deployment, then watches it from that resourceVersion (relisting on 410
    Gone, reconnecting when the server ends the stream). Raises KubectlError
    ``object has been deleted`` when it goes away.
    """
    printer = StatusPrinter(revision, is_daemonset(ref.rt), is_statefulset(ref.rt))
    d = await s.client.get(ref.rt, ref.name, ref.namespace)
    if printer.show(d) or not watch:
        return
    uid = _meta(d).get("uid")
    rv = str(_meta(d).get("resourceVersion") or "")
    field_selector = f"metadata.name={ref.name}"
    while True:
        try:
            async for event in s.client.watch(ref.rt, ref.namespace, resource_version=rv or None,
                                              field_selector=field_selector):
                etype, obj = event.get("type"), event.get("object") or {}
                if etype == "ERROR":
                    raise errors.from_status(int(obj.get("code") or 500), obj)
                rv = str(_meta(obj).get("resourceVersion") or rv)
                if etype == "BOOKMARK":
                    continue
                if etype == "DELETED" or _meta(obj).get("uid") != uid:
                    raise KubectlError("object has been deleted")
                if printer.show(obj):
                    return
        except errors.Gone:
            try:
                d = await s.client.get(ref.rt, ref.name, ref.namespace)
            except errors.NotFound:
                raise KubectlError("object has been deleted") from None
            if _meta(d).get("uid") != uid:
                raise KubectlError("object has been deleted") from None
            rv = str(_meta(d).get("resourceVersion") or "")
            if printer.show(d):
                return
        await asyncio.sleep(0.2)


async def run_status(opts: GlobalOptions, args: list[str], files: list[str], recursive: bool, selector: str,
                     watch: bool, timeout: float, revision: int) -> int:
    """``rollout status``: follow one Deployment's, DaemonSet's or StatefulSet's rollout (``timeout`` seconds,
    0 = no limit)."""
    async with Session(opts) as s:
        refs = await targets(s, args, files, recursive, selector)
        if len(refs) != 1:
            raise KubectlError("rollout status is only supported on individual resources and resource "
                               "collections are not supported yet")
        ref = refs[0]
        if not (is_deployment(ref.rt) or is_daemonset(ref.rt) or is_statefulset(ref.rt)):
            raise KubectlError(f"no status viewer has been implemented for {group_kind(ref.rt)}")
        try:
            await asyncio.wait_for(follow(s, ref, watch, revision), timeout if timeout > 0 else None)
        except TimeoutError:
            raise KubectlError("timed out waiting for the condition") from None
        return 0


Args = Annotated[list[str] | None, typer.Argument(metavar="TYPE NAME | TYPE/NAME",
                                                  help="deployment/NAME, daemonset/NAME, statefulset/NAME")]


@app.command("status")
def status(
    ctx: typer.Context,
    args: Args = None,
    watch: Annotated[bool, typer.Option("-w", "--watch/--no-watch", help="watch until the rollout finishes")] = True,
    timeout: Annotated[str, typer.Option("--timeout", help="give up after this long (e.g. 5m; 0: never)")] = "0s",
    revision: Annotated[int, typer.Option("--revision", help="require this revision to be the running one")] = 0,
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    selector: SelectorOpt = "",
) -> None:
    """Show the status of the rollout, waiting for it to finish."""
    wait = duration_flag(timeout)
    _run(run_status(ctx.obj, args or [], filename or [], recursive, selector, watch, wait, revision))


# ====================================================================== history
async def history_one(s: Session, ref: ObjectRef, revision: int) -> str:
    """One Deployment's, DaemonSet's or StatefulSet's history (the text after ``deployment.apps/web``), or
    one revision's template."""
    if has_revisions(ref.rt):
        obj = await s.client.get(ref.rt, ref.name, ref.namespace)
        body = revisions_history_text(await owned_revisions(s, obj), revision)
        return (f"with revision #{revision}" if revision > 0 else "") + "\n" + body
    d = await fetch_deployment(s, ref, f'no history viewer has been implemented for "{group_kind(ref.rt)}"')
    body = history_text(await owned_replicasets(s, d), revision)
    return (f"with revision #{revision}" if revision > 0 else "") + "\n" + body


@app.command("history")
def history_cmd(
    ctx: typer.Context,
    args: Args = None,
    revision: Annotated[int, typer.Option("--revision", help="show the pod template of this revision")] = 0,
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    selector: SelectorOpt = "",
) -> None:
    """View previous rollout revisions and configurations."""
    _run(run_each(ctx.obj, args or [], filename or [], recursive, selector,
                  lambda s, ref: history_one(s, ref, revision)))


# ====================================================================== undo
async def undo_one(s: Session, ref: ObjectRef, to_revision: int) -> str:
    """Roll one Deployment, DaemonSet or StatefulSet back; returns ``rolled back`` or ``skipped rollback (...)``."""
    if has_revisions(ref.rt):
        obj = await s.client.get(ref.rt, ref.name, ref.namespace)
        target = revision_rollback_target(await owned_revisions(s, obj), to_revision)
        if target.get("data") == revision_data(obj):
            return f"skipped rollback (current template already matches revision {to_revision})"
        await s.client.patch(ref.rt, ref.name, target.get("data"), ref.namespace, patch_type="strategic")
        return "rolled back"
    d = await fetch_deployment(s, ref, f'no rollbacker has been implemented for "{group_kind(ref.rt)}"')
    if (d.get("spec") or {}).get("paused"):
        raise KubectlError("you cannot rollback a paused deployment; resume it first with "
                           "'kubectl rollout resume' and try again")
    rs = rollback_target(d, await owned_replicasets(s, d), to_revision)
    if template_without_hash(rs) == (d.get("spec") or {}).get("template"):
        return f"skipped rollback (current template already matches revision {revision_of(rs)})"
    await s.client.patch(ref.rt, ref.name, rollback_patch(d, rs), ref.namespace, patch_type="json")
    return "rolled back"


@app.command("undo")
def undo(
    ctx: typer.Context,
    args: Args = None,
    to_revision: Annotated[int, typer.Option("--to-revision", help="the revision to go back to (0: previous)")] = 0,
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    selector: SelectorOpt = "",
) -> None:
    """Roll back to a previous rollout."""
    _run(run_each(ctx.obj, args or [], filename or [], recursive, selector,
                  lambda s, ref: undo_one(s, ref, to_revision)))


# ====================================================================== restart / pause / resume
def restart_stamp(now: dt.datetime | None = None) -> str:
    """The restartedAt value: local time in RFC 3339 (Go's ``time.Now().Format(time.RFC3339)``)."""
    when = (now or dt.datetime.now(dt.UTC)).astimezone()
    text = when.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


async def flip(s: Session, ref: ObjectRef, verb: str) -> str:
    """``restart``, ``pause`` or ``resume`` one Deployment (``restart`` also a DaemonSet or StatefulSet); returns
    ``restarted`` / ``paused`` / ``resumed``.

    Raises KubectlError with kubectl's wording for other kinds (``pausing is not
    supported``), a paused Deployment's restart, an already paused / not paused one.
    """
    who = f'{plural_ref(ref.rt)} "{ref.name}"'
    gerund = {"restart": "restarting", "pause": "pausing", "resume": "resuming"}[verb]
    if verb == "restart" and (is_daemonset(ref.rt) or is_statefulset(ref.rt)):
        d = await s.client.get(ref.rt, ref.name, ref.namespace)
    else:
        d = await fetch_deployment(s, ref, f"{who} {gerund} is not supported")
    paused = bool((d.get("spec") or {}).get("paused"))
    patch: Obj
    if verb == "pause":
        if paused:
            raise KubectlError(f"{who} is already paused")
        patch = {"spec": {"paused": True}}
    elif verb == "resume":
        if not paused:
            raise KubectlError(f"{who} is not paused")
        patch = {"spec": {"paused": None}}
    else:
        if paused:
            raise KubectlError(f"{who} can't restart paused deployment (run rollout resume first)")
        stamp = restart_stamp()
        current = ((((d.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations") or {})
        if current.get(RESTARTED_AT) == stamp:
            raise KubectlError(f"failed to create patch for {ref.name}: if restart has already been triggered "
                               "within the past second, please wait before attempting to trigger another")
        patch = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: stamp}}}}}
    await s.client.patch(ref.rt, ref.name, patch, ref.namespace, patch_type="strategic")
    return {"restart": "restarted", "pause": "paused", "resume": "resumed"}[verb]


@app.command("restart")
def restart(ctx: typer.Context, args: Args = None, filename: FilesOpt = None, recursive: RecursiveOpt = False,
            selector: SelectorOpt = "") -> None:
    """Restart a Deployment's, DaemonSet's or StatefulSet's pods (a new rollout of the same template)."""
    _run(run_each(ctx.obj, args or [], filename or [], recursive, selector, lambda s, ref: flip(s, ref, "restart")))


@app.command("pause")
def pause(ctx: typer.Context, args: Args = None, filename: FilesOpt = None, recursive: RecursiveOpt = False,
          selector: SelectorOpt = "") -> None:
    """Mark a Deployment as paused: template changes are not rolled out until it is resumed."""
    _run(run_each(ctx.obj, args or [], filename or [], recursive, selector, lambda s, ref: flip(s, ref, "pause")))


@app.command("resume")
def resume(ctx: typer.Context, args: Args = None, filename: FilesOpt = None, recursive: RecursiveOpt = False,
           selector: SelectorOpt = "") -> None:
    """Resume a paused Deployment."""
    _run(run_each(ctx.obj, args or [], filename or [], recursive, selector, lambda s, ref: flip(s, ref, "resume")))

