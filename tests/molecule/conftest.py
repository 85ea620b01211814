"""Runs the appliance scenario (:mod:`tests.molecule.scenario`) in the background, when the session
has ``test_molecule_default_scenario`` among its tests and Docker and molecule are there.

It starts with the first test after lightkube's and kubernetes_asyncio's suites (``tests/conformance``
runs them first: lightkube's sync exec has a stale-reader TLS race that a loaded machine brings out),
beside kopf's suite and the other tests of the session's shared cluster (``tests/e2e``, whose waits
are a real cluster's); the first test that does not use that cluster (the ``cluster`` fixture) waits
until the scenario has ended, so that the integration tests' tighter timings run alone. A session
that ends first stops it and destroys its instances."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.molecule.scenario import Scenario, docker_unavailable, molecule_tool

SCENARIO = pytest.StashKey[Scenario]()
TEST_NAME = "test_molecule_default_scenario"
#: The tests that run before the scenario starts (they run first: tests/conformance/conftest.py).
QUIET = tuple(Path(__file__).resolve().parents[1] / "conformance" / name
              for name in ("test_lightkube.py", "test_kubernetes_asyncio.py"))


class _Joiner:
    """Starts the scenario before the first test that is not one of :data:`QUIET`'s and waits for it
    before the first test that does not use the shared cluster."""

    def __init__(self, scenario: Scenario, config: pytest.Config) -> None:
        self.scenario = scenario
        self.config = config
        self.joined = False

    # Outside pytest-timeout's wrapper (tryfirst: the outermost), so the wait is not the test's time.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        if not self.scenario.started and item.path not in QUIET:
            self.scenario.start()
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
    wanted = os.environ.get("MINIK8S_MOLECULE_LOG")
    if wanted:
        log_path = Path(wanted)
    else:
        fd, name = tempfile.mkstemp(prefix="minik8s-molecule-test-", suffix=".log")
        os.close(fd)
        log_path = Path(name)
    scenario = Scenario(molecule, log_path)
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
