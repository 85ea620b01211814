"""Liveness, readiness and startup probes (Kubernetes' prober workers).

One asyncio task per (pod, container, probe kind) runs the probe every ``periodSeconds``
once ``initialDelaySeconds`` have passed since the container started, each attempt
bounded by ``timeoutSeconds``.  A verdict flips to success after ``successThreshold``
consecutive successes and to failure after ``failureThreshold`` consecutive failures.
Verdicts belong to one Docker container id, so a restarted container starts afresh:
readiness ``False`` (or, for a container that was already running when the kubelet
started, the ``ready`` it had in the pod's status), liveness ``True``, startup ``False``.
While a startup probe has not succeeded, liveness and readiness are not run.

Handlers: ``exec`` (``docker exec``, success = exit code 0), ``httpGet`` (from the host to
``podIP:port``, success = status 200-399), ``tcpSocket`` (a TCP connect to ``podIP:port``) and
``grpc`` (the gRPC health checking protocol, ``grpc.health.v1.Health/Check`` of ``service`` on
``podIP:port`` over plaintext HTTP/2 with grpcio, success = ``SERVING``; Kubernetes' messages).
Every failed attempt records an ``Unhealthy`` Warning event; a changed
verdict calls ``notify(pod key)`` so the pod worker reacts (kills the container for a
liveness/startup failure, updates ``ready`` for readiness).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from minik8s.api.base import Obj
from minik8s.kubelet.container_spec import resolve_port
from minik8s.kubelet.runtime import DockerRuntime, RuntimeErrorBase

log = logging.getLogger("kubelet.probes")

KINDS = ("liveness", "readiness", "startup")
EventFn = Callable[[Obj, str, str, str, str | None], None]


@dataclass
class ProbeTarget:
    """The container a probe worker looks at (``container_id`` None while it does not run)."""

    pod: Obj
    container: Obj
    container_id: str | None
    started_at: float
    pod_ip: str
    initial_ready: bool = False


def probe_spec(container: Obj, kind: str) -> Obj | None:
    """The container's ``<kind>Probe`` (kind: liveness, readiness, startup), or None."""
    return container.get(f"{kind}Probe") or None


async def run_probe(runtime: DockerRuntime, http: httpx.AsyncClient, probe: Obj,
                    target: ProbeTarget) -> tuple[bool, str]:
    """Run one probe attempt; returns ``(success, message)`` (the message explains failures)."""
    timeout = float(probe.get("timeoutSeconds") or 1)
    assert target.container_id
    if probe.get("exec") is not None:
        command = list((probe["exec"] or {}).get("command") or [])
        if not command:
            return False, "exec probe has no command"
        try:
            code, output = await runtime.exec_run(target.container_id, command, timeout)
        except RuntimeErrorBase as exc:
            return False, exc.message
        if code is None:
            return False, f"command {command} timed out"
        if code != 0:
            return False, output.strip() or f"command {command} exited with {code}"
        return True, output.strip()
    if probe.get("grpc") is not None:
        grpc_action = probe["grpc"] or {}
        if not target.pod_ip:
            return False, "the pod has no IP yet"
        return await grpc_check(target.pod_ip, int(grpc_action.get("port") or 0), grpc_action.get("service") or "",
                                timeout)
    handler = probe.get("httpGet") if probe.get("httpGet") is not None else probe.get("tcpSocket")
    if handler is None:
        return False, "probe has no handler"
    port = resolve_port(target.container, handler.get("port"))
    host = handler.get("host") or target.pod_ip
    if port is None:
        return False, f"port {handler.get('port')!r} is not a port of the container"
    if not host:
        return False, "the pod has no IP yet"
    if probe.get("httpGet") is not None:
        scheme = (handler.get("scheme") or "HTTP").lower()
        path = handler.get("path") or "/"
        if not path.startswith("/"):
            path = "/" + path
        url = f"{scheme}://{host}:{port}{path}"
        headers = {"User-Agent": "kube-probe/1.32", "Accept": "*/*"}
        for h in handler.get("httpHeaders") or []:
            headers[h.get("name", "")] = h.get("value", "")
        try:
            resp = await http.get(url, headers=headers, timeout=timeout)
        except httpx.TimeoutException:
            return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        except httpx.HTTPError as exc:
            return False, f'Get "{url}": {exc or type(exc).__name__}'
        if 200 <= resp.status_code < 400:
            return True, ""
        return False, f"HTTP probe failed with statuscode: {resp.status_code}"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except TimeoutError:
        return False, f"dial tcp {host}:{port}: i/o timeout"
    except OSError as exc:
        return False, f"dial tcp {host}:{port}: connect: {exc.strerror or exc}"
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()
    return True, ""


def _go_seconds(seconds: float) -> str:
    """A duration as Go's ``time.Duration`` prints whole and fractional seconds (``1s``, ``1.5s``)."""
    return f"{seconds:g}s"


async def grpc_check(host: str, port: int, service: str, timeout: float) -> tuple[bool, str]:
    """One gRPC health check (Kubernetes' ``pkg/probe/grpc``): connect to ``host:port`` within
    ``timeout`` seconds, call ``grpc.health.v1.Health/Check`` for ``service`` (``""``: the server
    as a whole); ``(True, "service healthy")`` when it answers ``SERVING``, else False and
    Kubernetes' message.  The channel ignores proxy settings (``grpc.enable_http_proxy`` 0)."""
    # grpcio is loaded only by kubelets that run gRPC probes
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    addr = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    options = [("grpc.primary_user_agent", "kube-probe/1.32"), ("grpc.enable_http_proxy", 0),
               ("grpc.enable_retries", 0)]
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(addr, options=options) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout)
        except TimeoutError:
            return False, (f'timeout: failed to connect service "{addr}" within {_go_seconds(timeout)}: '
                           "context deadline exceeded")
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            resp = await stub.Check(health_pb2.HealthCheckRequest(service=service),
                                    timeout=max(deadline - time.monotonic(), 0.001))
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                return False, ("this server does not implement the grpc health protocol "
                               f"(grpc.health.v1.Health): {exc.details()}")
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return False, f"timeout: health rpc did not complete within {_go_seconds(timeout)}"
            go_code = "".join(part.capitalize() for part in exc.code().name.split("_"))  # Go's codes.Code names
            return False, ("error: this server does not implement the grpc health protocol "
                           f"(grpc.health.v1.Health): rpc error: code = {go_code} desc = {exc.details()}")
    if resp.status != health_pb2.HealthCheckResponse.SERVING:
        name = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
        return False, f'service unhealthy (responded with "{name}")'
    return True, "service healthy"


class ProbeManager:
    """Runs the probe workers of every pod and keeps their verdicts per container id."""

    def __init__(self, runtime: DockerRuntime, notify: Callable[[str], None], event: EventFn) -> None:
        self.runtime = runtime
        self.notify = notify
        self.event = event
        self.http = httpx.AsyncClient(verify=False, follow_redirects=True, trust_env=False)
        self._targets: dict[tuple[str, str], ProbeTarget] = {}
        self._workers: dict[tuple[str, str, str], asyncio.Task[None]] = {}
        self._results: dict[tuple[str, str], bool] = {}

    # ------------------------------------------------------------------ verdicts
    def ready(self, container: Obj, container_id: str | None) -> bool:
        """Readiness of a running container (True when it has no readiness probe)."""
        if not container_id:
            return False
        if not self.started(container, container_id):
            return False
        if probe_spec(container, "readiness") is None:
            return True
        return self._results.get((container_id, "readiness"), False)

    def started(self, container: Obj, container_id: str | None) -> bool:
        """Whether the startup probe passed (True when there is none)."""
        if not container_id:
            return False
        if probe_spec(container, "startup") is None:
            return True
        return self._results.get((container_id, "startup"), False)

    def failed(self, container: Obj, container_id: str) -> str | None:
        """``"liveness"`` or ``"startup"`` when that probe failed for this container, else None."""
        if probe_spec(container, "startup") is not None and \
                self._results.get((container_id, "startup-failed"), False):
            return "startup"
        if probe_spec(container, "liveness") is not None and \
                self._results.get((container_id, "liveness")) is False:
            return "liveness"
        return None

    # ------------------------------------------------------------------ workers
    def update(self, pod: Obj, container: Obj, target: ProbeTarget | None) -> None:
        """Point the workers of ``container`` at ``target`` (None: the container is not running)."""
        uid = pod["metadata"]["uid"]
        key = (uid, container["name"])
        if target is None:
            old = self._targets.get(key)
            if old is not None:
                old.container_id = None
            return
        old = self._targets.get(key)
        if old is not None and old.container_id == target.container_id:
            old.pod, old.container, old.pod_ip = target.pod, target.container, target.pod_ip
        else:
            self._targets[key] = target
        for kind in KINDS:
            if probe_spec(container, kind) is None:
                continue
            wkey = (uid, container["name"], kind)
            if wkey not in self._workers or self._workers[wkey].done():
                self._workers[wkey] = asyncio.get_running_loop().create_task(
                    self._worker(uid, container["name"], kind), name=f"probe-{kind}-{uid}-{container['name']}")

    def remove_pod(self, uid: str) -> None:
        """Stop every worker of the pod and forget its verdicts."""
        for wkey in [k for k in self._workers if k[0] == uid]:
            self._workers.pop(wkey).cancel()
        for tkey in [k for k in self._targets if k[0] == uid]:
            target = self._targets.pop(tkey)
            if target.container_id:
                for kind in (*KINDS, "startup-failed"):
                    self._results.pop((target.container_id, kind), None)

    def forget_container(self, container_id: str) -> None:
        """Drop the verdicts of a container that was killed."""
        for kind in (*KINDS, "startup-failed"):
            self._results.pop((container_id, kind), None)

    async def close(self) -> None:
        """Stop every worker and close the HTTP client."""
        for task in self._workers.values():
            task.cancel()
        self._workers.clear()
        await self.http.aclose()

    async def _worker(self, uid: str, name: str, kind: str) -> None:
        last_id: str | None = None
        successes = failures = 0
        on_hold = False
        while True:
            target = self._targets.get((uid, name))
            if target is None:
                return
            probe = probe_spec(target.container, kind)
            if probe is None:
                return
            period = max(float(probe.get("periodSeconds") or 10), 0.1)
            cid = target.container_id
            if not cid:
                await asyncio.sleep(min(period, 1.0))
                continue
            if cid != last_id:
                last_id, successes, failures, on_hold = cid, 0, 0, False
                if kind == "readiness":
                    self._results[(cid, kind)] = target.initial_ready
                elif kind == "liveness":
                    self._results[(cid, kind)] = True
                else:
                    self._results[(cid, kind)] = False
            if on_hold or (kind == "startup" and self._results.get((cid, "startup"))):
                await asyncio.sleep(min(period, 1.0))
                continue
            if kind != "startup" and probe_spec(target.container, "startup") is not None and \
                    not self._results.get((cid, "startup")):
                await asyncio.sleep(min(period, 1.0))
                continue
            delay = float(probe.get("initialDelaySeconds") or 0) - (time.time() - target.started_at)
            if delay > 0:
                await asyncio.sleep(min(delay, period))
                continue
            try:
                ok, message = await run_probe(self.runtime, self.http, probe, target)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a probe error is a failed probe
                ok, message = False, f"{type(exc).__name__}: {exc}"
            current = self._targets.get((uid, name))
            if current is None or current.container_id != cid:
                continue  # the container changed while probing: ignore this result
            key = f"{target.pod['metadata'].get('namespace')}/{target.pod['metadata'].get('name')}"
            if ok:
                successes, failures = successes + 1, 0
            else:
                failures, successes = failures + 1, 0
                label = kind.capitalize()
                log.info("kubelet probe=%s pod=%s container=%s failed: %s", kind, key, name, message)
                self.event(target.pod, "Warning", "Unhealthy", f"{label} probe failed: {message}"[:1024], name)
            before = self._results.get((cid, kind))
            if ok and successes >= int(probe.get("successThreshold") or 1):
                self._results[(cid, kind)] = True
            elif not ok and failures >= int(probe.get("failureThreshold") or 3):
                if kind == "startup":
                    self._results[(cid, "startup-failed")] = True
                else:
                    self._results[(cid, kind)] = False
                if kind in ("liveness", "startup"):
                    on_hold = True  # until the container is restarted (a new id)
                    self.notify(key)
            if self._results.get((cid, kind)) != before:
                self.notify(key)
            await asyncio.sleep(period)
