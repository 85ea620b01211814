"""The function runtime in the real ``minik8s/python`` image (Docker): calls, errors, timeouts,
limits, hostile input, load failures.

Each test runs a container with the runtime and a code directory bind-mounted, its port
published on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from minik8s.fnruntime import RUNTIME_FILE, runtime_source

pytestmark = pytest.mark.docker
IMAGE = "minik8s/python:latest"

CODE = '''
import time

calls = 0

def handler(event, context):
    global calls
    calls += 1
    if isinstance(event, dict) and event.get("raise"):
        raise ValueError("bad input: " + str(event["raise"]))
    if isinstance(event, dict) and event.get("sleep"):
        time.sleep(event["sleep"])
    if isinstance(event, dict) and event.get("unjsonable"):
        return {1, 2}
    return {"echo": event, "calls": calls, "function": context.function_name,
            "ce": context.cloudevent, "remaining": context.remaining_seconds() > 0}
'''


def docker(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"docker {' '.join(args)} failed: {proc.stderr}"
    return proc


@pytest.fixture(scope="module", autouse=True)
def python_image() -> None:
    try:
        proc = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"docker unavailable: {exc}")
    if proc.returncode != 0:
        pytest.skip(f"{IMAGE} is missing (scripts/build-images.sh python)")


@contextlib.contextmanager
def runtime(tmp_path: Path, files: dict[str, str], wait: bool = True, **env: str) -> Iterator[str]:
    """Run the runtime on ``files``; yields its base URL (http://127.0.0.1:PORT)."""
    code = tmp_path / "code"
    code.mkdir()
    for name, text in files.items():
        (code / name).write_text(text)
    (code / RUNTIME_FILE).write_text(runtime_source())
    name = f"minik8s-fnrt-{tmp_path.name[-12:].lower().replace('_', '-')}-{time.monotonic_ns() % 100000}"
    env_args = [arg for k, v in {"MINIK8S_FUNCTION_NAME": "echo", **env}.items() for arg in ("-e", f"{k}={v}")]
    docker("run", "-d", "--name", name, "-p", "127.0.0.1::8080", "-v", f"{code}:/fn:ro",
           "-e", "MINIK8S_FUNCTION_DIR=/fn", *env_args, IMAGE, "python3", f"/fn/{RUNTIME_FILE}")
    try:
        port = docker("port", name, "8080/tcp").stdout.strip().splitlines()[0].rsplit(":", 1)[1]
        url = f"http://127.0.0.1:{port}"
        if wait:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, docker("logs", name, check=False).stderr
                time.sleep(0.05)
        yield name if not wait else url
    finally:
        docker("rm", "-f", name, check=False)


def test_calls_errors_timeouts_and_limits(tmp_path: Path) -> None:
    with runtime(tmp_path, {"main.py": CODE}, MINIK8S_TIMEOUT_SECONDS="1", MINIK8S_MAX_BODY_BYTES="1000") as url, \
            httpx.Client(base_url=url, timeout=10) as http:
        r = http.post("/", json={"name": "x"})
        assert r.status_code == 200 and r.json()["echo"] == {"name": "x"} and r.json()["function"] == "echo"
        assert r.json()["remaining"] is True and r.json()["ce"] is None
        ce = http.post("/", json={"a": 1}, headers={"ce-type": "order.created", "ce-source": "/shop", "ce-id": "1",
                                                   "ce-specversion": "1.0"})
        assert ce.json()["ce"] == {"type": "order.created", "source": "/shop", "id": "1", "specversion": "1.0"}
        assert http.post("/", content=b"").json()["echo"] is None
        # the handler raises: 500 with type and message, and the instance keeps serving
        r = http.post("/", json={"raise": "nope"})
        assert r.status_code == 500
        assert (r.json()["error"], r.json()["message"]) == ("ValueError", "bad input: nope")
        assert "main.py" in r.json()["stack"]
        assert http.post("/", json={}).status_code == 200
        # over timeoutSeconds: 504; the server still answers meanwhile
        started = time.monotonic()
        r = http.post("/", json={"sleep": 3})
        assert r.status_code == 504 and r.json()["error"] == "Timeout"
        assert time.monotonic() - started < 2.5
        assert http.post("/", json={}).status_code == 200
        # limits and bad input
        r = http.post("/", content=b'{"x": "' + b"a" * 2000 + b'"}', headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["error"] == "PayloadTooLarge"
        assert http.post("/", content=b"{not json").status_code == 400
        assert http.post("/", json={"unjsonable": True}).status_code == 500
        assert http.get("/").status_code == 405
        assert http.get("/healthz").json() == {"status": "ok"}
        # concurrent calls run in parallel (a slow one does not block the others)
        with httpx.Client(base_url=url, timeout=10) as other:
            import threading

            slow = threading.Thread(target=lambda: other.post("/", json={"sleep": 0.8}))
            slow.start()
            t0 = time.monotonic()
            assert http.post("/", json={}).status_code == 200
            assert time.monotonic() - t0 < 0.5
            slow.join()


def test_hostile_clients_are_bounded(tmp_path: Path) -> None:
    with runtime(tmp_path, {"main.py": CODE}, MINIK8S_READ_TIMEOUT_SECONDS="1") as url:
        host, port = url.removeprefix("http://").split(":")
        # a slowloris: headers trickle in; the connection is closed after the read deadline
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
            started = time.monotonic()
            closed = False
            while time.monotonic() - started < 4:
                try:
                    s.sendall(b"X-A: b\r\n")
                except OSError:
                    closed = True
                    break
                s.settimeout(0.3)
                try:
                    if s.recv(1024) == b"":
                        closed = True
                        break
                except TimeoutError:
                    pass
                except OSError:
                    closed = True
                    break
            assert closed and time.monotonic() - started < 3
        # a huge header line is refused
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"POST / HTTP/1.1\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n")
            reply = s.recv(1024)
            assert reply.startswith(b"HTTP/1.") and b" 431 " in reply.split(b"\r\n")[0] or b" 400 " in reply
        # a negative Content-Length and a chunked body
        for head in (b"Content-Length: -1", b"Transfer-Encoding: chunked"):
            with socket.create_connection((host, int(port)), timeout=5) as s:
                s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n\r\n")
                status = s.recv(1024).split(b"\r\n")[0]
                assert status.split(b" ")[1] in (b"400", b"411"), status
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200


@pytest.mark.parametrize("files, handler, words", [
    ({"main.py": "def handler(event, context)\n    return 1\n"}, "main.handler",
     "SyntaxError: expected ':' (main.py, line 1)"),
    ({"main.py": "import numpy_not_installed\n"}, "main.handler", "ModuleNotFoundError: No module named"),
    ({"main.py": "def other(e, c): pass\n"}, "main.handler", "AttributeError: module 'main' has no function 'handler'"),
])
def test_load_failures_exit_with_one_clear_line(tmp_path: Path, files: dict[str, str], handler: str,
                                                 words: str) -> None:
    with runtime(tmp_path, files, wait=False, MINIK8S_HANDLER=handler) as name:
        deadline = time.monotonic() + 30
        while True:
            state = json.loads(docker("inspect", "-f", "{{json .State}}", name).stdout)
            if state["Status"] == "exited":
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert state["ExitCode"] == 3
        last = docker("logs", name).stderr.strip().splitlines()[-1]
        assert last.startswith("minik8s-runtime: load failed: ") and words in last, last


def test_requirements_directory_is_on_the_path(tmp_path: Path) -> None:
    deps = tmp_path / "code" / "deps"
    files = {"main.py": "import helperlib\n\ndef handler(event, context):\n    return helperlib.VALUE\n"}
    (tmp_path / "code").mkdir()
    deps.mkdir()
    (deps / "helperlib.py").write_text("VALUE = 42\n")
    code = tmp_path / "code"
    for name, text in files.items():
        (code / name).write_text(text)
    (code / RUNTIME_FILE).write_text(runtime_source())
    name = f"minik8s-fnrt-deps-{time.monotonic_ns() % 100000}"
    docker("run", "-d", "--name", name, "-p", "127.0.0.1::8080", "-v", f"{code}:/fn:ro", "-e",
           "MINIK8S_FUNCTION_DIR=/fn", "-e", "MINIK8S_DEPS_DIR=/fn/deps", IMAGE, "python3", f"/fn/{RUNTIME_FILE}")
    try:
        port = docker("port", name, "8080/tcp").stdout.strip().splitlines()[0].rsplit(":", 1)[1]
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/", json={}, timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, docker("logs", name, check=False).stderr
                time.sleep(0.05)
        assert r.status_code == 200 and r.json() == 42
    finally:
        docker("rm", "-f", name, check=False)
