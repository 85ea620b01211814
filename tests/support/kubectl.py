"""minik8s' kubectl as the integration tests run it: a subprocess with a temp kubeconfig."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT


@dataclass
class Result:
    """A finished kubectl run: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def table(self) -> list[list[str]]:
        """Rows of a kubectl table, split on the 3-space column gaps."""
        return [re.split(r"\s{2,}", line.strip()) for line in self.lines if line.strip()]


class Kubectl:
    """Runs the CLI in a subprocess with a temp kubeconfig and (by default) ``-n namespace``."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        self.kubeconfig = kubeconfig
        self.namespace = namespace

    def __call__(self, *args: str, stdin: str | None = None, ns: bool = True, kubeconfig: bool = True,
                 timeout: float = 60) -> Result:
        cmd = [sys.executable, "-m", "minik8s.kubectl"]
        if kubeconfig:
            cmd += ["--kubeconfig", str(self.kubeconfig)]
        cmd += list(args)
        if ns:
            cmd += ["-n", self.namespace]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env={**os.environ, "KUBECONFIG": "/nonexistent", "COLUMNS": "200"})
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str, **kwargs: Any) -> Result:
        res = self(*args, **kwargs)
        assert res.code == 0, f"kubectl {' '.join(args)} failed ({res.code}): {res.err}"
        return res


def assert_one_error_line(res: Result, *fragments: str) -> None:
    """kubectl failed with exit code 1 and one stderr line (no traceback) holding every fragment."""
    assert res.code == 1, (res.code, res.out, res.err)
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert "Traceback" not in res.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])

