"""``kubectl apply -f`` and what ``kubectl create -f`` sends (client-side apply).

``apply`` keeps the manifest as applied in the annotation
``kubectl.kubernetes.io/last-applied-configuration``; on the next apply it sends
what changed since then (:func:`apply_patch`) as a strategic merge patch, so
fields set by the server or by other clients are left alone.
"""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from minik8s.api import errors
from minik8s.api.patch import MERGE_KEYS, create_merge_patch
from minik8s.api.registry import ResourceType
from minik8s.client.rest import ServerUnavailable
from minik8s.kubectl import manifests
from minik8s.kubectl.errors import KubectlError, server_error
from minik8s.kubectl.resolve import object_ref, plural_ref
from minik8s.kubectl.session import GlobalOptions, Session

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
Obj = dict[str, Any]


@dataclass
class Planned:
    """A manifest resolved against discovery: its type and the namespace it goes to."""

    manifest: manifests.Manifest
    rt: ResourceType
    namespace: str | None

    @property
    def name(self) -> str:
        """The object's ``metadata.name``."""
        return self.manifest.name

    @property
    def ref(self) -> str:
        """``pod/web``, as printed in ``created`` / ``configured`` lines."""
        return object_ref(self.rt, self.name)


def plan(s: Session, items: list[manifests.Manifest], explicit_namespace: str | None,
         need_name: bool = True) -> list[Planned]:
    """Resolve every manifest's kind and namespace before anything is sent.

    Raises KubectlError for an unknown kind (``resource mapping not found ...``), a
    missing name, or an object whose namespace contradicts ``-n``.
    """
    planned = []
    for m in items:
        api_version, kind = str(m.obj.get("apiVersion")), str(m.obj.get("kind"))
        rt = s.registry.by_kind(api_version, kind)
        if rt is None:
            raise KubectlError(f'resource mapping not found for name: "{m.name}" namespace: "{m.namespace}" '
                               f'from "{m.source}": no matches for kind "{kind}" in version "{api_version}"')
        if need_name and not m.name:
            if (m.obj.get("metadata") or {}).get("generateName"):
                raise KubectlError(f"from {m.source}: cannot use generate name with apply")
            raise KubectlError(f'error when retrieving current configuration of "{m.source}": '
                               "resource name may not be empty")
        namespace = None
        if rt.namespaced:
            if explicit_namespace and m.namespace and m.namespace != explicit_namespace:
                raise KubectlError(f'the namespace from the provided object "{m.namespace}" does not match the '
                                   f'namespace "{explicit_namespace}". You must pass '
                                   f"'--namespace={m.namespace}' to perform this operation.")
            namespace = m.namespace or s.namespace
        planned.append(Planned(m, rt, namespace))
    return planned


def applied_config(p: Planned) -> Obj:
    """The manifest as kubectl records it: namespace filled in, our annotation left out."""
    obj = copy.deepcopy(p.manifest.obj)
    meta = obj.setdefault("metadata", {})
    if p.namespace:
        meta["namespace"] = p.namespace
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(LAST_APPLIED, None)
    meta["annotations"] = annotations
    return obj


def encode(obj: Obj) -> str:
    """The annotation value: compact JSON with sorted keys (what Go's json.Marshal of a map gives)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


# ------------------------------------------------------------------ strategic two-way diff
def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":
        if any(isinstance(i, dict) and "containerPort" in i for i in items):
            return "containerPort"
        return "port"
    return MERGE_KEYS.get(field)


def _item_id(item: Obj, key: str, by_protocol: bool) -> tuple[Any, ...]:
    return (json.dumps(item.get(key)), (item.get("protocol") or "TCP") if by_protocol else "")


def _list_patch(field: str, old: list[Any], new: list[Any]) -> list[Any] | None:
    """Strategic patch of a merge-keyed list, or None when it cannot be keyed (replace whole)."""
    key = _merge_key(field, old + new)
    if key is None or not all(isinstance(i, dict) and key in i for i in old + new):
        return None
    by_protocol = field == "ports"
    olds = {_item_id(i, key, by_protocol): i for i in old}
    if len(olds) != len(old) or len({_item_id(i, key, by_protocol) for i in new}) != len(new):
        return None
    patch: list[Any] = []
    news = set()
    for item in new:
        ident = _item_id(item, key, by_protocol)
        news.add(ident)
        if ident not in olds:
            patch.append(copy.deepcopy(item))
            continue
        diff = strategic_diff(olds[ident], item)
        if diff:
            entry = {key: item[key], **diff}
            if by_protocol and item.get("protocol"):
                entry["protocol"] = item["protocol"]
            patch.append(entry)
    for ident, item in olds.items():
        if ident not in news:
            entry = {"$patch": "delete", key: item[key]}
            if by_protocol:
                entry["protocol"] = item.get("protocol") or "TCP"
            patch.append(entry)
    return patch


def strategic_diff(original: Obj, modified: Obj) -> Obj:
    """The patch that turns ``original`` into ``modified`` under strategic merge patch.

    Like :func:`minik8s.api.patch.create_merge_patch` (removed keys become ``None``,
    dicts diff recursively, other changed values replace), except that lists merged by
    key on the server (containers, env, ports, volumes, ...) are diffed item by item:
    changed items carry their merge key and the changes, removed items become
    ``{"$patch": "delete", key: value}``. ``{}`` means no change.
    """
    patch = create_merge_patch(original, modified)
    for field, value in list(patch.items()):
        old, new = original.get(field), modified.get(field)
        if isinstance(old, dict) and isinstance(new, dict) and isinstance(value, dict):
            patch[field] = strategic_diff(old, new)
            if not patch[field]:
                del patch[field]
        elif isinstance(old, list) and isinstance(new, list):
            items = _list_patch(field, old, new)
            if items is not None:
                if items:
                    patch[field] = items
                else:
                    del patch[field]
    return patch


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


async def apply_one(s: Session, p: Planned) -> str:
    """Create or patch one object; returns ``created``, ``configured`` or ``unchanged``.

    Raises ApplyFailed for server errors about the object, ServerUnavailable when the
    server cannot be reached.
    """
    config = applied_config(p)
    annotation = encode(config)
    try:
        live = await s.client.get(p.rt, p.name, p.namespace)
    except ServerUnavailable:
        raise
    except errors.NotFound:
        body = copy.deepcopy(config)
        body["metadata"]["annotations"][LAST_APPLIED] = annotation
        try:
            await s.client.create(p.rt, body, p.namespace)
        except ServerUnavailable:
            raise
        except errors.APIError as exc:
            raise ApplyFailed("creating", exc) from exc
        return "created"
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
        return "unchanged"
    try:
        await s.client.patch(p.rt, p.name, patch, p.namespace, patch_type="strategic")
    except ServerUnavailable:
        raise
    except errors.APIError as exc:
        raise ApplyFailed("applying patch to", exc) from exc
    return "configured"


def report_failure(exc: errors.APIError, verb: str, source: str) -> None:
    """``Error from server (Reason): error when VERB "FILE": message`` on stderr."""
    prefix = server_error(exc).split(":", 1)[0]
    print(f'{prefix}: error when {verb} "{source}": {exc.message}', file=sys.stderr)


async def run_apply(opts: GlobalOptions, files: list[str], recursive: bool) -> int:
    """Apply every object in ``files``; returns 1 when any object failed."""
    items = manifests.load(files, recursive, "apply")
    failed = 0
    async with Session(opts) as s:
        planned = plan(s, items, opts.namespace)
        for p in planned:
            try:
                result = await apply_one(s, p)
            except ApplyFailed as exc:
                report_failure(exc.error, exc.verb, p.manifest.source)
                failed += 1
                continue
            print(f"{p.ref} {result}", flush=True)
    return 1 if failed else 0


async def run_create(opts: GlobalOptions, files: list[str], recursive: bool, save_config: bool) -> int:
    """Create every object in ``files``; AlreadyExists and other server errors are reported, not fatal."""
    items = manifests.load(files, recursive, "create")
    failed = 0
    async with Session(opts) as s:
        planned = plan(s, items, opts.namespace, need_name=False)
        for p in planned:
            body = copy.deepcopy(p.manifest.obj)
            meta = body.setdefault("metadata", {})
            if p.namespace:
                meta["namespace"] = p.namespace
            if save_config:
                meta.setdefault("annotations", {})[LAST_APPLIED] = encode(applied_config(p))
            try:
                created = await s.client.create(p.rt, body, p.namespace)
            except ServerUnavailable:
                raise
            except errors.APIError as exc:
                report_failure(exc, "creating", p.manifest.source)
                failed += 1
                continue
            print(f"{object_ref(p.rt, created['metadata']['name'])} created", flush=True)
    return 1 if failed else 0


FilesOpt = Annotated[list[str] | None, typer.Option("-f", "--filename",
                                                    help="file, directory or - (stdin); repeatable")]
RecursiveOpt = Annotated[bool, typer.Option("-R", "--recursive/--no-recursive",
                                            help="process directories recursively")]


def apply(ctx: typer.Context, filename: FilesOpt = None, recursive: RecursiveOpt = False) -> None:
    """Apply a configuration to resources from files or stdin (client-side apply)."""
    if not filename:
        raise KubectlError("must specify one of -f and -k")
    code = asyncio.run(run_apply(ctx.obj, filename, recursive))
    if code:
        raise typer.Exit(code)

