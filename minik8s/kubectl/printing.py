"""Output helpers: kubectl's plain tables (Go ``text/tabwriter``), timestamps, YAML and JSON.

Everything prints as plain text (no markup, no box drawing) so output pipes cleanly.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import yaml

from minik8s.api import kubejsonpath
from minik8s.api.base import parse_time
from minik8s.api.columns import NONE


# ------------------------------------------------------------------ tabwriter
def tabwrite(lines: Sequence[Sequence[str]], minwidth: int = 0, padding: int = 3, trim: bool = True) -> list[str]:
    """Align cells the way Go's ``text/tabwriter`` does (kubectl's tables and describe output).

    Each line is a list of cells; every cell but the last of a line is tab-terminated and
    takes part in alignment. A column block is a run of consecutive lines that have a cell
    in that column; its width is the widest cell plus ``padding`` (at least ``minwidth``).
    Returns the formatted lines; with ``trim`` a line whose last cell is empty loses its trailing
    spaces (Go keeps them: ``kubectl describe`` output, written with ``trim=False``, has them).
    """
    cells = [list(line) if line else [""] for line in lines]
    out: list[str] = ["" for _ in cells]
    widths: list[int] = []

    def write_lines(line0: int, line1: int) -> None:
        for i in range(line0, line1):
            parts = []
            line = cells[i]
            for j, cell in enumerate(line):
                if j < len(widths) and j < len(line) - 1:
                    parts.append(cell.ljust(widths[j]))
                else:
                    parts.append(cell)
            out[i] = "".join(parts).rstrip() if trim and len(line) > 1 and not line[-1] else "".join(parts)

    def fmt(line0: int, line1: int) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column >= len(cells[this]) - 1:
                this += 1
                continue
            write_lines(line0, this)
            line0 = this
            width = minwidth
            while this < line1 and column < len(cells[this]) - 1:
                width = max(width, len(cells[this][column]) + padding)
                this += 1
            widths.append(width)
            fmt(line0, this)
            widths.pop()
            line0 = this
        write_lines(line0, line1)

    fmt(0, len(cells))
    return out


def table(header: Sequence[str], rows: Sequence[Sequence[str]], trim: bool = True) -> list[str]:
    """A kubectl ``get`` table: upper-case header, columns 3 spaces apart (``trim``: see :func:`tabwrite`)."""
    return tabwrite([list(header), *[list(r) for r in rows]], minwidth=6, padding=3, trim=trim)


def write_lines(lines: Sequence[str], stream: TextIO | None = None) -> None:
    """Print lines and flush (watch output must appear at once)."""
    out = stream or sys.stdout
    for line in lines:
        out.write(line + "\n")
    out.flush()


# ------------------------------------------------------------------ time
def now() -> dt.datetime:
    """The current UTC time (aware)."""
    return dt.datetime.now(dt.UTC)


def describe_time(timestamp: str | None) -> str:
    """A timestamp as ``kubectl describe`` shows it: ``Mon, 02 Jan 2006 15:04:05 +0000``."""
    try:
        when = parse_time(timestamp)
    except ValueError:
        when = None
    if when is None:
        return timestamp or NONE
    return when.strftime("%a, %d %b %Y %H:%M:%S %z")


# ------------------------------------------------------------------ structured output
class _Dumper(yaml.SafeDumper):
    """YAML like kubectl's: block style, lists not indented under their key, long strings kept."""


#: What go-yaml (v2) also reads as booleans, beyond PyYAML's YAML 1.1 table: written quoted, as kubectl does.
_GO_YAML_BOOLS = frozenset({"y", "Y", "n", "N"})


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    tag = "tag:yaml.org,2002:str"
    if "\n" in value:
        return dumper.represent_scalar(tag, value, style="|")
    if value == "" or value in _GO_YAML_BOOLS or dumper.resolve(yaml.ScalarNode, value, (True, False)) != tag:
        return dumper.represent_scalar(tag, value, style='"')  # "2", "true", timestamps: quoted like kubectl
    return dumper.represent_scalar(tag, value)


_Dumper.add_representer(str, _str_representer)


def to_yaml(obj: Any) -> str:
    """YAML text of ``obj`` (keys sorted, as kubectl prints them)."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True,
                     width=1 << 16)


def to_json(obj: Any, sort_keys: bool = True) -> str:
    """JSON text of ``obj`` as ``kubectl -o json`` prints it: indented by 4 spaces, keys sorted (kubectl
    prints objects decoded as unstructured maps, whatever order the apiserver sent); ``sort_keys=False``
    for what kubectl prints from a Go struct of its own (``kubectl version``)."""
    return json.dumps(obj, indent=4, ensure_ascii=False, sort_keys=sort_keys)


def as_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``kind: List`` wrapper kubectl prints for several objects."""
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


class RowPrinter:
    """Prints table rows as they arrive (``get -w``), keeping the first batch's column widths."""

    def __init__(self, header: Sequence[str], stream: TextIO | None = None) -> None:
        self.header = list(header)
        self.stream = stream or sys.stdout
        self.widths: list[int] = []
        self.header_done = False

    def _grow(self, rows: Sequence[Sequence[str]]) -> None:
        for row in rows:
            for i, cell in enumerate(row[:-1]):
                width = max(6, len(cell) + 3)
                if i >= len(self.widths):
                    self.widths.append(width)
                elif width > self.widths[i]:
                    self.widths[i] = width

    def _line(self, row: Sequence[str]) -> str:
        cells = [cell.ljust(self.widths[i]) for i, cell in enumerate(row[:-1])]
        return "".join(cells) + (row[-1] if row else "")

    def print_rows(self, rows: Sequence[Sequence[str]]) -> None:
        """Print rows (and the header before the first); widths only grow."""
        batch = ([self.header] if not self.header_done else []) + [list(r) for r in rows]
        self._grow(batch)
        write_lines([self._line(r) for r in batch], self.stream)
        self.header_done = True


# ------------------------------------------------------------------ jsonpath
def jsonpath(template: str, data: Any) -> str:
    """kubectl's ``-o jsonpath=TEMPLATE`` text of ``data`` (:func:`minik8s.api.kubejsonpath.template`:
    paths, ``{"\\n"}`` literals, ``{range PATH}...{end}``). Raises ValueError for a template it cannot parse."""
    return kubejsonpath.template(template, data)
