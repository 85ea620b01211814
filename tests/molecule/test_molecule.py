"""The appliance, end to end: ``molecule test`` of ``molecule/default``.

Debian 12 systemd containers (each with its own dockerd) are created, ``site.yml``
deploys minik8s onto three of them, a second converge must change nothing, the verify
playbooks check the cluster with real requests (see ``molecule/default/verify.yml``:
TLS and authentication, pods and Services across nodes, DNS, restarts under traffic,
node failure and recovery, a fourth host joining, the matmul GPUJob on the Slurm login
node, Functions and a Workflow through the gateway, ``playbooks/remove-node.yml``), and the
containers are destroyed.  The figures (``benchmarks/appliance.py``) are printed.

The scenario runs in the background beside kopf's suite and ``tests/e2e`` (after lightkube's and
kubernetes_asyncio's suites), and the first test after them waits for its end (``tests/molecule/scenario.py``,
``tests/molecule/conftest.py``); this test checks its outcome.

Needs Docker (skipped without it), root (debootstrap builds the host image once), and
molecule, molecule-plugins[docker] and ansible in this interpreter's environment.
"""

from __future__ import annotations

import pytest

from benchmarks.appliance import figures, playbook_times
from tests.molecule.scenario import TIMEOUT, Scenario, docker_unavailable, molecule_tool

# The scenario runs in the background (tests/molecule/conftest.py); this test checks its outcome.
pytestmark = [pytest.mark.molecule, pytest.mark.timeout(TIMEOUT + 420)]


def test_molecule_default_scenario(scenario: Scenario | None, capsys: pytest.CaptureFixture[str]) -> None:
    reason = docker_unavailable()
    if reason:
        pytest.skip(f"Molecule needs Docker: {reason}")
    if molecule_tool() is None:
        pytest.fail("molecule is not installed: pip install -e '.[test]' (molecule, molecule-plugins[docker], ansible)")
    assert scenario is not None, "the scenario did not start with the session (tests/molecule/conftest.py)"
    rc = scenario.wait()
    total, log_path = scenario.seconds, scenario.log_path
    output = scenario.output()
    times = playbook_times(output)
    with capsys.disabled():
        print(f"\nmolecule test: {total:.0f}s in all; playbook runs: "
              + ", ".join(f"{k} {v}s" for k, v in times.items()) + f" (log: {log_path})")
        for name, text in figures(output).items():
            print(f"  {name}: {text}")
    tail = "\n".join(output.splitlines()[-80:])
    assert rc is not None, f"molecule test did not finish in {TIMEOUT}s (instances destroyed); last lines:\n{tail}"
    assert rc == 0, f"molecule test failed (exit {rc}); last lines of {log_path}:\n{tail}"
    for action in ("converge", "idempotence", "verify"):
        assert action in times, f"molecule test ran no {action} playbook; last lines:\n{tail}"
