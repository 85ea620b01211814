"""A custom resource's versions other than its storage version, served by conversion ``None``:
the same objects with only ``apiVersion`` changed (kube-apiextensions' ``nopConverter``)."""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.apiserver.versions import ServedVersion


def custom_version(rt: ResourceType, stored: ResourceType) -> ServedVersion:
    """``rt`` (a served version) over ``stored`` (the storage version's row)."""

    def to_storage(body: Any, old: Obj | None) -> Any:
        if isinstance(body, dict) and body.get("apiVersion") in (None, rt.api_version):
            return dict(body, apiVersion=stored.api_version)
        return body

    def from_storage(obj: Obj) -> Obj:
        return dict(obj, apiVersion=rt.api_version)

    return ServedVersion(rt, stored.group_version, to_storage, from_storage)
