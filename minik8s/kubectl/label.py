"""``kubectl label`` and ``kubectl annotate``: ``TYPE NAME key=value key2-`` on objects' metadata.

Both take objects as ``TYPE NAME...``, ``TYPE/NAME...``, ``-f FILE``, ``TYPE -l SELECTOR``
or ``TYPE --all`` (``-A`` across namespaces), then ``key=value`` pairs to set and ``key-``
to remove.  Changing a key that already has another value needs ``--overwrite``, as in
kubectl: ``'app' already has a value (web), and --overwrite is false``.  The change is a
merge patch of ``metadata.labels`` / ``metadata.annotations`` (with ``--resource-version``,
also the precondition).  ``--list`` prints the current pairs instead.

Result lines are kubectl's: ``pod/web labeled`` / ``unlabeled`` / ``not labeled`` and
``pod/web annotated``.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Annotated

import typer

from minik8s.api.base import Obj
from minik8s.api.validation import label_value_errors, qualified_name_errors
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import FilesOpt, RecursiveOpt, SelectorOpt
from minik8s.kubectl.selection import ObjectRef, for_each, select, split_changes
from minik8s.kubectl.session import GlobalOptions, Session

CHANGE_CAUSE = "kubernetes.io/change-cause"


@dataclass(frozen=True)
class MapKind:
    """What differs between ``label`` and ``annotate``."""

    verb: str  # "label" / "annotate"
    field: str  # "labels" / "annotations"
    noun: str  # "label" / "annotation"


LABELS = MapKind("label", "labels", "label")
ANNOTATIONS = MapKind("annotate", "annotations", "annotation")


def is_pair(arg: str) -> bool:
    """``k=v`` or ``k-`` (not ``=x`` or ``-``), as kubectl tells pairs from resource arguments."""
    return ("=" in arg and not arg.startswith("=")) or (arg.endswith("-") and arg != "-")


def parse_pairs(pairs: list[str], kind: MapKind) -> tuple[dict[str, str], list[str]]:
    """(keys to set, keys to remove) from ``k=v`` / ``k-`` (kubectl's ``ParsePairs`` and checks).

    Raises KubectlError for malformed pairs, invalid keys or (labels) values, and a key
    both set and removed.
    """
    new: dict[str, str] = {}
    remove: list[str] = []
    invalid: list[str] = []
    for pair in pairs:
        if "=" in pair:
            key, _, value = pair.partition("=")
            new[key] = value
        elif pair.endswith("-"):
            remove.append(pair[:-1])
        else:
            invalid.append(pair)
    if invalid:
        raise KubectlError(f"invalid {kind.noun} format: {', '.join(invalid)}")
    for key, value in new.items():
        problems = qualified_name_errors(key.lower() if kind is ANNOTATIONS else key)
        if problems:
            raise KubectlError(f"invalid {kind.noun} key: {key!r}: {'; '.join(problems)}")
        if kind is LABELS:
            problems = label_value_errors(value)
            if problems:
                raise KubectlError(f'invalid label value: "{key}={value}": {"; ".join(problems)}')
    if any(key in new for key in remove):
        raise KubectlError(f"can not both modify and remove {kind.noun}s in the same command")
    return new, remove


def overwrite_conflicts(current: dict[str, str], new: dict[str, str], kind: MapKind) -> str | None:
    """kubectl's no-overwrite check: the message naming keys that would change, or None."""
    found = [f"'{key}' already has a value ({current[key]})" for key, value in new.items()
             if key in current and current[key] != value and not (kind is ANNOTATIONS and key == CHANGE_CAUSE)]
    if not found:
        return None
    if kind is LABELS:
        return "; ".join(f"{f}, and --overwrite is false" for f in found)
    return f"--overwrite is false but found the following declared annotation(s): {'; '.join(found)}"


def change(current: dict[str, str], new: dict[str, str], remove: list[str]) -> dict[str, str | None]:
    """The merge patch of the map: keys whose value changes, removed keys (present ones) as None."""
    patch: dict[str, str | None] = {k: v for k, v in new.items() if current.get(k) != v}
    patch.update({k: None for k in remove if k in current})
    return patch


def result_word(kind: MapKind, patch: dict[str, str | None], overwrite: bool) -> str:
    """``labeled`` / ``unlabeled`` (only removals, without --overwrite) / ``not labeled``; ``annotated``."""
    if kind is ANNOTATIONS:
        return "annotated"
    if not patch:
        return "not labeled"
    only_removed = all(v is None for v in patch.values())
    return "unlabeled" if only_removed and not overwrite else "labeled"


async def edit_one(s: Session, ref: ObjectRef, kind: MapKind, new: dict[str, str], remove: list[str],
                   overwrite: bool, resource_version: str) -> str:
    """Change one object's labels or annotations; returns the result word."""
    obj = await s.client.get(ref.rt, ref.name, ref.namespace)
    meta = obj.get("metadata") or {}
    current = dict(meta.get(kind.field) or {})
    if kind is LABELS:
        for key in remove:
            if key not in current:
                print(f'label "{key}" not found.', flush=True)
    if not overwrite:
        conflict = overwrite_conflicts(current, new, kind)
        if conflict:
            raise KubectlError(conflict)
    patch = change(current, new, remove)
    if patch or resource_version:
        body: Obj = {"metadata": {kind.field: patch}}
        if resource_version:
            body["metadata"]["resourceVersion"] = resource_version
        await s.client.patch(ref.rt, ref.name, body, ref.namespace)
    return result_word(kind, patch, overwrite)


async def list_one(s: Session, ref: ObjectRef, kind: MapKind, several: bool) -> None:
    """``--list``: ``key=value`` lines; with several objects each under a ``Listing labels for Pod./web:``
    header (on stderr) and indented, as kubectl prints them."""
    obj = await s.client.get(ref.rt, ref.name, ref.namespace)
    pairs = (obj.get("metadata") or {}).get(kind.field) or {}
    if several:
        print(f"Listing {kind.field} for {ref.rt.kind}.{ref.rt.group}/{ref.name}:", file=sys.stderr, flush=True)
    for key in sorted(pairs):
        print(f"{' ' if several else ''}{key}={pairs[key]}", flush=True)


async def run_edit(opts: GlobalOptions, kind: MapKind, args: list[str], files: list[str], recursive: bool,
                   selector: str, all_: bool, all_namespaces: bool, overwrite: bool, list_: bool,
                   resource_version: str) -> int:
    """``label`` / ``annotate``: validate everything first, then change each object."""
    resources, pairs = split_changes(args, is_pair, kind.noun)
    if all_ and selector:
        raise KubectlError("cannot set --all and --selector at the same time")
    if not resources and not files:
        raise KubectlError("one or more resources must be specified as <resource> <name> or <resource>/<name>")
    new, remove = parse_pairs(pairs, kind)
    if not new and not remove and not list_:
        raise KubectlError(f"at least one {kind.noun} update is required")
    async with Session(opts) as s:
        refs = await select(s, resources, files, recursive, selector, "", all_, all_namespaces, verb=kind.verb)
        if not refs:
            raise KubectlError(f"no objects passed to {kind.verb}")
        if list_:
            for ref in refs:
                await list_one(s, ref, kind, len(refs) > 1)
            return 0
        return await for_each(refs, lambda ref: edit_one(s, ref, kind, new, remove, overwrite, resource_version))


Args = Annotated[list[str] | None, typer.Argument(metavar="TYPE NAME | TYPE/NAME KEY=VAL... KEY-...",
                                                  help="objects, then changes")]
OverwriteOpt = Annotated[bool, typer.Option("--overwrite", help="allow changing existing values")]
AllOpt = Annotated[bool, typer.Option("--all", help="every object of the type in the namespace")]
AllNamespacesOpt = Annotated[bool, typer.Option("-A", "--all-namespaces", help="with -l or --all: every namespace")]
ListOpt = Annotated[bool, typer.Option("--list", help="print the current pairs")]
ResourceVersionOpt = Annotated[str, typer.Option("--resource-version",
                                                 help="only change the object at this resourceVersion")]


def _run(ctx: typer.Context, kind: MapKind, args: list[str] | None, files: list[str] | None, recursive: bool,
         selector: str, all_: bool, all_namespaces: bool, overwrite: bool, list_: bool,
         resource_version: str) -> None:
    code = asyncio.run(run_edit(ctx.obj, kind, args or [], files or [], recursive, selector, all_, all_namespaces,
                                overwrite, list_, resource_version))
    if code:
        raise typer.Exit(code)


def label(ctx: typer.Context, args: Args = None, overwrite: OverwriteOpt = False, selector: SelectorOpt = "",
          all_: AllOpt = False, all_namespaces: AllNamespacesOpt = False, filename: FilesOpt = None,
          recursive: RecursiveOpt = False, list_: ListOpt = False, resource_version: ResourceVersionOpt = "") -> None:
    """Update the labels on a resource."""
    _run(ctx, LABELS, args, filename, recursive, selector, all_, all_namespaces, overwrite, list_, resource_version)


def annotate(ctx: typer.Context, args: Args = None, overwrite: OverwriteOpt = False, selector: SelectorOpt = "",
             all_: AllOpt = False, all_namespaces: AllNamespacesOpt = False, filename: FilesOpt = None,
             recursive: RecursiveOpt = False, list_: ListOpt = False,
             resource_version: ResourceVersionOpt = "") -> None:
    """Update the annotations on a resource."""
    _run(ctx, ANNOTATIONS, args, filename, recursive, selector, all_, all_namespaces, overwrite, list_,
         resource_version)
