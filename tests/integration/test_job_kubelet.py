"""A Job's pod really runs: the Job controller in-process, a real kubelet on Docker (``minik8s/busybox``)."""

from __future__ import annotations

from minik8s.api.base import Obj
from minik8s.client.rest import Client
from tests.support.controllers import controller_manager
from tests.support.kubelet import BUSYBOX, KubeletProcess
from tests.support.waiting import wait_for


async def test_job_pod_exits_zero_and_the_job_completes(client: Client, namespace: str,
                                                        kubelet: KubeletProcess) -> None:
    rt = client.kind("batch/v1", "Job")
    body: Obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "zero"},
                 "spec": {"template": {"spec": {
                     "nodeName": kubelet.node, "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "main", "image": BUSYBOX, "command": ["sh", "-c", "exit 0"]}]}}}}
    async with controller_manager(client, namespace, ["job"]):
        await client.create(rt, body, namespace)

        async def complete() -> Obj | None:
            job = await client.get(rt, "zero", namespace)
            done = any(c["type"] == "Complete" and c["status"] == "True"
                       for c in (job.get("status") or {}).get("conditions") or [])
            return job if done else None

        job = await wait_for(complete, timeout=30, interval=0.2, what="the Job Complete")
        assert job["status"]["succeeded"] == 1 and job["status"]["failed"] == 0
        pods = (await client.list(client.kind("v1", "Pod"), namespace, label_selector="job-name=zero"))["items"]
        assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
        state = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
        assert state["exitCode"] == 0


async def test_an_exit_code_matching_a_fail_job_rule_fails_the_job(client: Client, namespace: str,
                                                                   kubelet: KubeletProcess) -> None:
    """The kubelet's terminated state (exit code 42 of container ``main``) is what the rule matches."""
    rt = client.kind("batch/v1", "Job")
    rule = {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}
    body: Obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "answer"},
                 "spec": {"backoffLimit": 3, "podFailurePolicy": {"rules": [rule]},
                     "template": {"spec": {
                         "nodeName": kubelet.node, "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                         "containers": [{"name": "main", "image": BUSYBOX, "command": ["sh", "-c", "exit 42"]}]}}}}
    async with controller_manager(client, namespace, ["job"]):
        await client.create(rt, body, namespace)

        async def failed() -> Obj | None:
            job = await client.get(rt, "answer", namespace)
            done = any(c["type"] == "Failed" and c["status"] == "True"
                       for c in (job.get("status") or {}).get("conditions") or [])
            return job if done else None

        job = await wait_for(failed, timeout=30, interval=0.2, what="the Job Failed")
        pods = (await client.list(client.kind("v1", "Pod"), namespace, label_selector="job-name=answer"))["items"]
        assert len(pods) == 1  # failed at once: no retry within the backoffLimit
        condition = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
        assert (condition["reason"], condition["message"]) == (
            "PodFailurePolicy", f"Container main for pod {namespace}/{pods[0]['metadata']['name']} failed with exit "
                                "code 42 matching FailJob rule at index 0")
