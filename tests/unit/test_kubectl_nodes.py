"""kubectl taint parsing and taint arithmetic, and drain's pod filters (pure parts)."""

from __future__ import annotations

import pytest

from minik8s.api.base import Obj
from minik8s.kubectl.drain import DrainOptions, judge, refusal, warnings
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.taint import Taint, new_taints, parse_taint, parse_taints, split_args


@pytest.mark.parametrize(("spec", "taint"), [
    ("k=v:NoSchedule", Taint("k", "v", "NoSchedule")),
    ("k:NoExecute", Taint("k", "", "NoExecute")),
    ("example.com/k=v:PreferNoSchedule", Taint("example.com/k", "v", "PreferNoSchedule")),
    ("k", Taint("k")),
])
def test_parse_taint(spec: str, taint: Taint) -> None:
    assert parse_taint(spec) == taint


@pytest.mark.parametrize(("specs", "message"), [
    (["k=v"], "invalid taint spec: k=v, name part must consist of"),
    (["k=v:Never"], "invalid taint effect: Never, unsupported taint effect"),
    (["a:b:c"], "invalid taint spec: a:b:c"),
    (["k=v=w:NoSchedule"], "invalid taint spec: k=v=w:NoSchedule"),
    (["k=-bad:NoSchedule"], "invalid taint spec: k=-bad:NoSchedule, a valid label must be"),
    (["k=v:NoSchedule", "k=w:NoSchedule"], "duplicated taints with the same key and effect: k=w:NoSchedule"),
    (["k=v:NoSchedule", "k-"], 'can not both modify and remove the following taint(s) in the same command: '
                               '{"k":""}'),
])
def test_parse_taints_errors(specs: list[str], message: str) -> None:
    with pytest.raises(KubectlError) as info:
        parse_taints(specs)
    assert info.value.message.startswith(message), info.value.message


def test_split_args() -> None:
    assert split_args(["nodes", "n1", "k=v:NoSchedule", "j-"]) == (["nodes", "n1"], ["k=v:NoSchedule", "j-"])
    with pytest.raises(KubectlError, match="all resources must be specified before taint changes: n2"):
        split_args(["nodes", "n1", "k=v:NoSchedule", "n2"])


def node(*taints: Obj) -> Obj:
    return {"metadata": {"name": "n1"}, "spec": {"taints": list(taints)}}


def test_new_taints_words() -> None:
    a = {"key": "a", "value": "1", "effect": "NoSchedule"}
    b = {"key": "b", "effect": "NoExecute"}
    add, remove = parse_taints(["c=3:NoSchedule"])
    assert new_taints(node(a), add, remove, False) == ([{"key": "c", "value": "3", "effect": "NoSchedule"}, a],
                                                       "tainted")
    add, remove = parse_taints(["a:NoSchedule-"])
    assert new_taints(node(a, b), add, remove, False) == ([b], "untainted")
    add, remove = parse_taints(["a=2:NoSchedule"])
    assert new_taints(node(a, b), add, remove, True) == ([{"key": "a", "value": "2", "effect": "NoSchedule"}, b],
                                                         "modified")
    with pytest.raises(KubectlError, match="node n1 already has a taint"):
        new_taints(node(a), add, remove, False)
    add, remove = parse_taints(["c=3:NoSchedule", "b-"])
    assert new_taints(node(a, b), add, remove, False)[1] == "modified"
    add, remove = parse_taints(["zz-"])
    with pytest.raises(KubectlError, match='taint "zz" not found'):
        new_taints(node(a), add, remove, False)


def pod(name: str, controller: str | None = None, phase: str = "Running", empty_dir: bool = False,
        mirror: bool = False) -> Obj:
    meta: Obj = {"name": name, "namespace": "ns"}
    if controller:
        meta["ownerReferences"] = [{"kind": controller, "name": "x", "uid": "u", "controller": True}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    spec: Obj = {"volumes": [{"name": "scratch", "emptyDir": {}}]} if empty_dir else {}
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def test_drain_filters() -> None:
    plain = DrainOptions()
    assert judge(pod("rs", "ReplicaSet"), plain).delete
    assert judge(pod("done", phase="Succeeded"), plain).delete
    assert judge(pod("mirror", mirror=True), plain).kind == "skip"
    verdicts = [judge(p, plain) for p in (pod("a"), pod("b"), pod("ds", "DaemonSet"),
                                          pod("tmp", "ReplicaSet", empty_dir=True))]
    assert refusal(verdicts) == (
        "[cannot delete Pods that declare no controller (use --force to override): ns/a, ns/b, "
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ns/ds, "
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): ns/tmp]")
    assert refusal([judge(pod("a"), plain)]) == \
        "cannot delete Pods that declare no controller (use --force to override): ns/a"

    forced = DrainOptions(force=True, ignore_daemonsets=True, delete_emptydir_data=True)
    verdicts = [judge(p, forced) for p in (pod("a"), pod("ds", "DaemonSet"), pod("tmp", "ReplicaSet", empty_dir=True),
                                           pod("rs", "ReplicaSet"))]
    assert refusal(verdicts) is None
    assert [v.delete for v in verdicts] == [True, False, True, True]
    assert warnings(verdicts) == ("deleting Pods that declare no controller: ns/a; ignoring DaemonSet-managed "
                                  "Pods: ns/ds; deleting Pods with local storage: ns/tmp")
