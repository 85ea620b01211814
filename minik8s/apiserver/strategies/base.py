"""The base strategy and the validators several kinds share.

Follows Kubernetes' ``rest.RESTCreateStrategy`` / ``RESTUpdateStrategy`` shape:
``prepare_for_create`` and ``prepare_for_update`` reset what a client may not set,
``default`` fills defaults (``pkg/apis/core/v1/defaults.go`` values), ``validate``
returns ``(field path, bad value or None, message)`` causes that become a 422
``Invalid`` Status.  A kind without special needs uses :class:`Strategy` (:data:`GENERIC`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from minik8s.api import validation as v
from minik8s.api.base import Obj
from minik8s.api.quantity import parse_quantity
from minik8s.api.selectors import LabelSelector

Cause = tuple[str, Any, str]

_PERCENT = re.compile(r"[0-9]+%")

REQUIRED = "Required value"


def unsupported(value: Any, allowed: tuple[str, ...]) -> str:
    """Kubernetes' ``NotSupported`` message: ``Unsupported value: "x": supported values: "a", "b"``."""
    return f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{a}"' for a in allowed)


def too_many(count: int, limit: int) -> str:
    """Kubernetes' ``field.TooMany`` message."""
    return f"Too many: {count}: must have at most {limit} items"


class Strategy:
    """The default behaviour: metadata validation only; status kept apart when ``has_status``."""

    has_status: bool = False
    #: subresources besides ``status`` whose updates :meth:`prepare_for_subresource_update` prepares
    #: (a CertificateSigningRequest's ``approval``)
    update_subresources: frozenset[str] = frozenset()
    namespace_scoped: bool = True
    name_check: Callable[[str], list[str]] = staticmethod(v.dns1123_subdomain_errors)

    # ---------------------------------------------------------- create / update
    def prepare_for_create(self, obj: Obj) -> None:
        """Drop what a client may not set on create (status of kinds with a status subresource)."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """A main-resource update never changes status (Kubernetes' status subresource contract)."""
        if self.has_status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)

    def prepare_for_status_update(self, new: Obj, old: Obj) -> None:
        """A ``/status`` update changes only status: spec and metadata stay as stored."""
        for key in list(new):
            if key not in ("status", "metadata", "apiVersion", "kind"):
                new.pop(key)
        for key, value in old.items():
            if key not in ("status", "metadata"):
                new[key] = copy.deepcopy(value)
        new["metadata"] = copy.deepcopy(old["metadata"])

    def prepare_for_subresource_update(self, subresource: str, new: Obj, old: Obj) -> None:
        """An update through one of :attr:`update_subresources`: keep what it may not change."""
        raise NotImplementedError(subresource)

    def default(self, obj: Obj) -> None:
        """Fill Kubernetes' defaults in place."""

    def prune(self, obj: Obj) -> list[str]:
        """Drop the fields the kind's schema does not know; their paths (a custom resource's strategy
        prunes by its CRD's schema; built-in kinds are normalised through their models instead)."""
        return []

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        """Whether a main-resource update bumps ``metadata.generation`` (a change of ``spec``)."""
        return new.get("spec") != old.get("spec")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        """Causes why ``obj`` is invalid (empty list: valid). ``old`` is set for updates."""
        return self.validate_metadata(obj)

    def validate_metadata(self, obj: Obj) -> list[Cause]:
        meta = obj.get("metadata") or {}
        causes: list[Cause] = []
        name = meta.get("name")
        if not name:
            causes.append(("metadata.name", None, "name or generateName is required"))
        else:
            causes += [("metadata.name", name, msg) for msg in type(self).name_check(name)]
        causes += v.validate_labels(meta.get("labels"), "metadata.labels")
        causes += v.validate_annotations(meta.get("annotations"), "metadata.annotations")
        for i, ref in enumerate(meta.get("ownerReferences") or []):
            for fld in ("apiVersion", "kind", "name", "uid"):
                if not ref.get(fld):
                    causes.append((f"metadata.ownerReferences[{i}].{fld}", None, REQUIRED))
        return causes

    # ---------------------------------------------------------- reads
    def fields(self, obj: Obj) -> dict[str, str]:
        """The values ``fieldSelector`` may filter on (``metadata.name``, ``metadata.namespace`` ...)."""
        meta = obj.get("metadata") or {}
        return {"metadata.name": meta.get("name") or "", "metadata.namespace": meta.get("namespace") or ""}

    # ---------------------------------------------------------- delete
    def graceful_delete_seconds(self, obj: Obj, requested: int | None) -> int:
        """Seconds of graceful deletion (0: remove at once). Only pods are graceful."""
        return 0

    # ---------------------------------------------------------- allocations (Service IPs, node ports)
    async def allocate(self, store: Any, obj: Obj, old: Obj | None) -> list[str]:
        """Reserve what ``obj`` needs before it is written; returns the reservation keys taken."""
        return []

    @staticmethod
    def keys_of(obj: Obj | None) -> set[str]:
        """Reservation keys an object holds (released when it is deleted)."""
        return set()

    @staticmethod
    async def release_keys(store: Any, keys: Any) -> None:
        """Give reservations back (no-op for kinds that reserve nothing)."""


GENERIC = Strategy()


def selector_errors(selector: Obj | None, path: str) -> list[Cause]:
    """Validate a ``metav1.LabelSelector`` object."""
    if selector is None:
        return []
    try:
        LabelSelector.from_dict(selector)
    except ValueError as exc:
        return [(path, None, str(exc))]
    return []


def non_negative_quantity_errors(value: Any, path: str) -> list[Cause]:
    """``ValidateNonnegativeQuantity`` of a quantity that may be absent (``None``: no error); one that
    does not parse is refused with the parser's message."""
    if value is None:
        return []
    try:
        parsed = parse_quantity(value)
    except ValueError as exc:
        return [(path, value, str(exc))]
    return [(path, value, "must be greater than or equal to 0")] if parsed < 0 else []


def int_or_percent_errors(value: Any, path: str) -> list[Cause]:
    """``ValidatePositiveIntOrPercent`` plus ``IsNotMoreThan100Percent``."""
    if value is None:
        return []
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            return [(path, value, "a valid percent string must be a numeric string followed by an ending '%'")]
        if int(value[:-1]) > 100:
            return [(path, value, "must not be greater than 100%")]
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [(path, value, "must be an integer or percentage (e.g '5%')")]
    if value < 0:
        return [(path, value, "must be greater than or equal to 0")]
    return []


# ---------------------------------------------------------------- DNS (minik8s.io/v1) and Ingress hosts and paths
#: Characters a forwarded path may hold: RFC 3986 path characters without those that would
#: end or escape an nginx directive (whitespace, ``;``, ``{``, ``}``, quotes, ``#``, ``\\``, ``$``).
_HTTP_PATH_RE = re.compile(r"/[A-Za-z0-9._~!&()*+,=:@%/-]*")


def host_errors(host: Any, path: str, wildcard: bool = False) -> list[Cause]:
    """A DNS host name: a lowercase RFC 1123 subdomain, not an IP address; with ``wildcard`` a
    leading ``*.`` label is allowed (Ingress hosts, ``IsWildcardDNS1123Subdomain``)."""
    if not isinstance(host, str) or not host:
        return [(path, None, REQUIRED)]
    name = host[2:] if wildcard and host.startswith("*.") else host
    causes = [(path, host, m) for m in v.dns1123_subdomain_errors(name)]
    if not causes and all(part.isdigit() for part in name.split(".")):
        causes.append((path, host, "must be a DNS name, not an IP address"))
    return causes


def http_path_errors(value: Any, path: str) -> list[Cause]:
    """A forwarded URL path: starts with ``/``; only characters safe in an nginx ``location``."""
    if not isinstance(value, str) or not value:
        return [(path, None, REQUIRED)]
    if not value.startswith("/"):
        return [(path, value, "must be an absolute path")]
    if not _HTTP_PATH_RE.fullmatch(value):
        return [(path, value, "must contain only the characters of an URL path "
                              "(letters, digits, and - . _ ~ ! & ( ) * + , = : @ % /)")]
    return []
