"""The Job controller against a real apiserver (controller-manager in-process; pods finished by
writing their status as a kubelet would, so no Docker is needed)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.rest import Client
from minik8s.controllers.manager import ControllerOptions
from tests.support.controllers import controller_manager, events_for, finish, finish_deletion, mark_running
from tests.support.waiting import wait_for

FAST = ControllerOptions(job_backoff_base=0.2, job_backoff_max=1.0)


def job(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "minik8s/busybox", "command": ["sh", "-c", "exit 0"]}]}}, **spec}}


async def job_pods(client: Client, ns: str, name: str) -> list[Obj]:
    items = (await client.list(client.kind("v1", "Pod"), ns, label_selector=f"job-name={name}"))["items"]
    return sorted(items, key=lambda p: p["metadata"]["creationTimestamp"] + p["metadata"]["name"])


def active(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


async def get_job(client: Client, ns: str, name: str) -> Obj:
    return await client.get(client.kind("batch/v1", "Job"), name, ns)


def cond(obj: Obj, type_: str) -> Obj | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


async def reasons(client: Client, ns: str, name: str) -> set[str]:
    return {e["reason"] for e in await events_for(client, ns, name)}


async def test_runs_to_complete_with_parallelism(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    async with controller_manager(client, namespace, ["job"]):
        created = await client.create(rt, job("pi", completions=3, parallelism=2), namespace)
        uid = created["metadata"]["uid"]
        finished = 0
        most_active = 0
        while finished < 3:
            expected = min(2, 3 - finished)
            running = await wait_for(lambda n=expected: _active(client, namespace, "pi", n), what="the next pods")
            most_active = max(most_active, len(running))
            pod = running[0]
            assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi",
                                                           "uid": uid, "controller": True,
                                                           "blockOwnerDeletion": True}]
            labels = pod["metadata"]["labels"]
            assert labels["batch.kubernetes.io/controller-uid"] == uid and labels["job-name"] == "pi"
            await mark_running(client, pod)
            await finish(client, pod)
            finished += 1
        assert most_active == 2
        done = await wait_for(lambda: _with_condition(client, namespace, "pi", "Complete"), what="Complete")
        status = done["status"]
        assert status["succeeded"] == 3 and status["active"] == 0 and status["failed"] == 0
        assert status["startTime"] and status["completionTime"]
        assert cond(done, "SuccessCriteriaMet")["status"] == "True"
        assert len(await job_pods(client, namespace, "pi")) == 3
        await wait_for(lambda: _has_reasons(client, namespace, "pi", {"SuccessfulCreate", "Completed"}),
                       what="events")


async def _active(client: Client, ns: str, name: str, n: int) -> list[Obj] | bool:
    """The Job's active pods once there are ``n`` (True for none), else False."""
    pods = active(await job_pods(client, ns, name))
    if len(pods) != n:
        return False
    return pods or True


async def _with_condition(client: Client, ns: str, name: str, type_: str) -> Obj | None:
    obj = await get_job(client, ns, name)
    c = cond(obj, type_)
    return obj if c and c["status"] == "True" else None


async def _has_reasons(client: Client, ns: str, name: str, wanted: set[str]) -> bool:
    return wanted <= await reasons(client, ns, name)


async def test_failures_retry_then_backoff_limit_exceeded(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    async with controller_manager(client, namespace, ["job"], options=FAST):
        await client.create(rt, job("flaky", backoffLimit=1), namespace)
        first = (await wait_for(lambda: _active(client, namespace, "flaky", 1), what="a pod"))[0]
        await finish(client, first, "Failed")
        second = (await wait_for(lambda: _active(client, namespace, "flaky", 1), what="a replacement pod"))[0]
        assert second["metadata"]["uid"] != first["metadata"]["uid"]
        await finish(client, second, "Failed")
        failed = await wait_for(lambda: _with_condition(client, namespace, "flaky", "Failed"), what="Failed")
        assert cond(failed, "Failed")["reason"] == "BackoffLimitExceeded"
        assert cond(failed, "FailureTarget")["reason"] == "BackoffLimitExceeded"
        assert failed["status"]["failed"] == 2 and failed["status"]["active"] == 0
        assert "completionTime" not in failed["status"]
        assert len(await job_pods(client, namespace, "flaky")) == 2  # no third pod
        await wait_for(lambda: _has_reasons(client, namespace, "flaky", {"BackoffLimitExceeded"}), what="event")


async def test_active_deadline_fails_the_job_and_deletes_its_pods(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    async with controller_manager(client, namespace, ["job"]):
        await client.create(rt, job("slow", activeDeadlineSeconds=1), namespace)
        await wait_for(lambda: _active(client, namespace, "slow", 1), what="a pod")
        failed = await wait_for(lambda: _with_condition(client, namespace, "slow", "Failed"), what="Failed")
        assert cond(failed, "Failed")["reason"] == "DeadlineExceeded"
        assert cond(failed, "Failed")["message"] == "Job was active longer than specified deadline"
        await wait_for(lambda: _active(client, namespace, "slow", 0), what="the pod deleted")
        await wait_for(lambda: _has_reasons(client, namespace, "slow", {"DeadlineExceeded", "SuccessfulDelete"}),
                       what="events")


async def test_suspend_and_resume(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    async with controller_manager(client, namespace, ["job"]):
        await client.create(rt, job("later", suspend=True, parallelism=2, completions=4), namespace)
        suspended = await wait_for(lambda: _with_condition(client, namespace, "later", "Suspended"),
                                   what="Suspended")
        assert cond(suspended, "Suspended")["reason"] == "JobSuspended"
        assert "startTime" not in suspended["status"]
        assert await job_pods(client, namespace, "later") == []
        await client.patch(rt, "later", {"spec": {"suspend": False}}, namespace)
        await wait_for(lambda: _active(client, namespace, "later", 2), what="2 pods after resuming")

        async def resumed_job() -> Obj | None:  # the pods are made before the status that says so is written
            obj = await get_job(client, namespace, "later")
            return obj if cond(obj, "Suspended")["status"] == "False" else None
        resumed = await wait_for(resumed_job, what="Suspended False")
        assert cond(resumed, "Suspended")["reason"] == "JobResumed"
        assert resumed["status"]["startTime"]
        await client.patch(rt, "later", {"spec": {"suspend": True}}, namespace)
        await wait_for(lambda: _active(client, namespace, "later", 0), what="pods deleted on suspend")
        await wait_for(lambda: _with_condition(client, namespace, "later", "Suspended"), what="Suspended again")


async def test_ttl_after_finished_deletes_the_job_and_its_pods(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    # the Job's life is watched, not polled: one second after Complete it is gone, and a loaded
    # machine may not poll inside that second
    seen: list[tuple[str, list[str]]] = []

    async def record() -> None:
        async for ev in client.watch(rt, namespace, field_selector="metadata.name=once", timeout_seconds=60):
            conditions = [c["type"] for c in (ev["object"].get("status") or {}).get("conditions") or []
                          if c.get("status") == "True"]
            seen.append((ev["type"], conditions))
            if ev["type"] == "DELETED":
                return

    async with controller_manager(client, namespace, ["job", "garbagecollector"]):
        watching = asyncio.create_task(record())
        await client.create(rt, job("once", ttlSecondsAfterFinished=1), namespace)
        pod = (await wait_for(lambda: _active(client, namespace, "once", 1), what="a pod"))[0]
        await finish(client, pod)
        await asyncio.wait_for(watching, 30)  # the Job deleted after its TTL
        completed = [i for i, (_, conditions) in enumerate(seen) if "Complete" in conditions]
        assert completed and seen[-1][0] == "DELETED" and completed[0] < len(seen) - 1, seen
        await wait_for(lambda: _no_pods(client, namespace, "once"), what="its pods collected")


async def _no_pods(client: Client, ns: str, name: str) -> bool:
    return not await job_pods(client, ns, name)


async def test_indexed_completion_mode(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    async with controller_manager(client, namespace, ["job"], options=FAST):
        await client.create(rt, job("idx", completions=3, parallelism=3, completionMode="Indexed"), namespace)
        pods = await wait_for(lambda: _active(client, namespace, "idx", 3), what="3 indexed pods")
        indexes = sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods)
        assert indexes == ["0", "1", "2"]
        for p in pods:
            index = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
            assert p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == index
            assert p["metadata"]["name"].startswith(f"idx-{index}-")
            assert p["spec"]["hostname"] == f"idx-{index}"
            assert {"name": "JOB_COMPLETION_INDEX", "value": index} in p["spec"]["containers"][0]["env"]
        by_index = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in pods}
        await finish(client, by_index["1"], "Failed")  # index 1 gets a new pod
        again = await wait_for(lambda: _active(client, namespace, "idx", 3), what="index 1 again")
        assert sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
                      for p in again) == ["0", "1", "2"]
        for p in again:
            await finish(client, p)
        done = await wait_for(lambda: _with_condition(client, namespace, "idx", "Complete"), what="Complete")
        assert done["status"]["completedIndexes"] == "0-2"
        assert done["status"]["succeeded"] == 3 and done["status"]["failed"] == 1


@pytest.mark.parametrize("policy", ["Always", None])
async def test_restart_policy_must_be_never_or_on_failure(client: Client, namespace: str,
                                                          policy: str | None) -> None:
    body = job("bad")
    if policy is None:
        del body["spec"]["template"]["spec"]["restartPolicy"]
    else:
        body["spec"]["template"]["spec"]["restartPolicy"] = policy
    with pytest.raises(errors.Invalid) as info:
        await client.create(client.kind("batch/v1", "Job"), body, namespace)
    assert "spec.template.spec.restartPolicy" in info.value.message
    assert 'supported values: "OnFailure", "Never"' in info.value.message


# ------------------------------------------------------------------ failure and success policies
INDEX = "batch.kubernetes.io/job-completion-index"
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
DISRUPTED = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
              "message": "Preempted", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def reason_message(obj: Obj, type_: str) -> tuple[str, str] | None:
    c = cond(obj, type_)
    return (c["reason"], c["message"]) if c else None


def by_index(pods: list[Obj]) -> dict[str, Obj]:
    return {p["metadata"]["annotations"][INDEX]: p for p in pods}


async def _index_pod(client: Client, ns: str, name: str, index: str, not_uid: str) -> Obj | None:
    """The active pod of ``index`` once it is not the pod ``not_uid``."""
    found = by_index(active(await job_pods(client, ns, name))).get(index)
    return found if found is not None and found["metadata"]["uid"] != not_uid else None


async def test_pod_failure_policy_ignores_disruptions_and_fails_the_job_on_an_exit_code(
        client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In",
                                                              "values": [42]}},
                        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    async with controller_manager(client, namespace, ["job"], options=FAST):
        created = await client.create(rt, job("pfp", backoffLimit=0, podFailurePolicy=policy), namespace)
        assert created["spec"]["podReplacementPolicy"] == "Failed"
        assert created["spec"]["podFailurePolicy"]["rules"][1]["onPodConditions"][0]["status"] == "True"
        first = (await wait_for(lambda: _active(client, namespace, "pfp", 1), what="a pod"))[0]
        await finish(client, first, "Failed", exit_code=137, conditions=DISRUPTED)  # ignored: not counted
        second = (await wait_for(lambda: _active(client, namespace, "pfp", 1), what="a replacement"))[0]
        assert second["metadata"]["uid"] != first["metadata"]["uid"]
        assert (await get_job(client, namespace, "pfp"))["status"]["failed"] == 0
        await finish(client, second, "Failed", exit_code=42)
        failed = await wait_for(lambda: _with_condition(client, namespace, "pfp", "Failed"), what="Failed")
        message = (f"Container main for pod {namespace}/{second['metadata']['name']} failed with exit code 42 "
                   "matching FailJob rule at index 0")
        for type_ in ("FailureTarget", "Failed"):
            assert reason_message(failed, type_) == ("PodFailurePolicy", message)
        assert failed["status"]["failed"] == 1 and failed["status"]["active"] == 0
        await wait_for(lambda: _has_reasons(client, namespace, "pfp", {"PodFailurePolicy"}), what="event")
    body = job("pfp-bad", podFailurePolicy=policy)
    body["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    with pytest.raises(errors.Invalid) as info:
        await client.create(rt, body, namespace)
    assert 'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when ' \
           "podFailurePolicy is specified" in info.value.message


async def test_with_a_pod_failure_policy_a_terminating_pod_is_replaced_once_gone(client: Client,
                                                                                namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    async with controller_manager(client, namespace, ["job"], options=FAST):
        await client.create(rt, job("slowgo", podFailurePolicy=policy), namespace)
        pod = (await wait_for(lambda: _active(client, namespace, "slowgo", 1), what="a pod"))[0]
        await mark_running(client, pod)  # bound: its deletion is graceful
        await client.delete(client.kind("v1", "Pod"), pod["metadata"]["name"], namespace)
        await wait_for(lambda: _status_field(client, namespace, "slowgo", "terminating", 1), what="terminating 1")
        assert len(await job_pods(client, namespace, "slowgo")) == 1  # not replaced while terminating
        await finish_deletion(client, await client.get(client.kind("v1", "Pod"), pod["metadata"]["name"], namespace))
        await wait_for(lambda: _active(client, namespace, "slowgo", 1), what="the replacement")


async def _status_field(client: Client, ns: str, name: str, field: str, value: Any) -> bool:
    return (await get_job(client, ns, name))["status"].get(field) == value


async def test_backoff_limit_per_index_fails_an_index_then_the_job(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    async with controller_manager(client, namespace, ["job"], options=FAST):
        created = await client.create(rt, job("bli", completions=3, parallelism=3, completionMode="Indexed",
                                              backoffLimitPerIndex=1), namespace)
        assert created["spec"]["backoffLimit"] == 2**31 - 1
        pods = by_index(await wait_for(lambda: _active(client, namespace, "bli", 3), what="3 indexed pods"))
        assert pods["1"]["metadata"]["annotations"][FAILURE_COUNT] == "0"
        await finish(client, pods["1"], "Failed")
        again = await wait_for(lambda: _index_pod(client, namespace, "bli", "1", pods["1"]["metadata"]["uid"]),
                               what="index 1 retried")
        assert again["metadata"]["annotations"][FAILURE_COUNT] == "1"
        await finish(client, again, "Failed")  # the second failure: past backoffLimitPerIndex 1
        await wait_for(lambda: _failed_indexes(client, namespace, "bli", "1"), what="failedIndexes 1")
        await finish(client, pods["0"])
        await finish(client, pods["2"])
        failed = await wait_for(lambda: _with_condition(client, namespace, "bli", "Failed"), what="Failed")
        assert reason_message(failed, "Failed") == \
            ("FailedIndexes", "Job has failed indexes")
        status = failed["status"]
        assert (status["failedIndexes"], status["completedIndexes"], status["failed"]) == ("1", "0,2", 2)
        assert len(await job_pods(client, namespace, "bli")) == 4  # no third pod for index 1


async def _failed_indexes(client: Client, ns: str, name: str, wanted: str) -> bool:
    return (await get_job(client, ns, name))["status"].get("failedIndexes") == wanted


async def test_fail_index_rule_and_max_failed_indexes(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}}]}
    async with controller_manager(client, namespace, ["job"], options=FAST):
        await client.create(rt, job("mfi", completions=3, parallelism=3, completionMode="Indexed",
                                    backoffLimitPerIndex=5, maxFailedIndexes=0, podFailurePolicy=policy), namespace)
        pods = by_index(await wait_for(lambda: _active(client, namespace, "mfi", 3), what="3 indexed pods"))
        await finish(client, pods["2"], "Failed", exit_code=3)  # fails index 2 at once: one more than 0
        failed = await wait_for(lambda: _with_condition(client, namespace, "mfi", "Failed"), what="Failed")
        assert reason_message(failed, "Failed") == \
            ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
        assert failed["status"]["failedIndexes"] == "2" and failed["status"]["active"] == 0
        await wait_for(lambda: _active(client, namespace, "mfi", 0), what="the other pods deleted")


async def test_success_policy_completes_the_job_early(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "Job")
    async with controller_manager(client, namespace, ["job"], options=FAST):
        await client.create(rt, job("leader", completions=3, parallelism=3, completionMode="Indexed",
                                    successPolicy={"rules": [{"succeededIndexes": "0"}]}), namespace)
        pods = by_index(await wait_for(lambda: _active(client, namespace, "leader", 3), what="3 indexed pods"))
        await finish(client, pods["0"])
        done = await wait_for(lambda: _with_condition(client, namespace, "leader", "Complete"), what="Complete")
        for type_ in ("SuccessCriteriaMet", "Complete"):
            assert reason_message(done, type_) == \
                ("SuccessPolicy", "Matched rules at index 0")
        assert done["status"]["completedIndexes"] == "0" and done["status"]["succeeded"] == 1
        assert done["status"]["completionTime"] and done["status"]["active"] == 0
        await wait_for(lambda: _active(client, namespace, "leader", 0), what="the other pods deleted")
    body = job("np", successPolicy={"rules": [{"succeededCount": 1}]})
    with pytest.raises(errors.Invalid) as info:
        await client.create(rt, body, namespace)
    assert "spec.successPolicy: Invalid value: " in info.value.message
    assert "requires indexed completion mode" in info.value.message
