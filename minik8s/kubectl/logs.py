"""``kubectl logs POD [-c CONTAINER] [-f] [--tail N] [--timestamps] [--previous]``.

Streams ``GET /api/v1/namespaces/{ns}/pods/{name}/log`` (the apiserver relays the
kubelet's stream) to stdout as it arrives.  ``kubectl logs gpujob/NAME`` prints a GPUJob's
stdout (``-c stderr``: its stderr) from the results the controller brought back.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated, Any

import typer

from minik8s.client.rest import resource_path
from minik8s.kubectl.gpujoboutput import gpujob_output
from minik8s.kubectl.logquery import log_params
from minik8s.kubectl.resolve import pod_name
from minik8s.kubectl.session import GlobalOptions, Session

GPUJOB_NAMES = ("gpujob", "gpujobs", "gj", "gpujob.minik8s.io", "gpujobs.minik8s.io")


def gpujob_name(arg: str) -> str | None:
    """``gpujob/NAME`` (or ``gj/NAME``) → ``NAME``; None for anything else."""
    kind, slash, name = arg.partition("/")
    return name if slash and name and kind.lower() in GPUJOB_NAMES else None


async def stream_logs(opts: GlobalOptions, name: str, params: dict[str, Any]) -> None:
    """Copy the log stream to stdout chunk by chunk."""
    async with Session(opts) as s:
        rt = s.resource("pods")
        path = resource_path(rt, s.namespace, name, "log")
        async for chunk in s.client.stream_text(path, params):
            sys.stdout.write(chunk)
            sys.stdout.flush()


def logs(
    ctx: typer.Context,
    pod: Annotated[str, typer.Argument(metavar="POD", help="pod name (or pod/NAME, gpujob/NAME)")],
    container: Annotated[str | None, typer.Option("-c", "--container", help="container name")] = None,
    follow: Annotated[bool, typer.Option("-f", "--follow", help="keep streaming new lines")] = False,
    tail: Annotated[int, typer.Option("--tail", help="lines from the end to show (-1: all)")] = -1,
    timestamps: Annotated[bool, typer.Option("--timestamps", help="prefix lines with RFC 3339 times")] = False,
    previous: Annotated[bool, typer.Option("-p", "--previous", help="the previous (crashed) instance")] = False,
    since: Annotated[int | None, typer.Option("--since-seconds", help="only lines newer than this")] = None,
    limit_bytes: Annotated[int | None, typer.Option("--limit-bytes", help="stop after this many bytes")] = None,
) -> None:
    """Print the logs of a container in a pod, or a GPUJob's stdout (gpujob/NAME; -c stderr for stderr)."""
    job = gpujob_name(pod)
    if job is not None:
        sys.stdout.write(asyncio.run(gpujob_output(ctx.obj, job, container or "stdout")))
        return
    params = log_params(container, follow, tail, timestamps, previous, since, limit_bytes)
    asyncio.run(stream_logs(ctx.obj, pod_name(pod), params))
