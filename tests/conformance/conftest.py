"""The third-party client suites' runs (``tests/support/conformance.py``), against the session's one
cluster (``tests/conftest.py``, shared with ``tests/e2e``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.skips import SKIPS, WARNING_FILTERS
from tests.support.cluster import Cluster
from tests.support.conformance import Runs

RUNS = pytest.StashKey[Runs]()
#: The order the suites run in: kopf last, so that the appliance scenario (tests/molecule/conftest.py)
#: can start beside it without loading the machine under the others (lightkube's sync exec has a
#: client-side TLS race that load brings out).
ORDER = ("test_lightkube.py", "test_kubernetes_asyncio.py", "test_kopf.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The suites' tests in :data:`ORDER`, every other test where it was."""
    here = Path(__file__).resolve().parent
    ranked = [(i, item) for i, item in enumerate(items) if item.path.parent == here and item.path.name in ORDER]
    slots = [i for i, _ in ranked]
    ordered = sorted((item for _, item in ranked), key=lambda item: ORDER.index(item.path.name))
    for slot, item in zip(slots, ordered, strict=True):
        items[slot] = item


@pytest.fixture(scope="session")
def conformance(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Runs:
    """The suites' runs of this session: each suite runs once, with the tests of it this session
    selected, when the first of them asks."""
    selected: dict[str, list[str]] = {}
    for item in request.session.items:
        suite = getattr(getattr(item, "module", None), "SUITE", None)
        callspec = getattr(item, "callspec", None)
        if suite is not None and callspec is not None and isinstance(callspec.params.get("test_id"), str):
            selected.setdefault(suite.name, []).append(callspec.params["test_id"])
    runs = Runs(cluster.kubeconfig, tmp_path_factory.mktemp("conformance"), selected, SKIPS, WARNING_FILTERS)
    request.config.stash[RUNS] = runs
    return runs


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """One line per suite that ran: its outcomes and how long its run took (what it adds to CI)."""
    runs = config.stash.get(RUNS, None)
    if runs is None or not runs.runs:
        return
    terminalreporter.section("client conformance suites")
    for name, run_ in runs.runs.items():
        counts: dict[str, int] = {}
        for result in run_.outcomes.values():
            counts[result.status] = counts.get(result.status, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no results"
        terminalreporter.write_line(f"{name}: {summary}, {len(runs.skips.get(name, {}))} recorded skip(s); "
                                    f"ran {run_.seconds:.0f}s (pytest exit code {run_.returncode})")
