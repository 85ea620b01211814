"""kubectl's structured output of objects: ``-o yaml``, ``-o json``, ``-o jsonpath=...`` and
``-o jsonpath-file=...``, without ``metadata.managedFields`` (kubectl's default, unless
``--show-managed-fields``).  Shared by every verb that prints objects (get, apply, patch, replace,
edit, diff)."""

from __future__ import annotations

from typing import Any

from minik8s.kubectl import printing
from minik8s.kubectl.customcolumns import read_template
from minik8s.kubectl.errors import KubectlError


def without_managed_fields(data: Any) -> Any:
    """``data`` (an object or a list of them) without ``metadata.managedFields``, as kubectl prints
    objects unless ``--show-managed-fields`` is given."""
    if not isinstance(data, dict):
        return data
    if isinstance(data.get("items"), list):
        data = dict(data, items=[without_managed_fields(item) for item in data["items"]])
    meta = data.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        data = dict(data, metadata={k: v for k, v in meta.items() if k != "managedFields"})
    return data


def structured(output: str, data: Any) -> str:
    """``data`` rendered as yaml, json or jsonpath output (without managedFields)."""
    kind, _, arg = output.partition("=")
    data = without_managed_fields(data)
    if kind == "yaml":
        return printing.to_yaml(data).rstrip("\n")
    if kind == "json":
        return printing.to_json(data)
    template = read_template(arg, "--template") if kind == "jsonpath-file" else arg
    try:
        return printing.jsonpath(template, data)
    except ValueError as exc:
        raise KubectlError(f"error parsing jsonpath {template}, {exc}") from None
