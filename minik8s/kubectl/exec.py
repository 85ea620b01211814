"""``kubectl exec (POD | TYPE/NAME) [-c C] [-i] [-t] -- CMD ARGS...`` over Kubernetes' WebSocket channel protocol.

``TYPE/NAME`` of a workload runs the command in its most active pod; without ``-c`` the default
container (:mod:`minik8s.kubectl.attaching`) is announced on stderr as kubectl does.

The connection goes to ``/api/v1/namespaces/{ns}/pods/{name}/exec?command=..`` with the
subprotocol ``v5.channel.k8s.io`` (falling back to ``v4.channel.k8s.io``; the frames:
:mod:`minik8s.kubectl.channels`). kubectl exits with the remote command's exit code.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated

import typer

from minik8s.kubectl.attaching import exec_container, resolve_pod
from minik8s.kubectl.channels import exec_url, raw_terminal, run_stream
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import duration_flag
from minik8s.kubectl.session import GlobalOptions, Session


async def exec_target(opts: GlobalOptions, arg: str, container: str | None, timeout: float) -> tuple[str, str, str]:
    """``(namespace, pod, container)`` the command runs in: ``arg`` is ``POD``, ``pod/NAME`` or ``TYPE/NAME``
    of a workload (its most active pod, waiting up to ``timeout`` seconds for one); without ``container``
    the default one, announced on stderr as kubectl does.

    Raises the server's errors (NotFound) and KubectlError (a completed pod, an unknown container).
    """
    async with Session(opts) as s:
        pod, _ = await resolve_pod(s, arg, timeout, for_logs=False)
    meta = pod.get("metadata") or {}
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise KubectlError(f"cannot exec into a container in a completed pod; current phase is {phase}")
    return str(meta.get("namespace")), str(meta.get("name")), exec_container(pod, container)


def exec_(
    ctx: typer.Context,
    pod: Annotated[str, typer.Argument(metavar="(POD | TYPE/NAME)", help="pod name, pod/NAME or TYPE/NAME")],
    command: Annotated[list[str] | None, typer.Argument(metavar="-- COMMAND [ARGS...]",
                                                        help="the command to run")] = None,
    container: Annotated[str | None, typer.Option("-c", "--container", help="container name")] = None,
    stdin: Annotated[bool, typer.Option("-i", "--stdin", help="pass stdin to the command")] = False,
    tty: Annotated[bool, typer.Option("-t", "--tty", help="stdin is a TTY")] = False,
    pod_running_timeout: Annotated[str, typer.Option("--pod-running-timeout",
                                                     help="how long to wait for a workload's pod")] = "1m0s",
) -> None:
    """Execute a command in a container."""
    if not command:
        raise KubectlError("you must specify at least one command for the container")
    opts: GlobalOptions = ctx.obj
    config = opts.config()
    if tty and (not stdin or not os.isatty(sys.stdin.fileno())):
        print("Unable to use a TTY - input is not a terminal or the right kind of file", file=sys.stderr)
        tty = False
    wait = duration_flag(pod_running_timeout, "--pod-running-timeout")
    namespace, name, container = asyncio.run(exec_target(opts, pod, container, wait))
    url = exec_url(config.server, namespace, name, command, container, stdin, tty)
    with raw_terminal(sys.stdin.fileno() if stdin else -1, tty):
        code = asyncio.run(run_stream(config, url, stdin, tty))
    if code:
        print(f"command terminated with exit code {code}", file=sys.stderr)
        raise typer.Exit(code)
