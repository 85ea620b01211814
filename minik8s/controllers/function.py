"""The Function controller: turn each ``minik8s.io/v1`` Function into running instances.

For a Function ``hello`` in namespace ``ns`` the controller keeps, all with a controller
ownerReference to the Function (so the garbage collector removes them with it):

* a **ConfigMap per code revision** ``hello-<hash>`` (immutable, content-addressed): the
  user's files (``spec.source`` becomes ``main.py``) plus the runtime server
  (:mod:`minik8s.fnruntime`, key ``.minik8s-runtime.py``).  The revision hash covers
  everything that ends up in the pods (code, handler, requirements, env, resources,
  timeout, the runtime's text), so any such change rolls out a new revision;
* for Functions with ``spec.requirements``, **requirements ConfigMaps**
  ``hello-<hash>-deps-<i>``: the controller runs ``pip install --target`` once per revision
  (its own interpreter's pip, at deploy time), packs the directory as tar.gz and splits it
  into parts below the 1 MiB object limit (:data:`MAX_DEPS_BYTES` in all); an init container
  of every instance joins and unpacks them into an ``emptyDir``;
* a **Deployment** ``fn-hello`` of ``minik8s/python`` pods running the runtime (label
  ``minik8s.io/function=hello``, ``minik8s.io/revision=hello-<hash>``), rolled with
  maxUnavailable 0 / maxSurge 1 so an update never leaves the Function without instances;
  its ``replicas`` belong to the autoscaler (:mod:`minik8s.controllers.functionautoscaler`)
  and the gateway's activator — the controller sets it only when it creates the Deployment
  (``minScale``);
* a ClusterIP **Service** ``fn-hello`` (port 80 → the runtime's 8080).

Before deploying a revision every ``.py`` file is compiled: a syntax error sets ``Ready``
False with reason ``BuildFailed`` and the file, line and message, and leaves the previous
revision serving; so does a failed ``pip install`` (pip's error line) or requirements over
the size limit.  Instances that exit because the handler cannot be loaded (an import error)
give ``LoadFailed`` with the runtime's last log line; pods that cannot be scheduled give
``NoCapacity``.  Otherwise Ready is True (``Ready`` with ready instances, ``ScaledToZero``
with none: the next call starts one), or Unknown while the first instance starts.

Status also carries ``observedGeneration``, ``revision``, ``instances`` (the Deployment's
replicas), ``readyInstances`` (ready pods), ``url`` (the gateway's address for the Function)
and ``lastScaleTime``.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime as dt
import hashlib
import io
import json
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from minik8s.api import errors
from minik8s.api import serverless as s
from minik8s.api.base import Obj, object_key
from minik8s.api.serverless import DEFAULT_GATEWAY_URL, FUNCTION_INDEX, FunctionView, by_function
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import HASH_ANNOTATION, Controller, ready_condition, spec_hash
from minik8s.controllers.ownerrefs import meta_of, new_controller_ref
from minik8s.controllers.podutil import is_pod_ready
from minik8s.fnruntime import EXIT_LOAD_FAILED, PORT, RUNTIME_FILE, runtime_source

PYTHON_IMAGE = "minik8s/python:latest"
CODE_DIR = "/var/run/minik8s/function"
DEPS_DIR = "/var/run/minik8s/deps"
PARTS_DIR = "/var/run/minik8s/deps-parts"
REQUIREMENTS_FILE = ".minik8s-requirements.txt"
PARTS_ANNOTATION = "minik8s.io/parts"
#: Largest requirements archive (tar.gz bytes) a Function may have; it travels in ConfigMaps.
MAX_DEPS_BYTES = 8 * 1024 * 1024
PART_BYTES = 768 * 1024
BUILD_TIMEOUT_SECONDS = 300.0


def code_files(spec: Obj) -> dict[str, str]:
    """The Function's files: ``{"main.py": source}`` or ``spec.files``."""
    if spec.get("source") is not None:
        return {s.SOURCE_FILE: str(spec["source"])}
    return {str(k): str(v) for k, v in (spec.get("files") or {}).items()}


def revision_name(name: str, spec: Obj) -> str:
    """``<name>-<10 hex>``: a hash of everything of ``spec`` that reaches the pods, and of the runtime."""
    keys = ("runtime", "handler", "source", "files", "requirements", "env", "resources", "timeoutSeconds")
    payload = json.dumps({k: spec.get(k) for k in keys}, sort_keys=True) + runtime_source()
    return f"{name}-{hashlib.sha256(payload.encode()).hexdigest()[:10]}"


def syntax_error(files: dict[str, str]) -> str | None:
    """``main.py, line 3: invalid syntax: 'def f(:'`` for the first ``.py`` file that does not
    compile, else None."""
    for name in sorted(files):
        if not name.endswith(".py"):
            continue
        try:
            compile(files[name], name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            text = (exc.text or "").strip()
            return f"{name}, line {exc.lineno}: {exc.msg}" + (f": {text!r}" if text else "")
        except ValueError as exc:  # NUL bytes
            return f"{name}: {exc}"
    return None


def desired_deployment(fn: Obj, revision: str, deps_parts: int) -> Obj:
    """The Deployment ``fn-<name>`` serving ``revision`` (``replicas`` left to the caller)."""
    meta, spec = meta_of(fn), fn.get("spec") or {}
    name, namespace = meta["name"], meta.get("namespace")
    timeout = int(spec.get("timeoutSeconds") or s.DEFAULT_TIMEOUT_SECONDS)
    env = [{"name": "MINIK8S_FUNCTION_DIR", "value": CODE_DIR},
           {"name": "MINIK8S_HANDLER", "value": spec.get("handler") or s.DEFAULT_HANDLER},
           {"name": "MINIK8S_TIMEOUT_SECONDS", "value": str(timeout)},
           {"name": "MINIK8S_PORT", "value": str(PORT)},
           {"name": "MINIK8S_FUNCTION_NAME", "value": name},
           {"name": "MINIK8S_FUNCTION_NAMESPACE", "value": namespace},
           {"name": "MINIK8S_REVISION", "value": revision}]
    mounts: list[Obj] = [{"name": "code", "mountPath": CODE_DIR, "readOnly": True}]
    volumes: list[Obj] = [{"name": "code", "configMap": {"name": revision}}]
    init: list[Obj] = []
    if deps_parts:
        env.append({"name": "MINIK8S_DEPS_DIR", "value": DEPS_DIR})
        mounts.append({"name": "deps", "mountPath": DEPS_DIR, "readOnly": True})
        volumes.append({"name": "deps", "emptyDir": {}})
        parts = [{"name": f"deps-{i}", "configMap": {"name": f"{revision}-deps-{i}"}} for i in range(deps_parts)]
        volumes += parts
        init.append({"name": "requirements", "image": PYTHON_IMAGE,
                     "command": ["python3", f"{CODE_DIR}/{RUNTIME_FILE}", "--unpack", PARTS_DIR, DEPS_DIR],
                     "volumeMounts": [{"name": "code", "mountPath": CODE_DIR, "readOnly": True},
                                      {"name": "deps", "mountPath": DEPS_DIR},
                                      *({"name": p["name"], "mountPath": f"{PARTS_DIR}/{i}", "readOnly": True}
                                        for i, p in enumerate(parts))]})
    env += [dict(e) for e in spec.get("env") or []]
    container: Obj = {
        "name": "function", "image": PYTHON_IMAGE, "command": ["python3", "-u", f"{CODE_DIR}/{RUNTIME_FILE}"],
        "env": env, "ports": [{"name": "http", "containerPort": PORT, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": PORT}, "periodSeconds": 1,
                           "failureThreshold": 1},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": PORT}, "periodSeconds": 10,
                          "timeoutSeconds": 5, "failureThreshold": 3},
        "volumeMounts": mounts,
    }
    if spec.get("resources"):
        container["resources"] = copy.deepcopy(spec["resources"])
    pod_spec: Obj = {"containers": [container], "volumes": volumes, "terminationGracePeriodSeconds": timeout + 5}
    if init:
        pod_spec["initContainers"] = init
    labels = {s.FUNCTION_LABEL: name}
    dep_spec: Obj = {
        "selector": {"matchLabels": dict(labels)},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "template": {"metadata": {"labels": {**labels, s.REVISION_LABEL: revision}}, "spec": pod_spec},
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": s.workload_name(name), "namespace": namespace, "labels": dict(labels),
                         "annotations": {HASH_ANNOTATION: spec_hash(dep_spec)},
                         "ownerReferences": [new_controller_ref(fn, s.API_VERSION, "Function")]},
            "spec": dep_spec}


def desired_service(fn: Obj) -> Obj:
    """The ClusterIP Service ``fn-<name>``: port 80 → the instances' runtime port."""
    meta = meta_of(fn)
    labels = {s.FUNCTION_LABEL: meta["name"]}
    spec: Obj = {"type": "ClusterIP", "selector": dict(labels),
                 "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": s.workload_name(meta["name"]), "namespace": meta.get("namespace"),
                         "labels": labels, "annotations": {HASH_ANNOTATION: spec_hash(spec)},
                         "ownerReferences": [new_controller_ref(fn, s.API_VERSION, "Function")]},
            "spec": spec}


def condition(old: list[Obj] | None, status: str, reason: str, message: str) -> Obj:
    """The Ready condition, keeping ``lastTransitionTime`` of the old one when the status stays."""
    return ready_condition(next((c for c in old or [] if c.get("type") == "Ready"), None), status, reason, message)


def load_failure(pod: Obj) -> bool:
    """Whether the pod's function container exited because the handler could not be loaded."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") != "function":
            continue
        for state in (cs.get("state") or {}, cs.get("lastState") or {}):
            if (state.get("terminated") or {}).get("exitCode") == EXIT_LOAD_FAILED:
                return True
    return False


def unschedulable(pod: Obj) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable":
            return str(c.get("message") or "no node fits")
    return None


class FunctionController(Controller):
    """Reconciles Functions into revision ConfigMaps, a Deployment, a Service and a status."""

    name = "function-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, gateway_url: str = DEFAULT_GATEWAY_URL,
                 recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.gateway_url = gateway_url.rstrip("/")
        self.fn_rt = client.kind(s.API_VERSION, "Function")
        self.cm_rt = client.kind("v1", "ConfigMap")
        self.deploy_rt = client.kind("apps/v1", "Deployment")
        self.svc_rt = client.kind("v1", "Service")
        self.pod_rt = client.kind("v1", "Pod")
        index = {FUNCTION_INDEX: by_function}
        self.functions = factory.informer(self.fn_rt)
        self.configmaps = factory.informer(self.cm_rt, index)
        self.deployments = factory.informer(self.deploy_rt, index)
        self.services = factory.informer(self.svc_rt, index)
        self.pods = factory.informer(self.pod_rt, index)
        self.functions.add_handler(self._on_function, lambda _o, cur: self._on_function(cur), self._on_function)
        for inf in (self.configmaps, self.deployments, self.services, self.pods):
            inf.add_handler(self._on_child, lambda _o, cur: self._on_child(cur), self._on_child)
        self.builds: dict[str, asyncio.Task[None]] = {}
        self.build_errors: dict[str, str] = {}
        self.load_messages: dict[str, str] = {}

    def _on_function(self, obj: Obj) -> None:
        self.enqueue(object_key(obj))

    def _on_child(self, obj: Obj) -> None:
        for key in by_function(obj):
            self.enqueue(key)

    def shutdown(self) -> None:
        super().shutdown()
        for task in self.builds.values():
            task.cancel()

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        fn = self.functions.get(key)
        if fn is None:
            return
        view = FunctionView.of(fn)
        if view.meta.deletion_timestamp:
            return
        spec = fn.get("spec") or {}
        files = code_files(spec)
        revision = revision_name(view.meta.name, spec)
        problem = syntax_error(files)
        if problem:
            await self._write_status(fn, None, revision, ("False", "BuildFailed", f"syntax error in {problem}"))
            return
        deps_parts = 0
        if view.requirements:
            parts = self._deps_parts(key, revision)
            if parts is None:
                if revision in self.build_errors:
                    await self._write_status(fn, None, revision, ("False", "BuildFailed", self.build_errors[revision]))
                    return
                self._start_build(key, fn, revision, list(view.requirements))
                await self._write_status(fn, None, revision, ("Unknown", "Building",
                                                              "installing the requirements with pip"))
                return
            deps_parts = parts
        await self._ensure_code(fn, view, revision, files)
        deployment = await self._ensure_deployment(fn, view, revision, deps_parts)
        await self._ensure_service(fn)
        await self._collect_old_revisions(key, revision)
        await self._write_status(fn, deployment, revision, None)

    # ------------------------------------------------------------------ children
    def _owned(self, obj: Obj | None, fn: Obj) -> bool:
        return obj is not None and any(r.get("controller") and r.get("uid") == meta_of(fn).get("uid")
                                       for r in meta_of(obj).get("ownerReferences") or [])

    async def _create(self, rt: Any, body: Obj, namespace: str) -> Obj:
        try:
            created: Obj = await self.client.create(rt, body, namespace)
            return created
        except errors.AlreadyExists:
            raise errors.Conflict(f"{rt.kind} {body['metadata']['name']} exists but is not in the cache yet") from None

    async def _ensure_code(self, fn: Obj, view: FunctionView, revision: str, files: dict[str, str]) -> None:
        ns, name = view.meta.namespace, view.meta.name
        if self.configmaps.get(f"{ns}/{revision}") is not None:
            return
        data = {**files, RUNTIME_FILE: runtime_source()}
        if view.requirements:
            data[REQUIREMENTS_FILE] = "\n".join(view.requirements) + "\n"
        body = {"apiVersion": "v1", "kind": "ConfigMap", "immutable": True, "data": data,
                "metadata": {"name": revision, "namespace": ns,
                             "labels": {s.FUNCTION_LABEL: name, s.REVISION_LABEL: revision},
                             "ownerReferences": [new_controller_ref(fn, s.API_VERSION, "Function")]}}
        await self._create(self.cm_rt, body, ns)
        self.log.info("function %s/%s: revision %s stored", ns, name, revision)

    async def _ensure_deployment(self, fn: Obj, view: FunctionView, revision: str, deps_parts: int) -> Obj | None:
        ns, name = view.meta.namespace, view.meta.name
        want = desired_deployment(fn, revision, deps_parts)
        current = self.deployments.get(f"{ns}/{s.workload_name(name)}")
        if current is None:
            want["spec"]["replicas"] = view.min_scale
            want["metadata"]["annotations"][s.LAST_SCALE_ANNOTATION] = f"{dt.datetime.now(dt.UTC).timestamp():.3f}"
            created = await self._create(self.deploy_rt, want, ns)
            self.event(fn, "Normal", "Deployed", f"revision {revision}")
            return created
        if not self._owned(current, fn):
            self.event(fn, "Warning", "NameConflict", f"Deployment {s.workload_name(name)} exists and is not "
                                                      "controlled by this Function")
            return None
        want_hash = want["metadata"]["annotations"][HASH_ANNOTATION]
        if (meta_of(current).get("annotations") or {}).get(HASH_ANNOTATION) == want_hash:
            return current
        updated = copy.deepcopy(current)
        replicas = (current.get("spec") or {}).get("replicas")
        updated["spec"] = {**want["spec"], "replicas": replicas}
        updated["metadata"]["annotations"] = {**(meta_of(current).get("annotations") or {}),
                                              HASH_ANNOTATION: want_hash}
        result: Obj = await self.client.update(self.deploy_rt, updated)
        self.event(fn, "Normal", "Deployed", f"rolling out revision {revision}")
        self.log.info("function %s/%s: rolling out %s", ns, name, revision)
        return result

    async def _ensure_service(self, fn: Obj) -> None:
        meta = meta_of(fn)
        ns = meta.get("namespace") or ""
        want = desired_service(fn)
        current = self.services.get(f"{ns}/{want['metadata']['name']}")
        if current is None:
            await self._create(self.svc_rt, want, ns)
        elif self._owned(current, fn) and (meta_of(current).get("annotations") or {}).get(HASH_ANNOTATION) != \
                want["metadata"]["annotations"][HASH_ANNOTATION]:
            updated = copy.deepcopy(current)
            updated["spec"].update(want["spec"])
            updated["metadata"]["annotations"] = {**(meta_of(current).get("annotations") or {}),
                                                  **want["metadata"]["annotations"]}
            await self.client.update(self.svc_rt, updated)

    async def _collect_old_revisions(self, key: str, revision: str) -> None:
        """Delete ConfigMaps of revisions no live pod of the Function uses any more."""
        in_use = {revision} | {(meta_of(p).get("labels") or {}).get(s.REVISION_LABEL)
                               for p in self.pods.by_index(FUNCTION_INDEX, key)}
        for cm in self.configmaps.by_index(FUNCTION_INDEX, key):
            rev = (meta_of(cm).get("labels") or {}).get(s.REVISION_LABEL)
            if rev and rev not in in_use and rev not in self.builds:
                try:
                    await self.client.delete(self.cm_rt, meta_of(cm)["name"], meta_of(cm).get("namespace"))
                except errors.NotFound:
                    pass

    # ------------------------------------------------------------------ requirements
    def _deps_parts(self, key: str, revision: str) -> int | None:
        """The number of requirements parts of ``revision`` when all are stored, else None."""
        ns = key.split("/", 1)[0]
        first = self.configmaps.get(f"{ns}/{revision}-deps-0")
        if first is None:
            return None
        try:
            count = int((meta_of(first).get("annotations") or {}).get(PARTS_ANNOTATION) or 0)
        except ValueError:
            return None
        if count < 1 or any(self.configmaps.get(f"{ns}/{revision}-deps-{i}") is None for i in range(1, count)):
            return None
        return count

    def _start_build(self, key: str, fn: Obj, revision: str, requirements: list[str]) -> None:
        task = self.builds.get(revision)
        if task is not None and not task.done():
            return
        self.event(fn, "Normal", "Building", f"pip install {' '.join(requirements)}")
        self.builds[revision] = asyncio.get_running_loop().create_task(
            self._build(key, fn, revision, requirements))

    async def _build(self, key: str, fn: Obj, revision: str, requirements: list[str]) -> None:
        try:
            archive = await self._pip_install(requirements)
            if len(archive) > MAX_DEPS_BYTES:
                raise RuntimeError(f"the installed requirements take {len(archive) / 2**20:.1f} MiB compressed; "
                                   f"the limit is {MAX_DEPS_BYTES / 2**20:.0f} MiB")
            await self._store_parts(fn, revision, archive)
            self.event(fn, "Normal", "Built", f"requirements installed ({len(archive) / 1024:.0f} KiB)")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported in the Function's status
            message = str(exc) or type(exc).__name__
            self.build_errors[revision] = message
            self.log.warning("function %s: build of %s failed: %s", key, revision, message)
        finally:
            self.builds.pop(revision, None)
            self.enqueue(key)

    @staticmethod
    async def _pip_install(requirements: list[str]) -> bytes:
        """``pip install --target`` into a temporary directory; returns it as tar.gz bytes.
        Raises RuntimeError with pip's error line."""
        with tempfile.TemporaryDirectory(prefix="minik8s-fn-build-") as tmp:
            target = Path(tmp) / "site"
            req = Path(tmp) / "requirements.txt"
            req.write_text("\n".join(requirements) + "\n")
            argv = [sys.executable, "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
                    "--no-compile", "--quiet", "--target", str(target), "-r", str(req)]
            if sys.version_info[:2] != (3, 11):  # the minik8s/python image runs Debian 12's Python 3.11
                argv += ["--python-version", "3.11", "--implementation", "cp", "--only-binary=:all:"]
            proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.STDOUT)
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), BUILD_TIMEOUT_SECONDS)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                raise RuntimeError(f"pip install did not finish in {BUILD_TIMEOUT_SECONDS:.0f}s") from None
            if proc.returncode != 0:
                lines = [ln.strip() for ln in out.decode(errors="replace").splitlines() if ln.strip()]
                errs = [ln for ln in lines if ln.startswith("ERROR")] or lines[-1:] or ["(no output)"]
                raise RuntimeError("pip install failed: " + errs[-1])

            def pack() -> bytes:
                buf = io.BytesIO()
                with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                    tar.add(str(target), arcname=".")
                return buf.getvalue()

            target.mkdir(exist_ok=True)
            return await asyncio.to_thread(pack)

    async def _store_parts(self, fn: Obj, revision: str, archive: bytes) -> None:
        ns = meta_of(fn).get("namespace") or ""
        chunks = [archive[i:i + PART_BYTES] for i in range(0, len(archive), PART_BYTES)] or [b""]
        for i in [*range(1, len(chunks)), 0]:  # part 0 (with the count) last: its presence means complete
            body: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "immutable": True,
                         "binaryData": {"deps.part": base64.b64encode(chunks[i]).decode()},
                         "metadata": {"name": f"{revision}-deps-{i}", "namespace": ns,
                                      "labels": {s.FUNCTION_LABEL: meta_of(fn)["name"], s.REVISION_LABEL: revision},
                                      "ownerReferences": [new_controller_ref(fn, s.API_VERSION, "Function")]}}
            if i == 0:
                body["metadata"]["annotations"] = {PARTS_ANNOTATION: str(len(chunks))}
            try:
                await self.client.create(self.cm_rt, body, ns)
            except errors.AlreadyExists:
                pass

    # ------------------------------------------------------------------ status
    async def _load_message(self, pod: Obj) -> str:
        """The runtime's ``load failed`` line from the pod's (previous) log, cached per pod."""
        meta = meta_of(pod)
        uid = meta.get("uid") or ""
        if uid in self.load_messages:
            return self.load_messages[uid]
        message = "the handler could not be loaded"
        for previous in (True, False):
            try:
                text = await self.client.request(
                    "GET", f"/api/v1/namespaces/{meta.get('namespace')}/pods/{meta.get('name')}/log",
                    params={"container": "function", "tailLines": 20, "previous": previous}, timeout=5)
            except errors.APIError:
                continue
            lines = [ln for ln in str(text).splitlines() if "load failed:" in ln]
            if lines:
                message = lines[-1].split("load failed:", 1)[1].strip()
                self.load_messages[uid] = message
                break
        if len(self.load_messages) > 1024:
            self.load_messages.clear()
        return message

    async def _write_status(self, fn: Obj, deployment: Obj | None, revision: str,
                            forced: tuple[str, str, str] | None) -> None:
        meta = meta_of(fn)
        key = object_key(fn)
        old = fn.get("status") or {}
        pods = [p for p in self.pods.by_index(FUNCTION_INDEX, key) if not meta_of(p).get("deletionTimestamp")]
        ready = sum(1 for p in pods if is_pod_ready(p))
        instances = int(((deployment or {}).get("spec") or {}).get("replicas") or 0) if deployment else \
            int(old.get("instances") or 0)
        if forced is not None:
            cond = condition(old.get("conditions"), *forced)
        else:
            current = [p for p in pods if (meta_of(p).get("labels") or {}).get(s.REVISION_LABEL) == revision]
            failing = [p for p in current if load_failure(p)]
            pending = [m for p in current if (m := unschedulable(p))]
            if failing and not any(is_pod_ready(p) for p in current):
                message = await self._load_message(failing[0])
                cond = condition(old.get("conditions"), "False", "LoadFailed", message)
            elif ready:
                cond = condition(old.get("conditions"), "True", "Ready", f"{ready} instance(s) ready")
            elif deployment is None:
                cond = condition(old.get("conditions"), "False", "NameConflict",
                                 f"Deployment {s.workload_name(meta['name'])} is not controlled by this Function")
            elif instances == 0:
                cond = condition(old.get("conditions"), "True", "ScaledToZero",
                                 "no instance runs; the next call starts one")
            elif pending:
                cond = condition(old.get("conditions"), "False", "NoCapacity", pending[0])
            else:
                cond = condition(old.get("conditions"), "Unknown", "Starting", "waiting for an instance to answer")
        status: Obj = {"observedGeneration": meta.get("generation"), "conditions": [cond],
                       "readyInstances": ready, "instances": instances,
                       "url": f"{self.gateway_url}/functions/{meta.get('namespace')}/{meta['name']}",
                       "revision": revision if forced is None else old.get("revision")}
        stamp = ((meta_of(deployment).get("annotations") or {}) if deployment else {}).get(s.LAST_SCALE_ANNOTATION)
        if stamp:
            try:
                status["lastScaleTime"] = dt.datetime.fromtimestamp(float(stamp), dt.UTC).strftime(
                    "%Y-%m-%dT%H:%M:%SZ")
            except ValueError:
                pass
        elif old.get("lastScaleTime"):
            status["lastScaleTime"] = old["lastScaleTime"]
        status = {k: v for k, v in status.items() if v is not None}
        if status == old:
            return
        if forced is not None and forced[1] == "BuildFailed" and \
                next((c for c in old.get("conditions") or [] if c.get("reason") == "BuildFailed"), None) is None:
            self.event(fn, "Warning", "BuildFailed", forced[2])
        updated = copy.deepcopy(fn)
        updated["status"] = status
        try:
            await self.client.update_status(self.fn_rt, updated)
        except errors.NotFound:
            return
