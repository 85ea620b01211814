"""The typed read views of minik8s/api: defaults in one place, tolerant of half-built objects.

A view of an object as written must read the same as the view of the object the apiserver
stored (its strategy's defaults), so controllers behave alike on both.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from minik8s.api.apps import DaemonSetView
from minik8s.api.base import Obj
from minik8s.api.batch import CronJobView, JobView
from minik8s.api.gpujobs import GPUJobView
from minik8s.api.meta import MetaView
from minik8s.api.serverless import FunctionView
from minik8s.apiserver.strategies.daemonset import DaemonSetStrategy
from minik8s.apiserver.strategies.job import CronJobStrategy, JobStrategy

TEMPLATE = {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}


def stored(strategy: Any, obj: Obj) -> Obj:
    obj = copy.deepcopy(obj)
    strategy.prepare_for_create(obj)
    strategy.default(obj)
    return obj


def test_views_of_empty_objects_do_not_raise() -> None:
    for view in (MetaView, JobView, CronJobView, DaemonSetView, FunctionView, GPUJobView):
        assert view.of({}) is not None
    meta = MetaView.of({"metadata": None})
    assert (meta.name, meta.namespace, meta.uid, dict(meta.labels), meta.deletion_timestamp) == ("", "", "", {}, None)


def test_views_are_frozen() -> None:
    view = JobView.of({"spec": {"parallelism": 3}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.parallelism = 4  # type: ignore[misc]


def test_job_view_defaults_match_the_apiserver() -> None:
    written = {"metadata": {"name": "pi", "namespace": "ns", "uid": "u1"},
               "spec": {"parallelism": 2, "template": TEMPLATE}}
    bare, defaulted = JobView.of(written), JobView.of(stored(JobStrategy(), written))
    assert bare == defaulted
    assert (bare.parallelism, bare.completions, bare.backoff_limit, bare.suspend, bare.indexed) == (2, None, 6, False,
                                                                                                  False)
    assert bare.restart_policy == "OnFailure"
    assert (bare.meta.name, bare.meta.namespace, bare.meta.uid) == ("pi", "ns", "u1")
    indexed = JobView.of({"spec": {"completions": 4, "completionMode": "Indexed", "activeDeadlineSeconds": 30,
                                   "ttlSecondsAfterFinished": 0, "suspend": True},
                          "status": {"completionTime": "2026-01-01T00:00:00Z"}})
    assert (indexed.completions, indexed.indexed, indexed.active_deadline_seconds,
            indexed.ttl_seconds_after_finished, indexed.suspend) == (4, True, 30, 0, True)
    assert indexed.completion_time == "2026-01-01T00:00:00Z"


def test_cronjob_view_defaults_match_the_apiserver() -> None:
    written = {"metadata": {"name": "tick", "namespace": "ns"},
               "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}}}
    bare, defaulted = CronJobView.of(written), CronJobView.of(stored(CronJobStrategy(), written))
    assert bare == defaulted
    assert (bare.schedule, bare.time_zone, bare.concurrency_policy, bare.suspend) == ("*/5 * * * *", None, "Allow",
                                                                                       False)
    assert (bare.successful_jobs_history_limit, bare.failed_jobs_history_limit) == (3, 1)
    zero = CronJobView.of({"spec": {"successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 0,
                                    "startingDeadlineSeconds": 10, "concurrencyPolicy": "Forbid"}})
    assert (zero.successful_jobs_history_limit, zero.failed_jobs_history_limit) == (0, 0)
    assert (zero.starting_deadline_seconds, zero.concurrency_policy) == (10, "Forbid")


def test_daemonset_view_defaults_match_the_apiserver() -> None:
    written = {"metadata": {"name": "agent", "namespace": "ns"},
               "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": TEMPLATE}}
    bare = DaemonSetView.of(written)
    defaulted = DaemonSetView.of(stored(DaemonSetStrategy(), written))
    assert (bare.rolling, bare.max_unavailable, bare.min_ready_seconds) == (True, 1, 0)
    assert (defaulted.rolling, defaulted.max_unavailable, defaulted.min_ready_seconds) == (True, 1, 0)
    assert bare.max_surge is None and defaulted.max_surge == 0  # both mean no surge
    on_delete = DaemonSetView.of({"spec": {"updateStrategy": {"type": "OnDelete",
                                                              "rollingUpdate": {"maxSurge": "50%"}}},
                                  "status": {"collisionCount": 2}})
    assert (on_delete.rolling, on_delete.max_surge, on_delete.max_unavailable) == (False, None, 1)
    assert on_delete.collision_count == 2


def test_function_and_gpujob_views() -> None:
    fn = FunctionView.of({"metadata": {"name": "hello"}, "spec": {"requirements": ["numpy==2.0"],
                                                                  "scaling": {"minScale": 2}}})
    assert (fn.meta.name, fn.requirements, fn.min_scale) == ("hello", ("numpy==2.0",), 2)
    assert (FunctionView.of({"spec": {}}).requirements, FunctionView.of({"spec": {}}).min_scale) == ((), 0)
    job = GPUJobView.of({"spec": {"cluster": "dgx", "slurm": {"partition": ""}, "resultFiles": ["out/*.txt"],
                                  "sources": {"configMapRef": {"name": "src"}}}})
    assert (job.cluster, job.build, job.partition, job.result_files) == ("dgx", "", None, ("out/*.txt",))
    assert (job.source_files, job.source_config_map) == (None, "src")
    inline = GPUJobView.of({"spec": {"sources": {"files": {"a.cu": "int main(){}"}}, "build": "make"}})
    assert (dict(inline.source_files or {}), inline.build) == ({"a.cu": "int main(){}"}, "make")
