"""The Function controller over the real apiserver: revision ConfigMaps, Deployment, Service, status,
BuildFailed on syntax errors and failed requirements, rollouts, garbage collection.

Pods are run by the kubelet/scheduler stand-in of the controller tests (SimulatedNode); the
runtime itself is tested in Docker by test_function_runtime.py.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import errors
from minik8s.client.rest import Client
from minik8s.fnruntime import RUNTIME_FILE
from tests.support.controllers import SimulatedNode, controller_manager
from tests.support.waiting import wait_for

Obj = dict[str, Any]
CONTROLLERS = ["function", "deployment", "replicaset", "garbagecollector"]
GOOD = "def handler(event, context):\n    return {'n': event}\n"


def function(source: str = GOOD, **spec: Any) -> Obj:
    return {"apiVersion": "minik8s.io/v1", "kind": "Function", "metadata": {"name": "hello"},
            "spec": {"source": source, **spec}}


async def status_of(client: Client, ns: str) -> Obj:
    return (await client.get(client.kind("minik8s.io/v1", "Function"), "hello", ns)).get("status") or {}


def ready(status: Obj) -> tuple[str, str, str]:
    cond = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
    return cond.get("status", ""), cond.get("reason", ""), cond.get("message", "")


async def test_function_lifecycle(client: Client, namespace: str) -> None:
    fn_rt, dep_rt = client.kind("minik8s.io/v1", "Function"), client.kind("apps/v1", "Deployment")
    cm_rt, svc_rt = client.kind("v1", "ConfigMap"), client.kind("v1", "Service")
    async with SimulatedNode(client, namespace), controller_manager(client, namespace, CONTROLLERS):
        fn = await client.create(fn_rt, function(), namespace)

        async def scaled_to_zero() -> bool:
            return ready(await status_of(client, namespace))[1] == "ScaledToZero"

        await wait_for(scaled_to_zero, 20, what="Function Ready (scaled to zero)")
        status = await status_of(client, namespace)
        rev = status["revision"]
        assert rev.startswith("hello-") and status["observedGeneration"] == 1
        assert status["url"] == f"http://127.0.0.1:8081/functions/{namespace}/hello"
        assert (status["instances"], status["readyInstances"]) == (0, 0)
        code = await client.get(cm_rt, rev, namespace)
        assert code["data"]["main.py"] == GOOD and RUNTIME_FILE in code["data"] and code["immutable"] is True
        dep = await client.get(dep_rt, "fn-hello", namespace)
        assert dep["spec"]["replicas"] == 0
        template = dep["spec"]["template"]
        assert template["metadata"]["labels"] == {"minik8s.io/function": "hello", "minik8s.io/revision": rev}
        container = template["spec"]["containers"][0]
        assert container["image"] == "minik8s/python:latest"
        assert template["spec"]["volumes"][0]["configMap"]["name"] == rev
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["MINIK8S_HANDLER"] == "main.handler" and env["MINIK8S_REVISION"] == rev
        svc = await client.get(svc_rt, "fn-hello", namespace)
        assert svc["spec"]["selector"] == {"minik8s.io/function": "hello"}
        for child in (code, dep, svc):
            ref = child["metadata"]["ownerReferences"][0]
            assert (ref["kind"], ref["uid"], ref["controller"]) == ("Function", fn["metadata"]["uid"], True)

        # what the autoscaler (or the gateway's activator) does: one instance
        await client.patch(dep_rt, "fn-hello", {"spec": {"replicas": 1}}, namespace)

        async def one_ready() -> bool:
            st = await status_of(client, namespace)
            return st.get("readyInstances") == 1 and ready(st)[:2] == ("True", "Ready")

        await wait_for(one_ready, 20, what="one ready instance")

        # a syntax error: BuildFailed with the line, the running revision stays
        live = await client.get(fn_rt, "hello", namespace)
        live["spec"]["source"] = "def handler(event, context):\n    return {'n': event\n"
        await client.update(fn_rt, live)

        async def build_failed() -> bool:
            return ready(await status_of(client, namespace))[1] == "BuildFailed"

        await wait_for(build_failed, 20, what="BuildFailed")
        status = await status_of(client, namespace)
        assert "main.py, line 2" in ready(status)[2] and status["revision"] == rev
        dep = await client.get(dep_rt, "fn-hello", namespace)
        assert dep["spec"]["template"]["metadata"]["labels"]["minik8s.io/revision"] == rev
        assert dep["spec"]["replicas"] == 1

        # fixed: a new revision rolls out, keeping the replicas; the old ConfigMap goes when its pods are gone
        live = await client.get(fn_rt, "hello", namespace)
        live["spec"]["source"] = "def handler(event, context):\n    return 2\n"
        await client.update(fn_rt, live)

        async def rolled() -> bool:
            st = await status_of(client, namespace)
            return st.get("revision") not in (None, rev) and ready(st)[:2] == ("True", "Ready") and \
                st.get("observedGeneration") == 3

        await wait_for(rolled, 30, what="new revision ready")
        new_rev = (await status_of(client, namespace))["revision"]
        dep = await client.get(dep_rt, "fn-hello", namespace)
        assert dep["spec"]["replicas"] == 1
        assert dep["spec"]["template"]["metadata"]["labels"]["minik8s.io/revision"] == new_rev

        async def old_code_collected() -> bool:
            names = {c["metadata"]["name"] for c in (await client.list(cm_rt, namespace))["items"]}
            return rev not in names and new_rev in names

        await wait_for(old_code_collected, 30, what="old revision ConfigMap deleted")

        # deleting the Function removes everything it owns
        await client.delete(fn_rt, "hello", namespace)

        async def collected() -> bool:
            for rt, name in ((dep_rt, "fn-hello"), (svc_rt, "fn-hello"), (cm_rt, new_rev)):
                try:
                    await client.get(rt, name, namespace)
                    return False
                except errors.NotFound:
                    pass
            return True

        await wait_for(collected, 30, what="children garbage-collected")


async def test_requirements_are_built_once_per_revision(client: Client, namespace: str) -> None:
    fn_rt, dep_rt = client.kind("minik8s.io/v1", "Function"), client.kind("apps/v1", "Deployment")
    cm_rt = client.kind("v1", "ConfigMap")
    async with controller_manager(client, namespace, ["function"]):
        await client.create(fn_rt, function(requirements=["minik8s-no-such-package-xyz==0.0.1"]), namespace)

        async def failed() -> bool:
            return ready(await status_of(client, namespace))[1] == "BuildFailed"

        await wait_for(failed, 120, what="BuildFailed for a missing package")
        message = ready(await status_of(client, namespace))[2]
        assert message.startswith("pip install failed: ERROR:") and "minik8s-no-such-package-xyz" in message
        live = await client.get(fn_rt, "hello", namespace)
        live["spec"]["requirements"] = ["six==1.16.0"]
        await client.update(fn_rt, live)

        async def deployed() -> bool:
            st = await status_of(client, namespace)
            return ready(st)[1] == "ScaledToZero" and st.get("observedGeneration") == 2

        await wait_for(deployed, 180, what="requirements built and deployed")
        rev = (await status_of(client, namespace))["revision"]
        part = await client.get(cm_rt, f"{rev}-deps-0", namespace)
        assert part["metadata"]["annotations"]["minik8s.io/parts"] == "1" and part["binaryData"]["deps.part"]
        spec = (await client.get(dep_rt, "fn-hello", namespace))["spec"]["template"]["spec"]
        (init,) = spec["initContainers"]
        assert init["command"][-3:] == ["--unpack", "/var/run/minik8s/deps-parts", "/var/run/minik8s/deps"]
        assert any(v["name"] == "deps-0" and v["configMap"]["name"] == f"{rev}-deps-0" for v in spec["volumes"])
        code = await client.get(cm_rt, rev, namespace)
        assert code["data"][".minik8s-requirements.txt"] == "six==1.16.0\n"
