"""A process that has imported minik8s' kubectl and forks one child per invocation.

``python -m tests.support.kubectl_zygote`` reads one JSON request per stdin line —
``{"argv": [...], "env": {...}, "cwd": "...", "stdin": "..." | null, "dir": "..."}`` — forks a child
that runs ``python -m minik8s.kubectl ARGV`` from that point (its own process, environment,
working directory and standard streams: ``stdin`` on fd 0, fds 1 and 2 into ``dir/out``/``dir/err``),
waits for it and answers ``{"code": N}`` on one stdout line.  The child starts with the imports
done, so an invocation costs what the command does, not the ~1.5 CPU-seconds of importing
the CLI; nothing the command computes (kubeconfig, discovery, the terminal width) is read before
the fork, as nothing is read at import time.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import sys
import tempfile
from pathlib import Path

import minik8s.kubectl.app  # noqa: F401 - the imports every invocation shares

MAIN = str(Path(minik8s.kubectl.__file__).with_name("__main__.py"))


def _child(req: dict) -> None:
    """In the forked child: become ``python -m minik8s.kubectl ARGV`` and exit with its code."""
    code: object = 1
    try:
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        with tempfile.TemporaryFile() as stdin:
            stdin.write((req.get("stdin") or "").encode())
            stdin.seek(0)
            os.dup2(stdin.fileno(), 0)
        if req.get("stdin") is None:
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        out = Path(req["dir"])
        os.dup2(os.open(out / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
        os.dup2(os.open(out / "err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                      errors="backslashreplace", line_buffering=True)
        sys.argv = [MAIN, *req["argv"]]
        try:
            minik8s.kubectl.app.main()
            code = 0
        except SystemExit as exc:
            code = exc.code
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        if code is None:
            code = 0
        elif not isinstance(code, int):
            print(code, file=sys.stderr)
            sys.stderr.flush()
            code = 1
    finally:
        os._exit(code if isinstance(code, int) else 1)


def serve() -> None:
    """Answer requests until stdin closes."""
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
