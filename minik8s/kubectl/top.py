"""``kubectl top pod|node``: CPU and memory use from the resource metrics API (``metrics.k8s.io``).

Like kubectl: ``top pod [NAME] [-n NS | -A] [-l SELECTOR] [--containers] [--sort-by cpu|memory]``
prints ``NAME CPU(cores) MEMORY(bytes)`` (``NAMESPACE`` first with ``-A``; ``POD NAME ...``
per container with ``--containers``); ``top node [NAME] [-l SELECTOR]`` prints ``NAME
CPU(cores) CPU% MEMORY(bytes) MEMORY%``, the percentages of the Node's allocatable, and
``<unknown>`` for Nodes without metrics.  CPU is shown in millicores (``12m``), memory in
MiB (``34Mi``), truncated as kubectl does.  Without the metrics API in discovery the error
is ``Metrics API not available``; pods that exist but have no metrics yet give ``metrics not
available yet``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.metrics import GROUP, VERSION
from minik8s.api.quantity import milli_value
from minik8s.api.registry import METRICS_TYPES
from minik8s.client.rest import resource_path
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions, Session

POD_METRICS, NODE_METRICS = METRICS_TYPES
MIB = 1024 * 1024
SORT_KEYS = ("cpu", "memory")

app = typer.Typer(name="top", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Display resource (CPU/memory) usage of pods or nodes.")


def cpu_text(milli: int) -> str:
    """Millicores as ``kubectl top`` prints them: ``12m``."""
    return f"{milli}m"


def memory_text(milli: int) -> str:
    """An amount in thousandths of bytes as ``kubectl top`` prints it: whole MiB, ``34Mi``."""
    return f"{-(-milli // 1000) // MIB}Mi"


def usage_milli(usage: Obj) -> tuple[int, int]:
    """``(cpu, memory)`` of a ``usage`` map in thousandths (missing → 0). Raises KubectlError on a bad quantity."""
    try:
        return milli_value(usage.get("cpu") or 0), milli_value(usage.get("memory") or 0)
    except ValueError as exc:
        raise KubectlError(f"the metrics API returned an invalid quantity: {exc}") from None


Table = tuple[list[str], list[list[str]]]
Entry = tuple[list[str], int, int]  # cells before the usage columns, cpu and memory in thousandths


def pod_rows(items: list[Obj], all_namespaces: bool, containers: bool, sort_by: str) -> Table:
    """Header and rows of ``top pod`` for PodMetrics ``items``."""
    header = (["NAMESPACE"] if all_namespaces else []) + (["POD"] if containers else []) + \
        ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    entries: list[Entry] = []
    for item in items:
        meta = item.get("metadata") or {}
        prefix = [str(meta.get("namespace") or "")] if all_namespaces else []
        per_container = [(str(c.get("name")), *usage_milli(c.get("usage") or {})) for c in item.get("containers") or []]
        if containers:
            for name, cpu, mem in per_container:
                entries.append((prefix + [str(meta.get("name")), name], cpu, mem))
        else:
            cpu = sum(c[1] for c in per_container)
            mem = sum(c[2] for c in per_container)
            entries.append((prefix + [str(meta.get("name"))], cpu, mem))
    entries = _sorted(entries, sort_by)
    return header, [cells + [cpu_text(cpu), memory_text(mem)] for cells, cpu, mem in entries]


def node_rows(items: list[Obj], nodes: list[Obj], sort_by: str) -> Table:
    """Header and rows of ``top node``: NodeMetrics ``items`` against the Nodes' allocatable;
    Nodes without metrics last, with ``<unknown>``."""
    header = ["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"]
    allocatable = {(n.get("metadata") or {}).get("name"): (n.get("status") or {}).get("allocatable") or {}
                   for n in nodes}
    entries: list[Entry] = []
    seen = set()
    for item in items:
        name = str((item.get("metadata") or {}).get("name"))
        seen.add(name)
        cpu, mem = usage_milli(item.get("usage") or {})
        alloc_cpu, alloc_mem = usage_milli(allocatable.get(name) or {})
        cpu_pct = f"{cpu * 100 // alloc_cpu}%" if alloc_cpu else "<unknown>"
        mem_pct = f"{mem * 100 // alloc_mem}%" if alloc_mem else "<unknown>"
        entries.append(([name, cpu_text(cpu), cpu_pct, memory_text(mem), mem_pct], cpu, mem))
    rows = [cells for cells, _, _ in _sorted(entries, sort_by)]
    rows += [[str(name)] + ["<unknown>"] * 4 for name in allocatable if name not in seen]
    return header, rows


def _sorted(entries: list[Entry], sort_by: str) -> list[Entry]:
    if not sort_by:
        return entries
    if sort_by not in SORT_KEYS:
        raise KubectlError(f"--sort-by accepts only cpu or memory, not {sort_by!r}")
    if sort_by == "cpu":
        return sorted(entries, key=lambda e: -e[1])
    return sorted(entries, key=lambda e: -e[2])


def _print(header: list[str], rows: list[list[str]], no_headers: bool) -> None:
    lines = printing.table(header, rows)
    printing.write_lines(lines[1:] if no_headers else lines)


def _require_metrics(s: Session) -> None:
    if s.registry.get(GROUP, VERSION, "pods") is None:
        raise KubectlError("Metrics API not available")


async def run_top_pod(opts: GlobalOptions, name: str | None, all_namespaces: bool, selector: str,
                      field_selector: str, containers: bool, sort_by: str, no_headers: bool) -> int:
    """``kubectl top pod``; returns the exit code."""
    async with Session(opts) as s:
        _require_metrics(s)
        namespace = None if all_namespaces else s.namespace
        if name:
            if namespace is None:
                raise KubectlError("a resource cannot be retrieved by name across all namespaces")
            items = [await s.client.request("GET", resource_path(POD_METRICS, namespace, name))]
        else:
            listed = await s.client.request("GET", resource_path(POD_METRICS, namespace), params={
                "labelSelector": selector or None, "fieldSelector": field_selector or None})
            items = list(listed.get("items") or [])
        if not items:
            pods = await s.client.list(s.client.kind("v1", "Pod"), namespace, label_selector=selector or None,
                                       field_selector=field_selector or None)
            if pods.get("items"):
                raise KubectlError("metrics not available yet")
            print("No resources found" + (f" in {namespace} namespace." if namespace else ""), file=sys.stderr)
            return 0
        _print(*pod_rows(items, all_namespaces, containers, sort_by), no_headers)
        return 0


async def run_top_node(opts: GlobalOptions, name: str | None, selector: str, sort_by: str, no_headers: bool) -> int:
    """``kubectl top node``; returns the exit code."""
    async with Session(opts) as s:
        _require_metrics(s)
        node_rt = s.client.kind("v1", "Node")
        if name:
            nodes = [await s.client.get(node_rt, name)]
            try:
                items = [await s.client.request("GET", resource_path(NODE_METRICS, None, name))]
            except errors.NotFound:
                items = []
        else:
            nodes = (await s.client.list(node_rt, label_selector=selector or None)).get("items") or []
            listed = await s.client.request("GET", resource_path(NODE_METRICS), params={
                "labelSelector": selector or None})
            items = list(listed.get("items") or [])
        if not nodes:
            print("No resources found", file=sys.stderr)
            return 0
        if not items:
            raise KubectlError("metrics not available yet")
        _print(*node_rows(items, nodes, sort_by), no_headers)
        return 0


def _run(coro: Any) -> None:
    code = asyncio.run(coro)
    if code:
        raise typer.Exit(code)


NameArg = Annotated[str | None, typer.Argument(metavar="NAME", help="one object by name (optional)")]
SelectorOpt = Annotated[str, typer.Option("-l", "--selector", help="label selector (a=b,c!=d)")]
SortOpt = Annotated[str, typer.Option("--sort-by", help="cpu or memory (highest first)")]
NoHeadersOpt = Annotated[bool, typer.Option("--no-headers", help="omit the header line")]


def top_pod(
    ctx: typer.Context,
    name: NameArg = None,
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="across namespaces")] = False,
    selector: SelectorOpt = "",
    field_selector: Annotated[str, typer.Option("--field-selector", help="field selector")] = "",
    containers: Annotated[bool, typer.Option("--containers", help="one line per container")] = False,
    sort_by: SortOpt = "",
    no_headers: NoHeadersOpt = False,
) -> None:
    """Display CPU and memory use of pods."""
    _run(run_top_pod(ctx.obj, name, all_namespaces, selector, field_selector, containers, sort_by, no_headers))


def top_node(
    ctx: typer.Context,
    name: NameArg = None,
    selector: SelectorOpt = "",
    sort_by: SortOpt = "",
    no_headers: NoHeadersOpt = False,
) -> None:
    """Display CPU and memory use of nodes."""
    _run(run_top_node(ctx.obj, name, selector, sort_by, no_headers))


def _register(command: Callable[..., None], names: tuple[str, ...]) -> None:
    app.command(names[0])(command)
    for alias in names[1:]:
        app.command(alias, hidden=True)(command)


_register(top_pod, ("pod", "pods", "po"))
_register(top_node, ("node", "nodes", "no"))
