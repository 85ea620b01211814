"""The appliance, end to end: ``molecule test`` of ``molecule/default``.

Three Debian 12 systemd containers (each with its own dockerd) are created, ``site.yml``
deploys minik8s onto them, a second converge must change nothing, ``verify.yml`` checks
the cluster (nodes Ready with their inventory labels/taints, TLS + client-certificate
auth and 401 for anonymous requests, a pod Running on every node, node -> pod traffic,
a ClusterIP Service, ``playbooks/remove-node.yml``), and the containers are destroyed.

Needs Docker (skipped without it), root (debootstrap builds the host image once), and
molecule, molecule-plugins[docker] and ansible in this interpreter's environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 25 * 60  # seconds for the whole scenario (it takes ~10 minutes on 2 cores)

pytestmark = [pytest.mark.molecule, pytest.mark.timeout(TIMEOUT + 180)]

# "INFO  [default > converge] Executing" (NO_COLOR) or "default ➜ converge: Executing"
ACTION = re.compile(r"(?:\[[^\]>]+ > (\w+)\]|➜ (\w+):) Executing")
TOOK = re.compile(r"Playbook run took (\d+) days, (\d+) hours, (\d+) minutes, (\d+) seconds")


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


def playbook_times(log: str) -> dict[str, int]:
    """Seconds of each molecule action's playbook run, from the ansible.posix.timer lines."""
    times: dict[str, int] = {}
    action = None
    for line in log.splitlines():
        if m := ACTION.search(line):
            action = m.group(1) or m.group(2)
        elif (m := TOOK.search(line)) and action:
            d, h, mi, s = (int(g) for g in m.groups())
            times[action] = times.get(action, 0) + ((d * 24 + h) * 60 + mi) * 60 + s
    return times


def test_molecule_default_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reason = _docker_available()
    if reason:
        pytest.skip(f"Molecule needs Docker: {reason}")
    molecule = _tool("molecule")
    env = dict(os.environ)
    env["PATH"] = f"{Path(molecule).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update({"NO_COLOR": "1", "PY_COLORS": "0", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_NOCOLOR": "1"})
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
    tail = "\n".join(output.splitlines()[-80:])
    assert rc is not None, f"molecule test did not finish in {TIMEOUT}s (instances destroyed); last lines:\n{tail}"
    assert rc == 0, f"molecule test failed (exit {rc}); last lines of {log_path}:\n{tail}"
    for action in ("converge", "idempotence", "verify"):
        assert action in times, f"molecule test ran no {action} playbook; last lines:\n{tail}"
