"""Runs the appliance scenario (:mod:`tests.molecule.scenario`) in the background, when the session
has ``test_molecule_default_scenario`` among its tests and Docker and molecule are there.

It starts once the session's tests are collected, beside the tests that use the session's shared
cluster (the ``cluster`` fixture of ``tests/conformance`` and ``tests/e2e``), and the first test
that does not use it waits until the scenario has ended, so that no other test runs beside it.
A session that ends first stops it and destroys its instances."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.molecule.scenario import Scenario, docker_unavailable, molecule_tool

SCENARIO = pytest.StashKey[Scenario]()
TEST_NAME = "test_molecule_default_scenario"


class _Joiner:
    """Waits for the scenario before the first test that does not use the shared cluster."""

    def __init__(self, scenario: Scenario, config: pytest.Config) -> None:
        self.scenario = scenario
        self.config = config
        self.joined = False

    # Outside pytest-timeout's wrapper (tryfirst: the outermost), so the wait is not the test's time.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        if not self.joined and "cluster" not in getattr(item, "fixturenames", ()):
            self.joined = True
            self._join()
        return (yield)

    def _join(self) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"\n(waiting for the appliance scenario, running for {self.scenario.elapsed():.0f}s, "
                                "to end before the tests that do not use the shared cluster)")
        self.scenario.wait()


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or not any(item.name == TEST_NAME for item in session.items) \
            or docker_unavailable():
        return
    molecule = molecule_tool()
    if molecule is None:
        return  # the test reports it
    # MINIK8S_MOLECULE_LOG keeps the log where asked.
    log_path = Path(os.environ.get("MINIK8S_MOLECULE_LOG") or
                    tempfile.mkstemp(prefix="minik8s-molecule-test-", suffix=".log")[1])
    scenario = Scenario(molecule, log_path)
    scenario.start()
    session.config.stash[SCENARIO] = scenario
    session.config.pluginmanager.register(_Joiner(scenario, session.config), "minik8s-molecule-joiner")


def pytest_sessionfinish(session: pytest.Session) -> None:
    scenario = session.config.stash.get(SCENARIO, None)
    if scenario is not None:
        scenario.stop()


@pytest.fixture(scope="session")
def scenario(request: pytest.FixtureRequest) -> Scenario | None:
    """The session's background scenario; None when it could not start (the test says why)."""
    return request.config.stash.get(SCENARIO, None)
