"""Object metadata shared by every kind (Kubernetes ``metav1``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from minik8s.api.model import Model


class OwnerReference(Model):
    """``metav1.OwnerReference``: the object that owns this one (garbage collection)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ManagedFieldsEntry(Model):
    """``metav1.ManagedFieldsEntry``: the fields one manager owns (``fieldsV1``, Kubernetes' FieldsV1 tree)."""

    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: str | None = None
    fields_type: str | None = None
    fields_v1: dict[str, Any] | None = None
    subresource: str | None = None


class ObjectMeta(Model):
    """``metav1.ObjectMeta``. Times are RFC 3339 strings; ``resourceVersion`` is the etcd revision."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = None


class ListMeta(Model):
    resource_version: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: int | None = None


class LabelSelectorRequirement(Model):
    key: str
    operator: str
    values: list[str] | None = None


class LabelSelector(Model):
    """``metav1.LabelSelector``: matchLabels AND matchExpressions."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class Condition(Model):
    """A generic status condition (``type``, ``status`` True/False/Unknown, reason, message)."""

    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    last_heartbeat_time: str | None = None
    last_probe_time: str | None = None
    last_update_time: str | None = None
    observed_generation: int | None = None


class ObjectReference(Model):
    """``corev1.ObjectReference``."""

    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class TypedObject(Model):
    """Base for every top-level kind: ``apiVersion``, ``kind``, ``metadata``."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""

    def key(self) -> str:
        """The cache key Kubernetes uses: ``namespace/name``, or ``name`` for cluster-scoped."""
        return f"{self.metadata.namespace}/{self.metadata.name}" if self.metadata.namespace else self.name


@dataclass(frozen=True, slots=True)
class MetaView:
    """The metadata a component reads of a wire-form object, read once (see ``docs/architecture.md``,
    *Typed views*): absent strings are ``""``, absent maps empty.  ``labels`` and ``annotations``
    are the object's own dicts, not copies: read them, never write them."""

    name: str
    namespace: str
    uid: str
    resource_version: str
    generation: int | None
    creation_timestamp: str | None
    deletion_timestamp: str | None
    labels: Mapping[str, str]
    annotations: Mapping[str, str]

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> MetaView:
        """The view of ``obj["metadata"]`` (an empty one when missing)."""
        m = obj.get("metadata") or {}
        return cls(m.get("name") or "", m.get("namespace") or "", m.get("uid") or "",
                   m.get("resourceVersion") or "", m.get("generation"), m.get("creationTimestamp"),
                   m.get("deletionTimestamp"), m.get("labels") or {}, m.get("annotations") or {})
