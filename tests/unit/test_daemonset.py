"""DaemonSet: the strategy's defaults and validation, node eligibility, tolerations, rollout steps."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from minik8s.api.base import Obj
from minik8s.api.nodeaffinity import node_selector_matches, pod_spec_matches_node
from minik8s.apiserver.strategies.daemonset import TEMPLATE_GENERATION_ANNOTATION, DaemonSetStrategy
from minik8s.controllers.daemonset import (
    REVISION_HASH_LABEL,
    add_daemon_tolerations,
    daemon_pod_spec,
    node_should_run_daemon_pod,
    replace_node_affinity,
    rolling_update_plan,
    target_node,
    update_counts,
)

STRATEGY = DaemonSetStrategy()


def ds(**spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "a"}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, **spec}}


def defaulted(obj: Obj) -> Obj:
    obj = copy.deepcopy(obj)
    STRATEGY.prepare_for_create(obj)
    STRATEGY.default(obj)
    return obj


def causes(obj: Obj, old: Obj | None = None) -> list[tuple[str, str]]:
    return [(path, msg) for path, _value, msg in STRATEGY.validate(obj, old)]


# ---------------------------------------------------------------- strategy
def test_defaults_follow_kubernetes() -> None:
    obj = defaulted(ds())
    spec = obj["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert spec["revisionHistoryLimit"] == 10 and spec["minReadySeconds"] == 0
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert obj["status"] == {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                             "numberReady": 0}
    assert obj["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION] == "1"
    assert causes(obj) == []
    on_delete = defaulted(ds(updateStrategy={"type": "OnDelete"}))
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert causes(on_delete) == []


def test_template_generation_grows_with_template_changes_only() -> None:
    old = defaulted(ds())
    same = copy.deepcopy(old)
    same["spec"]["minReadySeconds"] = 5
    STRATEGY.prepare_for_update(same, old)
    assert same["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION] == "1"
    changed = copy.deepcopy(old)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    STRATEGY.prepare_for_update(changed, old)
    assert changed["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION] == "2"


@pytest.mark.parametrize(("change", "expected"), [
    ({"selector": None}, ("spec.selector", "Required value")),
    ({"selector": {}}, ("spec.selector", "empty selector is invalid for daemonset")),
    ({"selector": {"matchLabels": {"app": "b"}}},
     ("spec.template.metadata.labels", "`selector` does not match template `labels`")),
    ({"minReadySeconds": -1}, ("spec.minReadySeconds", "must be greater than or equal to 0")),
    ({"revisionHistoryLimit": -1}, ("spec.revisionHistoryLimit", "must be greater than or equal to 0")),
    ({"updateStrategy": {"type": "Recreate"}},
     ("spec.updateStrategy.type", 'Unsupported value: "Recreate": supported values: "OnDelete", "RollingUpdate"')),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
     ("spec.updateStrategy.rollingUpdate.maxUnavailable", "Required value: cannot be 0 when maxSurge is 0")),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}},
     ("spec.updateStrategy.rollingUpdate.maxSurge", "may not be set when maxUnavailable is non-zero")),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "120%"}}},
     ("spec.updateStrategy.rollingUpdate.maxUnavailable", "must not be greater than 100%")),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "x"}}},
     ("spec.updateStrategy.rollingUpdate.maxUnavailable",
      "a valid percent string must be a numeric string followed by an ending '%'")),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": -1}}},
     ("spec.updateStrategy.rollingUpdate.maxUnavailable", "must be greater than or equal to 0")),
])
def test_validation_messages(change: Obj, expected: tuple[str, str]) -> None:
    obj = defaulted(ds())
    for key, value in change.items():
        if value is None:
            obj["spec"].pop(key)
        else:
            obj["spec"][key] = value
    assert expected in causes(obj)


def test_template_rules_and_immutable_selector() -> None:
    obj = defaulted(ds())
    obj["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5
    found = causes(obj)
    assert ("spec.template.spec.restartPolicy", 'Unsupported value: "OnFailure": supported values: "Always"') in found
    assert ("spec.template.spec.activeDeadlineSeconds",
            "Forbidden: activeDeadlineSeconds in DaemonSet is not Supported") in found
    old = defaulted(ds())
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "a", "tier": "x"}}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    assert causes(new, old) == [("spec.selector", "field is immutable")]
    surge = defaulted(ds(updateStrategy={"type": "RollingUpdate",
                                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}}))
    assert causes(surge) == []


# ---------------------------------------------------------------- eligibility
def node(name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None) -> Obj:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


def test_automatic_tolerations() -> None:
    spec: Obj = {"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                                  "tolerationSeconds": 300}, {"key": "mine", "operator": "Exists"}]}
    add_daemon_tolerations(spec)
    keys = [(t["key"], t.get("effect")) for t in spec["tolerations"]]
    assert ("node.kubernetes.io/not-ready", "NoExecute") in keys
    assert ("node.kubernetes.io/unreachable", "NoExecute") in keys
    for key in ("disk-pressure", "memory-pressure", "pid-pressure", "unschedulable"):
        assert (f"node.kubernetes.io/{key}", "NoSchedule") in keys
    assert ("node.kubernetes.io/network-unavailable", "NoSchedule") not in keys
    not_ready = [t for t in spec["tolerations"] if t["key"] == "node.kubernetes.io/not-ready"]
    assert not_ready == [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]
    assert {"key": "mine", "operator": "Exists"} in spec["tolerations"]
    host = {"hostNetwork": True}
    add_daemon_tolerations(host)
    assert {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists",
            "effect": "NoSchedule"} in host["tolerations"]


def test_node_should_run_daemon_pod() -> None:
    plain = daemon_pod_spec(ds())
    assert node_should_run_daemon_pod(node("n1"), plain) == (True, True)
    # the automatic tolerations cover cordoned and not-ready nodes
    cordoned = node("n1", taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])
    assert node_should_run_daemon_pod(cordoned, plain) == (True, True)
    not_ready = node("n1", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}])
    assert node_should_run_daemon_pod(not_ready, plain) == (True, True)
    # an untolerated NoSchedule taint: no new pod, a running one stays; NoExecute: it goes too
    no_schedule = node("n1", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    assert node_should_run_daemon_pod(no_schedule, plain) == (False, True)
    no_execute = node("n1", taints=[{"key": "dedicated", "value": "db", "effect": "NoExecute"}])
    assert node_should_run_daemon_pod(no_execute, plain) == (False, False)
    prefer = node("n1", taints=[{"key": "dedicated", "effect": "PreferNoSchedule"}])
    assert node_should_run_daemon_pod(prefer, plain) == (True, True)
    tolerant = ds()
    tolerant["spec"]["template"]["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    assert node_should_run_daemon_pod(no_execute, daemon_pod_spec(tolerant)) == (True, True)
    # nodeSelector, node affinity and nodeName
    selective = ds()
    selective["spec"]["template"]["spec"]["nodeSelector"] = {"role": "web"}
    assert node_should_run_daemon_pod(node("n1", {"role": "web"}), daemon_pod_spec(selective)) == (True, True)
    assert node_should_run_daemon_pod(node("n1", {"role": "db"}), daemon_pod_spec(selective)) == (False, False)
    affine = ds()
    affine["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}}
    assert node_should_run_daemon_pod(node("n1", {"zone": "b"}), daemon_pod_spec(affine))[0]
    assert not node_should_run_daemon_pod(node("n1", {"zone": "c"}), daemon_pod_spec(affine))[0]
    named = ds()
    named["spec"]["template"]["spec"]["nodeName"] = "n2"
    assert node_should_run_daemon_pod(node("n1"), daemon_pod_spec(named)) == (False, False)
    assert node_should_run_daemon_pod(node("n2"), daemon_pod_spec(named)) == (True, True)


def test_placement_affinity_and_target_node() -> None:
    spec: Obj = {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]}}}
    replace_node_affinity(spec, "n7")
    required = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required == {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}]}
    assert spec["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert target_node({"spec": spec}) == "n7"
    assert target_node({"spec": {**spec, "nodeName": "n8"}}) == "n8"
    assert target_node({"spec": {}}) == ""
    # the scheduler's node affinity (shared) honours matchFields on metadata.name
    assert pod_spec_matches_node(spec, {}, "n7") and not pod_spec_matches_node(spec, {}, "n8")
    assert not node_selector_matches({"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["n7"]}]}]}, {}, "n7")
    blank: Obj = {}
    replace_node_affinity(blank, "n1")
    assert target_node({"spec": blank}) == "n1"


# ---------------------------------------------------------------- rollout steps
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def pod(name: str, hash_: str, ready: bool = True, deleting: bool = False) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": {REVISION_HASH_LABEL: hash_},
                 "creationTimestamp": "2025-12-31T00:00:00Z"}
    if deleting:
        meta["deletionTimestamp"] = "2025-12-31T23:59:00Z"
    conditions = [{"type": "Ready", "status": "True" if ready else "False",
                   "lastTransitionTime": "2025-12-31T00:00:00Z"}]
    return {"metadata": meta, "spec": {}, "status": {"phase": "Running", "conditions": conditions}}


def test_update_counts() -> None:
    assert update_counts(defaulted(ds()), 10) == (0, 1)
    pct = defaulted(ds(updateStrategy={"type": "RollingUpdate",
                                       "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0}}))
    assert update_counts(pct, 10) == (0, 3)  # rounded up
    surge = defaulted(ds(updateStrategy={"type": "RollingUpdate",
                                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "50%"}}))
    assert update_counts(surge, 3) == (2, 0)
    assert update_counts(defaulted(ds(updateStrategy={"type": "OnDelete"})), 3) == (0, 1)


def test_rolling_update_plan_without_surge() -> None:
    obj = defaulted(ds(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}))
    nodes = {"a": [pod("a1", "old")], "b": [pod("b1", "old")], "c": [pod("c1", "old")], "d": [pod("d1", "new")]}
    delete, create = rolling_update_plan(obj, nodes, "new", 4, NOW)
    assert [p["metadata"]["name"] for p in delete] == ["a1", "b1"] and create == []
    # one node already unavailable (its old pod terminating): only one more may go
    nodes["a"] = [pod("a1", "old", deleting=True)]
    delete, _ = rolling_update_plan(obj, nodes, "new", 4, NOW)
    assert [p["metadata"]["name"] for p in delete] == ["b1"]
    # an unready old pod is replaced regardless of the budget
    nodes["d"] = [pod("d1", "new", ready=False)]
    nodes["c"] = [pod("c1", "old", ready=False)]
    delete, _ = rolling_update_plan(obj, nodes, "new", 4, NOW)
    assert [p["metadata"]["name"] for p in delete] == ["c1"]


def test_rolling_update_plan_with_surge() -> None:
    obj = defaulted(ds(updateStrategy={"type": "RollingUpdate",
                                       "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}))
    nodes = {"a": [pod("a1", "old")], "b": [pod("b1", "old")]}
    assert rolling_update_plan(obj, nodes, "new", 2, NOW) == ([], ["a"])
    nodes["a"].append(pod("a2", "new", ready=False))
    assert rolling_update_plan(obj, nodes, "new", 2, NOW) == ([], [])  # waiting for a2
    nodes["a"][1] = pod("a2", "new")
    delete, create = rolling_update_plan(obj, nodes, "new", 2, NOW)
    assert [p["metadata"]["name"] for p in delete] == ["a1"] and create == ["b"]
