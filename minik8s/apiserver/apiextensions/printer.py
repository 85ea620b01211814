"""Table columns of a custom resource: its version's ``additionalPrinterColumns``.

As kube-apiserver's CRD table convertor: NAME first, then the columns in order (``priority`` > 0
only with ``-o wide``); a version without any gets ``Age`` (``.metadata.creationTimestamp``).
A cell is the first value the column's JSONPath names, shown by the column's ``type``: integers
and numbers as numbers, ``date`` as an age (``5m``), objects and lists as JSON, absent as empty.
"""

from __future__ import annotations

from minik8s.api import columns
from minik8s.api.resourcetypes import ResourceType


def custom_columns(rt: ResourceType) -> list[columns.Column] | None:
    """Every column of ``rt``'s table, NAME first (None for a built-in kind)."""
    if rt.custom is None:
        return None
    return [columns.NAME_COLUMN] + columns.printer_columns(rt.custom.printer_columns)
