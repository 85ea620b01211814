"""``kubectl version``: the client's version and the server's ``/version``."""

from __future__ import annotations

import asyncio
from importlib import metadata
from typing import Annotated, Any

import typer

from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions, Session


def client_version() -> str:
    """The installed minik8s version (``0.1.0``)."""
    try:
        return metadata.version("minik8s")
    except metadata.PackageNotFoundError:
        return "0.1.0"


async def server_version(opts: GlobalOptions) -> dict[str, Any]:
    """The server's ``/version`` document."""
    async with Session(opts, discover=False) as s:
        info = await s.client.request("GET", "/version")
        return info if isinstance(info, dict) else {"gitVersion": str(info)}


def version(
    ctx: typer.Context,
    client: Annotated[bool, typer.Option("--client", help="print the client version only")] = False,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml or json")] = "",
) -> None:
    """Print the client and server version information."""
    if output not in ("", "yaml", "json"):
        raise KubectlError(f"--output must be 'yaml' or 'json', got {output!r}")
    client_info = {"gitVersion": f"minik8s {client_version()}", "major": "0", "minor": "1",
                   "platform": "linux", "compiler": "cpython"}
    server_info = None if client else asyncio.run(server_version(ctx.obj))
    if output:
        doc: dict[str, Any] = {"clientVersion": client_info}
        if server_info is not None:
            doc["serverVersion"] = server_info
        print(printing.to_yaml(doc).rstrip("\n") if output == "yaml" else printing.to_json(doc, sort_keys=False))
        return
    print(f"Client Version: minik8s {client_version()}")
    if server_info is not None:
        print(f"Server Version: {server_info.get('gitVersion', '')}")
