"""``apiextensions.k8s.io/v1``: CustomResourceDefinition, the kind users add kinds with.

Field names and shapes follow Kubernetes' ``apiextensions/v1`` types.  A version's
``schema.openAPIV3Schema`` is kept as the plain JSON it is (a structural OpenAPI v3 schema the
apiserver checks, validates custom resources with, defaults and prunes by).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from minik8s.api.base import Obj
from minik8s.api.meta import TypedObject
from minik8s.api.model import Model

GROUP = "apiextensions.k8s.io"
#: The finalizer the apiserver puts on every CRD: its custom resources are deleted before it goes.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


class CustomResourceDefinitionNames(Model):
    """The names a custom resource is served under (``plural`` is its URL segment)."""

    plural: str | None = None
    singular: str | None = None
    short_names: list[str] | None = None
    kind: str | None = None
    list_kind: str | None = None
    categories: list[str] | None = None


class CustomResourceValidation(Model):
    """``openAPIV3Schema``: the structural schema of the whole object."""

    open_api_v3_schema: dict[str, Any] | None = Field(default=None, alias="openAPIV3Schema")


class CustomResourceSubresourceScale(Model):
    """Where the scale subresource reads and writes replicas (JSON paths like ``.spec.replicas``)."""

    spec_replicas_path: str | None = None
    status_replicas_path: str | None = None
    label_selector_path: str | None = None


class CustomResourceSubresources(Model):
    """``status`` (an empty object turns the status subresource on) and ``scale``."""

    status: dict[str, Any] | None = None
    scale: CustomResourceSubresourceScale | None = None


class CustomResourceColumnDefinition(Model):
    """One ``additionalPrinterColumns`` entry: a Table column computed by ``jsonPath``."""

    name: str | None = None
    type: str | None = None
    format: str | None = None
    description: str | None = None
    priority: int | None = None
    json_path: str | None = None


class SelectableField(Model):
    json_path: str | None = None


class CustomResourceDefinitionVersion(Model):
    """One version: ``served`` over HTTP, ``storage`` (exactly one) the form kept in etcd."""

    name: str | None = None
    served: bool | None = None
    storage: bool | None = None
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    schema_: CustomResourceValidation | None = Field(default=None, alias="schema")
    subresources: CustomResourceSubresources | None = None
    additional_printer_columns: list[CustomResourceColumnDefinition] | None = None
    selectable_fields: list[SelectableField] | None = None


class CustomResourceConversion(Model):
    """``strategy``: ``None`` (only apiVersion changes between versions); ``Webhook`` is refused."""

    strategy: str | None = None
    webhook: dict[str, Any] | None = None


class CustomResourceDefinitionSpec(Model):
    group: str | None = None
    names: CustomResourceDefinitionNames | None = None
    scope: str | None = None
    versions: list[CustomResourceDefinitionVersion] | None = None
    conversion: CustomResourceConversion | None = None
    preserve_unknown_fields: bool | None = None


class CustomResourceDefinitionCondition(Model):
    """``NamesAccepted``, ``Established``, ``Terminating`` (status True/False/Unknown)."""

    type: str | None = None
    status: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class CustomResourceDefinitionStatus(Model):
    conditions: list[CustomResourceDefinitionCondition] | None = None
    accepted_names: CustomResourceDefinitionNames | None = None
    stored_versions: list[str] | None = None


class CustomResourceDefinition(TypedObject):
    """A kind added at run time: its names, scope, versions and their schemas."""

    spec: CustomResourceDefinitionSpec | None = None
    status: CustomResourceDefinitionStatus | None = None


class CustomResourceObject(TypedObject):
    """Stand-in model of a custom resource's row: its objects are checked against their CRD's
    schema (``ResourceType.custom``), never parsed into this model."""


def condition(obj: Obj, kind: str) -> Obj | None:
    """The condition ``kind`` of a CRD's status (None when absent)."""
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def is_established(obj: Obj) -> bool:
    return (condition(obj, "Established") or {}).get("status") == "True"
