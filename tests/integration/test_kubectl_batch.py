"""kubectl's batch verbs as a real subprocess against the real apiserver, with the Job controller
in-process: ``create job`` (image and ``--from=cronjob/X``), ``create cronjob``, ``wait``,
``get`` and ``describe`` of Jobs and CronJobs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from minik8s.api.base import Obj
from minik8s.client.kubeconfig import render
from minik8s.client.rest import Client
from minik8s.kubectl import wait as kwait
from minik8s.kubectl.session import GlobalOptions
from tests.support.controllers import controller_manager, finish
from tests.support.kubectl import Kubectl, Result, assert_one_error_line
from tests.support.processes import APIServer
from tests.support.waiting import wait_for


@pytest.fixture
def kubectl_ns(apiserver: APIServer, tmp_path: Path, namespace: str) -> Kubectl:
    path = tmp_path / "kubeconfig"
    path.write_text(render(apiserver.url))
    return Kubectl(path, namespace)


async def run(kubectl: Kubectl, *args: str) -> Result:
    """kubectl with ``-n <namespace>`` in front (the arguments after ``--`` are the container's command)."""
    return await asyncio.to_thread(kubectl, "-n", kubectl.namespace, *args, ns=False)


async def _pods_of(client: Client, ns: str, job: str) -> list[Obj]:
    return list((await client.list(client.kind("v1", "Pod"), ns, label_selector=f"job-name={job}"))["items"])


async def test_create_job_and_wait_for_complete(client: Client, namespace: str, kubectl_ns: Kubectl) -> None:
    async with controller_manager(client, namespace, ["job"]):
        res = await run(kubectl_ns, "create", "job", "pi", "--image=minik8s/busybox", "--", "sh", "-c", "exit 0")
        assert res.code == 0, res.err
        assert res.out.strip() == "job.batch/pi created"
        job = await client.get(client.kind("batch/v1", "Job"), "pi", namespace)
        pod_spec = job["spec"]["template"]["spec"]
        assert pod_spec["restartPolicy"] == "Never"
        assert pod_spec["containers"][0] == {**pod_spec["containers"][0], "name": "pi", "image": "minik8s/busybox",
                                             "command": ["sh", "-c", "exit 0"]}
        waiter = asyncio.create_task(run(kubectl_ns, "wait", "--for=condition=complete", "job/pi", "--timeout=30s"))
        pod = (await wait_for(lambda: _pods_of(client, namespace, "pi"), what="the Job's pod"))[0]
        pod["spec"]["containers"][0]["name"] = "main"
        await finish(client, pod)
        res = await waiter
        assert res.code == 0, res.err
        assert res.out.strip() == "job.batch/pi condition met"

        table = (await run(kubectl_ns, "get", "jobs")).table()
        assert table[0] == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
        assert table[1][:3] == ["pi", "Complete", "1/1"]
        described = await run(kubectl_ns, "describe", "job", "pi")
        assert described.code == 0, described.err
        for fragment in ("Pods Statuses:", "1 Succeeded", "Completion Mode:", "NonIndexed", "Complete",
                         "SuccessfulCreate"):
            assert fragment in described.out

        res = await run(kubectl_ns, "create", "job", "never", "--image=minik8s/busybox", "--", "sleep", "9")
        assert res.code == 0, res.err
        res = await run(kubectl_ns, "wait", "--for=condition=complete", "job/never", "--timeout=1s")
        assert_one_error_line(res, "timed out waiting for the condition on jobs/never")


async def test_create_cronjob_and_job_from_it(client: Client, namespace: str, kubectl_ns: Kubectl) -> None:
    res = await run(kubectl_ns, "create", "cronjob", "tick", "--image=minik8s/busybox", "--schedule=*/1 * * * *",
                    "--", "date")
    assert res.code == 0, res.err
    assert res.out.strip() == "cronjob.batch/tick created"
    cj = await client.get(client.kind("batch/v1", "CronJob"), "tick", namespace)
    assert cj["spec"]["schedule"] == "*/1 * * * *"
    template = cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert template["restartPolicy"] == "OnFailure"
    assert template["containers"][0]["command"] == ["date"]
    table = (await run(kubectl_ns, "get", "cj")).table()
    assert table[0] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"]
    assert table[1][:6] == ["tick", "*/1 * * * *", "<none>", "False", "0", "<none>"]

    res = await run(kubectl_ns, "create", "job", "manual", "--from=cronjob/tick")
    assert res.code == 0, res.err
    job = await client.get(client.kind("batch/v1", "Job"), "manual", namespace)
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    ref = job["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"]) == ("CronJob", "tick", cj["metadata"]["uid"])
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["date"]

    described = await run(kubectl_ns, "describe", "cronjob", "tick")
    assert "Schedule:" in described.out and "Concurrency Policy:" in described.out
    res = await run(kubectl_ns, "create", "job", "x", "--from=cronjob/missing")
    assert_one_error_line(res, 'cronjobs.batch "missing" not found')
    res = await run(kubectl_ns, "create", "cronjob", "bad", "--image=minik8s/busybox", "--schedule=@every 1m")
    assert res.code == 1 and "spec.schedule" in res.err


async def test_wait_for_delete_reports_what_was_deleted_and_not_what_never_was(
        client: Client, namespace: str, kubectl_ns: Kubectl, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    cm = client.kind("v1", "ConfigMap")
    await client.create(cm, {"metadata": {"name": "doomed"}}, namespace)
    looked = asyncio.Event()
    real_met = kwait._met

    async def met(*args: Any) -> bool:
        done = await real_met(*args)
        looked.set()
        return done

    # In process, so that the object goes only after the waiter has looked at it once.
    monkeypatch.setattr(kwait, "_met", met)
    opts = GlobalOptions(kubeconfig=str(kubectl_ns.kubeconfig), namespace=namespace)
    waiter = asyncio.create_task(kwait.run_wait(opts, ["configmap/doomed"], "delete", 30, "", False))
    await asyncio.wait_for(looked.wait(), 30)
    await client.delete(cm, "doomed", namespace)
    assert await waiter == 0
    assert capsys.readouterr().out == "configmap/doomed condition met\n"
    # An object that never was: nothing to report, as kubectl reports nothing.
    res = await run(kubectl_ns, "wait", "--for=delete", "configmap/never", "--timeout=1s")
    assert (res.code, res.out, res.err) == (0, "", "")
