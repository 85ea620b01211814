"""``kubectl delete``: by name, ``TYPE/NAME``, ``-f FILE``, ``-l SELECTOR`` or ``--all``.

Like kubectl, it waits (``--wait``, the default) until the objects are really gone:
a pod on a node first terminates gracefully, a namespace first empties.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from minik8s.api import errors
from minik8s.client.rest import ServerUnavailable
from minik8s.kubectl.errors import KubectlError, server_error
from minik8s.kubectl.options import KustomizeOpt
from minik8s.kubectl.resolve import object_ref, type_ref
from minik8s.kubectl.selection import ObjectRef, select
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.waiting import wait_gone

CASCADE = {"background": "Background", "foreground": "Foreground", "orphan": "Orphan",
           "true": "Background", "false": "Orphan"}


@dataclass
class DeleteOptions:
    """The resolved flags of one ``kubectl delete``."""

    grace_period: int | None
    propagation: str | None
    wait: bool
    timeout: float
    ignore_not_found: bool
    output: str


def grace_period_for(grace_period: int, now: bool, force: bool) -> int | None:
    """kubectl's rules: ``--now`` is 1 s; ``--force`` defaults to 0; a bare 0 without ``--force`` becomes 1."""
    if now:
        if grace_period >= 0:
            raise KubectlError("--now and --grace-period cannot be specified together")
        return 1
    if force and grace_period < 0:
        return 0
    if grace_period == 0 and not force:
        return 1
    return grace_period if grace_period >= 0 else None


def propagation_for(cascade: str) -> str:
    """``--cascade`` value → DeleteOptions.propagationPolicy."""
    try:
        return CASCADE[cascade.lower()]
    except KeyError:
        raise KubectlError(f'invalid cascade value ({cascade}). Must be "background", "foreground", '
                           'or "orphan".') from None


async def delete_one(s: Session, v: ObjectRef, o: DeleteOptions) -> bool:
    """DELETE one object and report it; False when it failed (NotFound etc.)."""
    try:
        result: Any = await s.client.delete(v.rt, v.name, v.namespace, grace_period_seconds=o.grace_period,
                                            propagation_policy=o.propagation,
                                            preconditions={"uid": v.uid} if v.uid else None)
    except ServerUnavailable:
        raise
    except errors.NotFound as exc:
        if o.ignore_not_found:
            return True
        print(server_error(exc), file=sys.stderr)
        return False
    except errors.APIError as exc:
        print(server_error(exc), file=sys.stderr)
        return False
    if isinstance(result, dict) and result.get("kind") != "Status":
        v.uid = (result.get("metadata") or {}).get("uid") or v.uid
    if o.output == "name":
        print(object_ref(v.rt, v.name), flush=True)
    else:
        print(f'{type_ref(v.rt)} "{v.name}" deleted', flush=True)
    return True


async def run_delete(opts: GlobalOptions, args: list[str], files: list[str], recursive: bool, selector: str,
                     field_selector: str, all_: bool, all_namespaces: bool, o: DeleteOptions,
                     kustomize: str | None = None) -> int:
    """Delete what the arguments name; returns the exit code."""
    async with Session(opts) as s:
        victims = await select(s, args, files, recursive, selector, field_selector, all_, all_namespaces,
                               kustomize=kustomize)
        if not victims:  # kubectl's words, on stdout, without the namespace
            print("No resources found")
            return 0
        failed = False
        deleted: list[ObjectRef] = []
        for v in victims:
            if await delete_one(s, v, o):
                deleted.append(v)
            else:
                failed = True
        if o.wait and deleted:
            left = await wait_gone(s, deleted, o.timeout)
            if left:
                refs = ", ".join(f"{v.rt.plural}/{v.name}" for v in left)
                raise KubectlError(f"timed out waiting for the condition on {refs}")
        return 1 if failed else 0


def delete(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="TYPE [NAME...] | TYPE/NAME...",
                                                     help="what to delete")] = None,
    filename: Annotated[list[str] | None, typer.Option("-f", "--filename", help="file, directory or -")] = None,
    recursive: Annotated[bool, typer.Option("-R", "--recursive/--no-recursive",
                                            help="process directories recursively")] = False,
    kustomize: KustomizeOpt = None,
    selector: Annotated[str, typer.Option("-l", "--selector", help="label selector")] = "",
    field_selector: Annotated[str, typer.Option("--field-selector", help="field selector")] = "",
    all_: Annotated[bool, typer.Option("--all", help="delete every object of the type in the namespace")] = False,
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces",
                                                 help="with -l or --all: in every namespace")] = False,
    grace_period: Annotated[int, typer.Option("--grace-period",
                                              help="seconds of graceful termination (-1: the object's)")] = -1,
    now: Annotated[bool, typer.Option("--now", help="terminate at once (grace period 1)")] = False,
    force: Annotated[bool, typer.Option("--force", help="remove without waiting for termination")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="wait until the objects are gone")] = True,
    timeout: Annotated[float, typer.Option("--timeout", help="seconds to wait (0: no limit)")] = 0,
    cascade: Annotated[str, typer.Option("--cascade", help="background, foreground or orphan")] = "background",
    ignore_not_found: Annotated[bool, typer.Option("--ignore-not-found",
                                                   help="treat 'not found' as success")] = False,
    output: Annotated[str, typer.Option("-o", "--output", help="name")] = "",
) -> None:
    """Delete resources by file names, stdin, resources and names, or by resources and label selector."""
    if output not in ("", "name"):
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           "allowed formats are: name")
    o = DeleteOptions(grace_period=grace_period_for(grace_period, now, force),
                      propagation=propagation_for(cascade), wait=wait, timeout=timeout,
                      ignore_not_found=ignore_not_found or bool(all_ or selector), output=output)
    if force and o.grace_period == 0:
        print("Warning: Immediate deletion does not wait for confirmation that the running resource has been "
              "terminated. The resource may continue to run on the cluster indefinitely.", file=sys.stderr)
    code = asyncio.run(run_delete(ctx.obj, args or [], filename or [], recursive, selector, field_selector,
                                  all_, all_namespaces, o, kustomize))
    if code:
        raise typer.Exit(code)
