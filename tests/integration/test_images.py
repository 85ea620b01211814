"""Checks of the images built by ``scripts/build-images.sh`` against the real Docker Engine.

The images (``minik8s/busybox``, ``minik8s/pause``, ``minik8s/python``, tag ``latest``) are
built locally with ``docker import``; no registry is involved. Docker is driven through its
CLI with :mod:`subprocess`. Containers use only their own loopback (``--network none``).
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.docker

BUSYBOX = "minik8s/busybox:latest"
PAUSE = "minik8s/pause:latest"
PYTHON = "minik8s/python:latest"
IMAGES = [BUSYBOX, PAUSE, PYTHON]


def docker(*args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``docker ARGS...``; return the completed process (text stdout/stderr).

    Raises ``AssertionError`` with docker's stderr when ``check`` and the exit code is not 0.
    """
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"docker {' '.join(args)} failed ({proc.returncode}): {proc.stderr}"
    return proc


@pytest.fixture(scope="module", autouse=True)
def docker_engine() -> None:
    """Skip the module when the Docker Engine does not answer ``docker info``."""
    try:
        proc = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"docker info failed: {exc}")
    if proc.returncode != 0:
        pytest.skip(f"docker info failed: {proc.stderr.strip()[:200]}")


@pytest.fixture
def pause_container() -> Iterator[str]:
    """A running ``minik8s/pause`` container (name); removed afterwards."""
    name = f"minik8s-test-pause-{uuid.uuid4().hex[:8]}"
    docker("run", "-d", "--name", name, "--network", "none", PAUSE)
    try:
        yield name
    finally:
        docker("rm", "-f", name, check=False)


@pytest.mark.parametrize("image", IMAGES)
def test_image_exists(image: str) -> None:
    proc = docker("image", "inspect", image, check=False)
    assert proc.returncode == 0, f"{image} is missing: run scripts/build-images.sh"


def test_busybox_echo() -> None:
    proc = docker("run", "--rm", "--network", "none", BUSYBOX, "sh", "-c", "echo hi")
    assert proc.stdout == "hi\n"


def test_busybox_default_cmd_is_sh() -> None:
    proc = docker("run", "--rm", "-i", "--network", "none", BUSYBOX, timeout=30)
    assert proc.returncode == 0  # sh read EOF on stdin and exited
    cmd = docker("image", "inspect", "-f", "{{json .Config.Cmd}}", BUSYBOX).stdout.strip()
    assert cmd == '["sh"]'


@pytest.mark.parametrize("applet", ["httpd", "wget", "nc", "sleep", "cat", "ls", "ps", "kill", "timeout"])
def test_busybox_has_applet(applet: str) -> None:
    # Debian's busybox ash prefers applets (`command -v` prints only the name), so check /bin.
    script = f'[ -x /bin/{applet} ] && [ "$(readlink /bin/{applet})" = busybox ] && echo ok'
    proc = docker("run", "--rm", "--network", "none", BUSYBOX, "sh", "-c", script, check=False)
    assert proc.stdout.strip() == "ok", f"/bin/{applet} missing: {proc.stderr}"


def test_busybox_users_and_tmp() -> None:
    script = "grep -q '^root:x:0:0:' /etc/passwd && grep -q '^nobody:' /etc/passwd && stat -c %a /tmp"
    proc = docker("run", "--rm", "--network", "none", BUSYBOX, "sh", "-c", script)
    assert proc.stdout.strip() == "1777"
    proc = docker("run", "--rm", "--network", "none", "--user", "nobody", BUSYBOX, "id", "-u")
    assert proc.stdout.strip() == "65534"


def test_busybox_httpd_wget_on_loopback() -> None:
    """httpd serves a file and wget fetches it, inside one container, on 127.0.0.1 only."""
    script = (
        "mkdir -p /tmp/www && echo hello-from-httpd > /tmp/www/index.html && "
        "httpd -p 127.0.0.1:8080 -h /tmp/www && "
        # Debian's busybox wget has no -T (it segfaults on it): bound it with `timeout`.
        "for i in 1 2 3 4 5 6 7 8 9 10; do "
        "  timeout 5 wget -q -O - http://127.0.0.1:8080/index.html && exit 0; sleep 0.2; "
        "done; exit 1"
    )
    proc = docker("run", "--rm", "--network", "none", BUSYBOX, "sh", "-c", script, timeout=60)
    assert proc.stdout.strip() == "hello-from-httpd"


def test_busybox_nc_on_loopback() -> None:
    """nc listens and nc connects, inside one container, on 127.0.0.1 only."""
    script = (
        "timeout 10 nc -l -p 9000 > /tmp/got & "
        "sleep 0.5; echo ping-over-nc | timeout 5 nc -w 1 127.0.0.1 9000; wait; cat /tmp/got"
    )
    proc = docker("run", "--rm", "--network", "none", BUSYBOX, "sh", "-c", script, timeout=60)
    assert proc.stdout.strip() == "ping-over-nc"


def test_pause_stops_promptly_with_exit_0(pause_container: str) -> None:
    """The pause container exits 0 on SIGTERM, well before docker's 10 s SIGKILL fallback."""
    assert docker("inspect", "-f", "{{.State.Running}}", pause_container).stdout.strip() == "true"
    start = time.monotonic()
    docker("stop", "-t", "10", pause_container)
    elapsed = time.monotonic() - start
    assert elapsed < 2.0, f"docker stop took {elapsed:.2f}s (SIGTERM not handled?)"
    state = docker("inspect", "-f", "{{.State.ExitCode}} {{.State.OOMKilled}}", pause_container).stdout
    assert state.split() == ["0", "false"]


def test_pause_exits_0_on_sigint(pause_container: str) -> None:
    docker("kill", "-s", "INT", pause_container)
    code = docker("wait", pause_container, timeout=10).stdout.strip()
    assert code == "0"


def test_pause_image_is_minimal() -> None:
    entrypoint = docker("image", "inspect", "-f", "{{json .Config.Entrypoint}}", PAUSE).stdout.strip()
    assert entrypoint == '["/pause"]'
    size = int(docker("image", "inspect", "-f", "{{.Size}}", PAUSE).stdout.strip())
    assert size < 5 * 1024 * 1024, f"pause image is {size} bytes"


def test_pause_reaps_orphans_in_shared_pid_namespace(pause_container: str) -> None:
    """Orphans in the Pod's PID namespace are re-parented to /pause (PID 1), which reaps them."""
    # The subshell starts `sleep 1` and exits at once, so `sleep 1` is re-parented to PID 1
    # (pause). After it exits, it must not remain a zombie (state Z).
    script = "(sleep 1 &) ; sleep 3; ps -o pid,ppid,stat,comm"
    proc = docker(
        "run",
        "--rm",
        "--network",
        "none",
        "--pid",
        f"container:{pause_container}",
        BUSYBOX,
        "sh",
        "-c",
        script,
        timeout=60,
    )
    rows = [line.split() for line in proc.stdout.strip().splitlines()[1:]]
    assert any(r[0] == "1" and r[-1] == "pause" for r in rows), proc.stdout
    zombies = [r for r in rows if r[2].startswith("Z")]
    assert not zombies, f"zombies left: {proc.stdout}"


def test_python_runs() -> None:
    proc = docker("run", "--rm", "--network", "none", PYTHON, "python3", "-c", "print(1+1)")
    assert proc.stdout == "2\n"


def test_python_has_stdlib_and_busybox() -> None:
    code = "import json, asyncio, http.server, urllib.request, sqlite3; print(json.dumps({'ok': True}))"
    proc = docker("run", "--rm", "--network", "none", PYTHON, "python3", "-c", code)
    assert proc.stdout.strip() == '{"ok": true}'
    proc = docker("run", "--rm", "--network", "none", PYTHON, "busybox", "wget", "--help", check=False)
    assert "BusyBox" in proc.stdout + proc.stderr
    cmd = docker("image", "inspect", "-f", "{{json .Config.Cmd}}", PYTHON).stdout.strip()
    assert cmd == '["python3"]'
