"""Table columns of a custom resource: its version's ``additionalPrinterColumns``.

As kube-apiserver's CRD table convertor: NAME first, then the columns in order (``priority`` > 0
only with ``-o wide``); a version without any gets ``Age`` (``.metadata.creationTimestamp``).
A cell is the first value the column's JSONPath names, shown by the column's ``type``: integers
and numbers as numbers, ``date`` as an age (``5m``), objects and lists as JSON, absent as empty.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from minik8s.api import columns
from minik8s.api.base import Obj
from minik8s.api.registry import ResourceType
from minik8s.apiserver.apiextensions import jsonpath


def _cell(kind: str, path: str) -> columns.Getter:
    def value(obj: Obj, at: dt.datetime) -> Any:
        found = jsonpath.find(obj, path)
        if not found or found[0] is None:
            return ""
        got = found[0]
        if kind == "date" and isinstance(got, str):
            return columns.since(got, at)
        if kind in ("integer", "number") and isinstance(got, int | float) and not isinstance(got, bool):
            return got
        if isinstance(got, bool):
            return "true" if got else "false"
        if isinstance(got, dict | list):
            return json.dumps(got, separators=(",", ":"))
        return str(got)
    return value


def custom_columns(rt: ResourceType) -> list[columns.Column] | None:
    """Every column of ``rt``'s table, NAME first (None for a built-in kind)."""
    if rt.custom is None:
        return None
    defined = rt.custom.printer_columns
    out = [columns.NAME_COLUMN]
    if not defined:
        return out + list(columns.DEFAULT_COLUMNS)
    for col in defined:
        kind = str(col.get("type") or "string")
        out.append(columns.Column(str(col.get("name")), _cell(kind, str(col.get("jsonPath") or "")),
                                  wide=int(col.get("priority") or 0) > 0,
                                  type="string" if kind == "date" else kind, format=str(col.get("format") or ""),
                                  description=str(col.get("description") or "")))
    return out
