"""kubectl plugins both ways round (``minik8s.kubectl.plugin``).

minik8s' own verbs (``function``, ``workflow``, ``event``, ``gpujob``) are console scripts named
``kubectl-<verb>``, so the official kubectl (1.32 and 1.37) runs them as plugins, against the test
apiserver. minik8s' kubectl runs plugins on ``PATH`` the way the official one does, and its
``plugin list`` prints what the official one prints (stdout, stderr and exit code compared, over a
``PATH`` with an overshadowed, a non-executable and a command-overwriting plugin).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from minik8s.client.kubeconfig import render
from minik8s.kubectl.plugin import PLUGIN_VERBS
from tests.realkubectl import find
from tests.support.processes import ROOT, APIServer

BIN = Path(sys.executable).parent
VERSIONS = ["1.32", "1.37"]


@pytest.fixture(params=VERSIONS)
def official(request: pytest.FixtureRequest) -> Path:
    path, why = find(request.param)
    if path is None:
        pytest.skip(why)
    return path


def run(argv: list[str], path: str, **env: str) -> tuple[int, str, str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PATH": path, "KUBECONFIG": "/nonexistent", **env})
    return proc.returncode, proc.stdout, proc.stderr


def test_minik8s_verbs_are_installed_as_plugins() -> None:
    for verb in PLUGIN_VERBS:
        script = BIN / f"kubectl-{verb}"
        assert script.is_file() and os.access(script, os.X_OK), f"{script} is missing: pip install -e ."


def test_the_official_kubectl_runs_minik8s_verbs_as_plugins(official: Path, apiserver: APIServer,
                                                              tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    path = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    env = {"KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path)}
    for verb in PLUGIN_VERBS:
        code, out, err = run([str(official), verb, "--help"], path, **env)
        assert code == 0 and "Usage:" in out, (verb, code, out, err)
    # A real GPUJob through the plugin: flags after the plugin's name go to it.
    ns = f"t-{os.urandom(4).hex()}"
    assert run([str(official), "create", "namespace", ns], path, **env)[0] == 0
    manifest = yaml.safe_load((ROOT / "examples/gpu/matrix-multiply.yaml").read_text())
    job_file = tmp_path / "job.yaml"
    job_file.write_text(yaml.safe_dump(manifest))
    code, out, err = run([str(official), "gpujob", "create", "-n", ns, "-f", str(job_file),
                          "--sources", str(ROOT / "examples/gpu/matrix-multiply")], path, **env)
    assert code == 0, err
    assert out == f"gpujob.minik8s.io/{manifest['metadata']['name']} created\n"
    code, out, err = run([str(official), "get", "gpujobs", "-n", ns, "-o", "name"], path, **env)
    assert (code, out) == (0, f"gpujob.minik8s.io/{manifest['metadata']['name']}\n"), err
    # The official kubectl lists them, without a warning.
    code, out, err = run([str(official), "plugin", "list", "--name-only"], str(BIN), **env)
    assert (code, err) == (0, ""), err
    assert {f"kubectl-{v}" for v in PLUGIN_VERBS} <= set(out.splitlines()[2:])


@pytest.fixture
def plugin_path(tmp_path: Path) -> str:
    """A PATH of two directories of plugins: ``a`` has ``kubectl-foo``, ``kubectl-foo-bar_baz`` and
    ``kubectl-version`` (overwrites ``kubectl version``); ``b`` has another ``kubectl-foo``
    (overshadowed) and a ``kubectl-noexec`` that is not executable."""
    a, b = tmp_path / "a", tmp_path / "b"
    for directory, name, body, mode in ((a, "kubectl-foo", 'echo "foo $@"', 0o755),
                                        (a, "kubectl-foo-bar_baz", 'echo "foo bar-baz $@"', 0o755),
                                        (a, "kubectl-version", "echo mine", 0o755),
                                        (b, "kubectl-foo", "echo shadowed", 0o755),
                                        (b, "kubectl-noexec", "echo never", 0o644)):
        directory.mkdir(exist_ok=True)
        script = directory / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(mode)
    return f"{a}{os.pathsep}{b}{os.pathsep}/usr/bin{os.pathsep}/bin"


MINE = [sys.executable, "-m", "minik8s.kubectl"]


@pytest.mark.parametrize("args", [
    ["plugin", "list"],
    ["plugin", "list", "--name-only"],
    ["foo", "bar-baz", "1", "--x"],  # the longest name: kubectl-foo-bar_baz
    ["foo", "bar", "1"],  # kubectl-foo, with the rest as its arguments
    ["-n", "x", "foo"],  # flags before a plugin's name are refused
    ["version", "--client", "-o", "json"],  # a command wins over a plugin of its name
], ids=lambda a: " ".join(a))
def test_plugins_on_path_run_and_list_as_with_the_official_kubectl(official: Path, plugin_path: str,
                                                                   args: list[str]) -> None:
    theirs = run([str(official), *args], plugin_path)
    mine = run([*MINE, *args], plugin_path)
    if args[0] == "version":
        assert mine[0] == theirs[0] == 0 and "mine" not in mine[1] and '"clientVersion"' in mine[1]
        return
    assert mine == theirs


def test_no_plugin_on_path_is_one_error_line(official: Path, tmp_path: Path) -> None:
    theirs = run([str(official), "plugin", "list"], str(tmp_path))
    mine = run([*MINE, "plugin", "list"], str(tmp_path))
    assert mine == theirs == (1, "", "error: unable to find any kubectl plugins in your PATH\n")
