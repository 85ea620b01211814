"""Resource name resolution through the server's discovery documents.

kubectl knows no kinds of its own: it reads ``/api/v1``, ``/apis`` and
``/apis/{group}/{version}`` and builds :class:`~minik8s.api.resourcetypes.ResourceType`
rows from them, so kinds the server adds later (ReplicaSet, Service, ...) work
without changes here.  Users may name a type by plural, singular, short name,
Kind, or ``name.group`` / ``name.version.group``; objects as ``TYPE NAME...``,
``TYPE/NAME`` or ``TYPE1,TYPE2``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from minik8s.api import errors
from minik8s.api.resourcetypes import Registry, ResourceType, from_aggregated, from_discovery
from minik8s.client.rest import Client
from minik8s.kubectl.errors import KubectlError

#: what kubectl asks ``/api`` and ``/apis`` for: aggregated discovery, else the plain documents
AGGREGATED_ACCEPT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"


async def discover(client: Client) -> Registry:
    """Every kind the server serves: core first, then each group (preferred version first).

    Two requests where the server has aggregated discovery (``/api`` and ``/apis`` as
    ``APIGroupDiscoveryList``, as kubectl >= 1.30 asks), else one more per group version.
    Raises the client's errors (ServerUnavailable, APIError) when discovery fails.
    """
    # one after the other: over one connection, one TLS handshake instead of two at once
    core = await client.request("GET", "/api", accept=AGGREGATED_ACCEPT)
    named = await _named_groups(client)
    if _is_aggregated(core):
        types = from_aggregated(core)
    else:
        types = from_discovery(await client.request("GET", "/api/v1"), "", "v1")
    if _is_aggregated(named):
        return Registry(types + from_aggregated(named))
    wanted: list[tuple[str, str]] = []
    for grp in named.get("groups") or []:
        name = grp.get("name") or ""
        preferred = (grp.get("preferredVersion") or {}).get("version")
        versions = [v.get("version") for v in grp.get("versions") or [] if v.get("version")]
        if preferred in versions:
            versions.remove(preferred)
            versions.insert(0, preferred)
        wanted += [(name, v) for v in versions]

    async def fetch(group: str, version: str) -> list[ResourceType]:
        try:
            doc = await client.request("GET", f"/apis/{group}/{version}")
        except errors.NotFound:
            return []
        return from_discovery(doc, group, version)

    for rows in await asyncio.gather(*(fetch(g, v) for g, v in wanted)):
        types += rows
    return Registry(types)


async def _named_groups(client: Client) -> dict[str, Any]:
    try:
        return await client.request("GET", "/apis", accept=AGGREGATED_ACCEPT)  # type: ignore[no-any-return]
    except errors.NotFound:
        return {}


def _is_aggregated(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == "APIGroupDiscoveryList"


def resource_type(registry: Registry, name: str) -> ResourceType:
    """Resolve what a user typed (``pods``, ``po``, ``Pod``, ``leases.coordination.k8s.io``).

    Raises KubectlError (``the server doesn't have a resource type "x"``) when nothing matches.
    """
    rt = registry.resolve(name) if name else None
    if rt is None:
        raise KubectlError(f'the server doesn\'t have a resource type "{name}"')
    return rt


def kind_for(registry: Registry, api_version: str, kind: str) -> ResourceType | None:
    """The type of a manifest's ``apiVersion``/``kind`` (None when the server does not serve it)."""
    return registry.by_kind(api_version, kind)


def type_ref(rt: ResourceType) -> str:
    """How kubectl names a type in messages: ``pod``, ``namespace``, ``replicaset.apps``."""
    kind = rt.kind.lower()
    return f"{kind}.{rt.group}" if rt.group else kind


def object_ref(rt: ResourceType, name: str) -> str:
    """``pod/web``, ``replicaset.apps/web``."""
    return f"{type_ref(rt)}/{name}"


def plural_ref(rt: ResourceType) -> str:
    """``pods``, ``replicasets.apps`` (the form of server NotFound messages)."""
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


@dataclass
class Target:
    """One resource type and the names asked for (empty: all of that type)."""

    rt: ResourceType
    names: list[str] = field(default_factory=list)


def one_object(args: list[str]) -> tuple[str, str] | None:
    """``(type, name)`` of the one object ``args`` name as ``TYPE/NAME`` or ``TYPE NAME`` (kubectl's
    ``expose`` and ``autoscale``); None for any other shape, for which each verb has its own error."""
    if len(args) == 1 and "/" in args[0]:
        type_name, _, name = args[0].partition("/")
        return type_name, name
    if len(args) == 2:
        return args[0], args[1]
    return None


def parse_targets(registry: Registry, args: list[str]) -> list[Target]:
    """Turn ``TYPE[,TYPE...] [NAME...]`` or ``TYPE/NAME...`` arguments into targets.

    ``all`` expands to the types in the ``all`` category (like kubectl).
    Raises KubectlError for unknown types and for mixing the two forms.
    """
    if not args:
        raise KubectlError('You must specify the type of resource to get. Use "kubectl api-resources" '
                           "for a complete list of supported resources.")
    if any("/" in a for a in args):
        if not all("/" in a for a in args):
            raise KubectlError("there is no need to specify a resource type as a separate argument when "
                               "passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' "
                               "instead of 'kubectl get resource resource/<resource_name>'")
        targets: list[Target] = []
        for arg in args:
            type_name, _, name = arg.partition("/")
            if not name:
                raise KubectlError(f"arguments in resource/name form must have a single resource and name: {arg}")
            rt = resource_type(registry, type_name)
            for t in targets:
                if t.rt == rt:
                    t.names.append(name)
                    break
            else:
                targets.append(Target(rt, [name]))
        return targets
    type_names = [t for t in args[0].split(",") if t]
    names = args[1:]
    rts: list[ResourceType] = []
    for type_name in type_names:
        if type_name.lower() == "all":
            # one version per group and resource: discovery lists the preferred version first
            seen = {(r.group, r.plural) for r in rts}
            for rt in registry.types:
                if "all" in rt.categories and (rt.group, rt.plural) not in seen:
                    rts.append(rt)
                    seen.add((rt.group, rt.plural))
            continue
        rt = resource_type(registry, type_name)
        if rt not in rts:
            rts.append(rt)
    return [Target(rt, list(names)) for rt in rts]

