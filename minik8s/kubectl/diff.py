"""``kubectl diff -f FILE``: what ``kubectl apply -f FILE`` would change, as kubectl's ``diff.go`` shows it.

Each object of the manifests is applied with ``dryRun=All`` (:func:`merged_form`: as ``kubectl apply``
but leaving the last-applied annotation alone, and creating without it).  The object as it is now
goes to ``$TMPDIR/LIVE-<digits>/``, the object the server answered to ``$TMPDIR/MERGED-<digits>/``,
both as YAML without managedFields, in files named ``[GROUP.]VERSION.KIND.NAMESPACE.NAME``
(``apps.v1.Deployment.default.web``); an object that does not exist yet has no live file.  Then
``diff -u -N LIVE MERGED`` runs (or ``$KUBECTL_EXTERNAL_DIFF``'s command, given ``LIVE MERGED`` and
the variable's other words), its output going straight to stdout.  The exit code is diff's: 0 when
nothing would change, 1 when something would; errors (a server error on any object, which stops
the diff; a diff program exiting above 1) exit 2.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.k8sopenapi import PatchSchema
from minik8s.api.patch import strategic_diff
from minik8s.client.rest import PATCH_TYPES, resource_path
from minik8s.kubectl import manifests, printing
from minik8s.kubectl.errors import KubectlError, failure_line
from minik8s.kubectl.manifests import LAST_APPLIED, Planned, applied_config
from minik8s.kubectl.options import FilesOpt, KustomizeOpt, RecursiveOpt
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import without_managed_fields


def file_name(p: Planned) -> str:
    """``[GROUP.]VERSION.KIND.NAMESPACE.NAME``, kubectl's name for an object's file."""
    group = f"{p.rt.group}." if p.rt.group else ""
    return f"{group}{p.rt.version}.{p.rt.kind}.{p.namespace or ''}.{p.name}"


def temp_dir(prefix: str) -> Path:
    """A new ``<prefix><digits>`` folder in the temp directory (Go's ``os.MkdirTemp`` names)."""
    while True:
        path = Path(tempfile.gettempdir()) / f"{prefix}{random.randrange(1 << 32)}"
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return path


def diff_command(live: str, merged: str) -> list[str]:
    """``diff -u -N LIVE MERGED``, or ``$KUBECTL_EXTERNAL_DIFF``'s command given ``LIVE MERGED`` and then
    the variable's other words that kubectl allows (letters, digits, ``-`` and ``=``; others dropped)."""
    words = os.environ.get("KUBECTL_EXTERNAL_DIFF", "").split(" ")
    if not words[0]:
        return ["diff", "-u", "-N", live, merged]
    return [words[0], live, merged, *(w for w in words[1:] if re.fullmatch(r"[a-zA-Z0-9=-]+", w))]


def write(folder: Path, name: str, obj: Obj | None) -> None:
    """``obj`` as kubectl's diff prints it (YAML, no managedFields) into ``folder/name``; nothing for None."""
    if obj is not None:
        (folder / name).write_text(printing.to_yaml(without_managed_fields(obj)), encoding="utf-8")


async def merged_form(s: Session, p: Planned, live: Obj | None) -> Obj:
    """What the server answers to applying ``p`` with ``dryRun=All``, leaving the last-applied annotation
    as it is (kubectl diffs the modified configuration without it): a create of the manifest when
    there is no live object, else the strategic patch since the last applied configuration.
    Raises the server's APIError."""
    config = applied_config(p)
    if live is None:
        body = copy.deepcopy(p.manifest.obj)
        if p.namespace:
            body.setdefault("metadata", {})["namespace"] = p.namespace
        return await s.client.create(p.rt, body, p.namespace, dry_run=True)
    raw = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    try:
        last = json.loads(raw) if raw else {}
    except ValueError:
        last = {}
    patch = strategic_diff(last if isinstance(last, dict) else {}, config,
                           PatchSchema.of_kind(str(config.get("apiVersion") or ""), str(config.get("kind") or "")))
    if not patch:
        return live
    result = await s.client.request(
        "PATCH", resource_path(p.rt, p.namespace, p.name), body=patch, content_type=PATCH_TYPES["strategic"],
        params={"dryRun": "All", "fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"})
    return result if isinstance(result, dict) else live


async def collect(s: Session, planned: list[Planned], live_dir: Path, merged_dir: Path) -> None:
    """Write every object's live and merged forms (the first server error propagates)."""
    for p in planned:
        try:
            live: Obj | None = await s.client.get(p.rt, p.name, p.namespace)
        except errors.NotFound:
            live = None
        merged = await merged_form(s, p, live)
        write(live_dir, file_name(p), live)
        write(merged_dir, file_name(p), merged)


async def run_diff(opts: GlobalOptions, files: list[str], recursive: bool, kustomize: str | None = None) -> int:
    """Diff every object of ``files`` (or of the kustomization ``kustomize``) against the server;
    returns the exit code."""
    items = manifests.load(files, recursive, "diff", kustomize)
    live_dir, merged_dir = temp_dir("LIVE-"), temp_dir("MERGED-")
    try:
        async with Session(opts) as s:
            await collect(s, manifests.plan(s, items, opts.namespace), live_dir, merged_dir)
        sys.stdout.flush()
        argv = diff_command(str(live_dir), str(merged_dir))
        try:
            code = subprocess.call(argv)
        except OSError as exc:
            raise KubectlError(f'failed to run "{argv[0]}": {exc.strerror}') from None
        if code > 1:
            raise KubectlError(f"exit status {code}")
        return code
    finally:
        shutil.rmtree(live_dir, ignore_errors=True)
        shutil.rmtree(merged_dir, ignore_errors=True)


def diff(ctx: typer.Context, filename: FilesOpt = None, recursive: RecursiveOpt = False,
         kustomize: KustomizeOpt = None) -> None:
    """Diff the live objects against what applying the files (or the kustomization) would make them."""
    try:
        if filename and kustomize:
            raise KubectlError("only one of -f or -k can be specified")
        if not filename and not kustomize:
            raise KubectlError("must specify one of -f and -k")
        code = asyncio.run(run_diff(ctx.obj, filename or [], recursive, kustomize))
    except KubectlError as exc:
        exc.code = 2  # kubectl diff's errors exit 2 (1 means "differences found")
        raise
    except errors.APIError as exc:
        print(failure_line(exc), file=sys.stderr)
        raise typer.Exit(2) from None
    if code:
        raise typer.Exit(code)
