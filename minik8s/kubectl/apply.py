"""``kubectl apply -f`` and what ``kubectl create -f`` sends (client-side apply).

``apply`` keeps the manifest as applied in the annotation
``kubectl.kubernetes.io/last-applied-configuration``; on the next apply it sends
what changed since then (:func:`apply_patch`) as a strategic merge patch, so
fields set by the server or by other clients are left alone.  ``--dry-run=server`` sends the same
writes with ``dryRun=All`` (``created (server dry run)``); ``--dry-run=client`` sends none
(``configured (dry run)``, printing the live object as kubectl 1.32 does).

``-k DIR`` applies what the kustomization in DIR builds (:mod:`minik8s.kubectl.kustomize`).
``--prune`` (with ``-l`` or ``--all``) then deletes the objects of the prune set that carry the
last-applied annotation (kubectl's mark of an applied object) and were not applied this time:
the namespaced kinds in every namespace an applied object went to, the cluster-scoped ones
cluster-wide, each printed ``<kind>.<group>/<name> pruned`` (see :func:`prune`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from dataclasses import dataclass, field
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.k8sopenapi import PatchSchema
from minik8s.api.patch import strategic_diff
from minik8s.api.registry import ResourceType
from minik8s.client.rest import PATCH_TYPES, ServerUnavailable, resource_path
from minik8s.kubectl import manifests
from minik8s.kubectl.creating import DryRunOpt, OutputOpt, check_flags
from minik8s.kubectl.errors import KubectlError, report_failure
from minik8s.kubectl.manifests import LAST_APPLIED, Planned, applied_config, encode, plan
from minik8s.kubectl.options import FilesOpt, KustomizeOpt, RecursiveOpt, SelectorOpt
from minik8s.kubectl.resolve import object_ref, plural_ref
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import prints_object, write_object


def apply_patch(last_applied: Obj | None, new: Obj, annotation: str) -> Obj:
    """What ``apply`` sends: the change since ``last_applied`` plus the new annotation.

    Returns ``{}`` when nothing changed (the object is ``unchanged``).
    """
    base = copy.deepcopy(last_applied) if last_applied else {}
    patch = strategic_diff(base, new, PatchSchema.of_kind(str(new.get("apiVersion") or ""), str(new.get("kind") or "")))
    if not patch and last_applied is not None:
        return {}
    patch.setdefault("metadata", {}).setdefault("annotations", {})
    if patch["metadata"]["annotations"] is None:
        patch["metadata"]["annotations"] = {}
    patch["metadata"]["annotations"][LAST_APPLIED] = annotation
    return patch


class ApplyFailed(Exception):
    """A server error while ``verb`` (``creating``, ``applying patch``) one object."""

    def __init__(self, verb: str, error: errors.APIError) -> None:
        super().__init__(error.message)
        self.verb = verb
        self.error = error


async def apply_one(s: Session, p: Planned, dry_run: str = "none") -> str:
    """Create or patch one object; returns ``created``, ``configured`` or ``unchanged``.

    ``dry_run``: ``server`` sends the writes with ``dryRun=All`` (validated, not stored),
    ``client`` sends no write.  Raises ApplyFailed for server errors about the object,
    ServerUnavailable when the server cannot be reached.
    """
    return (await apply_object(s, p, dry_run))[0]


async def apply_object(s: Session, p: Planned, dry_run: str = "none") -> tuple[str, Obj]:
    """:func:`apply_one`, with the object as it is (or, for a dry run, would be) after the apply."""
    config = applied_config(p)
    annotation = encode(config)
    try:
        live = await s.client.get(p.rt, p.name, p.namespace)
    except ServerUnavailable:
        raise
    except errors.NotFound:
        body = copy.deepcopy(config)
        body["metadata"]["annotations"][LAST_APPLIED] = annotation
        if dry_run == "client":
            return "created", body
        try:
            created = await s.client.create(p.rt, body, p.namespace, dry_run=dry_run == "server")
        except ServerUnavailable:
            raise
        except errors.APIError as exc:
            raise ApplyFailed("creating", exc) from exc
        return "created", created
    except errors.APIError as exc:
        raise ApplyFailed("retrieving current configuration of", exc) from exc
    if dry_run == "client":  # kubectl 1.32 computes no patch: the live object, unpatched, "configured"
        return "configured", live
    live_annotation = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    last: Obj | None = None
    if live_annotation:
        try:
            decoded = json.loads(live_annotation)
            last = decoded if isinstance(decoded, dict) else None
        except ValueError:
            last = None
    else:
        print(f"Warning: resource {plural_ref(p.rt)}/{p.name} is missing the {LAST_APPLIED} annotation which "
              "is required by kubectl apply. kubectl apply should only be used on resources created "
              "declaratively by either kubectl create --save-config or kubectl apply. The missing "
              "annotation will be patched automatically.", file=sys.stderr)
    patch = apply_patch(last, config, annotation)
    if not patch:
        return "unchanged", live
    try:
        if dry_run == "server":  # as kubectl sends it
            patched = await s.client.request(
                "PATCH", resource_path(p.rt, p.namespace, p.name), body=patch, content_type=PATCH_TYPES["strategic"],
                params={"dryRun": "All", "fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"})
        else:
            patched = await s.client.patch(p.rt, p.name, patch, p.namespace, patch_type="strategic")
    except ServerUnavailable:
        raise
    except errors.APIError as exc:
        raise ApplyFailed("applying patch to", exc) from exc
    return "configured", patched


#: kubectl 1.32's default prune set (group, version, kind): the namespaced kinds, then the cluster-scoped.
DEFAULT_PRUNE_NAMESPACED = [("", "v1", "ConfigMap"), ("", "v1", "Endpoints"), ("", "v1", "PersistentVolumeClaim"),
                            ("", "v1", "Pod"), ("", "v1", "ReplicationController"), ("", "v1", "Secret"),
                            ("", "v1", "Service"), ("batch", "v1", "Job"), ("batch", "v1", "CronJob"),
                            ("networking.k8s.io", "v1", "Ingress"), ("apps", "v1", "DaemonSet"),
                            ("apps", "v1", "Deployment"), ("apps", "v1", "ReplicaSet"), ("apps", "v1", "StatefulSet")]
DEFAULT_PRUNE_CLUSTER = [("", "v1", "Namespace"), ("", "v1", "PersistentVolume")]


@dataclass
class PruneOptions:
    """``--prune`` and its companions: the selector (``-l``), ``--all`` and the allowlist
    (``group/version/kind`` strings, ``core`` for the core group)."""

    selector: str = ""
    all_: bool = False
    allowlist: list[str] = field(default_factory=list)


def prune_types(s: Session, allowlist: list[str], warn: bool = True) -> tuple[list[ResourceType], list[ResourceType]]:
    """The (namespaced, cluster-scoped) types to prune: the allowlist's, else kubectl 1.32's default set
    (and, with ``warn``, kubectl's klog warning that the default set will lose the cluster-scoped kinds).

    Raises KubectlError for an allowlist entry that is not ``group/version/kind`` or names no type.
    """
    entries: list[tuple[str, str, str]] = []
    for text in allowlist:
        parts = text.split("/")
        if len(parts) != 3:
            raise KubectlError(f"invalid GroupVersionKind format: {text}, please follow <group/version/kind>")
        group = "" if parts[0] == "core" else parts[0]
        entries.append((group, parts[1], parts[2]))
    if not entries:
        entries = DEFAULT_PRUNE_NAMESPACED + DEFAULT_PRUNE_CLUSTER
    if not allowlist and warn:
        # kubectl 1.32 always has a namespace (the kubeconfig's, else "default"), so it always warns
        klog_warning("prune.go:71", "Deprecated: kubectl apply will no longer prune non-namespaced resources by "
                     "default when used with the --namespace flag in a future release. To preserve the current "
                     "behaviour, list the resources you want to target explicitly in the --prune-allowlist flag.")
    namespaced: list[ResourceType] = []
    cluster: list[ResourceType] = []
    for group, version, kind in entries:
        rt = s.registry.by_kind(f"{group}/{version}" if group else version, kind)
        if rt is None:
            if allowlist:
                raise KubectlError(f'no matches for kind "{kind}" in version "{group}/{version}"'
                                   if group else f'no matches for kind "{kind}" in version "{version}"')
            continue
        (namespaced if rt.namespaced else cluster).append(rt)
    return namespaced, cluster


def klog_warning(where: str, message: str) -> None:
    """A warning on stderr in klog's format, as kubectl logs it: ``W1128 04:51:13.290982    9589 where] message``."""
    import datetime as dt
    import os

    now = dt.datetime.now()
    print(f"W{now:%m%d %H:%M:%S.%f} {os.getpid():7d} {where}] {message}", file=sys.stderr, flush=True)


async def prune(s: Session, o: PruneOptions, visited: set[str], namespaces: list[str], dry_run: str,
                output: str = "") -> None:
    """Delete what kubectl's prune deletes: every object of the prune types matching ``o.selector``
    that has the last-applied annotation and whose uid is not in ``visited``, in each namespace of
    ``namespaces`` (in the order they were first applied to), then the cluster-scoped ones; each
    printed as ``<type>/<name> pruned`` (with `` (dry run)`` or `` (server dry run)``), as ``<type>/<name>``
    with ``-o name``, as the object with ``-o yaml|json``."""
    namespaced, cluster = prune_types(s, o.allowlist)
    suffix = {"client": " (dry run)", "server": " (server dry run)"}.get(dry_run, "")
    passes = [(ns, rt) for ns in namespaces for rt in namespaced] + [(None, rt) for rt in cluster]
    for ns, rt in passes:
        listed = await s.client.list_all(rt, ns, label_selector=o.selector or None)
        for item in listed.get("items") or []:
            meta = item.get("metadata") or {}
            if LAST_APPLIED not in (meta.get("annotations") or {}) or meta.get("uid") in visited:
                continue
            name = str(meta.get("name"))
            if dry_run != "client":
                params: dict[str, str] = {"dryRun": "All"} if dry_run == "server" else {}
                try:
                    await s.client.request("DELETE", resource_path(rt, ns, name), params=params or None,
                                           body={"kind": "DeleteOptions", "apiVersion": "v1",
                                                 "propagationPolicy": "Background"})
                except errors.NotFound:
                    continue
            if prints_object(output):
                write_object(output, item)
            elif output == "name":
                print(object_ref(rt, name), flush=True)
            else:
                print(f"{object_ref(rt, name)} pruned{suffix}", flush=True)


async def run_apply(opts: GlobalOptions, files: list[str], recursive: bool, dry_run: str = "none",
                    output: str = "", kustomize: str | None = None, pruning: PruneOptions | None = None,
                    selector: str = "") -> int:
    """Apply every object in ``files`` or of the kustomization ``kustomize`` (``dry_run``: none,
    client or server; ``output``: "", yaml, json or name; ``selector``: only the objects whose labels
    match), then prune (``pruning``); returns 1 when any object failed."""
    items = manifests.load(files, recursive, "apply", kustomize)
    if selector:
        from minik8s.api.selectors import LabelSelector
        try:
            wanted = LabelSelector.parse(selector)
        except ValueError as exc:
            raise KubectlError(str(exc)) from None
        items = [m for m in items if wanted.matches((m.obj.get("metadata") or {}).get("labels") or {})]
    failed = 0
    visited: set[str] = set()
    namespaces: list[str] = []
    async with Session(opts) as s:
        planned = plan(s, items, opts.namespace)
        if pruning is not None:
            prune_types(s, pruning.allowlist, warn=False)  # a bad allowlist fails before anything is applied
        for p in planned:
            if p.namespace and p.namespace not in namespaces:
                namespaces.append(p.namespace)
            try:
                result, obj = await apply_object(s, p, dry_run)
            except ApplyFailed as exc:
                report_failure(exc.error, exc.verb, p.manifest.source)
                failed += 1
                continue
            uid = (obj.get("metadata") or {}).get("uid")
            if uid:
                visited.add(str(uid))
            if prints_object(output):
                write_object(output, obj)
            elif output == "name":
                print(p.ref, flush=True)
            else:
                suffix = {"client": " (dry run)", "server": " (server dry run)"}.get(dry_run, "")
                print(f"{p.ref} {result}{suffix}", flush=True)
        if pruning is not None:
            await prune(s, pruning, visited, namespaces, dry_run, output)
    return 1 if failed else 0


def apply(ctx: typer.Context, filename: FilesOpt = None, recursive: RecursiveOpt = False,
          dry_run: DryRunOpt = "none", output: OutputOpt = "", kustomize: KustomizeOpt = None,
          prune_: Annotated[bool, typer.Option("--prune", help="delete the applied objects not in this apply "
                                                              "(with -l or --all)")] = False,
          selector: SelectorOpt = "",
          all_: Annotated[bool, typer.Option("--all", help="with --prune: every object of the prune set")] = False,
          prune_allowlist: Annotated[list[str] | None, typer.Option(
              "--prune-allowlist", help="group/version/kind to prune (core/v1/ConfigMap); repeatable")] = None) -> None:
    """Apply a configuration to resources from files, a kustomization or stdin (client-side apply).

    ``--prune-whitelist``, deprecated since kubectl 1.26, is gone from kubectl 1.32 (an unknown flag), as here.
    """
    check_flags(dry_run, output)
    if filename and kustomize:
        raise KubectlError("only one of -f or -k can be specified")
    if not filename and not kustomize:
        raise KubectlError("must specify one of -f and -k")
    allowlist = list(prune_allowlist or [])
    pruning = None
    if all_ and selector:
        raise KubectlError("cannot set --all and --selector at the same time")
    if prune_:
        if not all_ and not selector:
            raise KubectlError("all resources selected for prune without explicitly passing --all. To prune all "
                               "resources, pass the --all flag. If you did not mean to prune all resources, "
                               "specify a label selector")
        pruning = PruneOptions(selector, all_, allowlist)  # without --prune, kubectl ignores the allowlist
    code = asyncio.run(run_apply(ctx.obj, filename or [], recursive, dry_run, output, kustomize, pruning, selector))
    if code:
        raise typer.Exit(code)
