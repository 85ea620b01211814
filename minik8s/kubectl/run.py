"""``kubectl run NAME --image=IMAGE``: create one Pod, as modern kubectl does (no other generators).

The Pod is the one kubectl 1.32 builds: label ``run: NAME`` (or ``--labels``), one container named
NAME, the arguments after ``--`` as its ``args`` (its ``command`` with ``--command``), ``--env``,
``--port``, ``--image-pull-policy``, ``--annotations``, ``--restart`` (Always, OnFailure, Never) and
``dnsPolicy: ClusterFirst``.  Attaching (``-i``, ``-t``, ``--attach``, ``--rm``) is not supported.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from minik8s.api.base import Obj
from minik8s.kubectl.creating import DryRunOpt, OutputOpt, new_object, parse_labels, send
from minik8s.kubectl.errors import KubectlError

RESTART_POLICIES = ("Always", "OnFailure", "Never")


def parse_env(specs: list[str]) -> list[Obj]:
    """``--env=NAME=VALUE`` values as EnvVars; KubectlError ``invalid env: X`` (kubectl's words)."""
    env: list[Obj] = []
    for spec in specs:
        name, eq, value = spec.partition("=")
        if not eq or not name:
            raise KubectlError(f"invalid env: {spec}")
        env.append({"name": name, "value": value})
    return env


def pod_object(name: str, image: str, args: list[str], command: bool = False, port: str = "",
               env: list[str] | None = None, labels: str = "", annotations: list[str] | None = None,
               restart: str = "Always", pull_policy: str = "", privileged: bool = False) -> Obj:
    """The Pod ``kubectl run`` creates, fields in Go order (KubectlError for bad flag values)."""
    if restart not in RESTART_POLICIES:
        raise KubectlError(f"invalid restart policy: {restart}\nSee 'kubectl run -h' for help and examples")
    pod_labels = parse_labels(labels) if labels else {"run": name}
    pod_annotations: dict[str, str] = {}
    for item in annotations or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise KubectlError(f"invalid annotation spec: {item}")
        pod_annotations[key] = value
    container: Obj = {"name": name, "image": image}
    if args:
        container["command" if command else "args"] = list(args)
    if port:
        try:
            container["ports"] = [{"containerPort": int(port)}]
        except ValueError:
            raise KubectlError(f'strconv.Atoi: parsing "{port}": invalid syntax') from None
    if env:
        container["env"] = parse_env(env)
    container["resources"] = {}
    if pull_policy:
        container["imagePullPolicy"] = pull_policy
    if privileged:
        container["securityContext"] = {"privileged": True}
    obj = new_object("v1", "Pod", name, pod_labels, pod_annotations)
    obj["spec"] = {"containers": [container], "restartPolicy": restart, "dnsPolicy": "ClusterFirst"}
    obj["status"] = {}
    return obj


def run(ctx: typer.Context,
        name: Annotated[str | None, typer.Argument(help="the Pod's name")] = None,
        args: Annotated[list[str] | None, typer.Argument(metavar="-- [COMMAND] [args...]",
                                                         help="the container's arguments (command with --command)")]
        = None,
        image: Annotated[str, typer.Option("--image", help="the container image")] = "",
        command: Annotated[bool, typer.Option("--command", help="the arguments after -- are the command")] = False,
        port: Annotated[str, typer.Option("--port", help="the container port")] = "",
        env: Annotated[list[str] | None, typer.Option("--env", help="NAME=VALUE; repeatable")] = None,
        labels: Annotated[str, typer.Option("-l", "--labels", help="a=b,c=d (default run=NAME)")] = "",
        annotations: Annotated[list[str] | None, typer.Option("--annotations", help="k=v; repeatable")] = None,
        restart: Annotated[str, typer.Option("--restart", help="Always, OnFailure or Never")] = "Always",
        image_pull_policy: Annotated[str, typer.Option("--image-pull-policy", help="the image pull policy")] = "",
        privileged: Annotated[bool, typer.Option("--privileged", help="run the container privileged")] = False,
        dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a Pod running a particular image."""
    if not image:
        raise KubectlError('required flag(s) "image" not set')
    if not name:
        raise KubectlError("NAME is required for run\nSee 'kubectl run -h' for help and examples")
    obj = pod_object(name, image, args or [], command, port, env, labels, annotations, restart,
                     image_pull_policy, privileged)
    asyncio.run(send(ctx.obj, obj, dry_run, output))
