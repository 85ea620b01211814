"""kubectl rollout's pure parts: status lines, history, rollback choice and patch, durations."""

from __future__ import annotations

import pytest

from minik8s.api.base import Obj
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.options import duration_flag as parse_duration
from minik8s.kubectl.rollout import (
    CHANGE_CAUSE,
    REVISION,
    daemonset_status_message,
    history_text,
    rollback_patch,
    rollback_target,
    status_message,
    template_without_hash,
)
from minik8s.kubectl.scale import check_preconditions


def dep(generation: int = 2, observed: int = 2, desired: int = 3, conditions: list[Obj] | None = None,
        revision: str | None = None, **status: int) -> Obj:
    annotations = {REVISION: revision} if revision else {}
    return {"metadata": {"name": "web", "generation": generation, "annotations": annotations, "uid": "d1"},
            "spec": {"replicas": desired, "template": {"metadata": {"labels": {"app": "web"}}}},
            "status": {"observedGeneration": observed, "conditions": conditions or [], **status}}


def rs(revision: int, image: str, cause: str = "", name: str = "") -> Obj:
    annotations = {REVISION: str(revision)}
    if cause:
        annotations[CHANGE_CAUSE] = cause
    return {"metadata": {"name": name or f"web-{revision}", "annotations": annotations},
            "spec": {"template": {"metadata": {"labels": {"app": "web", "pod-template-hash": f"h{revision}"}},
                                  "spec": {"containers": [{"name": "main", "image": image}]}}}}


@pytest.mark.parametrize(("d", "line", "done"), [
    (dep(generation=3, observed=2), "Waiting for deployment spec update to be observed...", False),
    (dep(updatedReplicas=1, replicas=2, availableReplicas=1),
     'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...', False),
    (dep(updatedReplicas=3, replicas=4, availableReplicas=3),
     'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...', False),
    (dep(updatedReplicas=3, replicas=3, availableReplicas=1),
     'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...', False),
    (dep(updatedReplicas=3, replicas=3, availableReplicas=3), 'deployment "web" successfully rolled out', True),
])
def test_status_message(d: Obj, line: str, done: bool) -> None:
    assert status_message(d) == (line, done)


def test_status_errors() -> None:
    stuck = dep(conditions=[{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}])
    with pytest.raises(KubectlError, match='deployment "web" exceeded its progress deadline'):
        status_message(stuck)
    with pytest.raises(KubectlError, match=r"desired revision \(2\) is different from the running revision \(1\)"):
        status_message(dep(revision="1"), revision=2)
    assert status_message(dep(revision="2", updatedReplicas=3, replicas=3, availableReplicas=3), 2)[1]


def test_history_table_and_revision() -> None:
    rss = [rs(2, "img:2", "update"), rs(1, "img:1")]
    assert history_text(rss) == "REVISION  CHANGE-CAUSE\n1         <none>\n2         update\n"
    assert history_text([]) == "No rollout history found."
    text = history_text(rss, 2)
    assert text.startswith("Pod Template:\n  Labels:")
    assert "kubernetes.io/change-cause: update" in text and "img:2" in text
    with pytest.raises(KubectlError, match="unable to find the specified revision"):
        history_text(rss, 5)


def test_rollback_target() -> None:
    d = dep()
    rss = [rs(1, "a"), rs(3, "c"), rs(2, "b")]
    assert rollback_target(d, rss, 0)["metadata"]["name"] == "web-2"
    assert rollback_target(d, rss, 1)["metadata"]["name"] == "web-1"
    with pytest.raises(KubectlError, match="unable to find specified revision 7 in history"):
        rollback_target(d, rss, 7)
    with pytest.raises(KubectlError, match='no rollout history found for deployment "web"'):
        rollback_target(d, [rs(1, "a")], 0)


def test_rollback_patch_drops_hash_and_keeps_bookkeeping() -> None:
    d = dep(revision="3")
    d["metadata"]["annotations"]["team"] = "ops"
    old = rs(1, "img:1", "first")
    ops = rollback_patch(d, old)
    assert ops[0] == {"op": "replace", "path": "/spec/template",
                      "value": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "main", "image": "img:1"}]}}}
    assert ops[1]["value"] == {REVISION: "3", CHANGE_CAUSE: "first"}
    assert "pod-template-hash" in old["spec"]["template"]["metadata"]["labels"], "the input is not modified"
    assert template_without_hash(old) == ops[0]["value"]


def test_scale_preconditions() -> None:
    scale = {"metadata": {"resourceVersion": "7"}, "spec": {"replicas": 3}}
    check_preconditions(scale, 3, "7")
    check_preconditions(scale, -1, "")
    with pytest.raises(KubectlError, match="Expected replicas to be 2, was 3"):
        check_preconditions(scale, 2, "")
    with pytest.raises(KubectlError, match="Expected resource version to be 6, was 7"):
        check_preconditions(scale, -1, "6")


@pytest.mark.parametrize(("text", "seconds"), [
    ("0", 0.0), ("0s", 0.0), ("30s", 30.0), ("5m", 300.0), ("1h30m", 5400.0), ("1.5s", 1.5), ("250ms", 0.25),
])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "reason"), [
    ("5", 'missing unit in duration "5"'), ("5x", 'unknown unit "x" in duration "5x"'),
    ("", 'invalid duration ""'), ("m", 'invalid duration "m"'),
])
def test_parse_duration_errors(text: str, reason: str) -> None:
    with pytest.raises(KubectlError) as info:
        parse_duration(text)
    assert info.value.message == f'invalid argument "{text}" for "--timeout" flag: time: {reason}'


def daemon(generation: int = 2, observed: int = 2, strategy: str = "RollingUpdate", **status: int) -> Obj:
    return {"metadata": {"name": "agent", "generation": generation},
            "spec": {"updateStrategy": {"type": strategy}},
            "status": {"observedGeneration": observed, "desiredNumberScheduled": 3, **status}}


@pytest.mark.parametrize(("ds", "line", "done"), [
    (daemon(generation=3), "Waiting for daemon set spec update to be observed...", False),
    (daemon(updatedNumberScheduled=1, numberAvailable=3),
     'Waiting for daemon set "agent" rollout to finish: 1 out of 3 new pods have been updated...', False),
    (daemon(updatedNumberScheduled=3, numberAvailable=2),
     'Waiting for daemon set "agent" rollout to finish: 2 of 3 updated pods are available...', False),
    (daemon(updatedNumberScheduled=3, numberAvailable=3), 'daemon set "agent" successfully rolled out', True),
])
def test_daemonset_status_message(ds: Obj, line: str, done: bool) -> None:
    assert daemonset_status_message(ds) == (line, done)


def test_daemonset_status_needs_rolling_update() -> None:
    with pytest.raises(KubectlError, match="only available for RollingUpdate strategy type"):
        daemonset_status_message(daemon(strategy="OnDelete"))
