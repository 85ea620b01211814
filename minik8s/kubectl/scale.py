"""``kubectl scale [TYPE NAME | TYPE/NAME | -f FILE] --replicas N [--current-replicas N]``.

Goes through the ``scale`` subresource (autoscaling/v1 Scale), so it works for every
kind that serves one (Deployment, ReplicaSet).  Without preconditions it sends a merge
patch ``{"spec": {"replicas": N}}``; with ``--current-replicas`` / ``--resource-version``
it reads the Scale, checks them (``Expected replicas to be 2, was 3``) and writes it back
with its resourceVersion, so a concurrent change is a Conflict rather than lost.
``--timeout`` then waits until the object reports ``status.replicas == N``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated

import typer

from minik8s.api.base import Obj
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import FilesOpt, RecursiveOpt, SelectorOpt, duration_flag
from minik8s.kubectl.selection import ObjectRef, for_each, select
from minik8s.kubectl.session import GlobalOptions, Session


def check_preconditions(scale: Obj, current_replicas: int, resource_version: str) -> None:
    """kubectl's ``ScalePrecondition.validate``; raises KubectlError ``Expected X to be A, was B``."""
    replicas = int((scale.get("spec") or {}).get("replicas") or 0)
    if current_replicas >= 0 and replicas != current_replicas:
        raise KubectlError(f"Expected replicas to be {current_replicas}, was {replicas}")
    actual_rv = str((scale.get("metadata") or {}).get("resourceVersion") or "")
    if resource_version and actual_rv != resource_version:
        raise KubectlError(f"Expected resource version to be {resource_version}, was {actual_rv}")


async def scale_one(s: Session, ref: ObjectRef, replicas: int, current_replicas: int, resource_version: str) -> None:
    """Set ``ref``'s replicas through its scale subresource (preconditions checked first)."""
    if current_replicas >= 0 or resource_version:
        scale = await s.client.get(ref.rt, ref.name, ref.namespace, subresource="scale")
        check_preconditions(scale, current_replicas, resource_version)
        scale.setdefault("spec", {})["replicas"] = replicas
        scale.setdefault("metadata", {})["namespace"] = ref.namespace
        await s.client.update(ref.rt, scale, subresource="scale")
        return
    await s.client.patch(ref.rt, ref.name, {"spec": {"replicas": replicas}}, ref.namespace, subresource="scale")


async def wait_replicas(s: Session, ref: ObjectRef, replicas: int, timeout: float) -> None:
    """Poll the Scale until ``status.replicas`` is ``replicas`` (or someone set another size).

    Raises KubectlError ``timed out waiting for the condition`` after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        scale = await s.client.get(ref.rt, ref.name, ref.namespace, subresource="scale")
        spec = int((scale.get("spec") or {}).get("replicas") or 0)
        status = int((scale.get("status") or {}).get("replicas") or 0)
        if spec != replicas or status == replicas:
            return
        if time.monotonic() >= deadline:
            raise KubectlError("timed out waiting for the condition")
        await asyncio.sleep(min(0.5, max(deadline - time.monotonic(), 0.05)))


async def run_scale(opts: GlobalOptions, args: list[str], files: list[str], recursive: bool, selector: str,
                    all_: bool, replicas: int, current_replicas: int, resource_version: str, timeout: float) -> int:
    """Scale every named object (waiting for each when ``timeout`` > 0); returns the exit code."""
    async with Session(opts) as s:
        refs = await select(s, args, files, recursive, selector, "", all_, verb="scale")
        if not refs:
            raise KubectlError("no objects passed to scale")
        if len(refs) > 1 and (current_replicas >= 0 or resource_version):
            raise KubectlError("precondition is not supported for multiple objects")

        async def act(ref: ObjectRef) -> str:
            await scale_one(s, ref, replicas, current_replicas, resource_version)
            if timeout > 0:
                await wait_replicas(s, ref, replicas, timeout)
            return "scaled"

        return await for_each(refs, act)


def scale(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="TYPE NAME | TYPE/NAME", help="what to scale")] = None,
    replicas: Annotated[int, typer.Option("--replicas", help="the new number of replicas")] = -1,
    current_replicas: Annotated[int, typer.Option("--current-replicas",
                                                  help="precondition: the current size (-1: none)")] = -1,
    resource_version: Annotated[str, typer.Option("--resource-version",
                                                  help="precondition: the current resourceVersion")] = "",
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    selector: SelectorOpt = "",
    all_: Annotated[bool, typer.Option("--all", help="every object of the type in the namespace")] = False,
    timeout: Annotated[str, typer.Option("--timeout", help="wait this long for the new size (e.g. 30s)")] = "0s",
) -> None:
    """Set a new size for a Deployment or ReplicaSet."""
    if replicas < 0:
        raise KubectlError("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
    wait = duration_flag(timeout)
    code = asyncio.run(run_scale(ctx.obj, args or [], filename or [], recursive, selector, all_, replicas,
                                 current_replicas, resource_version, wait))
    if code:
        raise typer.Exit(code)
