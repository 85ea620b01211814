"""``kubectl cluster-info``: where the control plane runs and the cluster services
(``kube-system`` Services labelled ``kubernetes.io/cluster-service=true``), as kubectl prints them
when its output is not a terminal (no colours)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from minik8s.kubectl.session import GlobalOptions, Session


async def lines(opts: GlobalOptions) -> list[str]:
    """The lines kubectl prints (a blank line and the ``cluster-info dump`` hint included)."""
    async with Session(opts, discover=False) as s:
        server = s.client.server
        out = [f"Kubernetes control plane is running at {server}"]
        listed = await s.client.request("GET", "/api/v1/namespaces/kube-system/services",
                                        params={"labelSelector": "kubernetes.io/cluster-service=true"})
        for svc in listed.get("items") or []:
            meta = svc.get("metadata") or {}
            name = meta.get("labels", {}).get("kubernetes.io/name") or meta.get("name")
            ports = (svc.get("spec") or {}).get("ports") or []
            port = ports[0] if ports else {}
            link = str(meta.get("name"))
            if port.get("name"):
                link += f":{port['name']}"
            elif port.get("port"):
                link += f":{port['port']}"
            out.append(f"{name} is running at {server}/api/v1/namespaces/kube-system/services/{link}/proxy")
    return out + ["", "To further debug and diagnose cluster problems, use 'kubectl cluster-info dump'."]


def cluster_info(ctx: typer.Context,
                 args: Annotated[list[str] | None, typer.Argument(hidden=True)] = None) -> None:
    """Display addresses of the control plane and services with label kubernetes.io/cluster-service=true."""
    for line in asyncio.run(lines(ctx.obj)):
        print(line)
