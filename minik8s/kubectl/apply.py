"""``kubectl apply -f`` and what ``kubectl create -f`` sends (client-side apply).

``apply`` keeps the manifest as applied in the annotation
``kubectl.kubernetes.io/last-applied-configuration``; on the next apply it sends
what changed since then (:func:`apply_patch`) as a strategic merge patch, so
fields set by the server or by other clients are left alone.  ``--dry-run=server`` sends the same
writes with ``dryRun=All`` (``created (server dry run)``); ``--dry-run=client`` sends none
(``configured (dry run)``, printing the live object as kubectl 1.32 does).
"""

from __future__ import annotations

import asyncio
import copy
import json
import sys

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.patch import strategic_diff
from minik8s.client.rest import PATCH_TYPES, ServerUnavailable, resource_path
from minik8s.kubectl import manifests
from minik8s.kubectl.creating import DryRunOpt, OutputOpt, check_flags
from minik8s.kubectl.errors import KubectlError, report_failure
from minik8s.kubectl.manifests import LAST_APPLIED, Planned, applied_config, encode, plan
from minik8s.kubectl.options import FilesOpt, RecursiveOpt
from minik8s.kubectl.resolve import plural_ref
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import prints_object, write_object


def apply_patch(last_applied: Obj | None, new: Obj, annotation: str) -> Obj:
    """What ``apply`` sends: the change since ``last_applied`` plus the new annotation.

    Returns ``{}`` when nothing changed (the object is ``unchanged``).
    """
    base = copy.deepcopy(last_applied) if last_applied else {}
    patch = strategic_diff(base, new)
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
    if dry_run == "client":  # kubectl prints the live object, unpatched
        return "configured", live
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


async def run_apply(opts: GlobalOptions, files: list[str], recursive: bool, dry_run: str = "none",
                    output: str = "") -> int:
    """Apply every object in ``files`` (``dry_run``: none, client or server; ``output``: "", yaml, json
    or name); returns 1 when any object failed."""
    items = manifests.load(files, recursive, "apply")
    failed = 0
    async with Session(opts) as s:
        planned = plan(s, items, opts.namespace)
        for p in planned:
            try:
                result, obj = await apply_object(s, p, dry_run)
            except ApplyFailed as exc:
                report_failure(exc.error, exc.verb, p.manifest.source)
                failed += 1
                continue
            if prints_object(output):
                write_object(output, obj)
            elif output == "name":
                print(p.ref, flush=True)
            else:
                suffix = {"client": " (dry run)", "server": " (server dry run)"}.get(dry_run, "")
                print(f"{p.ref} {result}{suffix}", flush=True)
    return 1 if failed else 0




def apply(ctx: typer.Context, filename: FilesOpt = None, recursive: RecursiveOpt = False,
          dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Apply a configuration to resources from files or stdin (client-side apply)."""
    check_flags(dry_run, output)
    if not filename:
        raise KubectlError("must specify one of -f and -k")
    code = asyncio.run(run_apply(ctx.obj, filename, recursive, dry_run, output))
    if code:
        raise typer.Exit(code)

