"""``kubectl taint nodes NODE key=value:Effect | key:Effect | key=value:Effect- | key:Effect- | key-``.

Taints are identified by key and effect.  Adding one that a node already has with the same
key and effect needs ``--overwrite`` (which then replaces its value); ``key:Effect-``
removes that one, ``key-`` every taint with the key.  The result line is kubectl's:
``node/n1 tainted`` (something added), ``untainted`` (only removals) or ``modified``
(both, or ``--overwrite``).  Argument errors use kubectl's words and change nothing; the
write is a merge patch carrying the node's resourceVersion (retried on a Conflict).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.validation import label_value_errors, qualified_name_errors
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import SelectorOpt
from minik8s.kubectl.selection import ObjectRef, for_each, split_changes
from minik8s.kubectl.session import GlobalOptions, Session

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NODE_TYPES = ("node", "nodes", "no")


@dataclass(frozen=True)
class Taint:
    """One taint as the command line names it (``effect`` "" matches every effect when removing)."""

    key: str
    value: str = ""
    effect: str = ""

    def __str__(self) -> str:
        """Go's ``Taint.ToString``: ``k=v:Effect``, ``k:Effect``, ``k=v:`` or ``k``."""
        if not self.effect:
            return f"{self.key}={self.value}:" if self.value else self.key
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    def matches(self, taint: Obj) -> bool:
        """Same key and (when set) effect as a Node's taint (``MatchTaint`` / ``DeleteTaintsByKey``)."""
        return taint.get("key") == self.key and (not self.effect or taint.get("effect") == self.effect)

    def to_dict(self) -> Obj:
        """The ``spec.taints[]`` entry."""
        out = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        return out


def parse_taint(spec: str) -> Taint:
    """One ``key[=value]:Effect`` or ``key`` (kubectl's ``parseTaint``); KubectlError when invalid."""
    parts = spec.split(":")
    value = effect = ""
    if len(parts) == 1:
        key = parts[0]
    elif len(parts) == 2:
        effect = parts[1]
        if effect not in EFFECTS:
            raise KubectlError(f"invalid taint effect: {effect}, unsupported taint effect")
        kv = parts[0].split("=")
        if len(kv) > 2:
            raise KubectlError(f"invalid taint spec: {spec}")
        key = kv[0]
        if len(kv) == 2:
            value = kv[1]
            problems = label_value_errors(value)
            if problems:
                raise KubectlError(f"invalid taint spec: {spec}, {'; '.join(problems)}")
    else:
        raise KubectlError(f"invalid taint spec: {spec}")
    problems = qualified_name_errors(key)
    if problems:
        raise KubectlError(f"invalid taint spec: {spec}, {'; '.join(problems)}")
    return Taint(key, value, effect)


def parse_taints(specs: list[str]) -> tuple[list[Taint], list[Taint]]:
    """(taints to add, taints to remove) from ``k=v:E`` / ``k:E-`` / ``k-`` arguments (``parseTaints``).

    Raises KubectlError for a taint to add without an effect, two with the same key and
    effect, and a taint both added and removed.
    """
    add: list[Taint] = []
    remove: list[Taint] = []
    for spec in specs:
        if spec.endswith("-"):
            taint = parse_taint(spec[:-1])
            remove.append(Taint(taint.key, "", taint.effect))
            continue
        taint = parse_taint(spec)
        if not taint.effect:
            raise KubectlError(f"invalid taint spec: {spec}")
        if any(t.key == taint.key and t.effect == taint.effect for t in add):
            raise KubectlError(f"duplicated taints with the same key and effect: {taint}")
        add.append(taint)
    conflicts = [f'{{"{r.key}":"{r.effect}"}}' for a in add for r in remove
                 if a.key == r.key and (not r.effect or a.effect == r.effect)]
    if conflicts:
        raise KubectlError("can not both modify and remove the following taint(s) in the same command: "
                           + ", ".join(conflicts))
    return add, remove


def split_args(args: list[str]) -> tuple[list[str], list[str]]:
    """(resource arguments, taint arguments): every resource must come before the first taint."""
    resources, taints = split_changes(args, lambda arg: "=" in arg or ":" in arg or arg.endswith("-"), "taint")
    if not resources:
        raise KubectlError("one or more resources must be specified as <resource> <name>")
    if not taints:
        raise KubectlError("at least one taint update is required")
    return resources, taints


def node_names(resources: list[str], all_: bool, selector: str) -> list[str]:
    """The node names of ``nodes n1 n2`` / ``node/n1``; [] with ``--all`` or ``-l`` (listed later)."""
    first = resources[0]
    kind = first.partition("/")[0].lower()
    if kind not in NODE_TYPES:
        raise KubectlError(f'invalid resource type {first}, only ["node" "nodes"] are supported')
    names = [r.partition("/")[2] for r in resources] if "/" in first else resources[1:]
    if all_ and selector:
        raise KubectlError("setting 'all' parameter with a non empty selector is prohibited")
    if not all_ and not selector and not names:
        raise KubectlError("at least one resource name must be specified since 'all' parameter is not set")
    return names


def new_taints(node: Obj, add: list[Taint], remove: list[Taint], overwrite: bool) -> tuple[list[Obj], str]:
    """The node's taints after the change and the result word (``updateTaints`` + ``reorganizeTaints``).

    Raises KubectlError when an added key/effect exists and not ``overwrite``, or a
    taint to remove is not there.
    """
    name = (node.get("metadata") or {}).get("name")
    old = list((node.get("spec") or {}).get("taints") or [])
    if not overwrite:
        existing = [t.key for t in add for o in old if t.key == o.get("key") and t.effect == o.get("effect")]
        if existing:
            raise KubectlError(f"node {name} already has {','.join(existing)} taint(s) with same effect(s) "
                               "and --overwrite is false")
    result = [t.to_dict() for t in add]
    result += [o for o in old if not any(t.matches(o) for t in add)]
    added = len(result) != len(old)
    removed = False
    for r in remove:
        kept = [t for t in result if not r.matches(t)]
        removed = len(kept) != len(result)
        if not removed:
            raise KubectlError(f'taint "{r}" not found')
        result = kept
    if (added and removed) or overwrite:
        return result, "modified"
    return result, "tainted" if added else "untainted"


async def taint_node(s: Session, ref: ObjectRef, add: list[Taint], remove: list[Taint], overwrite: bool) -> str:
    """Apply the change to one node (compare-and-swap on its resourceVersion); returns the result word."""
    for _ in range(5):
        node = await s.client.get(ref.rt, ref.name)
        taints, word = new_taints(node, add, remove, overwrite)
        patch = {"metadata": {"resourceVersion": (node.get("metadata") or {}).get("resourceVersion")},
                 "spec": {"taints": taints or None}}
        try:
            await s.client.patch(ref.rt, ref.name, patch)
        except errors.Conflict:
            continue
        return word
    raise KubectlError(f"node {ref.name} kept changing; try again")


async def run_taint(opts: GlobalOptions, names: list[str], add: list[Taint], remove: list[Taint], all_: bool,
                    selector: str, overwrite: bool) -> int:
    """Taint every named (or listed) node."""
    async with Session(opts) as s:
        rt = s.resource("nodes")
        if names:
            refs = [ObjectRef(rt, None, n) for n in names]
        else:
            listed = await s.client.list_all(rt, label_selector=selector or None)
            refs = [ObjectRef(rt, None, str(n["metadata"]["name"])) for n in listed.get("items") or []]
            if not refs:
                raise KubectlError("no nodes found")
        return await for_each(refs, lambda ref: taint_node(s, ref, add, remove, overwrite))


def taint(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="nodes NODE KEY[=VALUE]:EFFECT[-]...",
                                                     help="nodes, then taint changes")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="replace same key+effect taints")] = False,
    all_: Annotated[bool, typer.Option("--all", help="every node")] = False,
    selector: SelectorOpt = "",
) -> None:
    """Update the taints on one or more nodes."""
    resources, specs = split_args(args or [])
    add, remove = parse_taints(specs)
    names = node_names(resources, all_, selector)
    code = asyncio.run(run_taint(ctx.obj, names, add, remove, all_, selector, overwrite))
    if code:
        raise typer.Exit(code)
