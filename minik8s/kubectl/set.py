"""``kubectl set image`` and ``kubectl set env``: change the pod template of workloads (or a Pod).

``set image TYPE/NAME CONTAINER=IMAGE...`` (``*`` for every container, init containers included) and
``set env TYPE/NAME KEY=VALUE... KEY-... [-c CONTAINERS] [--list]`` read each object, change its pod
template and send what changed as a JSON merge patch; an object left unchanged prints nothing, as
with kubectl 1.32.  ``--dry-run=client`` prints the changed object without sending it,
``--dry-run=server`` has the server validate the patch without storing it.
"""

from __future__ import annotations

import asyncio
import copy
import fnmatch
from collections.abc import Callable
from typing import Annotated

import typer

from minik8s.api.base import Obj
from minik8s.api.patch import create_merge_patch
from minik8s.api.resourcetypes import ResourceType
from minik8s.client.rest import PATCH_TYPES, resource_path
from minik8s.kubectl.creating import DryRunOpt, OutputOpt, check_flags, print_result
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.resolve import object_ref, parse_targets
from minik8s.kubectl.selection import split_changes
from minik8s.kubectl.session import GlobalOptions, Session

app = typer.Typer(name="set", add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Set specific features on objects: image, env.")


def pod_spec(obj: Obj) -> Obj:
    """The pod spec inside ``obj`` (a Pod's own, a workload's template, a CronJob's job template);
    KubectlError for a kind without one."""
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return spec  # type: ignore[no-any-return]
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    template = spec.get("template")
    if not isinstance(template, dict):
        raise KubectlError(f"{kind} does not have a pod template")
    return template.setdefault("spec", {})  # type: ignore[no-any-return]


Change = Callable[[Obj], None]


async def _update_each(opts: GlobalOptions, resources: list[str], change: Change, what: str, dry_run: str,
                       output: str) -> None:
    """Read each named object, apply ``change`` to a copy and patch what changed; print
    ``<ref> <what> updated`` (or the object for ``-o``)."""
    check_flags(dry_run, output)
    async with Session(opts) as s:
        targets = parse_targets(s.registry, resources)
        for target in targets:
            if not target.names:
                raise KubectlError("resource(s) were provided, but no name was specified")
            for name in target.names:
                await _update_one(s, target.rt, name, change, what, dry_run, output)


async def _update_one(s: Session, rt: ResourceType, name: str, change: Change, what: str, dry_run: str,
                      output: str) -> None:
    namespace = s.namespace if rt.namespaced else None
    original = await s.client.get(rt, name, namespace)
    modified = copy.deepcopy(original)
    change(modified)
    patch = create_merge_patch(original, modified)
    ref = object_ref(rt, name)
    if dry_run == "client":
        print_result(ref, modified, output, dry_run, f"{what} updated")
        return
    if not patch:
        return
    params = {"dryRun": "All"} if dry_run == "server" else None
    result = await s.client.request("PATCH", resource_path(rt, namespace, name), params=params, body=patch,
                                    content_type=PATCH_TYPES["merge"])
    print_result(ref, result, output, dry_run, f"{what} updated")


# ------------------------------------------------------------------ image
def set_images(obj: Obj, images: dict[str, str]) -> None:
    """Give each named container (``*``: all, init containers included) its new image; KubectlError
    ``unable to find container named "x"`` for a name the pod spec lacks."""
    spec = pod_spec(obj)
    containers = (spec.get("initContainers") or []) + (spec.get("containers") or [])
    for cname, image in images.items():
        found = False
        for c in containers:
            if cname == "*" or c.get("name") == cname:
                c["image"] = image
                found = True
        if not found:
            raise KubectlError(f'unable to find container named "{cname}"')


@app.command("image", context_settings={"allow_interspersed_args": True})
def set_image(ctx: typer.Context,
              args: Annotated[list[str] | None, typer.Argument(metavar="(TYPE NAME | TYPE/NAME) CONTAINER=IMAGE...",
                                                               help="the objects, then container=image pairs")]
              = None,
              dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Update the image of containers of a pod template (Deployment, DaemonSet, ...) or a Pod."""
    resources, pairs = split_changes(args or [], lambda a: "=" in a, "image")
    if not pairs:
        raise KubectlError("at least one image update is required")
    if not resources:
        raise KubectlError("one or more resources must be specified as <resource> <name> or <resource>/<name>")
    images: dict[str, str] = {}
    for pair in pairs:
        cname, _, image = pair.partition("=")
        if not cname or not image:
            raise KubectlError(f"invalid image update: {pair}")
        images[cname] = image
    asyncio.run(_update_each(ctx.obj, resources, lambda obj: set_images(obj, images), "image", dry_run, output))


# ------------------------------------------------------------------ env
def env_changes(args: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(``KEY=VALUE`` pairs, ``KEY-`` removals) of ``set env``; KubectlError for an invalid name."""
    pairs: list[tuple[str, str]] = []
    removals: list[str] = []
    for arg in args:
        if arg.endswith("-") and "=" not in arg:
            removals.append(arg[:-1])
            continue
        key, _, value = arg.partition("=")
        if not key or key[0].isdigit() or not all(ch.isalnum() or ch in "-._" for ch in key):
            raise KubectlError(f'"{key}" is not a valid key name: a valid environment variable name must consist '
                               "of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit "
                               "(e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for "
                               "validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")
        pairs.append((key, value))
    return pairs, removals


def selected_containers(obj: Obj, pattern: str) -> list[Obj]:
    """The pod spec's init containers and containers whose name matches ``pattern`` (a glob)."""
    spec = pod_spec(obj)
    return [c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
            if fnmatch.fnmatchcase(c.get("name") or "", pattern)]


def set_env_vars(obj: Obj, pattern: str, pairs: list[tuple[str, str]], removals: list[str]) -> None:
    """Set (in place, else appended) and remove variables in every selected container."""
    for c in selected_containers(obj, pattern):
        env: list[Obj] = [e for e in c.get("env") or [] if e.get("name") not in removals]
        for key, value in pairs:
            for e in env:
                if e.get("name") == key:
                    e.clear()
                    e.update(name=key, value=value)
                    break
            else:
                env.append({"name": key, "value": value})
        if env:
            c["env"] = env
        else:
            c.pop("env", None)


def env_listing(obj: Obj, pattern: str) -> list[str]:
    """``set env --list``: ``# Kind name, container c`` then ``NAME=value`` (``# NAME from ...`` for
    references) for each selected container."""
    lines: list[str] = []
    meta = obj.get("metadata") or {}
    for c in selected_containers(obj, pattern):
        lines.append(f"# {obj.get('kind')} {meta.get('name')}, container {c.get('name')}")
        for source in c.get("envFrom") or []:
            ref = source.get("configMapRef") or source.get("secretRef") or {}
            kind = "configmap" if "configMapRef" in source else "secret"
            prefix = f", prefix {source['prefix']}" if source.get("prefix") else ""
            lines.append(f"# {kind} {ref.get('name')}{prefix}")
        for e in c.get("env") or []:
            if "valueFrom" not in e:
                lines.append(f"{e.get('name')}={e.get('value', '')}")
                continue
            src = e["valueFrom"]
            if "fieldRef" in src:
                lines.append(f"# {e['name']} from field path {src['fieldRef'].get('fieldPath')}")
            elif "resourceFieldRef" in src:
                lines.append(f"# {e['name']} from resource {src['resourceFieldRef'].get('resource')}")
            elif "configMapKeyRef" in src:
                ref = src["configMapKeyRef"]
                lines.append(f"# {e['name']} from configmap {ref.get('name')}, key {ref.get('key')}")
            elif "secretKeyRef" in src:
                ref = src["secretKeyRef"]
                lines.append(f"# {e['name']} from secret {ref.get('name')}, key {ref.get('key')}")
    return lines


async def _list_env(opts: GlobalOptions, resources: list[str], pattern: str) -> None:
    async with Session(opts) as s:
        for target in parse_targets(s.registry, resources):
            for name in target.names:
                obj = await s.client.get(target.rt, name, s.namespace if target.rt.namespaced else None)
                for line in env_listing(obj, pattern):
                    print(line)


@app.command("env", context_settings={"allow_interspersed_args": True})
def set_env(ctx: typer.Context,
            args: Annotated[list[str] | None, typer.Argument(metavar="(TYPE NAME | TYPE/NAME) KEY=VAL... KEY-...",
                                                             help="the objects, then changes")] = None,
            containers: Annotated[str, typer.Option("-c", "--containers", help="container names (glob)")] = "*",
            env: Annotated[list[str] | None, typer.Option("-e", "--env", help="KEY=VALUE; repeatable")] = None,
            list_: Annotated[bool, typer.Option("--list", help="list the variables instead")] = False,
            dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Update environment variables of a pod template (Deployment, DaemonSet, ...) or a Pod."""
    resources, changes = split_changes(args or [], lambda a: "=" in a or (a.endswith("-") and len(a) > 1),
                                       "env")
    if not resources:
        raise KubectlError("one or more resources must be specified as <resource> <name> or <resource>/<name>")
    if list_:
        asyncio.run(_list_env(ctx.obj, resources, containers))
        return
    pairs, removals = env_changes(changes + list(env or []))
    if not pairs and not removals:
        return
    asyncio.run(_update_each(ctx.obj, resources, lambda obj: set_env_vars(obj, containers, pairs, removals),
                             "env", dry_run, output))
