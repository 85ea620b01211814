"""What discovery says about a kind: :class:`ResourceType` rows and the :class:`Registry` that
looks them up, without the validation models.

The apiserver's own table of kinds (:mod:`minik8s.api.registry`) is made of these rows, each with
its model; a client (kubectl, the components' REST client) builds rows from the server's
discovery documents (:func:`from_discovery`).  Importing this module imports no pydantic model,
so kubectl starts fast.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minik8s.api.meta import TypedObject

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def storage_base(group: str, plural: str) -> str:
    """etcd key prefix of every object of ``plural`` in ``group`` (``""`` = core), ending in ``/``.

    Kubernetes' own groups (the core group, ``apps``, ``*.k8s.io``) store under ``/registry/{plural}/``;
    other groups under ``/registry/{group}/{plural}/``, as kube-apiserver does for CRDs.
    """
    builtin = "." not in group or group.endswith(".k8s.io")
    return f"/registry/{plural}/" if builtin else f"/registry/{group}/{plural}/"


@dataclass(frozen=True)
class CustomResource:
    """What the row of a custom resource's version carries beyond discovery, from its CRD.

    Kept as JSON text so that rows stay hashable and compare by content (a changed schema is a
    changed row).  ``crd``: the CRD's name; ``storage_version``: the version objects are stored in
    (every served version reads and writes the same objects, only ``apiVersion`` differs:
    conversion ``None``); ``*_path``: the scale subresource's JSON paths (``.spec.replicas``);
    ``terminating``: the CRD is being deleted (create answers 405).
    """

    crd: str
    storage_version: str
    schema_json: str = ""
    columns_json: str = "[]"
    spec_replicas_path: str = ""
    status_replicas_path: str = ""
    label_selector_path: str = ""
    terminating: bool = False

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The version's ``openAPIV3Schema`` (``{}`` when it has none)."""
        return dict(json.loads(self.schema_json)) if self.schema_json else {}

    @cached_property
    def printer_columns(self) -> list[dict[str, Any]]:
        """The version's ``additionalPrinterColumns``."""
        return list(json.loads(self.columns_json))


@dataclass(frozen=True)
class Subresource:
    """What ``{plural}/{name}/{subresource}`` serves, as discovery and the OpenAPI documents say
    (kube-apiserver's ``rest.Storage`` of the subresource).

    ``verbs``: discovery's verbs (``get`` read, ``update`` replace, ``patch``, ``create`` post);
    ``kind``: the kind the subresource takes and answers, ``""`` for the resource's own kind;
    ``group_version``: that kind's (group, version) where it is another group's (``scale`` →
    ``autoscaling/v1`` Scale, ``eviction`` → ``policy/v1`` Eviction), None for the resource's own;
    ``connect``: a streamed connection (kube-apiserver's ``connect`` action: GET and POST, answering
    a byte stream; ``kind`` is then its options kind, e.g. ``PodExecOptions``); ``query``: the
    query parameters of a connect or a plain-text subresource (``pods/log``); ``text``: it answers
    plain text (``pods/log``), not an object.
    """

    verbs: tuple[str, ...]
    kind: str = ""
    group_version: tuple[str, str] | None = None
    connect: bool = False
    query: tuple[str, ...] = ()
    text: bool = False


_ATTACH_QUERY = ("container", "stderr", "stdin", "stdout", "tty")
_WRITABLE = ("get", "patch", "update")

#: Every subresource minik8s serves, by name: a row's ``subresources`` name them, discovery and
#: ``/openapi/v2``/``/openapi/v3`` describe them from here (Kubernetes 1.32's verbs and kinds).
SUBRESOURCES: dict[str, Subresource] = {
    "status": Subresource(_WRITABLE),
    "approval": Subresource(_WRITABLE),
    "ephemeralcontainers": Subresource(_WRITABLE),
    "scale": Subresource(_WRITABLE, "Scale", ("autoscaling", "v1")),
    "binding": Subresource(("create",), "Binding"),
    "eviction": Subresource(("create",), "Eviction", ("policy", "v1")),
    "token": Subresource(("create",), "TokenRequest", ("authentication.k8s.io", "v1")),
    "log": Subresource(("get",), query=("container", "follow", "insecureSkipTLSVerifyBackend", "limitBytes",
                                        "pretty", "previous", "sinceSeconds", "tailLines", "timestamps"), text=True),
    "exec": Subresource(("create", "get"), "PodExecOptions", connect=True, query=("command",) + _ATTACH_QUERY),
    "attach": Subresource(("create", "get"), "PodAttachOptions", connect=True, query=_ATTACH_QUERY),
    "portforward": Subresource(("create", "get"), "PodPortForwardOptions", connect=True, query=("ports",)),
}


def subresource(name: str) -> Subresource:
    """The :class:`Subresource` named ``name`` (one this table lacks: read-only, of its resource's kind)."""
    return SUBRESOURCES.get(name) or Subresource(("get",))


@dataclass(frozen=True)
class ResourceType:
    """One kind of the API, as discovery describes it (``metav1.APIResource``).

    ``group`` is ``""`` for the core group; ``subresources`` names what exists
    under ``{plural}/{name}/`` (``status``, ``binding``, ``log``, ``exec``, ``scale``), each
    described by :data:`SUBRESOURCES`: naming one there is all discovery and the OpenAPI
    documents need.
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    #: the validation model of the apiserver's own rows; None on rows built from discovery (clients)
    model: type[TypedObject] | None
    short_names: tuple[str, ...] = ()
    subresources: frozenset[str] = field(default_factory=frozenset)
    verbs: tuple[str, ...] = ALL_VERBS
    categories: tuple[str, ...] = ()
    #: set on the rows of custom resources (from their CustomResourceDefinition)
    custom: CustomResource | None = None

    @property
    def api_version(self) -> str:
        """``v1`` for the core group, else ``group/version``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def group_version(self) -> tuple[str, str]:
        return (self.group, self.version)

    def storage_prefix(self, namespace: str | None = None) -> str:
        """etcd key prefix: ``/registry/{plural}/`` or ``/registry/{plural}/{namespace}/``.

        Kubernetes' own groups (``apps``, ``*.k8s.io``) store under ``/registry/{plural}/``;
        minik8s' own group under ``/registry/{group}/{plural}/``, as kube-apiserver does for CRDs.
        """
        base = storage_base(self.group, self.plural)
        if self.namespaced and namespace:
            return f"{base}{namespace}/"
        return base

    def storage_key(self, namespace: str | None, name: str) -> str:
        """etcd key of one object (``/registry/pods/default/web``, ``/registry/nodes/n1``)."""
        if self.namespaced:
            return f"{self.storage_prefix(namespace)}{name}"
        return f"{self.storage_prefix()}{name}"


class Registry:
    """All known kinds, looked up by group/version/plural or by any name a user types."""

    def __init__(self, types: list[ResourceType]) -> None:
        self.types = list(types)

    def add(self, rt: ResourceType) -> None:
        """Register one more kind (later issues add ReplicaSet, Service, ... this way)."""
        self.types.append(rt)

    def replace(self, old: list[ResourceType], new: list[ResourceType]) -> None:
        """Swap the rows ``old`` for ``new`` in one step (custom resources of a changed CRD)."""
        if old == new:
            return
        self.types = [rt for rt in self.types if rt not in old] + new

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        for rt in self.types:
            if rt.group == group and rt.version == version and rt.plural == plural:
                return rt
        return None

    def by_kind(self, api_version: str | None, kind: str) -> ResourceType | None:
        """Find by ``apiVersion`` (``v1``, ``apps/v1``) and ``kind``; ``api_version`` None matches any."""
        for rt in self.types:
            if rt.kind == kind and (api_version is None or rt.api_version == api_version):
                return rt
        return None

    def resolve(self, name: str) -> ResourceType | None:
        """Resolve what a user types: ``pods``, ``pod``, ``po``, ``Pod``, ``leases.coordination.k8s.io``."""
        lowered = name.lower()
        resource, _, group = lowered.partition(".")
        for rt in self.types:
            if group and group not in (rt.group, rt.version, f"{rt.version}.{rt.group}"):
                continue
            if resource in (rt.plural, rt.singular, rt.kind.lower()) or resource in rt.short_names:
                return rt
        return None

    def group_versions(self) -> list[tuple[str, str]]:
        """Every (group, version) served, core first, in registration order."""
        seen: list[tuple[str, str]] = []
        for rt in self.types:
            if rt.group_version not in seen:
                seen.append(rt.group_version)
        return seen


def from_discovery(doc: dict[str, Any], group: str, version: str) -> list[ResourceType]:
    """The rows of one discovery ``APIResourceList`` (``GET /apis/{group}/{version}``), subresources
    (``widgets/status``) folded into their parent's ``subresources``.

    Discovery rows carry no model (``model`` None): clients pass their objects through as dicts."""
    subs: dict[str, set[str]] = {}
    for res in doc.get("resources") or []:
        parent, _, sub = str(res.get("name") or "").partition("/")
        if sub:
            subs.setdefault(parent, set()).add(sub)
    rows = []
    for res in doc.get("resources") or []:
        name = str(res.get("name") or "")
        if not name or "/" in name:
            continue
        kind = str(res.get("kind") or "")
        rows.append(ResourceType(
            group, version, kind, name, str(res.get("singularName") or kind.lower()), bool(res.get("namespaced")),
            None, short_names=tuple(res.get("shortNames") or ()),
            subresources=frozenset(subs.get(name, set())), verbs=tuple(res.get("verbs") or ()),
            categories=tuple(res.get("categories") or ())))
    return rows


def from_aggregated(doc: dict[str, Any]) -> list[ResourceType]:
    """The rows of an aggregated discovery document (``apidiscovery.k8s.io/v2``
    ``APIGroupDiscoveryList``, from ``/api`` or ``/apis``): every version of every group, the
    preferred version first, as :func:`from_discovery` reads them from the per-version documents.
    Versions marked ``Stale`` (an aggregated API that did not answer) are left out, as client-go
    leaves them out."""
    rows = []
    for item in doc.get("items") or []:
        group = str((item.get("metadata") or {}).get("name") or "")
        for ver in item.get("versions") or []:
            if ver.get("freshness") == "Stale":
                continue
            version = str(ver.get("version") or "")
            for res in ver.get("resources") or []:
                kind = str((res.get("responseKind") or {}).get("kind") or "")
                rows.append(ResourceType(
                    group, version, kind, str(res.get("resource") or ""),
                    str(res.get("singularResource") or kind.lower()), res.get("scope") == "Namespaced", None,
                    short_names=tuple(res.get("shortNames") or ()),
                    subresources=frozenset(str(sub.get("subresource")) for sub in res.get("subresources") or []),
                    verbs=tuple(res.get("verbs") or ()), categories=tuple(res.get("categories") or ())))
    return rows
