"""Command-line options several kubectl verbs share (typer ``Annotated`` types, kubectl's flag names)."""

from __future__ import annotations

from typing import Annotated

import typer

FilesOpt = Annotated[list[str] | None, typer.Option("-f", "--filename",
                                                    help="file, directory or - (stdin); repeatable")]
RecursiveOpt = Annotated[bool, typer.Option("-R", "--recursive/--no-recursive",
                                            help="process directories recursively")]
SelectorOpt = Annotated[str, typer.Option("-l", "--selector", help="label selector (a=b,c!=d)")]
