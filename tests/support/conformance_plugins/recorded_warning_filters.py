"""pytest plugin for the conformance suites' runs (``-p recorded_warning_filters``): the warning
filters recorded for the suite in ``tests/conformance/skips.py`` (each with its reason), applied
with the highest precedence in every test, above the suite's own filters (kopf's conftest makes
every warning an error).

The filters come in ``$MINIK8S_CONFORMANCE_WARNING_FILTERS``: a JSON list of ``[message, category]``,
``message`` a regular expression that must match the start of the warning's message, ``category``
a builtin warning class's name. It runs in the suite's own virtualenv, not in minik8s' one.
"""

from __future__ import annotations

import builtins
import json
import os
import warnings
from collections.abc import Iterator

import pytest

FILTERS = [(message, getattr(builtins, category))
           for message, category in json.loads(os.environ.get("MINIK8S_CONFORMANCE_WARNING_FILTERS", "[]"))]


def _ignore() -> None:
    for message, category in FILTERS:
        warnings.filterwarnings("ignore", message=message, category=category)


def pytest_configure(config: pytest.Config) -> None:
    _ignore()  # outside the tests too (a garbage collection between them)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # Inside pytest's own warnings wrapper (tryfirst), which sets the test's filters: these go in front.
    _ignore()
    return (yield)
