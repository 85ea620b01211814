"""Starts the appliance scenario (:mod:`tests.molecule.scenario`) in the background once the session's
tests are collected, when ``test_molecule_default_scenario`` is among them and Docker and molecule
are there; the test waits for it. A session that ends first stops it and destroys its instances."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.molecule.scenario import Scenario, docker_unavailable, molecule_tool

SCENARIO = pytest.StashKey[Scenario]()
TEST_NAME = "test_molecule_default_scenario"


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


def pytest_sessionfinish(session: pytest.Session) -> None:
    scenario = session.config.stash.get(SCENARIO, None)
    if scenario is not None:
        scenario.stop()


@pytest.fixture(scope="session")
def scenario(request: pytest.FixtureRequest) -> Scenario | None:
    """The session's background scenario; None when it could not start (the test says why)."""
    return request.config.stash.get(SCENARIO, None)
