"""``kubectl patch (TYPE NAME | TYPE/NAME | -f FILE) (-p PATCH | --patch-file FILE) [--type ...]``.

As kubectl's ``patch.go``: the patch is read from ``-p`` or ``--patch-file``; text that looks like
JSON is sent as it is (the server reports its syntax errors), anything else is read as YAML and
sent as JSON.  Each object is read first (``GET``, of the ``--subresource`` when given) and then
patched with ``PATCH ...?fieldManager=kubectl-patch`` in the ``--type``'s content type
(``strategic`` by default: ``application/strategic-merge-patch+json``); the result line says
``patched`` or, when the server's answer equals what was read, ``patched (no change)``.
``--dry-run=server`` adds ``dryRun=All``; ``--dry-run=client`` applies the patch here
(:mod:`minik8s.api.patch`) and sends nothing but the ``GET``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from minik8s.api import decoding, errors
from minik8s.api.base import Obj
from minik8s.client.rest import PATCH_TYPES, ServerUnavailable, resource_path
from minik8s.kubectl.creating import DryRunOpt, OutputOpt, check_flags
from minik8s.kubectl.errors import KubectlError, failure_line
from minik8s.kubectl.options import FilesOpt, RecursiveOpt
from minik8s.kubectl.selection import ObjectRef, select
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import prints_object, write_object

#: ``--type`` values, as kubectl lists them in its error.
PATCH_KINDS = ("json", "merge", "strategic")


def patch_body(text: str) -> bytes:
    """The bytes kubectl sends for ``-p`` text (apimachinery's ``yaml.ToJSON``): JSON-looking text
    (first non-space character ``{`` or ``[``) as it is, anything else converted from YAML.

    Raises KubectlError ``unable to parse "TEXT": <reason>`` for YAML that does not parse.
    """
    if text.lstrip().startswith(("{", "[")):
        return text.encode()
    try:
        value = decoding.load_yaml_all(text)
    except decoding.DecodeError as exc:
        raise KubectlError(f'unable to parse "{text}": {exc}') from None
    doc = value[0] if value else None
    return json.dumps(doc, separators=(",", ":")).encode()


async def send_patch(s: Session, ref: ObjectRef, body: bytes, patch_type: str, subresource: str | None,
                     server_dry_run: bool) -> Obj:
    """``PATCH`` ``body`` as it is (kubectl sends the user's bytes) with kubectl's query; returns the
    server's object.  Raises the server's APIError."""
    params: dict[str, str] = {"fieldManager": "kubectl-patch"}
    if server_dry_run:
        params = {"dryRun": "All", **params}
    path = resource_path(ref.rt, ref.namespace, ref.name, subresource)
    resp = await s.client.send("PATCH", path, params=params, content=body,
                               headers={"Content-Type": PATCH_TYPES[patch_type]})
    result: Any = s.client.decode(resp)
    return result if isinstance(result, dict) else {}


def patch_locally(live: Obj, body: bytes, patch_type: str) -> Obj:
    """``--dry-run=client``: ``body`` applied here to ``live`` (KubectlError when it does not apply)."""
    from minik8s.api.k8sopenapi import PatchSchema
    from minik8s.api.patch import json_merge_patch, json_patch, strategic_merge_patch

    try:
        patch = json.loads(body)
    except ValueError as exc:
        raise KubectlError(f"unable to parse patch: {exc}") from None
    try:
        if patch_type == "json":
            if not isinstance(patch, list):
                raise ValueError("a JSON patch must be a list of operations")
            out = json_patch(live, patch)
        elif not isinstance(patch, dict):
            raise ValueError("a merge patch must be a JSON object")
        elif patch_type == "merge":
            out = json_merge_patch(live, patch)
        else:
            schema = PatchSchema.of_kind(str(live.get("apiVersion") or ""), str(live.get("kind") or ""))
            out = strategic_merge_patch(live, patch, schema)
    except ValueError as exc:
        raise KubectlError(str(exc)) from None
    return out if isinstance(out, dict) else {}


def result_ref(obj: Obj, fallback: str) -> str:
    """``deployment.apps/web``, ``scale.autoscaling/web``: the ref of the object the server answered."""
    kind = str(obj.get("kind") or "").lower()
    name = (obj.get("metadata") or {}).get("name")
    if not kind or not name:
        return fallback
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return f"{kind}.{group}/{name}" if group else f"{kind}/{name}"


async def run_patch(opts: GlobalOptions, args: list[str], files: list[str], recursive: bool, body: bytes,
                    patch_type: str, subresource: str | None, dry_run: str, output: str) -> int:
    """Patch every named object; prints each result and returns the exit code (1 when any failed)."""
    failed = False
    async with Session(opts) as s:
        refs = await select(s, args, files, recursive, verb="patch")
        for ref in refs:
            try:
                live = await s.client.get(ref.rt, ref.name, ref.namespace, subresource=subresource)
                if dry_run == "client":
                    patched = patch_locally(live, body, patch_type)
                else:
                    patched = await send_patch(s, ref, body, patch_type, subresource, dry_run == "server")
            except ServerUnavailable:
                raise
            except (KubectlError, errors.APIError) as exc:
                if len(refs) == 1 and not isinstance(exc, errors.Invalid):
                    raise
                print(failure_line(exc), file=sys.stderr, flush=True)
                failed = True
                continue
            ref_text = result_ref(patched, ref.ref)
            if prints_object(output):
                write_object(output, patched)
            elif output == "name":
                print(ref_text, flush=True)
            else:
                print(f"{ref_text} patched" + ("" if patched != live else " (no change)"), flush=True)
    return 1 if failed else 0


def patch(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="(TYPE NAME | TYPE/NAME)", help="what to patch")] = None,
    patch_text: Annotated[str | None, typer.Option("-p", "--patch", help="the patch (JSON or YAML)")] = None,
    patch_file: Annotated[str, typer.Option("--patch-file", help="a file holding the patch")] = "",
    patch_type: Annotated[str, typer.Option("--type", help="json, merge or strategic")] = "strategic",
    subresource: Annotated[str, typer.Option("--subresource", help="status or scale")] = "",
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch."""
    check_flags(dry_run, output)
    if patch_type not in PATCH_KINDS:
        raise KubectlError(f'--type must be one of [{" ".join(PATCH_KINDS)}], not "{patch_type}"')
    if patch_text and patch_file:
        raise KubectlError("--patch and --patch-file are mutually exclusive")
    if patch_file:
        try:
            patch_text = Path(patch_file).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise KubectlError(f"unable to read patch file: open {patch_file}: no such file or directory") from None
        except OSError as exc:
            raise KubectlError(f"unable to read patch file: {exc}") from None
    if not patch_text:
        raise KubectlError("must specify --patch or --patch-file containing the contents of the patch")
    body = patch_body(patch_text)
    code = asyncio.run(run_patch(ctx.obj, args or [], filename or [], recursive, body, patch_type,
                                 subresource or None, dry_run, output))
    if code:
        raise typer.Exit(code)
