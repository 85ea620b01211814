"""Kubernetes' published OpenAPI v2 definitions (Kubernetes 1.32, ``k8s-openapi.json``, written by
``scripts/k8s-openapi.py``), looked up by kind, and walked for what strategic merge patch needs.

No pydantic here: kubectl reads the same definitions for its client-side patches (``kubectl patch
--dry-run=client``, kustomize's strategic-merge patches), as the official kubectl reads the Go
types' patch tags compiled into it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

OPENAPI = Path(__file__).with_name("k8s-openapi.json")
REF_PREFIX = "#/definitions/"

Obj = dict[str, Any]


@cache
def kubernetes_definitions() -> dict[str, Obj]:
    """Kubernetes' OpenAPI v2 definitions: definition name → schema.  Read-only: copy before changing."""
    return dict(json.loads(OPENAPI.read_text())["definitions"])


@cache
def kubernetes_kinds() -> dict[tuple[str, str, str], str]:
    """(group, version, kind) → the name of Kubernetes' definition of that kind."""
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in kubernetes_definitions().items():
        for entry in schema.get("x-kubernetes-group-version-kind") or []:
            out.setdefault((entry.get("group", ""), entry["version"], entry["kind"]), name)
    return out


@dataclass(frozen=True)
class PatchSchema:
    """A position in a kind's schema, as strategic merge patch walks it: the merge key and patch
    strategy of the list or map here, and the schema of a field or of a list's items.

    ``definitions``: the definitions ``$ref`` resolves against (the served ones, or Kubernetes');
    ``schema``: the (possibly ``$ref``) schema at this position.
    """

    definitions: Mapping[str, Obj]
    schema: Obj

    @classmethod
    def of_kind(cls, api_version: str, kind: str) -> PatchSchema | None:
        """The root of Kubernetes' schema of ``kind`` in ``api_version``; None when Kubernetes has
        no such kind (a custom resource, one of minik8s' own kinds)."""
        group, _, version = api_version.rpartition("/")
        name = kubernetes_kinds().get((group, version, kind))
        if name is None:
            return None
        return cls(kubernetes_definitions(), {"$ref": REF_PREFIX + name})

    def _resolved(self) -> Obj:
        ref = self.schema.get("$ref")
        return self.definitions.get(ref[len(REF_PREFIX):], {}) if isinstance(ref, str) else self.schema

    def field(self, name: str) -> PatchSchema | None:
        """The schema of field ``name`` of the object here (a map's value schema for any key)."""
        resolved = self._resolved()
        prop = (resolved.get("properties") or {}).get(name)
        if prop is None and isinstance(resolved.get("additionalProperties"), dict):
            prop = resolved["additionalProperties"]
        return PatchSchema(self.definitions, prop) if isinstance(prop, dict) else None

    def items(self) -> PatchSchema | None:
        """The schema of the items of the list here."""
        items = self._resolved().get("items")
        return PatchSchema(self.definitions, items) if isinstance(items, dict) else None

    @property
    def merge_key(self) -> str | None:
        """``x-kubernetes-patch-merge-key`` of the list here: its items merge by this field."""
        key = self.schema.get("x-kubernetes-patch-merge-key")
        return key if isinstance(key, str) and "merge" in self.strategies else None

    @property
    def strategies(self) -> list[str]:
        """``x-kubernetes-patch-strategy`` here, split (``merge``, ``retainKeys``, ``replace``)."""
        value = self.schema.get("x-kubernetes-patch-strategy")
        return value.split(",") if isinstance(value, str) else []
