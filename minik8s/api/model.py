"""The pydantic base of the API's validation models: camelCase on the wire, snake_case in Python.

Every model accepts both spellings on input (``populate_by_name``) and drops
unknown fields, as kube-apiserver does with its default field validation.
Use :meth:`Model.to_dict` to serialise for the wire (aliases, ``None`` omitted).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

M = TypeVar("M", bound="Model")


class Model(BaseModel):
    """A Kubernetes-style structure: camelCase aliases, unknown fields ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        validate_assignment=False,
    )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready wire form (camelCase keys, unset/None fields omitted)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")

    @classmethod
    def from_dict(cls: type[M], data: Any) -> M:
        """Parse wire data; raises ``pydantic.ValidationError`` on type errors."""
        return cls.model_validate(data)
