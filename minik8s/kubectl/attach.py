"""``kubectl attach (POD | TYPE/NAME) [-c C] [-i] [-t] [-q]``: the output of a running container from
now on, and with ``-i`` its stdin (the container needs ``stdin: true``), over Kubernetes' WebSocket
channel protocol (``/api/v1/namespaces/{ns}/pods/{name}/attach``; :mod:`minik8s.kubectl.channels`).

As kubectl: ``TYPE/NAME`` of a workload attaches to its most active pod; without ``-c`` the default
container (announced on stderr when the pod has several); ``If you don't see a command prompt, try
pressing enter.`` on stderr first (not with ``--quiet``); ``-t`` without a TTY in the container is
dropped with kubectl's error line, and a container with a TTY gets one even without ``-t``; a
completed pod is refused. It ends when the container ends or the stream is closed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated
from urllib.parse import urlencode

import typer

from minik8s.api.base import Obj
from minik8s.kubectl.attaching import container_names, default_container, resolve_pod
from minik8s.kubectl.channels import raw_terminal, run_stream, ws_base
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import duration_flag
from minik8s.kubectl.session import GlobalOptions, Session


def attach_url(server: str, namespace: str, pod: str, container: str, stdin: bool, tty: bool) -> str:
    """The attach URL: container, then the streams (stderr is folded into a TTY's stdout)."""
    query = [("container", container), ("stdin", str(stdin).lower()), ("stdout", "true"),
             ("stderr", str(not tty).lower()), ("tty", str(tty).lower())]
    return f"{ws_base(server)}/api/v1/namespaces/{namespace}/pods/{pod}/attach?{urlencode(query)}"


async def _target(opts: GlobalOptions, arg: str, container: str | None, timeout: float, quiet: bool) \
        -> tuple[Obj, str]:
    async with Session(opts) as s:
        pod, _ = await resolve_pod(s, arg, timeout, for_logs=False)
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise KubectlError(f"cannot attach a container in a completed pod; current phase is {phase}")
    if not container:
        container, notice = default_container(pod, for_logs=False)
        if notice and not quiet:
            print(notice, file=sys.stderr, flush=True)
    elif container not in container_names(pod):
        raise KubectlError(f"cannot attach to the container: container {container} not found in pod "
                           f"{(pod.get('metadata') or {}).get('name')}")
    return pod, container


def _spec_of(pod: Obj, name: str) -> Obj:
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if c.get("name") == name:
                return c
    return {}


def attach(
    ctx: typer.Context,
    pod: Annotated[str, typer.Argument(metavar="(POD | TYPE/NAME)", help="pod name, pod/NAME or TYPE/NAME")],
    container: Annotated[str | None, typer.Option("-c", "--container", help="container name")] = None,
    stdin: Annotated[bool, typer.Option("-i", "--stdin", help="pass stdin to the container")] = False,
    tty: Annotated[bool, typer.Option("-t", "--tty", help="stdin is a TTY")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="print only what the container prints")] = False,
    pod_running_timeout: Annotated[str, typer.Option("--pod-running-timeout",
                                                     help="how long to wait for a workload's pod")] = "1m0s",
) -> None:
    """Attach to a running container."""
    opts: GlobalOptions = ctx.obj
    config = opts.config()
    wait = duration_flag(pod_running_timeout, "--pod-running-timeout")
    obj, container = asyncio.run(_target(opts, pod, container, wait, quiet))
    spec = _spec_of(obj, container)
    if tty and not spec.get("tty"):
        tty = False
        if not quiet:
            print(f"error: Unable to use a TTY - container {container} did not allocate one", file=sys.stderr)
    elif not tty and spec.get("tty"):
        tty = True  # the container has a TTY: its stream is a TTY's
    raw = tty and stdin and os.isatty(sys.stdin.fileno())
    if not quiet:
        print("If you don't see a command prompt, try pressing enter.", file=sys.stderr, flush=True)
    meta = obj.get("metadata") or {}
    url = attach_url(config.server, str(meta.get("namespace")), str(meta.get("name")), container, stdin, tty)
    with raw_terminal(sys.stdin.fileno() if stdin else -1, raw):
        asyncio.run(run_stream(config, url, stdin, raw))
