"""Real Helm v4 against a test cluster: the official ``helm`` binary and the ``helm-sdkpy`` virtualenv
that ``scripts/install-helm.sh`` installs (``.venv/helm/bin/helm``, ``.venv/helm-sdkpy``), the
pinned public charts in ``../shared/charts`` and the local images they run on here.

``MINIK8S_HELM`` points at another helm v4 binary, ``MINIK8S_HELM_SDKPY_PYTHON`` at another Python
with ``helm_sdkpy``.  Whatever is missing makes the test that needs it skip, saying what to run.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.support.processes import ROOT

HELM_BINARY = ROOT / ".venv" / "helm" / "bin" / "helm"
HELM_SDKPY_PYTHON = ROOT / ".venv" / "helm-sdkpy" / "bin" / "python"
#: The pinned public charts (bitnami nginx with its common library, kube-state-metrics).
SHARED_CHARTS = ROOT.parent / "shared" / "charts"
#: The script the helm-sdkpy virtualenv runs (one Helm action per call).
SDKPY_DRIVER = Path(__file__).with_name("helm_sdkpy_driver.py")


@cache
def find_helm() -> tuple[Path | None, str]:
    """(the helm v4 binary, "") or (None, why it is missing)."""
    path = Path(os.environ.get("MINIK8S_HELM") or HELM_BINARY)
    if not (path.is_file() and os.access(path, os.X_OK)):
        return None, f"helm v4 is not installed at {path} (bash scripts/install-helm.sh)"
    out = subprocess.run([str(path), "version", "--short"], capture_output=True, text=True, timeout=30)
    if not out.stdout.startswith("v4."):
        return None, f"{path} is not helm v4: {out.stdout.strip() or out.stderr.strip()}"
    return path, ""


@cache
def find_sdkpy() -> tuple[Path | None, str]:
    """(a Python with helm_sdkpy, "") or (None, why there is none)."""
    path = Path(os.environ.get("MINIK8S_HELM_SDKPY_PYTHON") or HELM_SDKPY_PYTHON)
    if not path.exists():
        return None, (f"no helm-sdkpy virtualenv at {path.parent.parent}: helm-sdkpy needs Python >= 3.12, "
                      "which scripts/install-helm.sh looks for (python3.12+ on PATH or pyenv) and found none")
    out = subprocess.run([str(path), "-c", "import helm_sdkpy"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return None, f"{path} cannot import helm_sdkpy: {out.stderr.strip()[-300:]}"
    return path, ""


def image_missing(*images: str) -> str:
    """Why a test cannot run (the first local image that is not built), or ""."""
    for image in images:
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True, timeout=30).returncode:
            name = image.split("/")[-1].split(":")[0]
            return f"the local image {image} is not built (bash scripts/build-images.sh {name})"
    return ""


@dataclass
class Helm:
    """The helm binary with the test cluster's kubeconfig, a namespace and a home of its own."""

    path: Path
    kubeconfig: Path
    home: Path
    namespace: str

    def env(self) -> dict[str, str]:
        h = str(self.home)
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": h, "HELM_CACHE_HOME": f"{h}/cache",
                "HELM_CONFIG_HOME": f"{h}/config", "HELM_DATA_HOME": f"{h}/data"}

    def __call__(self, *args: str, check: bool = True, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        """``helm ARGS -n NAMESPACE``; raises AssertionError with helm's output when ``check`` and it fails."""
        proc = subprocess.run([str(self.path), *args, "-n", self.namespace], capture_output=True, text=True,
                              env=self.env(), cwd=self.home, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc
