"""ControllerRevisions: the pod-template history of DaemonSets and StatefulSets.

Kubernetes' ``pkg/controller/history`` and the pieces of ``daemon/update.go`` and
``statefulset/stateful_set_utils.go`` both controllers share, on wire-form dicts:

* a revision's ``data`` is the patch that restores the owner's template
  (:func:`~minik8s.api.revisions.revision_data`); two revisions are equal when their data are
  (:func:`equal_data`, ``history.EqualRevision``);
* revisions are ordered by ``revision``, then creation time, then name
  (:func:`sort_revisions`); the next one is numbered one above the highest (:func:`next_revision`);
* a StatefulSet's revision is named ``<owner>-<hash of data and collisionCount>``
  (:func:`hash_revision`, ``HashControllerRevision``: FNV-32 over the data's JSON, then the
  collision count's decimal digits); a DaemonSet's is named by the hash of its template
  (the pods' ``controller-revision-hash``);
* :class:`RevisionWriter` creates, renumbers and deletes them (``realHistory``).
"""

from __future__ import annotations

import json
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.api.revisions import sorted_keys
from minik8s.client.rest import Client
from minik8s.controllers.deploymentutil import safe_encode
from minik8s.controllers.ownerrefs import meta_of, new_controller_ref

#: The label telling a pod's (and a revision's) template revision (``ControllerRevisionHashLabelKey``).
REVISION_HASH_LABEL = "controller-revision-hash"
#: Old revisions kept per owner when ``spec.revisionHistoryLimit`` is unset (Kubernetes' default).
DEFAULT_HISTORY_LIMIT = 10
#: Longest owner-name prefix of a revision name (``ControllerRevisionName``).
MAX_PREFIX = 223

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def equal_data(a: Any, b: Any) -> bool:
    """Two revisions' data are the same snapshot (``EqualRevision``: compared as values)."""
    return sorted_keys(a) == sorted_keys(b)


def fnv32(data: bytes, value: int = _FNV32_OFFSET) -> int:
    """32-bit FNV-1 (multiply, then xor: Go's ``fnv.New32``) of ``data``, continuing from ``value``."""
    for byte in data:
        value = (value * _FNV32_PRIME) & 0xFFFFFFFF
        value ^= byte
    return value


def hash_revision(data: Any, probe: int | None) -> str:
    """``HashControllerRevision``: FNV-32 of the data's compact JSON and ``probe``'s decimal digits
    (the collision count), safe-encoded (e.g. ``"5d8c7f9b6"``)."""
    value = fnv32(json.dumps(sorted_keys(data), separators=(",", ":"), ensure_ascii=False).encode())
    if probe is not None:
        value = fnv32(str(probe).encode(), value)
    return safe_encode(str(value))


def revision_name(prefix: str, hash_: str) -> str:
    """``ControllerRevisionName``: ``<prefix>-<hash>``, the prefix cut to 223 characters."""
    return f"{prefix[:MAX_PREFIX]}-{hash_}"


def revision_number(revision: Obj) -> int:
    """A revision's ``revision`` (0 when unset)."""
    return int(revision.get("revision") or 0)


def sort_revisions(revisions: list[Obj]) -> list[Obj]:
    """Oldest first: by revision, then creationTimestamp, then name (``SortControllerRevisions``)."""
    return sorted(revisions, key=lambda r: (revision_number(r), str(meta_of(r).get("creationTimestamp") or ""),
                                            str(meta_of(r).get("name") or "")))


def next_revision(revisions: list[Obj]) -> int:
    """One above the highest revision number, 1 for none (``nextRevision``)."""
    return max((revision_number(r) for r in revisions), default=0) + 1


def history_limit(owner: Obj) -> int:
    """``spec.revisionHistoryLimit``, 10 when unset."""
    limit = (owner.get("spec") or {}).get("revisionHistoryLimit")
    return DEFAULT_HISTORY_LIMIT if limit is None else max(int(limit), 0)


def new_revision(owner: Obj, api_version: str, kind: str, name: str, hash_: str, data: Obj, revision: int) -> Obj:
    """A ControllerRevision of ``owner`` (``NewControllerRevision`` and the DaemonSet's ``snapshot``): the
    template's labels plus ``controller-revision-hash``, the owner's annotations, a controller
    ownerReference."""
    meta = meta_of(owner)
    template_labels = (((owner.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    rmeta: Obj = {"name": name, "namespace": meta.get("namespace"),
                  "labels": {**template_labels, REVISION_HASH_LABEL: hash_},
                  "ownerReferences": [new_controller_ref(owner, api_version, kind)]}
    if meta.get("annotations"):
        rmeta["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": rmeta, "data": data,
            "revision": revision}


class RevisionWriter:
    """Writes one kind of owner's ControllerRevisions through the API (``realHistory``)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.rt: ResourceType = client.kind("apps/v1", "ControllerRevision")

    async def create(self, body: Obj) -> Obj:
        """Create ``body``; an existing revision of that name with equal data is returned instead.

        Raises AlreadyExists when the name is taken by other data (a hash collision: the caller
        raises the owner's collisionCount), and the API error of a failed create.
        """
        meta = meta_of(body)
        try:
            return await self.client.create(self.rt, body, meta.get("namespace"))
        except errors.AlreadyExists:
            existing = await self.client.get(self.rt, str(meta.get("name")), meta.get("namespace"))
            if equal_data(existing.get("data"), body.get("data")):
                return existing
            raise

    async def renumber(self, revision: Obj, number: int) -> Obj:
        """Give ``revision`` the number ``number`` (a rollback to its template: ``UpdateControllerRevision``)."""
        if revision_number(revision) == number:
            return revision
        meta = meta_of(revision)
        return await self.client.patch(self.rt, str(meta.get("name")), {"revision": number}, meta.get("namespace"))

    async def delete(self, revision: Obj) -> None:
        """Delete ``revision`` (already gone: nothing to do)."""
        meta = meta_of(revision)
        try:
            await self.client.delete(self.rt, str(meta.get("name")), meta.get("namespace"))
        except errors.NotFound:
            return
