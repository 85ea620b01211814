"""Serverless verbs, as users of ``faas-cli`` / ``kn func`` expect them.

* ``kubectl function deploy NAME --from PATH`` — create or update a Function from a ``.py``
  file (it becomes ``main.py``) or a directory (its files; ``requirements.txt`` becomes
  ``spec.requirements``; without ``main.py`` and ``--handler``, the one module defining
  ``handler`` is used), then wait for it, showing progress (Building, Starting ...); a
  BuildFailed Function ends the command with its message;
* ``kubectl function invoke NAME [-d JSON | --data-file FILE]`` — call it through the gateway
  and print the JSON result (a function error prints one line and exits 1);
* ``kubectl function logs NAME [--tail N]`` — the logs of all its pods, each line prefixed
  with ``[pod]``;
* ``kubectl workflow run NAME [-d JSON]`` — run a Workflow, print the run's result;
* ``kubectl event send --type T --source S [-d JSON]`` — send a CloudEvent (binary mode) to
  the namespace's Triggers.

The gateway is ``--gateway``, else ``$MINIK8S_GATEWAY``, else a Function's ``status.url``,
else ``http://127.0.0.1:8081`` (``minik8s up``'s default).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Annotated
from urllib.parse import urlparse

import httpx
import typer
from rich.console import Console

from minik8s.api import errors
from minik8s.api import serverless as s
from minik8s.api.base import Obj
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.logquery import log_params
from minik8s.kubectl.session import GlobalOptions, Session

DEFAULT_GATEWAY = "http://127.0.0.1:8081"
MAX_FILES_BYTES = s.MAX_CODE_BYTES
err = Console(stderr=True)

function_app = typer.Typer(no_args_is_help=True, help="Deploy, invoke and inspect serverless Functions.")
workflow_app = typer.Typer(no_args_is_help=True, help="Run Workflows.")
event_app = typer.Typer(no_args_is_help=True, help="Send CloudEvents to Triggers.")

GatewayOpt = Annotated[str | None, typer.Option("--gateway", help="the gateway URL (default: $MINIK8S_GATEWAY or "
                                                                  "http://127.0.0.1:8081)")]
DataOpt = Annotated[str | None, typer.Option("-d", "--data", help="JSON input")]
DataFileOpt = Annotated[Path | None, typer.Option("--data-file", help="file with the JSON input")]


# ------------------------------------------------------------------ building a Function
def code_from(path: Path) -> tuple[Obj, list[str] | None]:
    """``({"source": text} | {"files": {...}}, requirements)`` from a ``.py`` file or a directory.

    Raises KubectlError for a missing path, an empty directory, subdirectories, or files that
    are not UTF-8 text.
    """
    if not path.exists():
        raise KubectlError(f"{path}: no such file or directory")
    if path.is_file():
        return {"source": _read(path)}, None
    files: dict[str, str] = {}
    requirements: list[str] | None = None
    for entry in sorted(path.iterdir()):
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        if entry.is_dir():
            raise KubectlError(f"{entry}: subdirectories are not supported; a Function's files are flat")
        if entry.name == "requirements.txt":
            requirements = [ln.strip() for ln in _read(entry).splitlines()
                            if ln.strip() and not ln.strip().startswith("#")]
            continue
        files[entry.name] = _read(entry)
    if not files:
        raise KubectlError(f"{path}: no files to deploy")
    return {"files": files}, requirements


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise KubectlError(f"{path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise KubectlError(f"{path}: {exc.strerror or exc}") from None


def function_body(name: str, path: Path, handler: str | None, env: list[str], min_scale: int | None,
                  max_scale: int | None, target: int | None, timeout: int | None) -> Obj:
    code, requirements = code_from(path)
    spec: Obj = dict(code)
    if handler:
        spec["handler"] = handler
    elif "files" in code and "main.py" not in code["files"]:
        # no main.py: the one module that defines ``handler`` (else the apiserver explains)
        py = [n for n, text in code["files"].items() if n.endswith(".py") and "def handler(" in text]
        if len(py) == 1:
            spec["handler"] = f"{py[0][:-3]}.handler"
    if requirements:
        spec["requirements"] = requirements
    if env:
        pairs = []
        for item in env:
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise KubectlError(f"--env {item!r}: must be NAME=VALUE")
            pairs.append({"name": key, "value": value})
        spec["env"] = pairs
    scaling = {k: v for k, v in (("minScale", min_scale), ("maxScale", max_scale),
                                 ("targetConcurrency", target)) if v is not None}
    if scaling:
        spec["scaling"] = scaling
    if timeout is not None:
        spec["timeoutSeconds"] = timeout
    return {"apiVersion": s.API_VERSION, "kind": "Function", "metadata": {"name": name}, "spec": spec}


def ready_condition(fn: Obj) -> Obj:
    return next((c for c in (fn.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {})


async def _deploy(opts: GlobalOptions, body: Obj, wait: bool, timeout: float) -> str:
    async with Session(opts) as sess:
        rt = sess.resource("functions")
        name = body["metadata"]["name"]
        try:
            live = await sess.client.get(rt, name, sess.namespace)
        except errors.NotFound:
            live = None
        if live is None:
            stored = await sess.client.create(rt, body, sess.namespace)
            verb = "created"
        else:
            live["spec"] = {**body["spec"], "scaling": {**((live.get("spec") or {}).get("scaling") or {}),
                                                        **(body["spec"].get("scaling") or {})}}
            stored = await sess.client.update(rt, live)
            verb = "configured"
        line = f"function.minik8s.io/{name} {verb}"
        if not wait:
            return line
        generation = stored["metadata"].get("generation")
        deadline = time.monotonic() + timeout
        with err.status(f"waiting for function {name} ...") as progress:
            while True:
                fn = await sess.client.get(rt, name, sess.namespace)
                status = fn.get("status") or {}
                cond = ready_condition(fn)
                current = status.get("observedGeneration") == generation
                if current and cond.get("reason") == "BuildFailed":
                    raise KubectlError(f"function {name}: BuildFailed: {cond.get('message')}")
                if current and cond.get("status") == "True":
                    return f"{line}\nfunction {name} is ready ({cond.get('reason')}): {status.get('url')}"
                progress.update(f"waiting for function {name}: {cond.get('reason') or 'Pending'}"
                                f"{': ' + str(cond.get('message')) if cond.get('message') else ''}")
                if time.monotonic() > deadline:
                    raise KubectlError(f"function {name} did not become ready in {timeout:g}s "
                                       f"({cond.get('reason')}: {cond.get('message')})")
                await asyncio.sleep(0.3)


@function_app.command("deploy")
def deploy(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the Function's name")],
    source: Annotated[Path, typer.Option("--from", "-f", help="a .py file or a directory of files")],
    handler: Annotated[str | None, typer.Option("--handler", help="module.function (default main.handler)")] = None,
    env: Annotated[list[str], typer.Option("--env", "-e", help="NAME=VALUE (repeatable)")] = [],  # noqa: B006
    min_scale: Annotated[int | None, typer.Option("--min-scale")] = None,
    max_scale: Annotated[int | None, typer.Option("--max-scale")] = None,
    target: Annotated[int | None, typer.Option("--concurrency-target")] = None,
    timeout_seconds: Annotated[int | None, typer.Option("--timeout-seconds", help="the handler's time limit")] = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="wait until the Function is ready")] = True,
    wait_timeout: Annotated[float, typer.Option("--wait-timeout", help="seconds to wait")] = 300.0,
) -> None:
    """Create or update a Function from a .py file or a directory and wait until it is ready."""
    body = function_body(name, source, handler, env, min_scale, max_scale, target, timeout_seconds)
    typer.echo(asyncio.run(_deploy(ctx.obj, body, wait, wait_timeout)))


# ------------------------------------------------------------------ calling
def input_data(data: str | None, data_file: Path | None) -> bytes:
    if data is not None and data_file is not None:
        raise KubectlError("give -d/--data or --data-file, not both")
    text = _read(data_file) if data_file is not None else (data if data is not None else "null")
    try:
        json.loads(text)
    except ValueError as exc:
        raise KubectlError(f"the input is not JSON: {exc}") from None
    return text.encode()


async def _gateway_for(opts: GlobalOptions, given: str | None, function: str | None = None) -> str:
    if given or os.environ.get("MINIK8S_GATEWAY"):
        return (given or os.environ["MINIK8S_GATEWAY"]).rstrip("/")
    if function:
        async with Session(opts) as sess:
            try:
                fn = await sess.client.get(sess.resource("functions"), function, sess.namespace)
            except errors.NotFound:
                raise KubectlError(f'functions.minik8s.io "{function}" not found') from None
            url = (fn.get("status") or {}).get("url")
            if url:
                parsed = urlparse(url)
                return f"{parsed.scheme}://{parsed.netloc}"
    return DEFAULT_GATEWAY


async def _post(url: str, body: bytes, headers: dict[str, str] | None = None, timeout: float = 960.0) -> httpx.Response:
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=5.0)) as http:
            return await http.post(url, content=body, headers={"Content-Type": "application/json", **(headers or {})})
    except httpx.HTTPError as exc:
        raise KubectlError(f"cannot reach the gateway at {url}: {type(exc).__name__} {exc}".strip()) from None


def _print_or_fail(resp: httpx.Response) -> None:
    try:
        body = resp.json()
    except ValueError:
        raise KubectlError(f"the gateway answered {resp.status_code} without JSON") from None
    if resp.status_code >= 400:
        if isinstance(body, dict) and body.get("error"):
            raise KubectlError(f"{resp.status_code} {body['error']}: {body.get('message', '')}")
        raise KubectlError(f"the gateway answered {resp.status_code}")
    typer.echo(json.dumps(body, indent=2))


@function_app.command("invoke")
def invoke(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the Function's name")],
    data: DataOpt = None,
    data_file: DataFileOpt = None,
    gateway: GatewayOpt = None,
) -> None:
    """Call a Function with JSON input and print its JSON result."""
    body = input_data(data, data_file)

    async def run() -> None:
        base = await _gateway_for(ctx.obj, gateway, name)
        ns = ctx.obj.default_namespace()
        _print_or_fail(await _post(f"{base}/functions/{ns}/{name}", body))

    asyncio.run(run())


@workflow_app.command("run")
def run_workflow(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the Workflow's name")],
    data: DataOpt = None,
    data_file: DataFileOpt = None,
    gateway: GatewayOpt = None,
) -> None:
    """Run a Workflow with JSON input; print the run's name, status and output (exit 1 if it failed)."""
    body = input_data(data, data_file)

    async def run() -> None:
        base = await _gateway_for(ctx.obj, gateway)
        resp = await _post(f"{base}/workflows/{ctx.obj.default_namespace()}/{name}", body)
        _print_or_fail(resp)
        if resp.json().get("status") == "Failed":
            raise KubectlError(f"workflow run {resp.json().get('run')} failed: {resp.json().get('error')}: "
                               f"{resp.json().get('cause')}")

    asyncio.run(run())


@event_app.command("send")
def send_event(
    ctx: typer.Context,
    type_: Annotated[str, typer.Option("--type", help="the CloudEvent's type")],
    source: Annotated[str, typer.Option("--source", help="the CloudEvent's source")] = "/kubectl",
    event_id: Annotated[str | None, typer.Option("--id", help="the event id (default: a new UUID)")] = None,
    subject: Annotated[str | None, typer.Option("--subject")] = None,
    data: DataOpt = None,
    data_file: DataFileOpt = None,
    gateway: GatewayOpt = None,
) -> None:
    """Send a CloudEvent (binary mode) to the Triggers of the namespace."""
    body = input_data(data, data_file)
    headers = {"ce-specversion": "1.0", "ce-id": event_id or str(uuid.uuid4()), "ce-type": type_, "ce-source": source}
    if subject:
        headers["ce-subject"] = subject

    async def run() -> None:
        base = await _gateway_for(ctx.obj, gateway)
        _print_or_fail(await _post(f"{base}/events/{ctx.obj.default_namespace()}", body, headers))

    asyncio.run(run())


# ------------------------------------------------------------------ logs
@function_app.command("logs")
def function_logs(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="the Function's name")],
    tail: Annotated[int, typer.Option("--tail", help="lines from the end of each pod's log (-1: all)")] = -1,
) -> None:
    """Print the logs of all the Function's pods, each line prefixed with ``[pod]``."""

    async def run() -> None:
        async with Session(ctx.obj) as sess:
            pods = await sess.client.list(sess.resource("pods"), sess.namespace,
                                          label_selector=f"{s.FUNCTION_LABEL}={name}")
            items = sorted(pods.get("items") or [], key=lambda p: p["metadata"].get("creationTimestamp") or "")
            if not items:
                err.print(f"function {name} has no pods (scaled to zero?)", markup=False, highlight=False)
                return
            params = log_params("function", False, tail, False, False)
            for pod in items:
                pod_name = pod["metadata"]["name"]
                path = f"/api/v1/namespaces/{sess.namespace}/pods/{pod_name}/log"
                try:
                    text = "".join([chunk async for chunk in sess.client.stream_text(path, params)])
                except errors.APIError as exc:
                    err.print(f"[{pod_name}] (no logs: {exc.message})", markup=False, highlight=False)
                    continue
                for line in text.splitlines():
                    sys.stdout.write(f"[{pod_name}] {line}\n")
            sys.stdout.flush()

    asyncio.run(run())
