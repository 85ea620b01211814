"""Appliance figures from a ``molecule test`` run of ``molecule/default``.

* ``site.yml`` on three fresh hosts (the ``converge`` playbook run) and its idempotent
  re-run (``idempotence``), in seconds, from the ``ansible.posix.timer`` lines;
* node failure: the ``FIGURE node-failure`` line of ``verify-node-failure.yml`` (kubelet
  stopped at 0 s → Node NotReady, pods out of the Service's endpoints, replicas Ready on
  the other nodes);
* restarts under traffic: the ``FIGURE restarts`` line of ``verify-restarts.yml``
  (requests made and failed while every control-plane unit, a kubelet and a proxy restart);
* high availability: the ``FIGURE ha`` line of ``verify-ha.yml`` (every control-plane unit of
  the first control-plane host stopped at 0 s → the second host's scheduler and
  controller-manager acquire their Leases, its first binding and first ReplicaSet
  replacement; requests made and failed meanwhile).

Runs ``molecule test`` (10-15 minutes on 2 cores; Docker and root needed), or reads the log
of an earlier run.  Traffic stays on the scenario's internal Docker network.  Prints one
JSON document.

    python -m benchmarks.appliance [--log molecule.log]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# "INFO  [default > converge] Executing" (NO_COLOR) or "default ➜ converge: Executing"
ACTION = re.compile(r"(?:\[[^\]>]+ > (\w+)\]|➜ (\w+):) Executing")
TOOK = re.compile(r"Playbook run took (\d+) days, (\d+) hours, (\d+) minutes, (\d+) seconds")
FIGURE = re.compile(r"FIGURE ([\w-]+): ([^\"\n]+)")


def playbook_times(log: str) -> dict[str, int]:
    """Seconds of each molecule action's playbook runs (summed), from the ansible.posix.timer lines."""
    times: dict[str, int] = {}
    action = None
    for line in log.splitlines():
        if m := ACTION.search(line):
            action = m.group(1) or m.group(2)
        elif (m := TOOK.search(line)) and action:
            d, h, mi, s = (int(g) for g in m.groups())
            times[action] = times.get(action, 0) + ((d * 24 + h) * 60 + mi) * 60 + s
    return times


def figures(log: str) -> dict[str, str]:
    """The verify playbooks' ``FIGURE <name>: <text>`` lines (the last of each name)."""
    return {m.group(1): " ".join(m.group(2).split()) for m in FIGURE.finditer(log)}


def molecule_env() -> dict[str, str]:
    """The environment molecule runs with: this interpreter's bin first, no colours."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update({"NO_COLOR": "1", "PY_COLORS": "0", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_NOCOLOR": "1"})
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, help="parse this molecule log instead of running molecule test")
    args = parser.parse_args()
    total = None
    if args.log is None:
        args.log = Path(f"/tmp/minik8s-molecule-{int(time.time())}.log")
        start = time.monotonic()
        with open(args.log, "w") as out:
            rc = subprocess.run(["molecule", "test"], cwd=ROOT, env=molecule_env(), stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False).returncode
        total = round(time.monotonic() - start)
        if rc != 0:
            sys.exit(f"molecule test failed (exit {rc}); see {args.log}")
    log = args.log.read_text(errors="replace")
    times = playbook_times(log)
    print(json.dumps({"log": str(args.log), "molecule_test_seconds": total,
                      "site_yml_fresh_seconds": times.get("converge"),
                      "site_yml_rerun_seconds": times.get("idempotence"),
                      "verify_seconds": times.get("verify"),
                      "figures": figures(log)}, indent=2))


if __name__ == "__main__":
    main()
