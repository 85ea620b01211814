"""The components' boolean flags in Go's spellings (``--leader-elect=false``), through the real
``minik8s`` commands: parsed with ``make_context`` (nothing runs), errors through typer's CliRunner."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from minik8s.cli import app

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def parsed(component: str, args: list[str]) -> dict[str, object]:
    return dict(COMMANDS[component].make_context(component, list(args)).params)


@pytest.mark.parametrize("component", ["scheduler", "controller-manager"])
@pytest.mark.parametrize(("args", "expected"), [
    ([], True),
    (["--leader-elect"], True),
    (["--leader-elect=true"], True),
    (["--leader-elect=false"], False),
    (["--no-leader-elect"], False),
    (["--leader-elect=False"], False),
    (["--leader-elect=0"], False),
    (["--leader-elect=1"], True),
    (["--leader-elect=false", "--leader-elect"], True),  # the last one counts, as in Go
    (["--leader-elect=false", "--kubeconfig", "x", "--leader-elect-lease-duration=20s"], False),
])
def test_leader_elect_takes_go_bool_values(component: str, args: list[str], expected: bool) -> None:
    assert parsed(component, args)["leader_elect"] is expected


def test_other_boolean_flags_take_them_too() -> None:
    assert parsed("controller-manager", ["--allocate-node-cidrs=false"])["allocate_node_cidrs"] is False
    assert parsed("controller-manager", ["--allocate-node-cidrs=true"])["allocate_node_cidrs"] is True
    assert parsed("apiserver", ["--watch-cache=false"])["watch_cache"] is False


@pytest.mark.parametrize("component", ["scheduler", "controller-manager"])
def test_a_value_that_is_not_a_bool_is_a_usage_error(component: str) -> None:
    result = CliRunner().invoke(app, [component, "--leader-elect=maybe"])
    assert result.exit_code == 2
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())  # without the error box
    assert "Invalid value for '--leader-elect': 'maybe' is not a boolean (true or false)" in text, result.output
