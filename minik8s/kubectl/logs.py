"""``kubectl logs [-f] [-p] (POD | TYPE/NAME | -l SELECTOR) [-c CONTAINER]``, as kubectl 1.32 does it.

Streams ``GET /api/v1/namespaces/{ns}/pods/{name}/log`` (the apiserver relays the kubelet's stream)
to stdout as it arrives.  ``TYPE/NAME`` of a workload (``deploy/web``, ``job/pi``) reads its first pod
(:mod:`minik8s.kubectl.attaching`); ``-l`` reads every matching pod (the last 10 lines each unless
``--tail`` says otherwise), one after the other or, with ``-f``, all at once (at most
``--max-log-requests`` streams); ``--all-containers`` reads every container; ``--prefix`` starts each
line with ``[pod/NAME/CONTAINER]``.  Without ``-c`` the default container is taken and kubectl's
``Defaulted container ...`` notice goes to stderr.  ``kubectl logs gpujob/NAME`` prints a GPUJob's
stdout (``-c stderr``: its stderr) from the results the controller brought back.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import resource_path
from minik8s.kubectl.attaching import container_names, default_container, resolve_pod
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.gpujoboutput import gpujob_output
from minik8s.kubectl.logquery import log_params
from minik8s.kubectl.options import duration_flag
from minik8s.kubectl.session import GlobalOptions, Session

GPUJOB_NAMES = ("gpujob", "gpujobs", "gj", "gpujob.minik8s.io", "gpujobs.minik8s.io")
USAGE = ("expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\n"
         "POD or TYPE/NAME is a required argument for the logs command\n"
         "See 'kubectl logs -h' for help and examples")
#: ``--tail``'s default with ``-l`` (kubectl's ``selectorTail``).
SELECTOR_TAIL = 10


def gpujob_name(arg: str) -> str | None:
    """``gpujob/NAME`` (or ``gj/NAME``) → ``NAME``; None for anything else."""
    kind, slash, name = arg.partition("/")
    return name if slash and name and kind.lower() in GPUJOB_NAMES else None


def since_time_param(text: str) -> str:
    """``--since-time``'s value as the ``sinceTime`` query sends it (RFC 3339 in UTC, whole seconds).

    Raises KubectlError with Go's parse error for what is not RFC 3339.
    """
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        if when.tzinfo is None or "T" not in text:
            raise ValueError
    except ValueError:
        raise KubectlError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse "{text}" '
                           'as "2006"') from None
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def prefix_lines(text: str, prefix: str, at_line_start: bool) -> tuple[str, bool]:
    """``text`` with ``prefix`` at the start of each line (kubectl's ``prefixingWriter``); the second
    value says whether the next chunk starts a line."""
    if not prefix or not text:
        return text, at_line_start
    out = []
    for line in text.splitlines(keepends=True):
        out.append((prefix if at_line_start else "") + line)
        at_line_start = line.endswith("\n")
    return "".join(out), at_line_start


@dataclass
class LogRequest:
    """One container's log stream: the pod, container and the ``[pod/NAME/CONTAINER] `` prefix."""

    pod: str
    namespace: str
    container: str

    @property
    def prefix(self) -> str:
        """kubectl's ``--prefix`` for this stream."""
        return f"[pod/{self.pod}/{self.container}] "


def requests_for(pod: Obj, container: str | None, all_containers: bool) -> tuple[list[LogRequest], str | None]:
    """The log streams of one pod (``LogsForObject``) and the notice to print on stderr, if any.

    Raises KubectlError ``container X is not valid for pod P`` for an unknown container.
    """
    meta = pod.get("metadata") or {}
    name, namespace = str(meta.get("name")), str(meta.get("namespace"))
    if all_containers:
        return [LogRequest(name, namespace, c) for c in container_names(pod)], None
    notice = None
    if not container:
        container, notice = default_container(pod)
    if container not in container_names(pod):
        raise KubectlError(f"container {container} is not valid for pod {name}")
    return [LogRequest(name, namespace, container)], notice


async def _consume(s: Session, req: LogRequest, params: dict[str, Any], prefix: bool, whole_lines: bool) -> None:
    """Copy one stream to stdout (prefixed if asked; whole lines only when streams interleave)."""
    path = resource_path(s.resource("pods"), req.namespace, req.pod, "log")
    start, pending = True, ""
    async for chunk in s.client.stream_text(path, {**params, "container": req.container}):
        if whole_lines:
            pending += chunk
            cut = pending.rfind("\n") + 1
            chunk, pending = pending[:cut], pending[cut:]
        text, start = prefix_lines(chunk, req.prefix if prefix else "", start)
        sys.stdout.write(text)
        sys.stdout.flush()
    if pending:
        sys.stdout.write(prefix_lines(pending, req.prefix if prefix else "", start)[0])
        sys.stdout.flush()


@dataclass
class LogsOptions:
    """What ``kubectl logs`` was asked for (its flags after parsing)."""

    container: str | None
    selector: str
    follow: bool
    prefix: bool
    all_containers: bool
    max_log_requests: int
    pod_running_timeout: float


async def run_logs(opts: GlobalOptions, arg: str | None, o: LogsOptions, params: dict[str, Any]) -> None:
    """Find the pods and containers, print kubectl's notices on stderr, and stream the logs."""
    async with Session(opts) as s:
        pods: list[Obj]
        if o.selector:
            listed = await s.client.list_all(s.resource("pods"), s.namespace, label_selector=o.selector)
            pods = list(listed.get("items") or [])
            if not pods:
                print(f"No resources found in {s.namespace} namespace.", file=sys.stderr, flush=True)
        else:
            assert arg is not None
            try:
                pod, found = await resolve_pod(s, arg, o.pod_running_timeout, for_logs=True)
            except errors.NotFound as exc:
                raise KubectlError(f"error from server (NotFound): {exc} in namespace \"{s.namespace}\"") from None
            if found:
                print(found, file=sys.stderr, flush=True)
            pods = [pod]
        requests: list[LogRequest] = []
        for pod in pods:
            reqs, notice = requests_for(pod, o.container, o.all_containers)
            if notice:
                print(notice, file=sys.stderr, flush=True)
            requests += reqs
        if o.follow and len(requests) > 1:
            if len(requests) > o.max_log_requests:
                raise KubectlError(f"you are attempting to follow {len(requests)} log streams, but maximum "
                                   f"allowed concurrency is {o.max_log_requests}, use --max-log-requests to "
                                   "increase the limit")
            await asyncio.gather(*(_consume(s, r, params, o.prefix, True) for r in requests))
            return
        for r in requests:
            await _consume(s, r, params, o.prefix, False)


def logs(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="(POD | TYPE/NAME) [CONTAINER]",
                                                     help="pod, TYPE/NAME of a workload, or gpujob/NAME")] = None,
    container: Annotated[str | None, typer.Option("-c", "--container", help="container name")] = None,
    follow: Annotated[bool, typer.Option("-f", "--follow", help="keep streaming new lines")] = False,
    tail: Annotated[int | None, typer.Option("--tail", help="lines from the end to show (-1: all; "
                                                            "10 with a selector)")] = None,
    timestamps: Annotated[bool, typer.Option("--timestamps", help="prefix lines with RFC 3339 times")] = False,
    previous: Annotated[bool, typer.Option("-p", "--previous", help="the previous (crashed) instance")] = False,
    since: Annotated[str, typer.Option("--since", help="only lines newer than this duration (5s, 2m, 3h)")] = "0s",
    since_time: Annotated[str, typer.Option("--since-time", help="only lines after this RFC 3339 time")] = "",
    limit_bytes: Annotated[int, typer.Option("--limit-bytes", help="stop after this many bytes")] = 0,
    selector: Annotated[str, typer.Option("-l", "--selector", help="label selector of the pods")] = "",
    prefix: Annotated[bool, typer.Option("--prefix", help="prefix lines with [pod/NAME/CONTAINER]")] = False,
    max_log_requests: Annotated[int, typer.Option("--max-log-requests",
                                                  help="most concurrent streams with -l and -f")] = 5,
    all_containers: Annotated[bool, typer.Option("--all-containers", help="every container's logs")] = False,
    pod_running_timeout: Annotated[str, typer.Option("--pod-running-timeout",
                                                     help="how long to wait for a workload's pod")] = "20s",
) -> None:
    """Print the logs of a container in a pod, or a GPUJob's stdout (gpujob/NAME; -c stderr for stderr)."""
    names = list(args or [])
    since_seconds = duration_flag(since, "--since")
    wait = duration_flag(pod_running_timeout, "--pod-running-timeout")
    if len(names) == 1 and not selector and gpujob_name(names[0]) is not None:
        sys.stdout.write(asyncio.run(gpujob_output(ctx.obj, str(gpujob_name(names[0])), container or "stdout")))
        return
    if not names and not selector or len(names) > 2:
        raise KubectlError(USAGE)
    if len(names) == 1 and selector:
        raise KubectlError("only a selector (-l) or a POD name is allowed\n"
                           "See 'kubectl logs -h' for help and examples")
    inline = names[1] if len(names) == 2 else None
    sent_since_time = since_time_param(since_time) if since_time else None
    if since_time and since_seconds:
        raise KubectlError("at most one of `sinceTime` or `sinceSeconds` may be specified")
    if all_containers and (container or inline):
        raise KubectlError(f"--all-containers=true should not be specified with container name {container or inline}")
    if container and inline:
        raise KubectlError("only one of -c or an inline [CONTAINER] arg is allowed")
    if limit_bytes < 0:
        raise KubectlError("--limit-bytes must be greater than 0")
    if since_seconds < 0:
        raise KubectlError("--since must be greater than 0")
    if tail is not None and tail < -1:
        raise KubectlError("--tail must be greater than or equal to -1")
    if tail is None:
        tail = SELECTOR_TAIL if selector else -1
    params = log_params(None, follow, tail, timestamps, previous, round(since_seconds) or None, limit_bytes or None,
                        since_time=sent_since_time)
    o = LogsOptions(container or inline, selector, follow, prefix, all_containers, max_log_requests, wait)
    asyncio.run(run_logs(ctx.obj, names[0] if names else None, o, params))

