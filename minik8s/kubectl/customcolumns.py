"""``-o custom-columns=HEADER:PATH,...`` and ``-o custom-columns-file=FILE``: kubectl's custom column printer
(k8s.io/cli-runtime ``printers/customcolumn.go``).

Each column is a header and a relaxed JSONPath (``.metadata.name``, ``metadata.name`` or
``{.metadata.name}``); a cell is every value the path names, each as Go's ``fmt.Sprint`` writes it,
joined by ``,``, or ``<none>`` when it names nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minik8s.api import kubejsonpath
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError

_FILE_FORMAT = "Expected format is one line of space separated headers, one line of space separated column specs."


@dataclass(frozen=True)
class Column:
    """One custom column: its header and its path (``{.metadata.name}`` form)."""

    header: str
    path: str


def _relaxed(path: str) -> str:
    """The ``{.path}`` form (checked only for its shape: kubectl parses it when printing the first row)."""
    try:
        return kubejsonpath.relaxed(path)
    except ValueError as exc:
        raise KubectlError(str(exc)) from None


def parse_spec(spec: str) -> list[Column]:
    """The columns of ``custom-columns=SPEC`` (KubectlError in kubectl's words when malformed)."""
    if not spec:
        raise KubectlError("custom-columns format specified but no custom columns given")
    columns = []
    for part in spec.split(","):
        header, sep, path = part.partition(":")
        if not sep:
            raise KubectlError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        columns.append(Column(header, _relaxed(path)))
    return columns


def parse_file_text(text: str) -> list[Column]:
    """The columns of a custom-columns file: a line of headers, then a line of paths."""
    lines = text.splitlines()
    if not lines:
        raise KubectlError(f"invalid template, missing header line. {_FILE_FORMAT}")
    if len(lines) < 2:
        raise KubectlError(f"invalid template, missing spec line. {_FILE_FORMAT}")
    headers, specs = lines[0].split(), lines[1].split()
    if len(headers) != len(specs):
        raise KubectlError(f"number of headers ({len(headers)}) and field specifications ({len(specs)}) don't match")
    return [Column(h, _relaxed(p)) for h, p in zip(headers, specs, strict=True)]


def read_template(path: str, flag: str = "template") -> str:
    """The text of a template file (``custom-columns-file=``, ``jsonpath-file=``); KubectlError as kubectl
    words a file it cannot open (``flag``: ``template`` or ``--template``)."""
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        raise KubectlError(f"error reading {flag} {path}, open {path}: no such file or directory") from None
    except OSError as exc:
        raise KubectlError(f"error reading {flag} {path}, open {path}: {exc.strerror or exc}") from None


def cell(column: Column, obj: Any) -> str:
    """One cell: the path's values joined by ``,`` (``<none>`` when it names nothing); KubectlError
    when the path cannot be parsed."""
    try:
        nodes = kubejsonpath.parse_template(column.path)
    except ValueError as exc:
        raise KubectlError(str(exc)) from None
    values: list[Any] = []
    for kind, arg in nodes:
        if kind == "path":
            values += kubejsonpath.evaluate(obj, arg) if arg not in ("$", "@", ".") else [obj]
    if not values:
        return "<none>"
    return ",".join(kubejsonpath.go_sprint(v) for v in values)


def render(columns: list[Column], objs: list[Any], no_headers: bool) -> list[str]:
    """The table's lines (tabwriter-aligned as kubectl's), header first unless ``no_headers``.

    A path that cannot be parsed raises KubectlError with the header line in ``partial`` (kubectl
    prints the header, then fails on the first row)."""
    head = [] if no_headers else [[c.header for c in columns]]
    try:
        rows = [[cell(c, o) for c in columns] for o in objs]
    except KubectlError as exc:
        raise PartialOutput(printing.tabwrite(head, minwidth=6, padding=3), exc) from None
    return printing.tabwrite(head + rows, minwidth=6, padding=3)


class PartialOutput(Exception):
    """A failure after some lines were due (``lines``): print them, then fail with ``error``."""

    def __init__(self, lines: list[str], error: KubectlError) -> None:
        super().__init__(error.message)
        self.lines = lines
        self.error = error
