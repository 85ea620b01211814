"""The container runtime: every Docker Engine call the kubelet makes, run in threads.

The Docker SDK is blocking; each call here runs through :func:`asyncio.to_thread` so
the kubelet's event loop never waits on Docker.  Containers are described by
:class:`ContainerInfo` (an ``inspect`` reduced to what pod status needs).  Errors are
:class:`RuntimeErrorBase` subclasses: :class:`ContainerNotFound`, :class:`ImageNotFound`,
:class:`RuntimeUnavailable` (the Engine cannot be reached) and :class:`RuntimeFailure`
(anything else the Engine refused, with its message).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import socket
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import docker
import docker.errors
import requests.exceptions

from minik8s.kubelet import naming

log = logging.getLogger("kubelet.runtime")

ZERO_TIME = "0001-01-01T00:00:00Z"


class RuntimeErrorBase(Exception):
    """Base of the runtime's errors (``message`` is the Engine's text when it gave one)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ContainerNotFound(RuntimeErrorBase):
    """No such container (it was removed meanwhile)."""


class ImageNotFound(RuntimeErrorBase):
    """The image is not on this machine (or the registry does not have it)."""


class RuntimeUnavailable(RuntimeErrorBase):
    """The Docker Engine does not answer."""


class RuntimeFailure(RuntimeErrorBase):
    """The Engine refused the request (bad parameters, conflicts, start failures...)."""


def _translate(exc: Exception) -> RuntimeErrorBase:
    if isinstance(exc, RuntimeErrorBase):
        return exc
    if isinstance(exc, docker.errors.ImageNotFound):
        return ImageNotFound(_explain(exc))
    if isinstance(exc, docker.errors.NotFound):
        return ContainerNotFound(_explain(exc))
    if isinstance(exc, docker.errors.APIError):
        return RuntimeFailure(_explain(exc))
    if isinstance(exc, requests.exceptions.ConnectionError | ConnectionError | FileNotFoundError):
        return RuntimeUnavailable(f"cannot reach the Docker Engine: {exc}")
    if isinstance(exc, requests.exceptions.Timeout | TimeoutError | socket.timeout):
        return RuntimeFailure(f"the Docker Engine timed out: {exc}")
    return RuntimeFailure(f"{type(exc).__name__}: {exc}")


def _explain(exc: docker.errors.APIError) -> str:
    text = exc.explanation if isinstance(exc.explanation, str) else None
    return text or str(exc)


def docker_time(value: str | None) -> str | None:
    """Docker's nanosecond timestamp → RFC 3339 with seconds (``None`` for Docker's zero time)."""
    parsed = parse_docker_time(value)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ") if parsed else None


def parse_docker_time(value: str | None) -> dt.datetime | None:
    """Docker's ``2024-01-02T03:04:05.123456789Z`` → aware datetime (``None`` for zero/unset)."""
    if not value or value.startswith("0001-01-01"):
        return None
    text = value.replace("Z", "+00:00")
    if "." in text:
        head, _, rest = text.partition(".")
        digits = "".join(ch for ch in rest if ch.isdigit())
        tz = rest[len(digits):]
        text = f"{head}.{digits[:6]}{tz}"
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def _ts(value: str | None) -> float | None:
    parsed = parse_docker_time(value)
    return parsed.timestamp() if parsed else None


@dataclass
class ContainerInfo:
    """One Docker container as the kubelet sees it (from ``docker inspect``).

    ``state`` is Docker's (``created``, ``running``, ``paused``, ``restarting``,
    ``exited``, ``dead``, ``removing``); times are RFC 3339 (seconds) or None;
    ``ip`` is the address on the pod network (pause containers only).
    """

    id: str
    name: str
    labels: dict[str, str]
    state: str
    exit_code: int = 0
    oom_killed: bool = False
    error: str = ""
    created: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    image: str = ""
    image_id: str = ""
    ip: str | None = None
    network_mode: str = ""
    started_ts: float | None = None
    finished_ts: float | None = None
    created_ts: float | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def container_name(self) -> str:
        """The Kubernetes container name (``POD`` for the pause container)."""
        return self.labels.get(naming.CONTAINER_NAME, "")

    @property
    def pod_uid(self) -> str:
        return self.labels.get(naming.POD_UID, "")

    @property
    def pod_name(self) -> str:
        return self.labels.get(naming.POD_NAME, "")

    @property
    def pod_namespace(self) -> str:
        return self.labels.get(naming.POD_NAMESPACE, "")

    @property
    def restart_count(self) -> int:
        try:
            return int(self.labels.get(naming.RESTART_COUNT, "0"))
        except ValueError:
            return 0

    @property
    def is_sandbox(self) -> bool:
        return self.container_name == naming.SANDBOX

    @property
    def running(self) -> bool:
        return self.state in ("running", "paused", "restarting")

    @property
    def exited(self) -> bool:
        """Finished (or never started): not running and not being removed."""
        return not self.running

    @property
    def ever_started(self) -> bool:
        return self.started_at is not None

    @property
    def grace_period(self) -> int:
        try:
            return int(self.labels.get(naming.GRACE_PERIOD, "30"))
        except ValueError:
            return 30

    @classmethod
    def from_inspect(cls, data: dict[str, Any], network: str | None = None) -> ContainerInfo:
        """Build from ``docker inspect`` output; ``ip`` is the address on ``network``."""
        state = data.get("State") or {}
        config = data.get("Config") or {}
        settings = data.get("NetworkSettings") or {}
        ip = None
        networks = settings.get("Networks") or {}
        if network and network in networks:
            ip = networks[network].get("IPAddress") or None
        elif networks:
            ip = next((n.get("IPAddress") for n in networks.values() if n.get("IPAddress")), None)
        return cls(
            id=data.get("Id", ""),
            name=(data.get("Name") or "").lstrip("/"),
            labels=dict(config.get("Labels") or {}),
            state=state.get("Status") or "unknown",
            exit_code=int(state.get("ExitCode") or 0),
            oom_killed=bool(state.get("OOMKilled")),
            error=state.get("Error") or "",
            created=docker_time(data.get("Created")),
            started_at=docker_time(state.get("StartedAt")),
            finished_at=docker_time(state.get("FinishedAt")),
            image=config.get("Image") or "",
            image_id=data.get("Image") or "",
            ip=ip,
            network_mode=(data.get("HostConfig") or {}).get("NetworkMode") or "",
            started_ts=_ts(state.get("StartedAt")),
            finished_ts=_ts(state.get("FinishedAt")),
            created_ts=_ts(data.get("Created")),
            raw=data,
        )


class ExecSession:
    """A running ``docker exec`` attached over a hijacked socket.

    :meth:`read` returns ``(stream, data)`` with stream 1 (stdout) or 2 (stderr), or None
    at the end; with a TTY everything is stream 1.  :meth:`write` feeds stdin,
    :meth:`close_stdin` half-closes it (EOF for the process), :meth:`resize` sets the TTY
    size (columns, rows) and :meth:`exit_code` waits for the process to finish.
    """

    def __init__(self, runtime: DockerRuntime, exec_id: str, sock: Any, tty: bool) -> None:
        self.runtime = runtime
        self.exec_id = exec_id
        self.tty = tty
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._buffer = b""
        self._closed = False

    def _recv(self, n: int) -> bytes:
        try:
            return self._sock.recv(n)
        except OSError:
            return b""

    def _read_blocking(self) -> tuple[int, bytes] | None:
        if self.tty:
            data = self._recv(65536)
            return (1, data) if data else None
        while True:
            if len(self._buffer) >= 8:
                stream = self._buffer[0]
                size = int.from_bytes(self._buffer[4:8], "big")
                if len(self._buffer) >= 8 + size:
                    data = self._buffer[8:8 + size]
                    self._buffer = self._buffer[8 + size:]
                    return (2 if stream == 2 else 1, data)
            chunk = self._recv(65536)
            if not chunk:
                return None
            self._buffer += chunk

    async def read(self) -> tuple[int, bytes] | None:
        return await asyncio.to_thread(self._read_blocking)

    async def write(self, data: bytes) -> None:
        if data:
            await asyncio.to_thread(self._sock.sendall, data)

    async def close_stdin(self) -> None:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(self._sock.shutdown, socket.SHUT_WR)

    async def resize(self, width: int, height: int) -> None:
        with contextlib.suppress(RuntimeErrorBase):
            await self.runtime.call(self.runtime.api.exec_resize, self.exec_id, height=height, width=width)

    async def exit_code(self, timeout: float = 10.0) -> int | None:
        """The exit code once the process ended (None if it still runs after ``timeout`` s)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            info = await self.runtime.call(self.runtime.api.exec_inspect, self.exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                return int(code) if code is not None else None
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(0.05)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(OSError):
                self._sock.close()


class AttachSession(ExecSession):
    """The same, attached to a container's main process (``docker attach``): ``exec_id`` is the
    container's id, resize sets the container's TTY, and the exit code is the container's once
    it stopped (None while it runs: the client detached)."""

    async def resize(self, width: int, height: int) -> None:
        with contextlib.suppress(RuntimeErrorBase):
            await self.runtime.call(self.runtime.api.resize, self.exec_id, height=height, width=width)

    async def exit_code(self, timeout: float = 2.0) -> int | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            state = (await self.runtime.call(self.runtime.api.inspect_container, self.exec_id)).get("State") or {}
            if not state.get("Running"):
                return int(state.get("ExitCode") or 0)
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(0.05)


class DockerRuntime:
    """Async façade over ``docker.APIClient``; one per kubelet.

    ``network`` names the pod network whose address is reported as a pause
    container's ``ip``.  Inspections of containers are cached while a container's
    listed state does not change (finished containers never change).
    """

    def __init__(self, api: docker.APIClient, network: str | None = None, pull_timeout: float = 60.0) -> None:
        self.api = api
        self.network = network
        self.pull_timeout = pull_timeout
        self._inspect_cache: dict[str, tuple[str, ContainerInfo]] = {}

    @classmethod
    async def connect(cls, network: str | None = None, pull_timeout: float = 60.0) -> DockerRuntime:
        """Connect to the Engine named by the environment (``DOCKER_HOST`` or the local socket).

        Raises RuntimeUnavailable when it does not answer.
        """
        def make() -> docker.APIClient:
            return docker.from_env(timeout=120, max_pool_size=64).api

        try:
            api = await asyncio.to_thread(make)
        except Exception as exc:  # noqa: BLE001
            raise _translate(exc) from exc
        return cls(api, network, pull_timeout)

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run one SDK call in a thread, translating its errors."""
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - translated for the callers
            raise _translate(exc) from exc

    # ------------------------------------------------------------------ engine
    async def version(self) -> str:
        """The Engine's version (``20.10.24+dfsg1``)."""
        info = await self.call(self.api.version)
        return str(info.get("Version") or "unknown")

    async def runtimes(self) -> tuple[set[str], str]:
        """The Engine's OCI runtimes (``docker info``'s ``Runtimes``: ``runc``, ...) and its default one:
        the runtime handlers a RuntimeClass may name on this node."""
        info = await self.call(self.api.info)
        return set(info.get("Runtimes") or {}), str(info.get("DefaultRuntime") or "runc")

    async def ping(self) -> bool:
        """Whether the Engine answers (never raises)."""
        try:
            return bool(await self.call(self.api.ping))
        except RuntimeErrorBase:
            return False

    # ------------------------------------------------------------------ containers
    async def list_containers(self, label_filters: list[str]) -> list[ContainerInfo]:
        """Every container (running or not) matching all ``key=value`` label filters, inspected."""
        summaries = await self.call(self.api.containers, all=True, filters={"label": label_filters})
        out: list[ContainerInfo] = []
        for summary in summaries:
            cid = summary.get("Id", "")
            listed_state = str(summary.get("State") or "")
            cached = self._inspect_cache.get(cid)
            if cached is not None and cached[0] == listed_state and listed_state != "created":
                out.append(cached[1])
                continue
            try:
                info = await self.inspect(cid)
            except ContainerNotFound:
                continue
            out.append(info)
        return out

    async def inspect(self, container_id: str) -> ContainerInfo:
        """Inspect one container; raises ContainerNotFound."""
        data = await self.call(self.api.inspect_container, container_id)
        info = ContainerInfo.from_inspect(data, self.network)
        self._inspect_cache[info.id] = (info.state, info)
        if len(self._inspect_cache) > 5000:
            self._inspect_cache.clear()
        return info

    async def create_container(self, name: str, image: str, *, host_config: dict[str, Any],
                               networking_config: dict[str, Any] | None = None, **kwargs: Any) -> str:
        """Create a container; returns its id.  A leftover container with the same name is removed first."""
        async def create() -> Any:
            return await self.call(self.api.create_container, image, name=name, host_config=host_config,
                                   networking_config=networking_config, **kwargs)
        try:
            created = await create()
        except RuntimeFailure as exc:
            if "Conflict" not in exc.message and "already in use" not in exc.message:
                raise
            await self.remove(name, force=True)
            created = await create()
        return str(created["Id"])

    def host_config(self, **kwargs: Any) -> dict[str, Any]:
        """``HostConfig`` for :meth:`create_container` (the SDK's ``create_host_config``)."""
        return dict(self.api.create_host_config(**kwargs))

    def networking_config(self, network: str, **kwargs: Any) -> dict[str, Any]:
        """``NetworkingConfig`` attaching a container to ``network`` (endpoint options in kwargs)."""
        return dict(self.api.create_networking_config({network: self.api.create_endpoint_config(**kwargs)}))

    async def start(self, container_id: str) -> None:
        """Start a created container; raises RuntimeFailure when the process cannot start."""
        await self.call(self.api.start, container_id)
        self._inspect_cache.pop(container_id, None)

    async def stop(self, container_id: str, timeout: int) -> None:
        """SIGTERM (the image's stop signal), then SIGKILL after ``timeout`` seconds."""
        try:
            await self.call(self.api.stop, container_id, timeout=max(int(timeout), 0))
        except ContainerNotFound:
            pass
        self._inspect_cache.pop(container_id, None)

    async def remove(self, container_id: str, force: bool = True) -> None:
        """Remove a container (killing it when ``force``); a missing container is fine."""
        try:
            await self.call(self.api.remove_container, container_id, force=force)
        except ContainerNotFound:
            pass
        except RuntimeFailure as exc:
            if "already in progress" not in exc.message:
                raise
        self._inspect_cache.pop(container_id, None)

    # ------------------------------------------------------------------ images
    async def image_id(self, ref: str) -> str | None:
        """The local image id (``sha256:...``) of ``ref``, or None when it is not here."""
        try:
            data = await self.call(self.api.inspect_image, ref)
        except (ImageNotFound, ContainerNotFound):
            return None
        return str(data.get("Id") or "") or None

    async def image_user(self, ref: str) -> str | None:
        """The image's configured user (``Config.User``: ``""`` means root), None when it is not here."""
        try:
            data = await self.call(self.api.inspect_image, ref)
        except (ImageNotFound, ContainerNotFound):
            return None
        return str((data.get("Config") or {}).get("User") or "")

    async def pull(self, ref: str, auth_config: dict[str, str] | None = None) -> None:
        """``docker pull ref``; gives up when no progress arrives for ``pull_timeout`` seconds.
        ``auth_config``: the registry credentials (Docker's ``X-Registry-Auth``: ``username``,
        ``password``, ``serveraddress``...), None for an anonymous pull.

        Like the kubelet's ``--image-pull-progress-deadline``: a slow but moving pull goes
        on, a stalled one (an unreachable registry) fails.  Raises ImageNotFound /
        RuntimeFailure with the registry's message.
        """
        repo, tag = split_image(ref)

        def pull() -> None:
            client = docker.from_env(timeout=max(int(self.pull_timeout), 1)).api
            try:
                for line in client.pull(repo, tag=tag, stream=True, decode=True, auth_config=auth_config):
                    if isinstance(line, dict) and line.get("error"):
                        raise RuntimeFailure(str(line["error"]))
            finally:
                client.close()

        await self.call(pull)
        if await self.image_id(ref) is None:
            raise ImageNotFound(f"image {ref} is still missing after the pull")

    async def images(self) -> list[dict[str, Any]]:
        """Local images as ``[{"names": [...], "sizeBytes": n}]`` (Node ``status.images``)."""
        found = await self.call(self.api.images)
        sized: list[tuple[int, list[str]]] = []
        for img in found:
            names = [t for t in (img.get("RepoTags") or []) if t != "<none>:<none>"]
            names += [d for d in (img.get("RepoDigests") or []) if d != "<none>@<none>"]
            if names:
                sized.append((int(img.get("Size") or 0), names))
        sized.sort(key=lambda item: -item[0])
        return [{"names": names, "sizeBytes": size} for size, names in sized]

    # ------------------------------------------------------------------ networks
    async def inspect_network(self, name: str) -> dict[str, Any] | None:
        """``docker network inspect name`` or None when there is no such network."""
        try:
            return dict(await self.call(self.api.inspect_network, name))
        except ContainerNotFound:
            return None

    async def create_network(self, name: str, subnet: str, gateway: str, labels: dict[str, str],
                             options: dict[str, str] | None = None) -> None:
        """Create a bridge network with one IPAM pool (raises RuntimeFailure on overlaps)."""
        pool = docker.types.IPAMPool(subnet=subnet, gateway=gateway)
        ipam = docker.types.IPAMConfig(pool_configs=[pool])
        await self.call(self.api.create_network, name, driver="bridge", ipam=ipam, labels=labels,
                        options=options or {}, check_duplicate=True)

    async def remove_network(self, name: str) -> None:
        """Remove a network (a missing one is fine)."""
        try:
            await self.call(self.api.remove_network, name)
        except ContainerNotFound:
            pass

    # ------------------------------------------------------------------ exec
    async def exec_run(self, container_id: str, cmd: list[str], timeout: float) -> tuple[int | None, str]:
        """Run ``cmd`` in the container and wait up to ``timeout`` s: ``(exit code, output)``.

        The exit code is None when the command did not finish in time (it is left running,
        as Docker offers no way to kill an exec).  Output is stdout+stderr, at most 10 KiB.
        """
        created = await self.call(self.api.exec_create, container_id, cmd, stdout=True, stderr=True)
        exec_id = created["Id"]

        def run() -> bytes:
            out = self.api.exec_start(exec_id, stream=False)
            return out if isinstance(out, bytes) else b""

        try:
            output = await asyncio.wait_for(self.call(run), timeout)
        except TimeoutError:
            return None, f"command timed out after {timeout:g}s"
        info = await self.call(self.api.exec_inspect, exec_id)
        code = info.get("ExitCode")
        text = output[-10240:].decode(errors="replace")
        return (int(code) if code is not None else None), text

    async def open_exec(self, container_id: str, cmd: list[str], *, stdin: bool, stdout: bool,
                        stderr: bool, tty: bool) -> ExecSession:
        """Start ``cmd`` in the container attached to a socket (see :class:`ExecSession`)."""
        created = await self.call(self.api.exec_create, container_id, cmd, stdin=stdin, stdout=stdout,
                                  stderr=stderr, tty=tty)
        exec_id = created["Id"]
        sock = await self.call(self.api.exec_start, exec_id, tty=tty, socket=True)
        return ExecSession(self, exec_id, sock, tty)

    async def open_attach(self, container_id: str, *, stdin: bool, stdout: bool, stderr: bool) -> AttachSession:
        """Attach to the container's main process (its stdin needs ``stdin: true`` in the pod spec);
        TTY framing as the container was created."""
        tty = bool(((await self.call(self.api.inspect_container, container_id)).get("Config") or {}).get("Tty"))
        params = {"stdin": int(stdin), "stdout": int(stdout), "stderr": int(stderr), "stream": 1}
        sock = await self.call(self.api.attach_socket, container_id, params=params)
        return AttachSession(self, container_id, sock, tty)

    # ------------------------------------------------------------------ logs
    async def logs(self, container_id: str, *, follow: bool = False, timestamps: bool = False,
                   tail: int | None = None, since: float | None = None) -> AsyncIterator[bytes]:
        """A container's log (stdout and stderr interleaved) chunk by chunk.

        ``tail`` keeps the last N lines, ``since`` is a Unix time in seconds; with
        ``follow`` the stream stays open until the container stops.
        """
        kwargs: dict[str, Any] = {"stdout": True, "stderr": True, "timestamps": timestamps,
                                  "follow": follow, "stream": True, "tail": tail if tail is not None else "all"}
        if since is not None:
            kwargs["since"] = int(since)
        stream = await self.call(self.api.logs, container_id, **kwargs)
        sentinel = object()

        def next_chunk() -> Any:
            try:
                return next(stream)
            except StopIteration:
                return sentinel
            except Exception:  # noqa: BLE001 - the stream was closed
                return sentinel

        try:
            while True:
                chunk = await asyncio.to_thread(next_chunk)
                if chunk is sentinel:
                    return
                yield chunk
        finally:
            closer = getattr(stream, "close", None)
            if closer:
                with contextlib.suppress(Exception):
                    closer()

    # ------------------------------------------------------------------ events
    def watch_events(self, label_filters: list[str], callback: Callable[[dict[str, Any]], None],
                     stop: threading.Event) -> threading.Thread:
        """Follow Docker container events in a thread, calling ``callback(event)`` for each.

        Reconnects after errors until ``stop`` is set.
        """
        holder: dict[str, Any] = {}

        def loop() -> None:
            while not stop.is_set():
                try:
                    stream = self.api.events(decode=True, filters={"type": "container", "label": label_filters})
                    holder["stream"] = stream
                    for event in stream:
                        if stop.is_set():
                            break
                        callback(event)
                except Exception as exc:  # noqa: BLE001 - reconnect
                    if not stop.is_set():
                        log.debug("kubelet docker events stream broke: %s", exc)
                if not stop.is_set():
                    stop.wait(2.0)

        thread = threading.Thread(target=loop, name="docker-events", daemon=True)
        thread.start()

        def closer() -> None:
            stream = holder.get("stream")
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()

        thread.close_stream = closer  # type: ignore[attr-defined]
        return thread


def split_image(ref: str) -> tuple[str, str]:
    """``repo[:tag][@digest]`` → ``(repo, tag or digest)``; the tag defaults to ``latest``."""
    if "@" in ref:
        repo, _, digest = ref.partition("@")
        return repo, digest
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        repo, _, tag = ref.rpartition(":")
        return repo, tag
    return ref, "latest"
