"""``kubectl autoscale TYPE NAME --max=N [--min=N] [--cpu-percent=P]``: a HorizontalPodAutoscaler.

As kubectl 1.32, the HPA is ``autoscaling/v1`` (``targetCPUUtilizationPercentage``), named after the
target unless ``--name`` says otherwise, its ``scaleTargetRef`` the target's kind, name and
apiVersion.  (kubectl 1.34 and later send ``autoscaling/v2``; the server serves both.)
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from minik8s.api.base import Obj
from minik8s.kubectl.creating import (
    DryRunOpt,
    OutputOpt,
    check_flags,
    create_in,
    new_object,
    print_result,
    with_namespace,
)
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.resolve import object_ref, one_object
from minik8s.kubectl.session import GlobalOptions, Session

#: The kinds kubectl autoscales (``CanBeAutoscaled``).
SCALABLE = {("", "ReplicationController"), ("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet")}


def hpa_object(name: str, target: Obj, min_replicas: int, max_replicas: int, cpu_percent: int) -> Obj:
    """The autoscaling/v1 HPA kubectl 1.32 builds (Go field order); KubectlError for bad bounds."""
    if max_replicas < 1:
        raise KubectlError(f"--max=MAXPODS is required and must be at least 1, max: {max_replicas}")
    if max_replicas < min_replicas:
        raise KubectlError(f"--max=MAXPODS must be larger or equal to --min=MINPODS, max: {max_replicas}, "
                           f"min: {min_replicas}")
    hpa = new_object("autoscaling/v1", "HorizontalPodAutoscaler", name)
    spec: Obj = {"scaleTargetRef": {"kind": target["kind"], "name": target["metadata"]["name"],
                                    "apiVersion": target["apiVersion"]}}
    if min_replicas > 0:
        spec["minReplicas"] = min_replicas
    spec["maxReplicas"] = max_replicas
    if cpu_percent >= 0:
        spec["targetCPUUtilizationPercentage"] = cpu_percent
    hpa["spec"] = spec
    hpa["status"] = {"currentReplicas": 0, "desiredReplicas": 0}
    return hpa


async def run_autoscale(opts: GlobalOptions, args: list[str], name: str, min_replicas: int, max_replicas: int,
                        cpu_percent: int, dry_run: str, output: str) -> None:
    """Read the target, build its HPA, then print it (client dry run) or create it."""
    check_flags(dry_run, output)
    named = one_object(args)
    if named is None:
        raise KubectlError("You must provide one or more resources by argument or filename.")
    type_name, target_name = named
    async with Session(opts) as s:
        rt = s.resource(type_name)
        target = await s.client.get(rt, target_name, s.namespace if rt.namespaced else None)
        if (rt.group, rt.kind) not in SCALABLE:
            raise KubectlError(f"cannot autoscale a {rt.kind}: {rt.kind} cannot be scaled")
        target.setdefault("kind", rt.kind)
        target.setdefault("apiVersion", f"{rt.group}/{rt.version}" if rt.group else rt.version)
        hpa = hpa_object(name or target_name, target, min_replicas, max_replicas, cpu_percent)
        if dry_run == "client":
            if opts.namespace:
                with_namespace(hpa, opts.namespace)
            print_result(f"horizontalpodautoscaler.autoscaling/{hpa['metadata']['name']}", hpa, output, dry_run,
                         "autoscaled")
            return
        hpa_rt, created = await create_in(s, hpa, dry_run)
        print_result(object_ref(hpa_rt, created["metadata"]["name"]), created, output, dry_run, "autoscaled")


def autoscale(ctx: typer.Context,
              args: Annotated[list[str] | None, typer.Argument(metavar="(TYPE NAME | TYPE/NAME)",
                                                               help="the object to autoscale")] = None,
              max_: Annotated[int | None, typer.Option("--max", help="the most replicas")] = None,
              min_: Annotated[int, typer.Option("--min", help="the fewest replicas (default: the server's)")] = -1,
              cpu_percent: Annotated[int, typer.Option("--cpu-percent",
                                                       help="target average CPU utilisation, %")] = -1,
              name: Annotated[str, typer.Option("--name", help="the HPA's name (default: the object's)")] = "",
              dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a HorizontalPodAutoscaler for a Deployment, ReplicaSet, StatefulSet or ReplicationController."""
    if max_ is None:
        raise KubectlError('required flag(s) "max" not set')
    asyncio.run(run_autoscale(ctx.obj, args or [], name, min_, max_, cpu_percent, dry_run, output))
