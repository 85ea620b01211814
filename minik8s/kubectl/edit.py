"""``kubectl edit (TYPE NAME... | TYPE/NAME...) [-o yaml|json]``: edit live objects in ``$KUBE_EDITOR``
or ``$EDITOR`` (else ``vi``), as kubectl's ``editoptions.go`` does.

The objects (one object, or a ``v1`` ``List`` of several; managedFields left out) are written under
kubectl's comment header to ``$TMPDIR/kubectl-edit-<digits>.yaml`` and the editor is run on that file:
a command without spaces is run as it is, one with spaces but no quotes or backslashes is split on
spaces, anything else goes to ``sh -c`` (kubectl's rules).  Comment lines do not count: a file equal
to what was written is ``Edit cancelled, no changes made.``; every changed object is sent as the
strategic merge patch from the original to the edited form (``fieldManager=kubectl-edit``) and
reported ``<type>/<name> edited``.  A file that does not parse is reported (``error: configmaps "x" is invalid``) and
reopened; saved again unchanged, it is kept and the edit ends ``Edit cancelled, no valid changes were
saved.``.  Changing ``apiVersion``, ``kind`` or ``name`` is refused, the edited file kept.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from minik8s.api import decoding, errors
from minik8s.api.base import Obj
from minik8s.client.rest import PATCH_TYPES, ServerUnavailable, resource_path
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import FilesOpt, RecursiveOpt, SelectorOpt
from minik8s.kubectl.resolve import plural_ref
from minik8s.kubectl.selection import ObjectRef, select
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import without_managed_fields

HEADER = ("# Please edit the object below. Lines beginning with a '#' will be ignored,\n"
          "# and an empty file will abort the edit. If an error occurs while saving this file will be\n"
          "# reopened with the relevant failures.\n#\n")


def editor_argv(path: str, env: dict[str, str] | os._Environ[str] = os.environ) -> tuple[list[str], str]:
    """The editor's argv for ``path`` and the editor's name as kubectl quotes it in errors
    (``$KUBE_EDITOR``, then ``$EDITOR``, then ``vi``; kubectl's ``defaultEnvEditor`` rules)."""
    editor = env.get("KUBE_EDITOR") or env.get("EDITOR") or "vi"
    if " " not in editor:
        return [editor, path], editor
    if not any(c in editor for c in "\"'\\"):
        return [*editor.split(" "), path], editor
    shell = env.get("SHELL") or "/bin/bash"
    return [shell, "-c", f"{editor} {json.dumps(path)}"], editor


def strip_comments(text: str) -> str:
    """``text`` without its comment lines (kubectl's ``StripComments``: lines starting with ``#``)."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))


def temp_file(ext: str) -> Path:
    """A new empty ``kubectl-edit-<digits><ext>`` in the temp directory (Go's ``os.CreateTemp`` names)."""
    folder = tempfile.gettempdir()
    while True:
        path = Path(folder) / f"kubectl-edit-{random.randrange(1 << 32)}{ext}"
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            continue
        return path


def run_editor(path: Path) -> str:
    """Run the editor on ``path`` and return the file's text (KubectlError when the editor fails)."""
    argv, name = editor_argv(str(path))
    try:
        code = subprocess.call(argv)
    except OSError:
        code = -1
    if code != 0:
        raise KubectlError(f'there was a problem with the editor "{name}"')
    return path.read_text(encoding="utf-8")


def render_doc(objs: list[Obj], output: str) -> str:
    """The edited document: the object, or a ``List`` of several, as YAML or JSON."""
    doc: Obj = objs[0] if len(objs) == 1 else {"apiVersion": "v1", "items": objs, "kind": "List",
                                                 "metadata": {"resourceVersion": ""}}
    return printing.to_json(doc) + "\n" if output == "json" else printing.to_yaml(doc)


def preserved(path: Path, message: str) -> KubectlError:
    """kubectl's ``preservedFile``: say where the edited file stays, then fail with ``message``."""
    print(f'A copy of your changes has been stored to "{path}"', file=sys.stderr)
    return KubectlError(message)


async def send_edit(s: Session, ref: ObjectRef, original: Obj, edited: Obj) -> None:
    """PATCH the change from ``original`` to ``edited`` (a strategic merge patch; a JSON merge patch for
    custom resources).  Raises the server's APIError."""
    from minik8s.api.k8sopenapi import PatchSchema
    from minik8s.api.patch import create_merge_patch, strategic_diff

    custom = getattr(ref.rt, "custom", None) is not None
    patch = create_merge_patch(original, edited) if custom else \
        strategic_diff(original, edited, PatchSchema.of_kind(ref.rt.api_version, ref.rt.kind))
    await s.client.request("PATCH", resource_path(ref.rt, ref.namespace, ref.name),
                           params={"fieldManager": "kubectl-edit"}, body=patch,
                           content_type=PATCH_TYPES["merge" if custom else "strategic"])


async def run_edit(opts: GlobalOptions, args: list[str], files: list[str], recursive: bool, selector: str,
                   output: str) -> int:
    """Edit the objects the arguments name; returns the exit code."""
    async with Session(opts) as s:
        type_only = len(args) == 1 and "/" not in args[0] and not selector  # kubectl edits them all
        refs = await select(s, args, files, recursive, selector, all_=type_only, verb="edit")
        objs = [without_managed_fields(await s.client.get(r.rt, r.name, r.namespace)) for r in refs]
        if not objs:
            return 0
        original = render_doc(objs, output)
        path = temp_file(".json" if output == "json" else ".yaml")
        header, text = HEADER, original
        last_failed: str | None = None
        while True:
            path.write_text(header + text, encoding="utf-8")
            edited_text = run_editor(path)
            stripped = strip_comments(edited_text)
            if last_failed is not None and stripped == last_failed:
                raise preserved(path, "Edit cancelled, no valid changes were saved.")
            if stripped == strip_comments(original):
                path.unlink(missing_ok=True)
                print("Edit cancelled, no changes made.", file=sys.stderr)
                return 0
            try:
                value: Any = decoding.load_json(stripped) if output == "json" else decoding.load_yaml(stripped)
                if not isinstance(value, dict):
                    raise decoding.DecodeError("not an object")
            except decoding.DecodeError:
                first = refs[0]
                print(f'error: {plural_ref(first.rt)} "{first.name}" is invalid', file=sys.stderr)
                text, last_failed = strip_comments(edited_text), stripped
                continue
            edited = value.get("items") if len(objs) > 1 else [value]
            if not isinstance(edited, list) or len(edited) != len(objs):
                raise preserved(path, "At least one of apiVersion, kind and name was changed")
            for old, new in zip(objs, edited, strict=True):
                if not isinstance(new, dict) or any(
                        old.get(f) != new.get(f) for f in ("apiVersion", "kind")) or \
                        (old.get("metadata") or {}).get("name") != (new.get("metadata") or {}).get("name"):
                    raise preserved(path, "At least one of apiVersion, kind and name was changed")
            failed = False
            for ref, old, new in zip(refs, objs, edited, strict=True):
                if old == new:
                    continue
                try:
                    await send_edit(s, ref, old, new)
                except ServerUnavailable:
                    raise
                except errors.APIError as exc:
                    print(f"error: {exc.message}", file=sys.stderr)
                    failed = True
                    continue
                print(f"{ref.ref} edited", flush=True)
            path.unlink(missing_ok=True)
            return 1 if failed else 0


def edit(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="(TYPE NAME | TYPE/NAME)", help="what to edit")] = None,
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    selector: SelectorOpt = "",
    output: Annotated[str, typer.Option("-o", "--output", help="yaml or json: the format to edit in")] = "yaml",
) -> None:
    """Edit a resource from the default editor."""
    if output not in ("yaml", "json"):
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           "allowed formats are: json,yaml")
    code = asyncio.run(run_edit(ctx.obj, args or [], filename or [], recursive, selector, output))
    if code:
        raise typer.Exit(code)

