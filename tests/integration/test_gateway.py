"""The serverless data path with real parts: apiserver + etcd, a real kubelet on Docker, the
scheduler, the controller-manager (Function, Function autoscaler, Deployment, ReplicaSet, GC)
and the gateway, the last three in-process.

Covers: scale from zero (activator) and calls, runtime errors passed through, gateway errors
(404, 400, 413, 503 BuildFailed), workflows with a branch and a chain recorded as
WorkflowRuns, CloudEvents (binary and structured) firing Triggers, a schedule Trigger,
scale-out under load and back to zero, a rolling update with no failed call, deletion →
404, and hostile clients.  Traffic goes to 127.0.0.1 and to pod IPs of this machine only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik8s.api import errors
from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from minik8s.cluster.processes import free_port
from minik8s.controllers.manager import ControllerOptions
from minik8s.gateway.app import Gateway, GatewayConfig, create_app
from minik8s.gateway.server import serve
from minik8s.scheduler.scheduler import Scheduler
from tests.support.controllers import controller_manager
from tests.support.hostile import oversized_head, trickled_head
from tests.support.kubelet import KubeletProcess, running_kubelet
from tests.support.processes import APIServer
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker
Obj = dict[str, Any]
CONTROLLERS = ["function", "functionautoscaler", "deployment", "replicaset", "garbagecollector"]

ECHO = '''
import os, time

def handler(event, context):
    event = event or {}
    if event.get("fail"):
        raise RuntimeError("asked to fail")
    if event.get("sleep"):
        time.sleep(event["sleep"])
    return {"echo": event, "pod": os.environ.get("HOSTNAME"), "version": 1, "ce": context.cloudevent}
'''


@pytest.fixture(scope="module")
def kubelet(apiserver: APIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeletProcess]:
    with running_kubelet(apiserver, tmp_path_factory.mktemp("fn-kubelet")) as k:
        yield k


async def start_gateway(client: Client, port: int, activation_timeout: float = 60.0
                        ) -> tuple[Gateway, Any, asyncio.Task[None]]:
    """A gateway serving on 127.0.0.1:``port`` in this event loop: (gateway, uvicorn server, task)."""
    gateway = Gateway(client, GatewayConfig(activation_timeout=activation_timeout, max_body_bytes=64 * 1024))
    server = serve(create_app(gateway), "127.0.0.1", port, header_timeout=1.0)
    serving = asyncio.get_running_loop().create_task(server.serve())
    await wait_for(lambda: server.started, 20, what="gateway listening")
    return gateway, server, serving


async def stop_gateway(server: Any, serving: asyncio.Task[None]) -> None:
    server.should_exit = True
    await asyncio.wait_for(serving, 20)


@contextlib.asynccontextmanager
async def control_plane(client: Client, namespace: str, url: str, node: str, stable_window: float = 60.0
                        ) -> AsyncIterator[None]:
    """The scheduler (placing pods on this module's kubelet only, whatever other Nodes earlier
    tests left) and the controller-manager (Function controllers scraping ``url``)."""
    scheduler = Scheduler(client, "default-scheduler", node_label_selector=f"kubernetes.io/hostname={node}")
    scheduling = asyncio.get_running_loop().create_task(scheduler.run())
    options = ControllerOptions(function_gateway_url=url, function_stable_window=stable_window)
    try:
        async with controller_manager(client, namespace, CONTROLLERS, options=options):
            yield
    finally:
        scheduling.cancel()
        await asyncio.gather(scheduling, return_exceptions=True)


@contextlib.asynccontextmanager
async def serverless(client: Client, namespace: str, node: str, stable_window: float = 60.0,
                     activation_timeout: float = 60.0) -> AsyncIterator[tuple[str, Gateway]]:
    """Scheduler, controller-manager and gateway; yields the gateway's URL and the gateway."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    gateway, server, serving = await start_gateway(client, port, activation_timeout)
    try:
        async with control_plane(client, namespace, url, node, stable_window):
            yield url, gateway
    finally:
        await stop_gateway(server, serving)


def function(name: str, source: str = ECHO, **spec: Any) -> Obj:
    return {"apiVersion": "minik8s.io/v1", "kind": "Function", "metadata": {"name": name},
            "spec": {"source": source, **spec}}


async def ready_reason(client: Client, ns: str, name: str) -> str:
    fn = await client.get(client.kind("minik8s.io/v1", "Function"), name, ns)
    cond = next((c for c in (fn.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"), {})
    return str(cond.get("reason") or "")


async def replicas(client: Client, ns: str, name: str) -> int:
    dep = await client.get(client.kind("apps/v1", "Deployment"), f"fn-{name}", ns)
    return int(dep["spec"].get("replicas") or 0)


async def test_functions_workflows_and_errors(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    fn_rt, wf_rt = client.kind("minik8s.io/v1", "Function"), client.kind("minik8s.io/v1", "Workflow")
    run_rt = client.kind("minik8s.io/v1", "WorkflowRun")
    async with serverless(client, namespace, kubelet.node) as (gw, gateway), \
            httpx.AsyncClient(base_url=gw, timeout=60) as http:
        await client.create(fn_rt, function("echo"), namespace)
        await client.create(fn_rt, function("double", "def handler(e, c):\n    return {'n': e['n'] * 2}\n"),
                            namespace)
        await client.create(fn_rt, function("broken", "def handler(e, c)\n    return 1\n"), namespace)
        for name in ("echo", "double"):
            await wait_for(lambda name=name: _reason_is(client, namespace, name, "ScaledToZero"), 30,
                           what=f"{name} deployed")
        # cold start through the activator
        started = time.monotonic()
        r = await http.post(f"/functions/{namespace}/echo", json={"hello": "world"})
        cold = time.monotonic() - started
        assert r.status_code == 200, r.text
        assert r.json()["echo"] == {"hello": "world"} and r.json()["pod"].startswith("fn-echo-")
        assert await replicas(client, namespace, "echo") == 1
        print(f"cold start {cold:.2f}s")
        # the handler raises: the runtime's 500 passes through, the instance keeps serving
        r = await http.post(f"/functions/{namespace}/echo", json={"fail": True})
        assert r.status_code == 500 and (r.json()["error"], r.json()["message"]) == ("RuntimeError", "asked to fail")
        assert (await http.post(f"/functions/{namespace}/echo", json={})).status_code == 200
        # gateway errors
        r = await http.post(f"/functions/{namespace}/nope", json={})
        assert r.status_code == 404 and r.json()["error"] == "NotFound"
        assert (await http.post(f"/functions/{namespace}/echo", content=b"{nope")).status_code == 400
        assert (await http.post(f"/functions/{namespace}/echo", content=b"x" * 70000)).status_code == 413
        await wait_for(lambda: _reason_is(client, namespace, "broken", "BuildFailed"), 30, what="BuildFailed")
        r = await http.post(f"/functions/{namespace}/broken", json={})
        assert r.status_code == 503 and r.json()["error"] == "BuildFailed" and "line 1" in r.json()["message"]
        # a handler that cannot be imported: the instance exits, the Function says LoadFailed, calls get 503
        await client.create(fn_rt, function("importer", "import minik8s_no_such_module\n"), namespace)
        await wait_for(lambda: _reason_is(client, namespace, "importer", "ScaledToZero"), 30, what="importer deployed")
        r = await http.post(f"/functions/{namespace}/importer", json={})
        assert r.status_code == 503 and r.json()["error"] == "LoadFailed", r.text
        assert "ModuleNotFoundError: No module named 'minik8s_no_such_module'" in r.json()["message"]
        assert (await http.get("/functions/x/y")).status_code == 405
        assert (await http.get("/nowhere")).status_code == 404

        # a workflow with a branch and a chain
        await client.create(wf_rt, {"apiVersion": "minik8s.io/v1", "kind": "Workflow", "metadata": {"name": "wf"},
                                    "spec": {"startAt": "Check", "states": {
                                        "Check": {"type": "Choice", "choices": [
                                            {"variable": "$.n", "numericGreaterThan": 10, "next": "Big"}],
                                            "default": "Double"},
                                        "Double": {"type": "Task", "function": "double", "next": "Again"},
                                        "Again": {"type": "Task", "function": "double", "end": True},
                                        "Big": {"type": "Pass", "result": {"big": True}, "end": True}}}},
                            namespace)
        await wait_for(lambda: gateway.workflows.get(f"{namespace}/wf") is not None, 10, what="gateway sees wf")
        r = await http.post(f"/workflows/{namespace}/wf", json={"n": 3})
        assert r.status_code == 200 and r.json()["status"] == "Succeeded" and r.json()["output"] == {"n": 12}
        run = await client.get(run_rt, r.json()["run"], namespace)
        assert [st["state"] for st in run["status"]["steps"]] == ["Check", "Double", "Again"]
        assert run["status"]["steps"][1]["input"] == {"n": 3} and run["status"]["steps"][1]["output"] == {"n": 6}
        r = await http.post(f"/workflows/{namespace}/wf", json={"n": 30})
        assert r.json()["output"] == {"big": True}
        r = await http.post(f"/workflows/{namespace}/wf", json={"n": None})
        assert r.json()["status"] == "Failed" and r.json()["error"] == "TypeError"
        assert (await http.post(f"/workflows/{namespace}/none", json={})).status_code == 404

        # PerInvocation: a fresh pod per call, deleted afterwards
        await client.create(fn_rt, function("once", mode="PerInvocation"), namespace)
        await wait_for(lambda: _reason_is(client, namespace, "once", "ScaledToZero"), 30, what="once deployed")
        first = await http.post(f"/functions/{namespace}/once", json={"a": 1})
        second = await http.post(f"/functions/{namespace}/once", json={"a": 2})
        assert first.status_code == second.status_code == 200, (first.text, second.text)
        assert first.json()["pod"].startswith("once-call-") and first.json()["pod"] != second.json()["pod"]
        assert await replicas(client, namespace, "once") == 0

        async def one_call_pods_gone() -> bool:
            listed = await client.list(client.kind("v1", "Pod"), namespace,
                                       label_selector="minik8s.io/invocation-of=once")
            return not listed["items"]

        await wait_for(one_call_pods_gone, 60, what="one-call pods deleted")

        # deleting a Function: its calls get 404
        await client.delete(fn_rt, "double", namespace)
        await wait_for(lambda: _status_is(http, f"/functions/{namespace}/double", 404), 10, what="404 after delete")


async def _status_is(http: httpx.AsyncClient, path: str, status: int) -> bool:
    return (await http.post(path, json={"n": 1})).status_code == status


async def _reason_is(client: Client, namespace: str, name: str, reason: str) -> bool:
    try:
        return await ready_reason(client, namespace, name) == reason
    except errors.NotFound:
        return False


async def test_events_fire_triggers(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    fn_rt, trig_rt = client.kind("minik8s.io/v1", "Function"), client.kind("minik8s.io/v1", "Trigger")
    async with serverless(client, namespace, kubelet.node) as (gw, gateway), \
            httpx.AsyncClient(base_url=gw, timeout=60) as http:
        await client.create(fn_rt, function("echo", scaling={"minScale": 1}), namespace)
        await wait_for(lambda: _reason_is(client, namespace, "echo", "Ready"), 60, what="echo ready")
        sub = {"ref": {"kind": "Function", "name": "echo"}}
        await client.create(trig_rt, {"metadata": {"name": "orders"},
                                      "spec": {"filter": {"attributes": {"type": "order.created"}},
                                               "subscriber": sub}}, namespace)
        await client.create(trig_rt, {"metadata": {"name": "tick"},
                                      "spec": {"schedule": "* * * * * */2", "data": {"tick": True},
                                               "subscriber": sub}}, namespace)
        await client.create(trig_rt, {"metadata": {"name": "dead"},
                                      "spec": {"filter": {"attributes": {"type": "order.created"}},
                                               "subscriber": {"ref": {"kind": "Function", "name": "missing"}},
                                               "delivery": {"retry": 1, "backoffDelaySeconds": 0.1}}}, namespace)

        await client.create(trig_rt, {"metadata": {"name": "watch"},
                                      "spec": {"objects": {"apiVersion": "v1", "kind": "ConfigMap",
                                                           "labelSelector": "watch=me"},
                                               "filter": {"attributes": {"type": "dev.minik8s.object.added"}},
                                               "subscriber": sub}}, namespace)
        await wait_for(lambda: gateway.triggers.get(f"{namespace}/dead") is not None, 10, what="gateway sees triggers")
        await wait_for(lambda: f"{namespace}/watch" in gateway.runner.sources and
                       gateway.runner.sources[f"{namespace}/watch"][1].has_synced(), 10, what="object source")
        cm_rt = client.kind("v1", "ConfigMap")
        await client.create(cm_rt, {"metadata": {"name": "ignored"}, "data": {"a": "1"}}, namespace)
        await client.create(cm_rt, {"metadata": {"name": "watched", "labels": {"watch": "me"}}, "data": {"a": "1"}},
                            namespace)
        binary = await http.post(f"/events/{namespace}", json={"order": 1},
                                 headers={"ce-specversion": "1.0", "ce-id": "a1", "ce-type": "order.created",
                                          "ce-source": "/shop"})
        assert binary.status_code == 202 and binary.json()["triggers"] == ["dead", "orders"]
        structured = await http.post(f"/events/{namespace}", headers={"content-type": "application/cloudevents+json"},
                                     json={"specversion": "1.0", "id": "a2", "type": "order.created",
                                           "source": "/shop", "datacontenttype": "application/json",
                                           "data": {"order": 2}})
        assert structured.status_code == 202 and structured.json()["triggers"] == ["dead", "orders"]
        other = await http.post(f"/events/{namespace}", json={}, headers={
            "ce-specversion": "1.0", "ce-id": "a3", "ce-type": "order.cancelled", "ce-source": "/shop"})
        assert other.json()["triggers"] == []
        bad = await http.post(f"/events/{namespace}", json={"no": "attributes"})
        assert bad.status_code == 400

        async def counted(name: str, field: str, n: int) -> bool:
            st = (await client.get(trig_rt, name, namespace)).get("status") or {}
            return int(st.get(field) or 0) >= n

        await wait_for(lambda: counted("orders", "delivered", 2), 30, what="two orders delivered")
        await wait_for(lambda: counted("dead", "failed", 2), 30, what="two failed deliveries counted")
        await wait_for(lambda: counted("tick", "delivered", 2), 30, what="the schedule fired twice")
        await wait_for(lambda: counted("watch", "delivered", 1), 30, what="the object change delivered")
        # the next labelled ConfigMap is the second delivery: the unlabelled one (created before) never came
        await client.create(cm_rt, {"metadata": {"name": "watched2", "labels": {"watch": "me"}}}, namespace)
        await wait_for(lambda: counted("watch", "delivered", 2), 30, what="the second object change delivered")
        assert (await client.get(trig_rt, "watch", namespace))["status"]["delivered"] == 2
        st = (await client.get(trig_rt, "dead", namespace))["status"]
        assert "missing" in st["lastFailure"]
        events = (await client.list(client.kind("v1", "Event"), namespace))["items"]
        assert any(e["reason"] == "DeliveryFailed" and e["involvedObject"]["name"] == "dead" for e in events)


async def test_scale_out_under_load_and_back_to_zero(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    fn_rt = client.kind("minik8s.io/v1", "Function")
    async with serverless(client, namespace, kubelet.node, stable_window=10.0) as (gw, _gateway), \
            httpx.AsyncClient(base_url=gw, timeout=60, limits=httpx.Limits(max_connections=50)) as http:
        await client.create(fn_rt, function("busy", scaling={"targetConcurrency": 1, "maxScale": 4,
                                                             "scaleToZeroAfterSeconds": 3}), namespace)
        await wait_for(lambda: _reason_is(client, namespace, "busy", "ScaledToZero"), 30, what="deployed")
        failures: list[int] = []
        pods: set[str] = set()
        stop_at = time.monotonic() + 14

        async def caller() -> None:
            while time.monotonic() < stop_at:
                r = await http.post(f"/functions/{namespace}/busy", json={"sleep": 0.3})
                if r.status_code != 200:
                    failures.append(r.status_code)
                else:
                    pods.add(r.json()["pod"])

        await asyncio.gather(*(caller() for _ in range(6)))
        assert failures == []
        peak = await replicas(client, namespace, "busy")
        assert len(pods) > 1 and peak > 1, (pods, peak)
        # idle: back to zero within scaleToZeroAfterSeconds + one stable window (+ ticks)
        await wait_for(lambda: _replicas_are(client, namespace, "busy", 0), 30, what="scaled to zero")
        await wait_for(lambda: _reason_is(client, namespace, "busy", "ScaledToZero"), 20, what="status scaled to zero")


async def _replicas_are(client: Client, namespace: str, name: str, n: int) -> bool:
    return await replicas(client, namespace, name) == n


async def test_rolling_update_has_no_failed_calls(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    fn_rt = client.kind("minik8s.io/v1", "Function")
    async with serverless(client, namespace, kubelet.node) as (gw, gateway), \
            httpx.AsyncClient(base_url=gw, timeout=60) as http:
        await client.create(fn_rt, function("roll", scaling={"minScale": 1}), namespace)
        await wait_for(lambda: _reason_is(client, namespace, "roll", "Ready"), 60, what="ready")
        versions: list[int] = []
        failures: list[str] = []
        done = asyncio.Event()

        async def caller() -> None:
            while not done.is_set():
                r = await http.post(f"/functions/{namespace}/roll", json={})
                if r.status_code == 200:
                    versions.append(r.json()["version"])
                else:
                    failures.append(f"{r.status_code} {r.text}")
                await asyncio.sleep(0.02)

        callers = [asyncio.get_running_loop().create_task(caller()) for _ in range(3)]
        await wait_for(lambda: len(versions) > 10, 20, what="calls flowing")
        live = await client.get(fn_rt, "roll", namespace)
        live["spec"]["source"] = ECHO.replace('"version": 1', '"version": 2')
        await client.update(fn_rt, live)
        await wait_for(lambda: versions[-5:] == [2] * 5, 60, what="new revision answering")

        async def old_pods_gone() -> bool:
            pods = (await client.list(client.kind("v1", "Pod"), namespace, label_selector="minik8s.io/function=roll"))
            return len(pods["items"]) == 1

        await wait_for(old_pods_gone, 60, what="old revision's pod gone")
        await asyncio.sleep(0.5)
        done.set()
        await asyncio.gather(*callers)
        assert failures == [] and 1 in versions and 2 in versions


async def test_gateway_refuses_hostile_clients(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    async with serverless(client, namespace, kubelet.node) as (gw, _gateway):
        host, port = gw.removeprefix("http://").split(":")
        closed_after = await trickled_head(host, int(port), 5, interval=0.2)
        assert closed_after is not None and closed_after < 3
        head = await oversized_head(host, int(port), 100 * 1024)
        assert head == b"HTTP/1.1 431 Request Header Fields Too Large", head
        async with httpx.AsyncClient(base_url=gw, timeout=10) as http:
            for method, path, body in (("POST", "/events/ns", b"\xff\xfe"), ("POST", "/workflows/ns/x", b"[[["),
                                       ("POST", "/functions/%00/x", b"{}"), ("PUT", "/metrics", b""),
                                       ("POST", "/functions/ns/" + "a" * 5000, b"{}")):
                r = await http.request(method, path, content=body)
                assert r.status_code < 500 or r.status_code in (502, 503), (path, r.status_code, r.text)
                assert r.headers["content-type"].startswith("application/json")
            assert (await http.get("/healthz")).json() == {"status": "ok"}


async def test_kubectl_serverless_verbs(kubelet: KubeletProcess, client: Client, namespace: str,
                                        apiserver: APIServer, tmp_path: Path) -> None:
    from tests.support.kubectl import Kubectl, assert_one_error_line

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(render(apiserver.url))
    kubectl = Kubectl(kubeconfig, namespace)
    app = tmp_path / "app"
    app.mkdir()
    (app / "shop.py").write_text("import util\n\ndef handler(event, context):\n    print('order', event)\n"
                                 "    return util.total(event)\n")
    (app / "util.py").write_text("def total(e):\n    return {'total': sum(e['items'])}\n")
    broken = tmp_path / "broken.py"
    broken.write_text("def handler(event, context):\n    return (\n")
    async with serverless(client, namespace, kubelet.node) as (gw, gateway):

        def run(*args: str) -> Any:
            return kubectl(*args, timeout=120)

        res = await asyncio.to_thread(run, "function", "deploy", "shop", "--from", str(app))
        assert res.code == 0, res.err
        assert res.lines[0] == "function.minik8s.io/shop created" and "is ready (ScaledToZero)" in res.lines[1]
        fn = await client.get(client.kind("minik8s.io/v1", "Function"), "shop", namespace)
        assert fn["spec"]["handler"] == "shop.handler" and set(fn["spec"]["files"]) == {"shop.py", "util.py"}
        res = await asyncio.to_thread(run, "function", "invoke", "shop", "-d", '{"items": [1, 2, 3]}',
                                      "--gateway", gw)
        assert res.code == 0, res.err
        assert json.loads(res.out) == {"total": 6}
        res = await asyncio.to_thread(run, "function", "invoke", "shop", "-d", "{}", "--gateway", gw)
        assert_one_error_line(res, "500 KeyError")
        res = await asyncio.to_thread(run, "function", "logs", "shop")
        assert res.code == 0 and any(line.startswith("[fn-shop-") and "order {'items': [1, 2, 3]}" in line
                                     for line in res.lines), res.out
        res = await asyncio.to_thread(run, "function", "deploy", "bad", "--from", str(broken))
        assert_one_error_line(res, "function bad: BuildFailed: syntax error in main.py, line 2")
        await client.create(client.kind("minik8s.io/v1", "Workflow"), {
            "metadata": {"name": "checkout"}, "spec": {"startAt": "Total", "states": {
                "Total": {"type": "Task", "function": "shop", "end": True}}}}, namespace)
        await wait_for(lambda: gateway.workflows.get(f"{namespace}/checkout") is not None, 10, what="workflow seen")
        res = await asyncio.to_thread(run, "workflow", "run", "checkout", "-d", '{"items": [5]}', "--gateway", gw)
        assert res.code == 0, res.err
        assert json.loads(res.out)["output"] == {"total": 5}
        res = await asyncio.to_thread(run, "event", "send", "--type", "nobody.listens", "-d", "{}", "--gateway", gw)
        assert res.code == 0 and json.loads(res.out)["triggers"] == []
        res = await asyncio.to_thread(run, "function", "invoke", "shop", "-d", "{not json")
        assert_one_error_line(res, "the input is not JSON")


async def test_gateway_restart_during_calls(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    """Callers get at most an error for calls in flight; no pod leaks; scale to zero still happens."""
    fn_rt = client.kind("minik8s.io/v1", "Function")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    gateway, server, serving = await start_gateway(client, port)
    async with control_plane(client, namespace, url, kubelet.node, stable_window=6.0):
        try:
            await client.create(fn_rt, function("steady", scaling={"scaleToZeroAfterSeconds": 2}), namespace)
            await wait_for(lambda: _reason_is(client, namespace, "steady", "ScaledToZero"), 30, what="deployed")
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                assert (await http.post(f"/functions/{namespace}/steady", json={})).status_code == 200
                calls = [asyncio.get_running_loop().create_task(
                    http.post(f"/functions/{namespace}/steady", json={"sleep": 1.5})) for _ in range(3)]
                key = f"{namespace}/steady"
                await wait_for(lambda: sum(b.in_flight for b in gateway.backends.by_function.get(key, {}).values())
                               == 3, 10, what="three calls at the instance")
                await stop_gateway(server, serving)
                outcomes = await asyncio.gather(*calls, return_exceptions=True)
                assert all(isinstance(o, httpx.HTTPError) or o.status_code in (200, 502, 503) for o in outcomes)
                gateway, server, serving = await start_gateway(client, port)
                r = await http.post(f"/functions/{namespace}/steady", json={})
                assert r.status_code == 200, r.text
            await wait_for(lambda: _replicas_are(client, namespace, "steady", 0), 60, what="scaled to zero")

            async def no_pods() -> bool:
                return not (await client.list(client.kind("v1", "Pod"), namespace,
                                              label_selector="minik8s.io/function=steady"))["items"]

            await wait_for(no_pods, 60, what="no function pod left")
        finally:
            await stop_gateway(server, serving)
