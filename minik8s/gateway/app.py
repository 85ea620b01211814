"""The gateway's HTTP API and data path (``minik8s gateway``).

Routes (JSON in and out; every error is ``{"error": <reason>, "message": <text>}``):

* ``POST /functions/{namespace}/{name}`` — call a Function with the body (JSON) as its event;
  the answer is the function's (200, or the runtime's 400/413/500/504).  The gateway sends
  the call to an answering pod of the Function (:class:`~minik8s.gateway.backends.Backends`)
  and counts it in flight.  With no answering pod it **activates** the Function — sets its
  Deployment from 0 to 1 replica (the autoscaler does everything else) — and holds the call
  until a pod answers, for at most ``activation_timeout`` seconds (then 503).  Unknown
  Function → 404; a Function whose Ready condition says BuildFailed or LoadFailed → 503 with
  that message at once.  A ``PerInvocation`` Function gets a fresh pod per call (its pod
  template, label ``minik8s.io/invocation-of``), deleted after the answer.
* ``POST /workflows/{namespace}/{name}`` — run a Workflow on the body; a WorkflowRun
  ``<workflow>-<suffix>`` records it (states, inputs, outputs, durations); the answer is
  ``{"run", "status": "Succeeded"|"Failed", "output" | "error"+"cause"}`` (200 either way:
  the run happened) — 404 for an unknown Workflow.  Runs beyond ``runHistoryLimit`` are deleted,
  oldest first.
* ``POST /events/{namespace}`` — a CloudEvent (binary or structured mode) for the Triggers of
  the namespace (:mod:`minik8s.gateway.triggers`); 202 with the Triggers it went to.
* ``GET /metrics`` — in-flight calls per Function (:class:`~minik8s.gateway.backends.ConcurrencyMeter`).
* ``GET /healthz`` — answered without credentials.

With an :class:`~minik8s.auth.Authenticator` (``minik8s gateway --token-auth-file``, the
apiserver's token file format; ``--pod-address`` with service-account tokens,
:mod:`minik8s.gateway.authn`), every other request needs ``Authorization: Bearer <token>``
naming a token of the file or a pod's service-account token; without one it gets 401 and a
``kind: Status`` JSON body (``reason: Unauthorized``), as the apiserver answers, and a service
account calling outside its namespace gets 403 (``reason: Forbidden``).

Bodies over ``max_body_bytes`` get 413, bodies that do not arrive within ``read_timeout``
seconds 408; the gateway itself answers no request with a 500 (an unexpected failure is
logged and answered 502).
"""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from minik8s.api import errors
from minik8s.api import serverless as s
from minik8s.api.base import Obj, now_rfc3339_micro
from minik8s.auth import Authenticator, AuthMiddleware, Authorizer
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.informer import Informer
from minik8s.client.registration import ServiceRegistration
from minik8s.client.rest import Client
from minik8s.fnruntime import PORT
from minik8s.gateway.backends import Backends, ConcurrencyMeter, function_key
from minik8s.gateway.server import REGISTER_PERIOD
from minik8s.gateway.triggers import BadEvent, TriggerRunner, cloudevent_headers, parse_event
from minik8s.gateway.workflow import TASK_FAILED, Interpreter, Step, TaskError

log = logging.getLogger("gateway")
FAILED_REASONS = ("BuildFailed", "LoadFailed")
#: A WorkflowRun's recorded inputs/outputs are cut when its status would exceed this (bytes).
MAX_RUN_STATUS_BYTES = 512 * 1024


@dataclass(frozen=True)
class GatewayConfig:
    """``activation_timeout``: seconds a call waits for a Function scaled to zero;
    ``max_body_bytes``: request body limit; ``read_timeout``: seconds to receive a body."""

    activation_timeout: float = 60.0
    max_body_bytes: int = 6 * 1024 * 1024
    read_timeout: float = 30.0


class GatewayError(Exception):
    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message


def error_body(reason: str, message: str) -> dict[str, str]:
    return {"error": reason, "message": message}


def _ready_condition(fn: Obj) -> Obj:
    return next((c for c in (fn.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {})


def _trim_steps(status: Obj) -> Obj:
    """Cut recorded inputs/outputs when the run's status would be too large to store."""
    if len(json.dumps(status)) <= MAX_RUN_STATUS_BYTES:
        return status
    out = copy.deepcopy(status)

    def cut(steps: list[Obj]) -> None:
        for step in steps:
            for fld in ("input", "output"):
                if fld in step and len(json.dumps(step[fld])) > 1024:
                    step[fld] = f"<{len(json.dumps(step[fld]))} bytes, not recorded>"
            for branch in step.get("branches") or []:
                cut(branch)

    cut(out.get("steps") or [])
    return out


class Gateway:
    """The gateway's state: informers, answering pods, the concurrency meter and the Trigger runner."""

    def __init__(self, client: Client, config: GatewayConfig | None = None) -> None:
        self.client = client
        self.config = config or GatewayConfig()
        self.http: aiohttp.ClientSession | None = None  # made by start(), on the serving loop
        self.factory = SharedInformerFactory(client)
        self.fn_rt = client.kind(s.API_VERSION, "Function")
        self.wf_rt = client.kind(s.API_VERSION, "Workflow")
        self.run_rt = client.kind(s.API_VERSION, "WorkflowRun")
        self.deploy_rt = client.kind("apps/v1", "Deployment")
        self.functions = self.factory.informer(self.fn_rt)
        self.workflows = self.factory.informer(self.wf_rt)
        self.triggers = self.factory.informer(client.kind(s.API_VERSION, "Trigger"))
        self.deployments = Informer(client, self.deploy_rt, label_selector=s.FUNCTION_LABEL)
        self.pods = Informer(client, client.kind("v1", "Pod"), label_selector=s.FUNCTION_LABEL)
        self.backends = Backends()
        self.meter = ConcurrencyMeter()
        self.recorder = EventRecorder(client, "minik8s-gateway")
        self.runner = TriggerRunner(client, self.triggers, self._deliver, self.recorder)
        self.pods.add_handler(self.backends.on_pod, lambda _o, cur: self.backends.on_pod(cur),
                              self.backends.on_pod_deleted)
        self.deployments.add_handler(self._on_deployment, lambda _o, cur: self._on_deployment(cur), None)
        self.functions.add_handler(None, None, lambda fn: self.meter.forget(f"{fn['metadata'].get('namespace')}/"
                                                                            f"{fn['metadata'].get('name')}"))
        self._activating: dict[str, float] = {}
        self._tasks: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # aiohttp for the data path: httpx's asyncio client costs several times more per call
        self.http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=2000, keepalive_timeout=10),
                                          timeout=aiohttp.ClientTimeout(total=None, sock_connect=2.0),
                                          auto_decompress=False, skip_auto_headers=("User-Agent",))
        self.backends.http = self.http
        self.factory.start()
        self._tasks = [loop.create_task(self.pods.run()), loop.create_task(self.deployments.run())]
        await self.factory.wait_for_cache_sync(30)
        await asyncio.wait_for(asyncio.gather(self.pods.wait_synced(), self.deployments.wait_synced()), 30)
        self._tasks.append(loop.create_task(self.runner.run()))

    async def stop(self) -> None:
        self.runner.shutdown()
        self.backends.shutdown()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.factory.shutdown()
        await self.runner.flush()
        if self.http is not None:
            await self.http.close()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.runner.tasks.add(task)
        task.add_done_callback(self.runner.tasks.discard)

    def _on_deployment(self, dep: Obj) -> None:
        key = function_key(dep)
        if key and int((dep.get("spec") or {}).get("replicas") or 0) > 0:
            self._activating.pop(key, None)

    # ------------------------------------------------------------------ functions
    def function(self, namespace: str, name: str) -> Obj:
        fn = self.functions.get(f"{namespace}/{name}")
        if fn is None or (fn.get("metadata") or {}).get("deletionTimestamp"):
            raise GatewayError(404, "NotFound", f'function "{name}" not found in namespace "{namespace}"')
        return fn

    async def _activate(self, key: str) -> None:
        """Scale the Function's Deployment from zero to one (once per activation)."""
        ns, name = key.split("/", 1)
        dep = self.deployments.get(f"{ns}/{s.workload_name(name)}")
        if dep is None or int((dep.get("spec") or {}).get("replicas") or 0) > 0:
            return
        now = time.monotonic()
        if now - self._activating.get(key, -1e9) < 5.0:
            return
        self._activating[key] = now
        patch = {"metadata": {"resourceVersion": dep["metadata"].get("resourceVersion"),
                              "annotations": {s.LAST_SCALE_ANNOTATION: f"{time.time():.3f}"}},
                 "spec": {"replicas": 1}}
        try:
            await self.client.patch(self.deploy_rt, s.workload_name(name), patch, ns)
            log.info("gateway function=%s activated (0 -> 1)", key)
        except errors.Conflict:
            self._activating.pop(key, None)  # changed meanwhile: the cache will tell
        except errors.APIError as exc:
            self._activating.pop(key, None)
            log.warning("gateway function=%s activation failed: %s", key, exc)

    async def _await_backend(self, key: str, fn_name: str, namespace: str) -> None:
        """Hold until the Function has an answering pod (activating it), or raise 503."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.activation_timeout
        while not self.backends.count(key):
            fn = self.function(namespace, fn_name)
            cond = _ready_condition(fn)
            if cond.get("status") == "False" and cond.get("reason") in FAILED_REASONS:
                raise GatewayError(503, str(cond["reason"]), f"function {key}: {cond.get('message')}")
            await self._activate(key)
            left = deadline - loop.time()
            if left <= 0:
                detail = f" ({cond.get('reason')}: {cond.get('message')})" if cond.get("message") else ""
                raise GatewayError(503, "Unavailable", f"function {key} has no instance answering after "
                                                       f"{self.config.activation_timeout:g}s{detail}")
            await self.backends.wait(key, min(left, 1.0))

    async def call_function(self, namespace: str, name: str, body: bytes, headers: dict[str, str] | None = None
                            ) -> tuple[int, bytes]:
        """Call a Function; returns the runtime's (status, JSON body).  Raises GatewayError."""
        fn = self.function(namespace, name)
        key = f"{namespace}/{name}"
        self.meter.begin(key)
        try:
            if (fn.get("spec") or {}).get("mode") == "PerInvocation":
                return await self._call_fresh_pod(fn, body, headers or {})
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.config.activation_timeout
            while True:
                await self._await_backend(key, name, namespace)
                backend = self.backends.pick(key)
                if backend is None:
                    continue
                assert self.http is not None, "Gateway.start() was not called"
                backend.in_flight += 1
                try:
                    async with self.http.post(f"{backend.url}/", data=body,
                                              headers={"Content-Type": "application/json", **(headers or {})}) as resp:
                        return resp.status, await resp.read()
                except (aiohttp.ClientConnectorError, aiohttp.ServerTimeoutError) as exc:
                    # never reached the pod: drop it (it is probed again) and try another
                    log.info("gateway function=%s pod=%s refused a call: %s", key, backend.name, exc)
                    self.backends.refused(key, backend)
                    if loop.time() > deadline:
                        raise GatewayError(502, "BadGateway", f"function {key}: no instance accepted the call "
                                                              f"within {self.config.activation_timeout:g}s") from None
                except aiohttp.ClientError as exc:
                    log.warning("gateway function=%s pod=%s failed during a call: %r", key, backend.name, exc)
                    self.backends.refused(key, backend)
                    raise GatewayError(502, "BadGateway", f"function {key}: the instance {backend.name} failed "
                                                          f"during the call: {type(exc).__name__}") from None
                finally:
                    backend.in_flight -= 1
        finally:
            self.meter.end(key)

    async def _call_fresh_pod(self, fn: Obj, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """``PerInvocation``: run the call in a new pod made from the Function's pod template
        (without the Deployment's label, so no ReplicaSet adopts it) and delete the pod after."""
        meta = fn["metadata"]
        ns, name = meta["namespace"], meta["name"]
        dep = self.deployments.get(f"{ns}/{s.workload_name(name)}")
        if dep is None:
            raise GatewayError(503, "Unavailable", f"function {ns}/{name} is not deployed yet")
        template = copy.deepcopy((dep.get("spec") or {}).get("template") or {})
        labels = {k: v for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()
                  if k != s.FUNCTION_LABEL}
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"generateName": f"{name}-call-", "namespace": ns,
                            "labels": {**labels, s.INVOCATION_LABEL: name},
                            "ownerReferences": [{"apiVersion": s.API_VERSION, "kind": "Function", "name": name,
                                                 "uid": meta["uid"], "controller": False}]},
               "spec": {**(template.get("spec") or {}), "restartPolicy": "Never"}}
        pod_rt = self.client.kind("v1", "Pod")
        try:
            created = await self.client.create(pod_rt, pod, ns)
        except errors.APIError as exc:
            raise GatewayError(503, "Unavailable", f"function {ns}/{name}: cannot start a pod: {exc}") from None
        pod_name = created["metadata"]["name"]
        assert self.http is not None, "Gateway.start() was not called"
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.config.activation_timeout
            ip = ""
            while loop.time() < deadline:
                if not ip:
                    live = await self.client.get(pod_rt, pod_name, ns)
                    status = live.get("status") or {}
                    if status.get("phase") in ("Failed", "Succeeded"):
                        raise GatewayError(503, "LoadFailed", f"function {ns}/{name}: the pod {pod_name} ended "
                                                              f"({status.get('phase')}) before answering")
                    ip = (status.get("podIP") or "") if status.get("phase") == "Running" else ""
                else:
                    try:
                        async with self.http.post(f"http://{ip}:{PORT}/", data=body,
                                                  headers={"Content-Type": "application/json", **headers}) as resp:
                            return resp.status, await resp.read()
                    except aiohttp.ClientConnectorError:
                        pass  # not listening yet
                await asyncio.sleep(0.02)
            raise GatewayError(503, "Unavailable", f"function {ns}/{name}: the pod {pod_name} did not answer "
                                                   f"within {self.config.activation_timeout:g}s")
        finally:
            self._spawn(self._delete_pod(pod_name, ns))

    async def _delete_pod(self, name: str, namespace: str) -> None:
        try:
            await self.client.delete(self.client.kind("v1", "Pod"), name, namespace, grace_period_seconds=1)
        except errors.APIError as exc:
            if not isinstance(exc, errors.NotFound):
                log.warning("gateway could not delete the one-call pod %s/%s: %s", namespace, name, exc)

    # ------------------------------------------------------------------ workflows
    async def run_workflow(self, namespace: str, name: str, data: Any) -> Obj:
        wf = self.workflows.get(f"{namespace}/{name}")
        if wf is None or wf["metadata"].get("deletionTimestamp"):
            raise GatewayError(404, "NotFound", f'workflow "{name}" not found in namespace "{namespace}"')
        spec = wf.get("spec") or {}
        run_meta = {"generateName": f"{name}-", "namespace": namespace, "labels": {s.WORKFLOW_LABEL: name},
                    "ownerReferences": [{"apiVersion": s.API_VERSION, "kind": "Workflow", "name": name,
                                         "uid": wf["metadata"]["uid"], "controller": True,
                                         "blockOwnerDeletion": False}]}
        started = now_rfc3339_micro()
        try:
            run = await self.client.create(self.run_rt, {
                "apiVersion": s.API_VERSION, "kind": "WorkflowRun", "metadata": run_meta,
                "spec": {"workflowRef": {"name": name}, "input": data},
                "status": {"phase": "Running", "startTime": started}}, namespace)
        except errors.APIError as exc:
            raise GatewayError(503, "Unavailable", f"cannot record the run of workflow {name}: {exc}") from None
        steps: list[Obj] = []

        async def invoke(fn_name: str, payload: Any, timeout: float | None) -> Any:
            try:
                status, body = await asyncio.wait_for(
                    self.call_function(namespace, fn_name, json.dumps(payload).encode()), timeout)
            except GatewayError as exc:
                raise TaskError(TASK_FAILED if exc.status != 404 else "States.FunctionNotFound", exc.message) from None
            except TimeoutError:
                raise TaskError("States.Timeout", f"function {fn_name} ran longer than {timeout}s") from None
            try:
                result = json.loads(body) if body else None
            except ValueError:
                raise TaskError(TASK_FAILED, f"function {fn_name} answered {status} without JSON") from None
            if status != 200:
                if isinstance(result, dict) and result.get("error"):
                    raise TaskError(str(result["error"]), str(result.get("message") or ""))
                raise TaskError(TASK_FAILED, f"function {fn_name} answered HTTP {status}")
            return result

        async def on_step(step: Step) -> None:
            steps.append(step.to_dict())

        outcome = await Interpreter(spec, invoke, on_step=on_step).run(data)
        status: Obj = {"phase": outcome.phase, "startTime": started, "completionTime": now_rfc3339_micro(),
                       "durationSeconds": round(outcome.duration_seconds, 6),
                       "steps": [st.to_dict() for st in outcome.steps]}
        if outcome.phase == "Succeeded":
            status["output"] = outcome.output
        else:
            status["error"], status["cause"] = outcome.error, outcome.cause
        run_name = run["metadata"]["name"]
        try:
            await self.client.patch(self.run_rt, run_name, {"status": _trim_steps(status)}, namespace,
                                    subresource="status")
            await self.client.patch(self.wf_rt, name, {"status": {"lastRun": run_name,
                                                                  "observedGeneration": wf["metadata"].get(
                                                                      "generation")}}, namespace,
                                    subresource="status")
        except errors.APIError as exc:
            log.warning("gateway workflow=%s/%s run=%s status not recorded: %s", namespace, name, run_name, exc)
        limit = spec.get("runHistoryLimit")
        self._spawn(self._prune_runs(namespace, name, s.DEFAULT_RUN_HISTORY_LIMIT if limit is None else int(limit)))
        answer: Obj = {"run": run_name, "status": outcome.phase}
        if outcome.phase == "Succeeded":
            answer["output"] = outcome.output
        else:
            answer["error"], answer["cause"] = outcome.error, outcome.cause
        return answer

    async def _prune_runs(self, namespace: str, name: str, limit: int) -> None:
        try:
            runs = (await self.client.list(self.run_rt, namespace, label_selector=f"{s.WORKFLOW_LABEL}={name}"))
            items = sorted(runs.get("items") or [], key=lambda r: (r["metadata"].get("creationTimestamp") or "",
                                                                  r["metadata"]["name"]))
            done = [r for r in items if (r.get("status") or {}).get("phase") != "Running"]
            for old in done[:max(0, len(done) - limit)]:
                await self.client.delete(self.run_rt, old["metadata"]["name"], namespace)
        except errors.APIError as exc:
            log.warning("gateway workflow=%s/%s pruning runs failed: %s", namespace, name, exc)

    # ------------------------------------------------------------------ triggers
    async def _deliver(self, namespace: str, ref: Obj, attributes: dict[str, Any], data: Any) -> str | None:
        """Deliver one event to a Trigger's subscriber; None on success, else the error."""
        try:
            if ref.get("kind") == "Workflow":
                result = await self.run_workflow(namespace, str(ref.get("name")), data)
                return None if result["status"] == "Succeeded" else f"run {result['run']}: {result.get('error')}"
            status, body = await self.call_function(namespace, str(ref.get("name")), json.dumps(data).encode(),
                                                    cloudevent_headers(attributes))
            return None if 200 <= status < 300 else f"HTTP {status}: {body[:200].decode(errors='replace')}"
        except GatewayError as exc:
            return f"{exc.reason}: {exc.message}"


def create_app(gateway: Gateway, authenticator: Authenticator | None = None, authorizer: Authorizer | None = None,
               trusted: Callable[[Any], bool] | None = None,
               registration: ServiceRegistration | None = None) -> FastAPI:
    """The ASGI application around ``gateway`` (started and stopped with the app); with an
    enabled ``authenticator`` every request but ``GET /healthz`` and those ``trusted(scope)``
    accepts (the loopback listener's) must authenticate (else 401) and be allowed by
    ``authorizer`` (else 403; :mod:`minik8s.gateway.authn`).  ``registration`` publishes the
    gateway's Service while the app runs (every :data:`REGISTER_PERIOD` seconds; withdrawn at
    shutdown)."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        await gateway.start()
        # what start-up built lives as long as the process: out of the collector's sight, so
        # full collections stay short under load (as in the apiserver)
        gc.freeze()
        stop = asyncio.Event()
        publishing = asyncio.create_task(registration.run(stop, REGISTER_PERIOD)) if registration else None
        try:
            yield
        finally:
            stop.set()
            if publishing is not None:
                await publishing
            await gateway.stop()

    app = FastAPI(title="minik8s gateway", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    if authenticator is not None and authenticator.enabled:
        app.add_middleware(AuthMiddleware, authenticator=authenticator, authorizer=authorizer,
                           public_paths=("/healthz",), trusted=trusted)
    cfg = gateway.config

    async def read_body(request: Request) -> bytes:
        length = request.headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                raise GatewayError(400, "BadRequest", "invalid Content-Length")
            if int(length) > cfg.max_body_bytes:
                raise GatewayError(413, "PayloadTooLarge", f"the body has {length} bytes; the limit is "
                                                           f"{cfg.max_body_bytes}")
        chunks: list[bytes] = []
        size = 0

        async def collect() -> None:
            nonlocal size
            async for chunk in request.stream():
                size += len(chunk)
                if size > cfg.max_body_bytes:
                    raise GatewayError(413, "PayloadTooLarge", f"the body is over the limit of {cfg.max_body_bytes} "
                                                               "bytes")
                chunks.append(chunk)

        try:
            async with asyncio.timeout(cfg.read_timeout):
                await collect()
        except TimeoutError:
            raise GatewayError(408, "RequestTimeout", f"the body did not arrive within {cfg.read_timeout:g}s") from None
        return b"".join(chunks)

    def parse_json(body: bytes) -> Any:
        if not body.strip():
            return None
        try:
            return json.loads(body)
        except ValueError as exc:
            raise GatewayError(400, "BadRequest", f"the body is not JSON: {exc}") from None

    @app.exception_handler(GatewayError)
    async def on_gateway_error(request: Request, exc: GatewayError) -> JSONResponse:
        return JSONResponse(error_body(exc.reason, exc.message), status_code=exc.status)

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        reason = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "BadRequest")
        return JSONResponse(error_body(reason, str(exc.detail)), status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body("BadRequest", str(exc.errors())[:500]), status_code=400)

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("gateway unexpected failure on %s %s", request.method, request.url.path)
        return JSONResponse(error_body("BadGateway", f"the gateway failed: {type(exc).__name__}"), status_code=502)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics")
    async def metrics() -> Obj:
        return gateway.meter.snapshot()

    async def call(request: Request) -> Response:
        namespace, name = request.path_params["namespace"], request.path_params["name"]
        body = await read_body(request)
        parse_json(body)
        headers = {k: v for k, v in request.headers.items() if k.lower().startswith("ce-")}
        headers["x-request-id"] = request.headers.get("x-request-id") or uuid.uuid4().hex
        status, content = await gateway.call_function(namespace, name, body, headers)
        return Response(content, status_code=status, media_type="application/json")

    # the data path as a plain Starlette route: no FastAPI parameter solving on every call
    app.add_route("/functions/{namespace}/{name}", call, methods=["POST"])

    @app.post("/workflows/{namespace}/{name}")
    async def run(namespace: str, name: str, request: Request) -> JSONResponse:
        data = parse_json(await read_body(request))
        return JSONResponse(await gateway.run_workflow(namespace, name, data))

    @app.post("/events/{namespace}")
    async def event(namespace: str, request: Request) -> JSONResponse:
        body = await read_body(request)
        try:
            attributes, data = parse_event(dict(request.headers), body)
        except BadEvent as exc:
            raise GatewayError(400, "BadRequest", str(exc)) from None
        triggers = gateway.runner.publish(namespace, attributes, data)
        return JSONResponse({"id": attributes.get("id"), "triggers": triggers}, status_code=202)

    return app
