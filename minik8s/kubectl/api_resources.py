"""``kubectl api-resources``: the kinds the server serves, from its discovery documents."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions, Session


async def list_types(opts: GlobalOptions) -> list[ResourceType]:
    """Every served type (preferred version of each group), core first, then by group and name."""
    async with Session(opts) as s:
        seen: set[tuple[str, str]] = set()
        rows = []
        for rt in s.registry.types:
            if (rt.group, rt.plural) in seen:
                continue  # a later (non-preferred) version of the same resource
            seen.add((rt.group, rt.plural))
            rows.append(rt)
        return sorted(rows, key=lambda rt: (rt.group != "", rt.group, rt.plural))


def api_resources(
    ctx: typer.Context,
    output: Annotated[str, typer.Option("-o", "--output", help="wide or name")] = "",
    namespaced: Annotated[str | None, typer.Option("--namespaced",
                                                   help="true: only namespaced kinds; false: only cluster-scoped")]
    = None,
    api_group: Annotated[str | None, typer.Option("--api-group", help="only this group ('' for core)")] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="omit the header line")] = False,
) -> None:
    """Print the supported API resources on the server."""
    if output not in ("", "wide", "name"):
        raise KubectlError(f'--output {output} is not available')
    rows = asyncio.run(list_types(ctx.obj))
    if namespaced is not None:
        want = namespaced.lower() in ("true", "1", "yes", "t")
        rows = [rt for rt in rows if rt.namespaced == want]
    if api_group is not None:
        rows = [rt for rt in rows if rt.group == api_group]
    if output == "name":
        printing.write_lines([f"{rt.plural}.{rt.group}" if rt.group else rt.plural for rt in rows])
        return
    header = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    if output == "wide":
        header += ["VERBS", "CATEGORIES"]
    table = []
    for rt in rows:
        row = [rt.plural, ",".join(rt.short_names), rt.api_version, str(rt.namespaced).lower(), rt.kind]
        if output == "wide":
            row += [",".join(rt.verbs), ",".join(rt.categories)]
        table.append(row)
    lines = printing.table(header, table)
    printing.write_lines(lines[1:] if no_headers else lines)
