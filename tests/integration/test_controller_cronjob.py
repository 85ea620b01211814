"""The CronJob controller against a real apiserver, its clock moved by the test (no waiting for minutes)."""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, parse_time
from minik8s.client.rest import Client
from minik8s.controllers.cronjob import CronJobController
from tests.support.controllers import controller_manager, events_for
from tests.support.waiting import wait_for


def cronjob(name: str, schedule: str = "*/1 * * * *", **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": {
                "metadata": {"labels": {"app": name}},
                "spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [
                    {"name": "main", "image": "minik8s/busybox", "command": ["date"]}]}}}}, **spec}}


class Clock:
    """The controller's clock: starts at the real time, moved by :meth:`advance`."""

    def __init__(self) -> None:
        self.now = dt.datetime.now(dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


async def jobs(client: Client, ns: str) -> list[Obj]:
    items = (await client.list(client.kind("batch/v1", "Job"), ns))["items"]
    return sorted([j for j in items if not j["metadata"].get("deletionTimestamp")],
                  key=lambda j: j["metadata"]["name"])


async def set_finished(client: Client, job: Obj, type_: str = "Complete") -> None:
    """What the Job controller writes when a Job finishes (it does not run in these tests)."""
    rt = client.kind("batch/v1", "Job")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for _ in range(10):
        live = await client.get(rt, job["metadata"]["name"], job["metadata"]["namespace"])
        live["status"] = {"startTime": stamp, "conditions": [
            {"type": type_, "status": "True", "lastTransitionTime": stamp}]}
        if type_ == "Complete":
            live["status"]["completionTime"] = stamp
        with contextlib.suppress(errors.Conflict):
            await client.update_status(rt, live)
            return


class Harness:
    def __init__(self, client: Client, ns: str, controller: CronJobController, clock: Clock) -> None:
        self.client, self.ns, self.controller, self.clock = client, ns, controller, clock

    async def tick(self, minutes: int = 1, name: str | None = None) -> None:
        """Move the clock ``minutes`` ahead and sync the CronJob(s)."""
        self.clock.now += dt.timedelta(minutes=minutes)
        for cj in (await self.client.list(self.client.kind("batch/v1", "CronJob"), self.ns))["items"]:
            if name is None or cj["metadata"]["name"] == name:
                self.controller.enqueue(f"{self.ns}/{cj['metadata']['name']}")

    async def job_count(self, n: int) -> list[Obj] | bool:
        found = await jobs(self.client, self.ns)
        return (found or True) if len(found) == n else False

    async def first_job_then_tick(self, body: Obj) -> Obj:
        """Create the CronJob ``body``, tick until its first Job exists, then tick once more; the first Job."""
        await self.client.create(self.client.kind("batch/v1", "CronJob"), body, self.ns)
        await self.tick()
        first = (await wait_for(lambda: self.job_count(1), what="a Job"))[0]
        await self.tick()
        return first


@contextlib.asynccontextmanager
async def harness(client: Client, namespace: str) -> Any:
    async with controller_manager(client, namespace, ["cronjob"]) as manager:
        controller = manager.controllers["cronjob"]
        assert isinstance(controller, CronJobController)
        clock = Clock()
        controller.clock = clock
        yield Harness(client, namespace, controller, clock)


async def test_creates_jobs_on_schedule(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "CronJob")
    async with harness(client, namespace) as h:
        created = await client.create(rt, cronjob("tick"), namespace)
        assert created["spec"]["concurrencyPolicy"] == "Allow"
        assert created["spec"]["successfulJobsHistoryLimit"] == 3
        assert created["spec"]["failedJobsHistoryLimit"] == 1
        assert created["spec"]["suspend"] is False
        assert await jobs(client, namespace) == []
        await h.tick()
        first = (await wait_for(lambda: h.job_count(1), what="the first Job"))[0]
        scheduled = parse_time(first["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"])
        assert scheduled is not None and scheduled.second == 0
        assert first["metadata"]["name"] == f"tick-{int(scheduled.timestamp()) // 60}"
        assert first["metadata"]["labels"]["app"] == "tick"
        ref = first["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["name"], ref["controller"]) == ("CronJob", "tick", True)
        assert first["spec"]["template"]["spec"]["containers"][0]["command"] == ["date"]

        async def status_active() -> Obj | None:
            cj = await client.get(rt, "tick", namespace)
            return cj if (cj.get("status") or {}).get("active") else None

        cj = await wait_for(status_active, what="status.active")
        assert cj["status"]["active"][0]["name"] == first["metadata"]["name"]
        assert parse_time(cj["status"]["lastScheduleTime"]) == scheduled
        await h.tick(3)  # missed runs: only the most recent one starts
        await wait_for(lambda: h.job_count(2), what="a second Job")
        await set_finished(client, first)

        async def success_seen() -> bool:
            cj = await client.get(rt, "tick", namespace)
            return bool(cj["status"].get("lastSuccessfulTime")) and len(cj["status"].get("active") or []) == 1

        await wait_for(success_seen, what="lastSuccessfulTime")

        async def events_seen() -> bool:
            reasons = {e["reason"] for e in await events_for(client, namespace, "tick")}
            return {"SuccessfulCreate", "SawCompletedJob"} <= reasons

        await wait_for(events_seen, what="SuccessfulCreate and SawCompletedJob events")


async def test_forbid_skips_while_a_job_runs(client: Client, namespace: str) -> None:
    async with harness(client, namespace) as h:
        first = await h.first_job_then_tick(cronjob("single", concurrencyPolicy="Forbid"))

        async def refused() -> bool:
            return any(e["reason"] == "JobAlreadyActive" for e in await events_for(client, namespace, "single"))

        await wait_for(refused, what="JobAlreadyActive")
        assert len(await jobs(client, namespace)) == 1
        await set_finished(client, first)
        await h.tick()
        await wait_for(lambda: h.job_count(2), what="the next Job once the first finished")


async def test_replace_deletes_the_running_job(client: Client, namespace: str) -> None:
    async with harness(client, namespace) as h:
        first = await h.first_job_then_tick(cronjob("swap", concurrencyPolicy="Replace"))

        async def replaced() -> bool:
            names = [j["metadata"]["name"] for j in await jobs(client, namespace)]
            return len(names) == 1 and names[0] != first["metadata"]["name"]

        await wait_for(replaced, what="the Job replaced")


async def test_history_limits_and_suspend(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "CronJob")
    async with harness(client, namespace) as h:
        await client.create(rt, cronjob("hist", successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0), namespace)
        for i in range(3):
            await h.tick()
            made = await wait_for(lambda i=i: _new_job(client, namespace, i), what=f"Job {i + 1}")
            await set_finished(client, made, "Complete" if i < 2 else "Failed")

        async def trimmed() -> bool:
            found = await jobs(client, namespace)
            return len(found) == 1

        await h.tick(0)
        await wait_for(trimmed, what="only the newest successful Job kept")
        await client.patch(rt, "hist", {"spec": {"suspend": True}}, namespace)
        key = f"{namespace}/hist"
        await wait_for(lambda: (h.controller.cronjobs.get(key) or {}).get("spec", {}).get("suspend"),
                       what="the controller's cache to see suspend")
        kept = [j["metadata"]["name"] for j in await jobs(client, namespace)]
        h.clock.now += dt.timedelta(minutes=5)
        await h.controller.sync(key)  # a whole sync while suspended, run here: nothing is created
        assert [j["metadata"]["name"] for j in await jobs(client, namespace)] == kept


async def _new_job(client: Client, ns: str, finished: int) -> Obj | None:
    """The one Job without a finished condition once ``finished`` Jobs were made finished before it."""
    found = [j for j in await jobs(client, ns) if not (j.get("status") or {}).get("conditions")]
    return found[0] if len(found) == 1 else None


async def test_schedule_and_time_zone_are_validated(client: Client, namespace: str) -> None:
    rt = client.kind("batch/v1", "CronJob")
    for spec, field in (({"schedule": "@every 1m"}, "spec.schedule"), ({"schedule": "61 * * * *"}, "spec.schedule"),
                        ({"timeZone": "Mars/Olympus"}, "spec.timeZone"),
                        ({"concurrencyPolicy": "Sometimes"}, "spec.concurrencyPolicy")):
        body = cronjob("bad")
        body["spec"].update(spec)
        try:
            await client.create(rt, body, namespace)
        except errors.Invalid as exc:
            assert field in exc.message, exc.message
        else:
            raise AssertionError(f"{spec} was accepted")
    ok = await client.create(rt, cronjob("tz", "@daily", timeZone="Europe/Berlin"), namespace)
    assert ok["spec"]["timeZone"] == "Europe/Berlin"
