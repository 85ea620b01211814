"""``kubectl api-versions``: every group/version the server serves, sorted, one a line."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions, Session


async def served_versions(opts: GlobalOptions) -> list[str]:
    """``v1`` and every ``group/version`` of ``/api`` and ``/apis``, sorted."""
    async with Session(opts, discover=False) as s:
        core = await s.client.request("GET", "/api")
        try:
            groups = (await s.client.request("GET", "/apis")).get("groups") or []
        except errors.NotFound:
            groups = []
    found = [str(v) for v in (core.get("versions") or [])]
    found += [str(v.get("groupVersion")) for g in groups for v in g.get("versions") or [] if v.get("groupVersion")]
    return sorted(set(found))


def api_versions(ctx: typer.Context,
                 args: Annotated[list[str] | None, typer.Argument(hidden=True)] = None) -> None:
    """Print the supported API versions on the server, in the form of "group/version"."""
    if args:
        raise KubectlError(f"unexpected arguments: [{' '.join(args)}]\n"
                           "See 'kubectl api-versions -h' for help and examples")
    printing.write_lines(asyncio.run(served_versions(ctx.obj)))
