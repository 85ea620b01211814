"""API discovery documents (``/api``, ``/api/v1``, ``/apis``, ``/apis/{group}/{version}``)."""

from __future__ import annotations

from typing import Any

from minik8s.api.registry import Registry

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


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    """``metav1.APIResourceList`` of one group/version, subresources included; None if not served."""
    resources: list[dict[str, Any]] = []
    for rt in registry.types:
        if (rt.group, rt.version) != (group, version):
            continue
        entry: dict[str, Any] = {
            "name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced,
            "kind": rt.kind, "verbs": list(rt.verbs),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        resources.append(entry)
        for sub in sorted(rt.subresources):
            verbs = {"status": ["get", "patch", "update"], "binding": ["create"], "scale": ["get", "patch", "update"],
                     "log": ["get"], "exec": ["create", "get"], "attach": ["create", "get"],
                     "portforward": ["create", "get"], "token": ["create"],
                     "ephemeralcontainers": ["get", "patch", "update"]}.get(sub, ["get"])
            kind = {"binding": "Binding", "scale": "Scale", "log": "Pod", "exec": "PodExecOptions",
                    "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions",
                    "token": "TokenRequest"}.get(sub, rt.kind)
            sub_entry: dict[str, Any] = {"name": f"{rt.plural}/{sub}", "singularName": "",
                                         "namespaced": rt.namespaced, "kind": kind, "verbs": verbs}
            if sub == "token":  # a kind of another group, as kube-apiserver says
                sub_entry.update(group="authentication.k8s.io", version="v1")
            resources.append(sub_entry)
    if not resources:
        return None
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


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
