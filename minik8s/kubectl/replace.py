"""``kubectl replace -f FILE [--force] [--save-config] [--dry-run=server] [-o yaml|json|name]``.

As kubectl's ``replace.go``: each object of the manifests is written whole with ``PUT
...?fieldManager=kubectl-replace&fieldValidation=Strict``.  An object without a
``resourceVersion`` takes the live object's (one ``GET``; when there is none the ``PUT`` goes
out as it is and the server answers NotFound); one with a ``resourceVersion`` is a
compare-and-swap (a stale one is a Conflict).  The last-applied annotation is written when
``--save-config`` is given or the manifest already carries it.  ``--force`` deletes every
object first (``configmap "x" deleted``; missing ones are skipped), waits until they are gone
and creates them again.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import ServerUnavailable, resource_path
from minik8s.kubectl import manifests
from minik8s.kubectl.creating import DryRunOpt, OutputOpt, SaveConfigOpt, check_flags
from minik8s.kubectl.errors import KubectlError, report_failure
from minik8s.kubectl.manifests import LAST_APPLIED, Planned
from minik8s.kubectl.options import FilesOpt, RecursiveOpt
from minik8s.kubectl.resolve import type_ref
from minik8s.kubectl.selection import ObjectRef
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import prints_object, write_object


def body_of(p: Planned, save_config: bool) -> Obj:
    """What is sent for ``p``: the manifest with its namespace and, when kubectl would write it
    (``--save-config``, or the manifest carries one), a fresh last-applied annotation."""
    obj = copy.deepcopy(p.manifest.obj)
    meta = obj.setdefault("metadata", {})
    if p.namespace:
        meta["namespace"] = p.namespace
    if save_config or LAST_APPLIED in (meta.get("annotations") or {}):
        annotation = manifests.encode(manifests.applied_config(p))
        meta["annotations"] = {**(meta.get("annotations") or {}), LAST_APPLIED: annotation}
    return obj


def print_result(p: Planned, obj: Obj, output: str, dry_run: str) -> None:
    """``configmap/x replaced`` (`` (server dry run)``), the name, or the object."""
    if prints_object(output):
        write_object(output, obj)
    elif output == "name":
        print(p.ref, flush=True)
    else:
        print(f"{p.ref} replaced" + (" (server dry run)" if dry_run == "server" else ""), flush=True)


async def replace_one(s: Session, p: Planned, save_config: bool, dry_run: str) -> Obj:
    """``PUT`` one object (its resourceVersion taken from the live object when the manifest has none).

    Raises the server's APIError."""
    obj = body_of(p, save_config)
    meta = obj["metadata"]
    if not meta.get("resourceVersion"):
        try:
            live = await s.client.get(p.rt, p.name, p.namespace)
        except errors.NotFound:
            pass
        else:
            meta["resourceVersion"] = (live.get("metadata") or {}).get("resourceVersion")
    params = {"fieldManager": "kubectl-replace", "fieldValidation": "Strict"}
    if dry_run == "server":
        params = {"dryRun": "All", **params}
    result = await s.client.request("PUT", resource_path(p.rt, p.namespace, p.name), params=params, body=obj)
    return result if isinstance(result, dict) else obj


async def force_replace(s: Session, planned: list[Planned], save_config: bool, output: str) -> int:
    """``--force``: delete every object (waiting until gone), then create each again."""
    from minik8s.kubectl.waiting import wait_gone

    failed = False
    deleted: list[ObjectRef] = []
    for p in planned:
        try:
            await s.client.delete(p.rt, p.name, p.namespace)
        except errors.NotFound:
            continue
        except ServerUnavailable:
            raise
        except errors.APIError as exc:
            report_failure(exc, "deleting", p.manifest.source)
            failed = True
            continue
        deleted.append(ObjectRef(p.rt, p.namespace, p.name))
        print(f'{type_ref(p.rt)} "{p.name}" deleted', flush=True)
    if deleted and await wait_gone(s, deleted, 0):
        raise KubectlError("timed out waiting for the condition")
    for p in planned:
        obj = body_of(p, save_config)
        obj["metadata"].pop("resourceVersion", None)
        params = {"fieldManager": "kubectl-replace", "fieldValidation": "Strict"}
        try:
            result = await s.client.request("POST", resource_path(p.rt, p.namespace), params=params, body=obj)
        except ServerUnavailable:
            raise
        except errors.APIError as exc:
            report_failure(exc, "creating", p.manifest.source)
            failed = True
            continue
        print_result(p, result if isinstance(result, dict) else obj, output, "none")
    return 1 if failed else 0


async def run_replace(opts: GlobalOptions, files: list[str], recursive: bool, force: bool, save_config: bool,
                      dry_run: str, output: str) -> int:
    """Replace every object of ``files``; returns the exit code (1 when any failed)."""
    items = manifests.load(files, recursive, "replace")
    async with Session(opts) as s:
        planned = manifests.plan(s, items, opts.namespace)
        if force:
            return await force_replace(s, planned, save_config, output)
        failed = False
        for p in planned:
            try:
                result = await replace_one(s, p, save_config, dry_run)
            except ServerUnavailable:
                raise
            except errors.APIError as exc:
                report_failure(exc, "replacing", p.manifest.source)
                failed = True
                continue
            print_result(p, result, output, dry_run)
    return 1 if failed else 0


def replace(
    ctx: typer.Context,
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    force: Annotated[bool, typer.Option("--force", help="delete and re-create the objects")] = False,
    save_config: SaveConfigOpt = False,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Replace a resource by file name or stdin."""
    check_flags(dry_run, output)
    if not filename:
        raise KubectlError("must specify one of -f and -k")
    if force and dry_run != "none":
        raise KubectlError("--dry-run can not be used when --force is set")
    code = asyncio.run(run_replace(ctx.obj, filename, recursive, force, save_config, dry_run, output))
    if code:
        raise typer.Exit(code)
