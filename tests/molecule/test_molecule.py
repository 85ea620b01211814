"""The appliance, end to end: ``molecule test`` of ``molecule/default``.

Debian 12 systemd containers (each with its own dockerd) are created, ``site.yml``
deploys minik8s onto three of them, a second converge must change nothing, the verify
playbooks check the cluster with real requests (see ``molecule/default/verify.yml``:
TLS and authentication, pods and Services across nodes, DNS, restarts under traffic,
node failure and recovery, a fourth host joining, the matmul GPUJob on the Slurm login
node, Functions and a Workflow through the gateway, ``playbooks/remove-node.yml``), and the
containers are destroyed.  The figures (``benchmarks/appliance.py``) are printed.

Needs Docker (skipped without it), root (debootstrap builds the host image once), and
molecule, molecule-plugins[docker] and ansible in this interpreter's environment.

It runs alone, though it shares nothing with the other tests: run in the background beside the
integration tests (tried), it slowed them enough to fail timing-bound ones (a leader election with
3-second leases, a Job's suspend and resume) on 2 cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.appliance import figures, molecule_env, playbook_times

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 35 * 60  # seconds for the whole scenario (it takes ~15 minutes on 2 cores)

pytestmark = [pytest.mark.molecule, pytest.mark.timeout(TIMEOUT + 180)]

def _docker_available() -> str | None:
    """None when the Docker Engine answers, else why not."""
    if not shutil.which("docker"):
        return "the docker CLI is not installed"
    try:
        proc = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker info failed: {exc}"
    if proc.returncode != 0:
        return f"the Docker Engine does not answer: {proc.stderr.strip()[:200]}"
    return None


def _tool(name: str) -> str:
    """``name`` next to this interpreter (the virtualenv's bin), else on PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]' (molecule, molecule-plugins[docker], ansible)")
    return found


def test_molecule_default_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reason = _docker_available()
    if reason:
        pytest.skip(f"Molecule needs Docker: {reason}")
    molecule = _tool("molecule")
    env = molecule_env()
    env["PATH"] = f"{Path(molecule).parent}{os.pathsep}{env['PATH']}"
    # MINIK8S_MOLECULE_LOG keeps the log where asked (pytest prunes old tmp_paths).
    log_path = Path(os.environ.get("MINIK8S_MOLECULE_LOG") or tmp_path / "molecule-test.log")
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen([molecule, "test"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            rc = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            subprocess.run([molecule, "destroy"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=300, check=False)
            rc = None
    total = time.monotonic() - start
    output = log_path.read_text(errors="replace")
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
