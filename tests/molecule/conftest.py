"""Runs the appliance scenario (:mod:`tests.molecule.scenario`) in the background, when the session
has ``test_molecule_default_scenario`` among its tests and Docker and molecule are there.

It starts before the first test that does not use the session's shared cluster (the ``cluster``
fixture of ``tests/e2e`` and ``tests/conformance``, whose timings and third-party clients are the
most sensitive to a loaded machine), so it overlaps the integration and unit tests; the scenario's
test waits for it. A session that ends first stops it and destroys its instances."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.molecule.scenario import Scenario, docker_unavailable, molecule_tool

SCENARIO = pytest.StashKey[Scenario]()
TEST_NAME = "test_molecule_default_scenario"


class _Starter:
    """Starts the scenario at the setup of the first test that does not use the shared cluster."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if not self.scenario.started and "cluster" not in getattr(item, "fixturenames", ()):
            self.scenario.start()


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
    session.config.stash[SCENARIO] = scenario
    session.config.pluginmanager.register(_Starter(scenario), "minik8s-molecule-starter")


def pytest_sessionfinish(session: pytest.Session) -> None:
    scenario = session.config.stash.get(SCENARIO, None)
    if scenario is not None:
        scenario.stop()


@pytest.fixture(scope="session")
def scenario(request: pytest.FixtureRequest) -> Scenario | None:
    """The session's background scenario; None when it could not start (the test says why)."""
    return request.config.stash.get(SCENARIO, None)
