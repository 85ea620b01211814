"""The pure pieces of ``kubectl logs`` and ``kubectl exec``: the default container, a workload's pod
selector, the pod kubectl picks, ``--prefix`` and ``--since-time`` (:mod:`minik8s.kubectl.attaching`,
:mod:`minik8s.kubectl.logs`)."""

from __future__ import annotations

import pytest

from minik8s.api.meta import TypedObject
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.attaching import (
    NoSelector,
    all_container_names,
    attach_order,
    default_container,
    logging_order,
    selector_of,
)
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.logs import prefix_lines, requests_for, since_time_param


def _pod(*names: str, init: tuple[str, ...] = (), annotation: str | None = None) -> dict:
    meta: dict = {"name": "p", "namespace": "ns"}
    if annotation:
        meta["annotations"] = {"kubectl.kubernetes.io/default-container": annotation}
    return {"metadata": meta, "spec": {"containers": [{"name": n} for n in names],
                                       "initContainers": [{"name": n} for n in init]}}


def test_default_container_and_notice() -> None:
    assert default_container(_pod("only")) == ("only", None)
    assert default_container(_pod("c1", "c2")) == ("c1", 'Defaulted container "c1" out of: c1, c2')
    assert default_container(_pod("c1", init=("setup",))) == \
        ("c1", 'Defaulted container "c1" out of: c1, setup (init)')
    assert default_container(_pod("c1", "c2", annotation="c2")) == ("c2", None)
    assert default_container(_pod("c1", annotation="gone")) == \
        ("c1", 'Default container name "gone" not found in pod p')
    assert default_container(_pod("c1", annotation="gone"), for_logs=False) == ("c1", None)
    with pytest.raises(KubectlError, match="does not have any containers"):
        default_container(_pod())
    assert all_container_names(_pod("a", "b", init=("i",))) == "a, b, i (init)"


def test_requests_for() -> None:
    reqs, notice = requests_for(_pod("c1", "c2", init=("i",)), None, True)
    assert [r.prefix for r in reqs] == ["[pod/p/i] ", "[pod/p/c1] ", "[pod/p/c2] "] and notice is None
    reqs, notice = requests_for(_pod("c1", "c2"), "c2", False)
    assert [r.container for r in reqs] == ["c2"] and notice is None
    with pytest.raises(KubectlError, match="^container nope is not valid for pod p$"):
        requests_for(_pod("c1"), "nope", False)


def _rt(kind: str, group: str = "apps") -> ResourceType:
    return ResourceType(group=group, version="v1", kind=kind, plural=kind.lower() + "s", singular=kind.lower(),
                        namespaced=True, model=TypedObject)


def test_selector_of() -> None:
    sel = {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "t", "operator": "Exists"}]}
    assert selector_of(_rt("Deployment"), {"spec": {"selector": sel}}) == "a=1,b=2,t"
    assert selector_of(_rt("Service", ""), {"spec": {"selector": {"x": "y"}}}) == "x=y"
    with pytest.raises(NoSelector, match="^invalid service 's': Service is defined without a selector$"):
        selector_of(_rt("Service", ""), {"metadata": {"name": "s"}, "spec": {}})
    with pytest.raises(NoSelector, match=r"^selector for \*v1.ConfigMap not implemented$"):
        selector_of(_rt("ConfigMap", ""), {})


def test_pod_orders() -> None:
    def pod(name: str, node: str = "n", phase: str = "Running", ready: bool = False, created: str = "") -> dict:
        conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": created}] if ready else []
        return {"metadata": {"name": name, "creationTimestamp": created},
                "spec": {"nodeName": node}, "status": {"phase": phase, "conditions": conditions}}

    pods = [pod("unassigned", node=""), pod("pending", phase="Pending"), pod("young", created="2026-01-02T00:00:00Z"),
            pod("old", created="2026-01-01T00:00:00Z"), pod("ready", ready=True, created="2026-01-03T00:00:00Z")]
    assert sorted(pods, key=logging_order)[0]["metadata"]["name"] == "ready"
    assert sorted(pods, key=attach_order)[0]["metadata"]["name"] == "ready"
    rest = pods[:4]
    assert [p["metadata"]["name"] for p in sorted(rest, key=logging_order)] == ["old", "young", "pending",
                                                                                "unassigned"]


def test_prefix_lines_across_chunks() -> None:
    text, start = prefix_lines("a\nb", "[x] ", True)
    assert (text, start) == ("[x] a\n[x] b", False)
    assert prefix_lines("c\nd\n", "[x] ", start) == ("c\n[x] d\n", True)
    assert prefix_lines("a\n", "", True) == ("a\n", True)


def test_since_time_param() -> None:
    assert since_time_param("2026-01-01T01:00:00+01:00") == "2026-01-01T00:00:00Z"
    assert since_time_param("2026-01-01T00:00:00.5Z") == "2026-01-01T00:00:00Z"
    with pytest.raises(KubectlError, match='^parsing time "bad"'):
        since_time_param("bad")
