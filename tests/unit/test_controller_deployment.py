"""Pure Deployment arithmetic: hash, fenceposts, rollout steps, proportional scaling, history, status."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from minik8s.controllers import deploymentutil as du

NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def deployment(replicas: int = 3, surge: Any = "25%", unavailable: Any = "25%", strategy: str = "RollingUpdate",
               **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{"name": "c", "image": "v1"}]}},
                            "strategy": {"type": strategy}, "progressDeadlineSeconds": 600,
                            "revisionHistoryLimit": 10}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    spec.update(extra)
    return {"metadata": {"name": "web", "namespace": "ns", "uid": "d-uid", "generation": 1}, "spec": spec,
            "status": {}}


def rs(name: str, spec: int, replicas: int | None = None, available: int | None = None, age: int = 100,
       revision: int | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    replicas = spec if replicas is None else replicas
    available = replicas if available is None else available
    ann = dict(annotations or {})
    if revision is not None:
        ann[du.REVISION_ANNOTATION] = str(revision)
    created = (NOW - dt.timedelta(seconds=age)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": created, "annotations": ann,
                         "generation": 1},
            "spec": {"replicas": spec, "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": name}},
                                                   "spec": {"containers": [{"name": "c", "image": name}]}}},
            "status": {"replicas": replicas, "readyReplicas": available, "availableReplicas": available,
                       "observedGeneration": 1}}


def cond_of(status: dict[str, Any] | None, type_: str) -> dict[str, Any]:
    cond = du.get_condition(status, type_)
    assert cond is not None, f"no {type_} condition"
    return cond


# ---------------------------------------------------------------------- hash
def test_fnv_and_safe_encoding_match_kubernetes() -> None:
    assert du.fnv32a(b"") == 0x811C9DC5
    assert du.fnv32a(b"a") == 0xE40C292C
    assert du.safe_encode("123") == "567"
    assert du.safe_encode("0") == "4"


def test_template_hash_is_stable_and_sensitive() -> None:
    t1 = deployment()["spec"]["template"]
    reordered = {"spec": t1["spec"], "metadata": t1["metadata"]}
    assert du.compute_hash(t1) == du.compute_hash(reordered)
    assert all(c in "bcdfghjklmnpqrstvwxz2456789" for c in du.compute_hash(t1))
    t2 = {"metadata": t1["metadata"], "spec": {"containers": [{"name": "c", "image": "v2"}]}}
    assert du.compute_hash(t1) != du.compute_hash(t2)
    assert du.compute_hash(t1, 1) != du.compute_hash(t1) != du.compute_hash(t1, 2)


def test_equal_ignore_hash() -> None:
    t1 = deployment()["spec"]["template"]
    with_hash = {"metadata": {"labels": {"app": "web", "pod-template-hash": "abc"}}, "spec": t1["spec"]}
    assert du.equal_ignore_hash(t1, with_hash)
    assert du.equal_ignore_hash({"metadata": {}, "spec": {"x": []}}, {"spec": {}})
    assert not du.equal_ignore_hash(t1, {"metadata": t1["metadata"], "spec": {"containers": []}})


# ---------------------------------------------------------------------- surge / unavailable
@pytest.mark.parametrize(("surge", "unavailable", "desired", "expected"), [
    ("25%", "25%", 4, (1, 1)),
    ("25%", "25%", 10, (3, 2)),   # surge rounds up, unavailable rounds down
    ("25%", "25%", 1, (1, 0)),
    ("0%", "25%", 1, (0, 1)),     # both 0 after rounding → unavailable 1
    (2, 0, 5, (2, 0)),
    ("50%", 1, 3, (2, 1)),
])
def test_fenceposts(surge: Any, unavailable: Any, desired: int, expected: tuple[int, int]) -> None:
    assert du.resolve_fenceposts(surge, unavailable, desired) == expected


def test_scaled_value_rejects_non_percent_strings() -> None:
    with pytest.raises(ValueError):
        du.scaled_value("5", 10, True)
    assert du.max_surge(deployment(surge="oops")) == 0


def test_max_unavailable_capped_and_recreate_zero() -> None:
    assert du.max_unavailable(deployment(replicas=2, unavailable=5)) == 2
    assert du.max_unavailable(deployment(replicas=0)) == 0
    assert du.max_surge(deployment(strategy="Recreate")) == 0
    assert du.max_unavailable(deployment(strategy="Recreate")) == 0


# ---------------------------------------------------------------------- rolling steps
def test_rolling_step_scales_new_up_within_surge() -> None:
    d = deployment(replicas=3, surge=1, unavailable=0)
    assert du.rolling_step(d, rs("new", 0, age=1), [rs("old", 3)]) == {"new": 1}


def test_rolling_step_waits_for_new_pods_before_scaling_old_down() -> None:
    d = deployment(replicas=3, surge=1, unavailable=0)
    assert du.rolling_step(d, rs("new", 1, available=0, age=1), [rs("old", 3)]) == {}
    assert du.rolling_step(d, rs("new", 1, available=1, age=1), [rs("old", 3)]) == {"old": 2}


def test_rolling_step_counts_pods_of_a_lagging_old_status() -> None:
    d = deployment(replicas=3, surge=1, unavailable=0)
    # old was scaled 3→2 but its controller has not deleted the pod yet (status says 3)
    assert du.rolling_step(d, rs("new", 1, age=1), [rs("old", 2, replicas=3, available=3)]) == {}


def test_rolling_step_with_unavailable_budget() -> None:
    d = deployment(replicas=4)  # 25%/25% → surge 1, unavailable 1
    step1 = du.rolling_step(d, rs("new", 0, age=1), [rs("old", 4)])
    assert step1 == {"new": 1}
    step2 = du.rolling_step(d, rs("new", 1, available=0, age=1), [rs("old", 4)])
    assert step2 == {"old": 3}  # 5 pods, 1 may be unavailable, the new one is → scale old by 1


def test_rolling_step_cleans_unhealthy_old_replicas_first() -> None:
    d = deployment(replicas=3, surge=0, unavailable=1)
    assert du.rolling_step(d, rs("new", 0, age=1), [rs("old", 3, available=1)]) == {"old": 2}


def test_rolling_step_scales_oldest_first_and_shrinks_oversized_new() -> None:
    d = deployment(replicas=4, surge=0, unavailable=2)
    plan = du.rolling_step(d, rs("new", 0, age=1), [rs("older", 2, age=300), rs("old", 2, age=200)])
    assert plan == {"older": 0}
    assert du.rolling_step(deployment(replicas=3), rs("new", 5, age=1), []) == {"new": 3}


def test_new_rs_replicas_recreate_is_all_at_once() -> None:
    d = deployment(replicas=5, strategy="Recreate")
    assert du.new_rs_new_replicas(d, [rs("new", 0)], rs("new", 0)) == 5


# ---------------------------------------------------------------------- proportional scaling
def test_proportional_scaling_matches_kubernetes_example() -> None:
    # Kubernetes docs: 10 replicas, maxSurge 3, maxUnavailable 2, mid-rollout old 8 + new 5,
    # scaled to 15 → 3 more for the old ReplicaSet, 2 for the new one.
    d = deployment(replicas=15, surge=3, unavailable=2)
    ann = {du.MAX_REPLICAS_ANNOTATION: "13", du.DESIRED_REPLICAS_ANNOTATION: "10"}
    sizes = du.proportional_scale(d, rs("new", 5, age=10, annotations=ann), [rs("old", 8, age=100, annotations=ann)])
    assert sizes == {"old": 11, "new": 7}


def test_proportional_scaling_single_active_and_down_to_zero() -> None:
    d = deployment(replicas=7)
    assert du.proportional_scale(d, rs("new", 3), [rs("old", 0)]) == {"new": 7}
    d0 = deployment(replicas=0, surge=1, unavailable=1)
    sizes = du.proportional_scale(d0, rs("new", 2, age=1), [rs("old", 2, age=100)])
    assert sizes == {"old": 0, "new": 0}


# ---------------------------------------------------------------------- revisions and history
def test_new_replica_set_annotations_and_rollback_history() -> None:
    d = deployment(replicas=3, surge=1, unavailable=0)
    d["metadata"]["annotations"] = {"team": "a", du.LAST_APPLIED_ANNOTATION: "{}"}
    fresh: dict[str, Any] = {"metadata": {}, "spec": {"replicas": 1}}
    assert du.set_new_replica_set_annotations(d, fresh, 3, exists=False)
    ann = fresh["metadata"]["annotations"]
    assert ann[du.REVISION_ANNOTATION] == "3" and ann["team"] == "a"
    assert du.LAST_APPLIED_ANNOTATION not in ann
    assert ann[du.DESIRED_REPLICAS_ANNOTATION] == "3" and ann[du.MAX_REPLICAS_ANNOTATION] == "4"
    old = rs("old", 0, revision=1, annotations={"team": "a"})
    assert du.set_new_replica_set_annotations(d, old, 4, exists=True)  # rollback to revision 1
    assert du.revision(old) == 4
    assert old["metadata"]["annotations"][du.REVISION_HISTORY_ANNOTATION] == "1"
    assert not du.set_new_replica_set_annotations(d, old, 4, exists=True)


def test_cleanup_candidates_keep_history_limit() -> None:
    d = deployment(revisionHistoryLimit=2)
    olds = [rs(f"r{i}", 0, revision=i, age=1000 - i) for i in range(1, 6)]
    olds.append(rs("busy", 1, revision=0))
    names = [du.name_of(x) for x in du.cleanup_candidates(d, olds)]
    assert names == ["r1", "r2", "r3"]  # 6 old, keep 2: the 4 lowest revisions, but "busy" still has pods


def test_find_new_and_old_replica_sets() -> None:
    d = deployment()
    mine = rs("mine", 1, age=10)
    mine["spec"]["template"] = {"metadata": {"labels": {"app": "web", "pod-template-hash": "x"}},
                                "spec": d["spec"]["template"]["spec"]}
    other = rs("other", 1, age=20)
    assert du.find_new_replica_set(d, [other, mine]) is mine
    assert du.find_old_replica_sets(mine, [other, mine]) == [other]


# ---------------------------------------------------------------------- status and conditions
def test_status_and_available_condition() -> None:
    d = deployment(replicas=4)
    new, old = rs("new", 2, available=1), rs("old", 3, available=2)
    status = du.calculate_status(d, [old, new], new)
    assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"],
            status["unavailableReplicas"], status["observedGeneration"]) == (5, 2, 3, 2, 1)
    assert cond_of(status, "Available")["reason"] == "MinimumReplicasAvailable"  # 3 >= 4 - 1
    low = du.calculate_status(d, [rs("new", 4, available=2)], None)
    cond = cond_of(low, "Available")
    assert (cond["status"], cond["reason"]) == ("False", "MinimumReplicasUnavailable")


def test_progressing_conditions() -> None:
    d = deployment(replicas=2)
    new = rs("web-abc", 2, available=2)
    done = du.rollout_status(d, [new], new, NOW)
    cond = cond_of(done, "Progressing")
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "NewReplicaSetAvailable", 'ReplicaSet "web-abc" has successfully progressed.')
    moving = deployment(replicas=2)
    moving["status"] = {"replicas": 2, "updatedReplicas": 0, "availableReplicas": 2}
    half = rs("web-abc", 1, available=0)
    cond = cond_of(du.rollout_status(moving, [rs("old", 2), half], half, NOW), "Progressing")
    assert (cond["reason"], cond["message"]) == ("ReplicaSetUpdated", 'ReplicaSet "web-abc" is progressing.')
    stuck = deployment(replicas=2, progressDeadlineSeconds=60)
    stale = (NOW - dt.timedelta(seconds=120)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stuck["status"] = {"replicas": 2, "updatedReplicas": 1, "availableReplicas": 1, "readyReplicas": 1,
                       "conditions": [{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                                       "lastUpdateTime": stale, "lastTransitionTime": stale}]}
    stuck_new = rs("web-abc", 1, available=0)
    status = du.rollout_status(stuck, [rs("old", 1), stuck_new], stuck_new, NOW)
    cond = cond_of(status, "Progressing")
    assert (cond["status"], cond["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert du.seconds_until_deadline(stuck, status, NOW) is None


def test_set_condition_keeps_transition_time_for_same_status() -> None:
    status: dict[str, Any] = {}
    du.set_condition(status, du.new_condition("Progressing", "True", "A", "a", "2026-01-01T00:00:00Z"))
    du.set_condition(status, du.new_condition("Progressing", "True", "B", "b", "2026-01-01T00:05:00Z"))
    cond = cond_of(status, "Progressing")
    assert cond["reason"] == "B" and cond["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    du.set_condition(status, du.new_condition("Progressing", "True", "B", "c", "2026-01-01T00:09:00Z"))
    assert cond_of(status, "Progressing")["message"] == "b"  # same status and reason: unchanged
