"""Command-line options several kubectl verbs share (typer ``Annotated`` types, kubectl's flag names)."""

from __future__ import annotations

from typing import Annotated

import typer

from minik8s.api.durations import parse_duration
from minik8s.kubectl.errors import FlagError

FilesOpt = Annotated[list[str] | None, typer.Option("-f", "--filename",
                                                    help="file, directory or - (stdin); repeatable")]
KustomizeOpt = Annotated[str | None, typer.Option("-k", "--kustomize",
                                                 help="a directory holding a kustomization.yaml")]
RecursiveOpt = Annotated[bool, typer.Option("-R", "--recursive/--no-recursive",
                                            help="process directories recursively")]
SelectorOpt = Annotated[str, typer.Option("-l", "--selector", help="label selector (a=b,c!=d)")]


def duration_flag(text: str, flag: str = "--timeout") -> float:
    """Seconds of a Go duration flag value (``--timeout 5m`` → 300.0, ``0`` → 0.0).

    Raises FlagError with pflag's wording for values Go would reject, e.g.
    ``invalid argument "5" for "--timeout" flag: time: missing unit in duration "5"``.
    """
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise FlagError(f'invalid argument "{text}" for "{flag}" flag: {exc}') from None
