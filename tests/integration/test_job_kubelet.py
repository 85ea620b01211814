"""A Job's pod really runs: the Job controller in-process, a real kubelet on Docker (``minik8s/busybox``)."""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.support.controllers import controller_manager
from tests.support.kubelet import BUSYBOX, KubeletProcess
from tests.support.waiting import wait_for


def shell_job(name: str, node: str, script: str, **spec: Any) -> Obj:
    """A Job of one ``main`` container running ``sh -c script`` on ``node``."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {**spec, "template": {"spec": {
                "nodeName": node, "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "main", "image": BUSYBOX, "command": ["sh", "-c", script]}]}}}}


async def run_until(client: Client, namespace: str, body: Obj, type_: str) -> tuple[Obj, list[Obj]]:
    """Create the Job, wait for its condition ``type_`` True; the Job and its pods then."""
    rt = client.kind("batch/v1", "Job")
    name = body["metadata"]["name"]
    async with controller_manager(client, namespace, ["job"]):
        await client.create(rt, body, namespace)

        async def finished() -> Obj | None:
            job = await client.get(rt, name, namespace)
            done = any(c["type"] == type_ and c["status"] == "True"
                       for c in (job.get("status") or {}).get("conditions") or [])
            return job if done else None

        job = await wait_for(finished, timeout=30, interval=0.2, what=f"the Job {type_}")
        pods = (await client.list(client.kind("v1", "Pod"), namespace, label_selector=f"job-name={name}"))["items"]
        return job, pods


async def test_job_pod_exits_zero_and_the_job_completes(client: Client, namespace: str,
                                                        kubelet: KubeletProcess) -> None:
    job, pods = await run_until(client, namespace, shell_job("zero", kubelet.node, "exit 0"), "Complete")
    assert job["status"]["succeeded"] == 1 and job["status"]["failed"] == 0
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    state = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert state["exitCode"] == 0


async def test_an_exit_code_matching_a_fail_job_rule_fails_the_job(client: Client, namespace: str,
                                                                   kubelet: KubeletProcess) -> None:
    """The kubelet's terminated state (exit code 42 of container ``main``) is what the rule matches."""
    rule = {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}
    body = shell_job("answer", kubelet.node, "exit 42", backoffLimit=3, podFailurePolicy={"rules": [rule]})
    job, pods = await run_until(client, namespace, body, "Failed")
    assert len(pods) == 1  # failed at once: no retry within the backoffLimit
    condition = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (condition["reason"], condition["message"]) == (
        "PodFailurePolicy", f"Container main for pod {namespace}/{pods[0]['metadata']['name']} failed with exit "
                            "code 42 matching FailJob rule at index 0")
