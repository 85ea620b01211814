"""API discovery documents (``/api``, ``/api/v1``, ``/apis``, ``/apis/{group}/{version}``), and aggregated
discovery (``apidiscovery.k8s.io/v2``) on ``/api`` and ``/apis`` for the clients that ask for it."""

from __future__ import annotations

from typing import Any

from minik8s.api.resourcetypes import Registry, ResourceType, subresource

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-minik8s",
    "gitCommit": "minik8s",
    "gitTreeState": "clean",
    "buildDate": "2026-11-21T00:00:00Z",
    "goVersion": "python3.11",
    "compiler": "cpython",
    "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    """``/api``: the core group's versions (``metav1.APIVersions``)."""
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _subresources(rt: ResourceType) -> list[tuple[str, list[str], str, tuple[str, str]]]:
    """``(name, verbs, kind, (group, version))`` of each subresource of ``rt``, by name
    (:data:`~minik8s.api.resourcetypes.SUBRESOURCES`); the group and version are ``("", "")``
    where the kind is the resource's own group's."""
    out = []
    for name in sorted(rt.subresources):
        sub = subresource(name)
        out.append((name, list(sub.verbs), sub.kind or rt.kind, sub.group_version or ("", "")))
    return out


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    """``metav1.APIResourceList`` of one group/version, subresources included; None if not served."""
    resources: list[dict[str, Any]] = []
    for rt in _types_of(registry, group, version):
        entry: dict[str, Any] = {
            "name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced,
            "kind": rt.kind, "verbs": list(rt.verbs),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        resources.append(entry)
        for sub, verbs, kind, (sub_group, sub_version) in _subresources(rt):
            sub_entry: dict[str, Any] = {"name": f"{rt.plural}/{sub}", "singularName": "",
                                         "namespaced": rt.namespaced, "kind": kind, "verbs": verbs}
            if sub_group:
                sub_entry.update(group=sub_group, version=sub_version)
            resources.append(sub_entry)
    if not resources:
        return None
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def _types_of(registry: Registry, group: str, version: str) -> list[ResourceType]:
    return [rt for rt in registry.types if (rt.group, rt.version) == (group, version)]


def aggregated(registry: Registry, core: bool) -> dict[str, Any]:
    """Aggregated discovery (``apidiscovery.k8s.io/v2`` ``APIGroupDiscoveryList``, GA in Kubernetes
    1.30): every group with its versions (the preferred one first) and each version's resources
    and subresources in one document -- ``/api`` for the core group (``core``), ``/apis`` for
    the named groups.  What client-go (kubectl >= 1.30) asks for first, one request instead of
    one per group version; it says exactly what the per-version documents say."""
    groups: dict[str, list[str]] = {}
    for group, version in registry.group_versions():
        if (group == "") == core:
            groups.setdefault(group, []).append(version)
    items = []
    for group, versions in groups.items():
        meta: dict[str, Any] = {"name": group} if group else {}
        meta["creationTimestamp"] = None  # Go writes ObjectMeta's zero time
        entries = [{"version": version,
                    "resources": [_resource_discovery(rt) for rt in _types_of(registry, group, version)],
                    "freshness": "Current"} for version in versions]
        items.append({"metadata": meta, "versions": entries})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def _resource_discovery(rt: ResourceType) -> dict[str, Any]:
    """``apidiscovery.k8s.io/v2`` ``APIResourceDiscovery`` of ``rt``."""
    entry: dict[str, Any] = {"resource": rt.plural, "responseKind": {"group": "", "version": "", "kind": rt.kind},
                             "scope": "Namespaced" if rt.namespaced else "Cluster", "singularResource": rt.singular,
                             "verbs": list(rt.verbs)}
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subs = [{"subresource": sub, "responseKind": {"group": group, "version": version, "kind": kind}, "verbs": verbs}
            for sub, verbs, kind, (group, version) in _subresources(rt)]
    if subs:
        entry["subresources"] = subs
    return entry


def api_group_list(registry: Registry) -> dict[str, Any]:
    """``/apis``: every named group (``metav1.APIGroupList``)."""
    groups: dict[str, list[str]] = {}
    for group, version in registry.group_versions():
        if group:
            groups.setdefault(group, []).append(version)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group(g, vs) for g, vs in groups.items()]}


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    """``metav1.APIGroup``: the first version registered is the preferred one."""
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries,
            "preferredVersion": entries[0]}
