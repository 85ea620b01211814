"""What the differential kubectl tests share: every difference still tolerated between minik8s'
kubectl and an official one (:data:`KNOWN_DIFFERENCES`, the one place they are listed), and
:class:`Runs`, which runs invocations of both concurrently and each minik8s invocation once.

A tolerated difference is applied by name where it occurs (:func:`tolerate`): it rewrites both
results the same way, so what it does not rewrite still has to match byte for byte.  A difference
that is not listed here fails the test that meets it.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from tests.support.kubectl import Result
from tests.support.processes import ROOT, stop_process


@dataclass(frozen=True)
class Difference:
    """A tolerated difference: the official ``versions`` it applies to, why it is tolerated, and
    ``rewrite``, applied to stdout and stderr of both results before they are compared."""

    versions: frozenset[str]
    reason: str
    rewrite: Callable[[str], str]


def _sub(pattern: str, repl: str, flags: int = 0) -> Callable[[str], str]:
    rx = re.compile(pattern, flags)
    return lambda text: rx.sub(repl, text)


def _drop_null_creation_timestamp(text: str) -> str:
    """``text`` (YAML or indented JSON) without ``creationTimestamp: null``, a map left empty by it
    written ``{}`` as Go writes an empty map."""
    text = re.sub(r"(?m)^( *)([\w-]+):\n\1  creationTimestamp: null\n(?!\1  )", r"\1\2: {}\n", text)
    text = re.sub(r"(?m)^ *creationTimestamp: null\n", "", text)
    text = re.sub(r'"([\w-]+)": \{\s*"creationTimestamp": null\s*\}', r'"\1": {}', text)
    # compact JSON (a template's debugging help): the member and one of its commas
    text = re.sub(r',"creationTimestamp":null(?=[,}])|"creationTimestamp":null,?', "", text)
    text = re.sub(r"creationTimestamp:<nil> ?", "", text)  # Go's %v of the object
    text = re.sub(r',\n *"creationTimestamp": null(?=\n)', "", text)  # the last member (-n: after namespace)
    return re.sub(r'(?m)^ *"creationTimestamp": null,\n', "", text)


V137 = frozenset({"1.37"})
V132 = frozenset({"1.32"})

#: Every difference between minik8s' kubectl and the official ones that the tests tolerate.
#: minik8s' apiserver is Kubernetes 1.32, so its kubectl follows kubectl 1.32; what 1.37 changed
#: is listed with the ``1.37`` version only.
KNOWN_DIFFERENCES: dict[str, Difference] = {
    "1.37-attach-recorded-notice": Difference(
        V137,
        "kubectl 1.37 warns, before attaching with stdin (`debug -i`), that the session is recorded in the "
        "container's log; 1.32, which minik8s follows, does not",
        _sub(r"(?m)^All commands and output from this session will be recorded in container logs, including "
             r"credentials and sensitive information passed through the command prompt\.\n", "")),
    "1.37-reattach-namespace": Difference(
        V137,
        "kubectl 1.37's `Session ended ...` line after a terminal session names the namespace in the "
        "`kubectl attach` command it suggests (`-n NS`); 1.32, which minik8s follows, does not",
        _sub(r"(kubectl attach \S+ -c \S+) -n \S+ -i -t", r"\1 -i -t")),
    "1.37-debug-default-profile": Difference(
        V137,
        "kubectl 1.37's `debug` defaults to --profile=general and so prints no deprecation line for the "
        "legacy profile, 1.32's default, which minik8s follows (with its line on stderr)",
        _sub(r'(?m)^--profile=legacy is deprecated and will be removed in the future\. It is recommended to '
             r'explicitly specify a profile, for example "--profile=general"\.\n', "")),
    "1.37-kyaml": Difference(
        V137,
        "kubectl 1.37 has the kyaml output format (new in 1.34) and lists it among the allowed formats; "
        "1.32, which minik8s follows, has not",
        _sub(r"(allowed formats are: \S*?),kyaml", r"\1")),
    "1.37-creationTimestamp-null": Difference(
        V137,
        "kubectl 1.37's client-side objects (create/run --dry-run=client) omit the zero "
        "creationTimestamp that kubectl 1.32 prints as `creationTimestamp: null`",
        lambda text: _drop_null_creation_timestamp(text)),
    "1.37-flag-error-case": Difference(
        V137,
        "kubectl 1.37 writes pflag's flag errors (unknown flag, invalid argument) as `error: ...`; 1.32, "
        "which minik8s follows, as `Error: ...`",
        _sub(r"(?m)^Error: (unknown (?:shorthand )?flag|invalid argument)", r"error: \1")),
    "1.32-required-flag-klog": Difference(
        V132,
        "kubectl 1.32 reports a missing required flag through klog (`E1127 12:00:00.000000 123 run.go:72] "
        "\"command failed\" err=\"required flag(s) ...\"`); minik8s prints `error: required flag(s) ...` "
        "as kubectl 1.37 does, not a log line with a time and a process id",
        lambda text: re.sub(r'(?m)^E\d{4} [\d:.]+ +\d+ run\.go:\d+\] "command failed" err=(".*")$',
                            lambda m: "error: " + json.loads(m.group(1)), text)),
    "1.32-kustomize-klog": Difference(
        V132,
        "kubectl 1.32 reports a failed kustomize build (`kubectl kustomize`) and some apply/prune errors "
        "through klog (`E1127 12:00:00.000000 123 run.go:72] \"command failed\" err=\"...\"`); minik8s "
        "prints `error: ...` as kubectl 1.37 does, not a log line with a time and a process id",
        lambda text: re.sub(r'(?m)^E\d{4} [\d:.]+ +\d+ run\.go:\d+\] "command failed" err=(".*")$',
                            lambda m: "error: " + json.loads(m.group(1)), text)),
    "klog-time-pid": Difference(
        V132 | V137,
        "a warning kubectl logs through klog (`W1128 04:51:13.290982    9589 prune.go:71] ...`) carries the "
        "time and the process id, which differ from run to run; minik8s writes the same line",
        _sub(r"(?m)^([WE])\d{4} [\d:.]+ +\d+ ", r"\1MMDD HH:MM:SS.UUUUUU PID ")),
    "1.37-client-dry-run-unchanged": Difference(
        V137,
        "kubectl 1.37's `apply --dry-run=client` says `unchanged (dry run)` for an object the apply would not "
        "change; 1.32, which minik8s follows, computes no patch in a client dry run and says `configured (dry run)`",
        _sub(r"(?m) (configured|unchanged) \(dry run\)$", " <configured|unchanged> (dry run)")),
    "1.37-run-port-error": Difference(
        V137,
        "kubectl 1.37's `run --port=abc` says `--port must be a number`; 1.32 says "
        "`strconv.Atoi: parsing \"abc\": invalid syntax`",
        _sub(r"(?m)^error: --port must be a number$", 'error: strconv.Atoi: parsing "abc": invalid syntax')),
    "1.37-config-preferences": Difference(
        V137,
        "kubectl 1.37's `config view` omits the empty `preferences: {}` that 1.32 prints",
        _sub(r'(?m)^preferences: \{\}\n|^    "preferences": \{\},\n', "")),
    "1.37-whoami-metadata": Difference(
        V137,
        "kubectl 1.37 prints the SelfSubjectReview's empty metadata as `metadata: {}`; 1.32 prints the "
        "server's `creationTimestamp: null`, as minik8s does",
        lambda text: text.replace('"metadata": {\n        "creationTimestamp": null\n    }', '"metadata": {}')
        .replace("metadata:\n  creationTimestamp: null\n", "metadata: {}\n")),
    "1.37-restart-policy-list": Difference(
        V137,
        "kubectl 1.37's `run --restart=Bad` error lists the valid policies; 1.32's does not",
        _sub(r"(?m)^(error: invalid restart policy: Bad)\b.*$", r"\1")),
    "1.37-deprecated-cpu-percent": Difference(
        V137,
        "kubectl 1.37's `autoscale` warns that --cpu-percent is deprecated (it gained --cpu); 1.32 does not",
        _sub(r"(?m)^Flag --cpu-percent has been deprecated.*\n", "")),
    "1.37-undo-template-bytes": Difference(
        V137,
        "`rollout undo` of a DaemonSet or StatefulSet compares the object's template, encoded by the client, "
        "with the ControllerRevision's data byte for byte; minik8s' controllers write the data as a 1.32 "
        "kube-controller-manager does, which kubectl 1.32's encoding matches (`skipped rollback`) and 1.37's "
        "does not, so 1.37 patches the same template back (`rolled back`)",
        _sub(r"(?m) skipped rollback \(current template already matches revision -?\d+\)$", " rolled back")),
    "1.37-deleted-from-namespace": Difference(
        V137,
        "kubectl 1.37 reports a deleted namespaced object as `configmap \"x\" deleted from NS namespace`; "
        "1.32, which minik8s follows, as `configmap \"x\" deleted`",
        _sub(r'(?m)^(\S+ "[^"]+" deleted) from \S+ namespace$', r"\1")),
    "1.37-container-not-valid": Difference(
        V137,
        "kubectl 1.37 says which containers a pod has when -c names none of them (`container X is not valid "
        "for pod P out of: c1, c2`) and attach says it the same way; 1.32, which minik8s follows, says "
        "`container X is not valid for pod P` (cp, exec) and `container X not found in pod P` (attach)",
        lambda text: re.sub(r"(cannot attach to the container: container \S+) is not valid for pod (\S+)",
                            r"\1 not found in pod \2", re.sub(r"(is not valid for pod \S+) out of: .*", r"\1", text))),
    "apply-creationTimestamp-null": Difference(
        V132,
        "applying kubectl 1.32's own `create --dry-run=client -o yaml` twice: the official kubectl's "
        "three-way patch sets the live object's creationTimestamp to the manifest's null, so it "
        "sends a patch and says `configured` (against kube-apiserver 1.32 too); minik8s' kubectl "
        "diffs against the last applied configuration only and says `unchanged`",
        _sub(r"(?m) (configured|unchanged)$", " <configured|unchanged>")),
}


def tolerate(keys: Sequence[str], version: str, official: Result, ours: Result) -> tuple[Result, Result]:
    """``official`` and ``ours`` with the listed differences ``keys`` that apply to ``version``
    rewritten out of both (KeyError for a key not in :data:`KNOWN_DIFFERENCES`)."""
    for key in keys:
        diff = KNOWN_DIFFERENCES[key]
        if version in diff.versions:
            official = replace(official, out=diff.rewrite(official.out), err=diff.rewrite(official.err))
            ours = replace(ours, out=diff.rewrite(ours.out), err=diff.rewrite(ours.err))
    return official, ours


class _Zygotes:
    """A few :mod:`tests.support.kubectl_zygote` processes, one invocation at a time each."""

    def __init__(self, count: int) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="kubectl-zygote-")
        self.free: queue.Queue[subprocess.Popen[str]] = queue.Queue()
        self.procs = [subprocess.Popen([sys.executable, "-m", "tests.support.kubectl_zygote"], cwd=ROOT,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                      for _ in range(count)]
        for proc in self.procs:
            self.free.put(proc)
        self.serial = 0
        self.lock = threading.Lock()

    def run(self, argv: list[str], env: dict[str, str], stdin: str | None, cwd: Path) -> Result:
        with self.lock:
            self.serial += 1
            out = Path(self.tmp.name) / str(self.serial)
        out.mkdir()
        proc = self.free.get()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"argv": argv, "env": env, "cwd": str(cwd), "stdin": stdin,
                                         "dir": str(out)}) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        finally:
            self.free.put(proc)
        if not line:
            raise RuntimeError("the kubectl zygote died")
        code = json.loads(line)["code"]
        return Result(code, (out / "out").read_text(), (out / "err").read_text())

    def close(self) -> None:
        for proc in self.procs:
            if proc.stdin:
                proc.stdin.close()
            stop_process(proc, 5)
        self.tmp.cleanup()


class Runs:
    """Runs kubectl invocations ``workers`` at a time.

    :meth:`minik8s` runs minik8s' kubectl (``python -m minik8s.kubectl``) once per distinct
    (argv, environment, stdin): use it only for invocations that do not change the cluster, or
    whose state is fresh for the invocation.  Each runs in a process of its own, forked from a
    process that has already imported the CLI (:mod:`tests.support.kubectl_zygote`) unless
    ``MINIK8S_PARITY_SUBPROCESS=1``.  :meth:`official` runs an official binary, never cached.
    """

    def __init__(self, workers: int = 4) -> None:
        self.pool = ThreadPoolExecutor(workers)
        self.cache: dict[tuple[object, ...], Future[Result]] = {}
        self.lock = threading.Lock()
        self.zygotes = None if os.environ.get("MINIK8S_PARITY_SUBPROCESS") == "1" else _Zygotes(workers)

    def minik8s(self, args: Sequence[str], env: dict[str, str], stdin: str | None = None) -> Future[Result]:
        """minik8s' result of ``kubectl ARGS`` with environment ``env`` (cached)."""
        key = (tuple(args), tuple(sorted(env.items())), stdin)
        with self.lock:
            if key not in self.cache:
                self.cache[key] = self.pool.submit(self.run_minik8s, list(args), env, stdin)
            return self.cache[key]

    def run_minik8s(self, args: list[str], env: dict[str, str], stdin: str | None = None,
                    subprocess_only: bool = False) -> Result:
        """One uncached run of minik8s' kubectl (``subprocess_only``: a fresh ``python -m``)."""
        if self.zygotes is not None and not subprocess_only:
            return self.zygotes.run(args, env, stdin, ROOT)
        return run_process([sys.executable, "-m", "minik8s.kubectl", *args], env, stdin)

    def official(self, binary: Path, args: Sequence[str], env: dict[str, str],
                 stdin: str | None = None) -> Future[Result]:
        """The official ``binary``'s result of ``kubectl ARGS`` (not cached).  Each is one comparison:
        with ``MINIK8S_PARITY_LOG`` set, a line naming it is appended to that file (the closing
        figures of how many invocations are compared)."""
        log = os.environ.get("MINIK8S_PARITY_LOG")
        if log:
            with _LOG_LOCK, open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps([str(binary), *args]) + "\n")
        return self.pool.submit(run_process, [str(binary), *args], env, stdin)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.zygotes is not None:
            self.zygotes.close()


_LOG_LOCK = threading.Lock()


def run_process(argv: list[str], env: dict[str, str], stdin: str | None = None) -> Result:
    """A subprocess's result (in the repository root, 60 s at most)."""
    if stdin is None:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                              cwd=ROOT, env=env)
    else:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    return Result(proc.returncode, proc.stdout, proc.stderr)
