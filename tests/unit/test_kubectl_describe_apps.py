"""The pure pieces of ``kubectl describe deployment|replicaset`` (:mod:`minik8s.kubectl.describe.apps`)."""

from __future__ import annotations

from minik8s.kubectl.describe.apps import pod_phase_counts, replica_sets_text, split_replica_sets

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "img:2"}]}}


def _rs(name: str, created: str, image: str, owner: str = "d-uid", controller: bool = True) -> dict:
    return {"metadata": {"name": name, "creationTimestamp": created,
                         "ownerReferences": [{"uid": owner, "controller": controller}]},
            "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "web", "pod-template-hash": name}},
                                                 "spec": {"containers": [{"name": "c", "image": image}]}}},
            "status": {"replicas": 1}}


def test_new_is_the_oldest_with_the_same_template_ignoring_the_hash() -> None:
    d = {"metadata": {"uid": "d-uid"}, "spec": {"template": TEMPLATE}}
    rss = [_rs("b", "2026-01-02T00:00:00Z", "img:1"), _rs("a", "2026-01-01T00:00:00Z", "img:0"),
           _rs("new2", "2026-01-04T00:00:00Z", "img:2"), _rs("new1", "2026-01-03T00:00:00Z", "img:2"),
           _rs("other", "2026-01-01T00:00:00Z", "img:2", owner="x"),
           _rs("not-controller", "2026-01-01T00:00:00Z", "img:2", controller=False)]
    old, new = split_replica_sets(d, rss)
    assert new is not None and new["metadata"]["name"] == "new1"
    assert [rs["metadata"]["name"] for rs in old] == ["a", "b", "new2"]
    assert split_replica_sets(d, []) == ([], None)


def test_replica_sets_text() -> None:
    assert replica_sets_text([]) == "<none>"
    rs = _rs("web-1", "", "img")
    rs["status"] = {}
    assert replica_sets_text([rs, _rs("web-2", "", "img")]) == \
        "web-1 (0/1 replicas created), web-2 (1/1 replicas created)"


def test_pod_phase_counts_only_the_controllers_pods() -> None:
    def pod(phase: str, uid: str = "rs") -> dict:
        return {"metadata": {"ownerReferences": [{"uid": uid, "controller": True}]}, "status": {"phase": phase}}

    pods = [pod("Running"), pod("Running"), pod("Pending"), pod("Succeeded"), pod("Failed"), pod("Unknown"),
            pod("Running", uid="other"), {"metadata": {}, "status": {"phase": "Running"}}]
    assert pod_phase_counts(pods, "rs") == (2, 1, 1, 1)
