"""The newer fields of topology spread constraints (``matchLabelKeys``, ``minDomains``,
``nodeAffinityPolicy``, ``nodeTaintsPolicy``) and pod affinity terms (``namespaceSelector``,
``matchLabelKeys``, ``mismatchLabelKeys``): the scheduler plugins on plain dicts, the apiserver's
create-time merge and the validation of both."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from minik8s.api.base import Obj
from minik8s.apiserver.strategies.pod import PodStrategy, validate_pod_spec
from minik8s.scheduler.framework import CycleState, Status
from minik8s.scheduler.nodeinfo import PodInfo, Snapshot
from minik8s.scheduler.plugins import InterPodAffinity, PodTopologySpread
from tests.unit.test_scheduler_plugins import HOST, ZONE, ZONED, node, pod, reasons

SPREAD_REASON = "node(s) didn't match pod topology spread constraints"
NO_TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


def namespace(name: str, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def filter_status(plugin: PodTopologySpread | InterPodAffinity, incoming: Obj, target: str, nodes: list[Obj],
                  pods: Sequence[Obj] = (), namespaces: Sequence[Obj] = ()) -> Status:
    snapshot = Snapshot.build(nodes, pods, namespaces)
    state = CycleState(snapshot)
    info = PodInfo(incoming)
    status = plugin.pre_filter(state, info)
    if status.is_skip():
        return Status.success()
    node_info = snapshot.get(target)
    assert node_info is not None
    return plugin.filter(state, info, node_info)


def fits(plugin: PodTopologySpread | InterPodAffinity, incoming: Obj, nodes: list[Obj], pods: Sequence[Obj] = (),
         namespaces: Sequence[Obj] = ()) -> list[str]:
    """The names of the nodes the plugin lets the pod on."""
    return [str(n["metadata"]["name"]) for n in nodes
            if filter_status(plugin, incoming, n["metadata"]["name"], nodes, pods, namespaces).is_success()]


def scores(plugin: PodTopologySpread | InterPodAffinity, incoming: Obj, nodes: list[Obj], pods: Sequence[Obj] = (),
           namespaces: Sequence[Obj] = ()) -> dict[str, int]:
    snapshot = Snapshot.build(nodes, pods, namespaces)
    state = CycleState(snapshot)
    info = PodInfo(incoming)
    if plugin.pre_score(state, info, snapshot.nodes).is_skip():
        return {}
    out = {n.name: plugin.score(state, info, n) for n in snapshot.nodes}
    plugin.normalize_score(state, info, out)
    return out


def created(p: Obj) -> Obj:
    """``p`` as the apiserver stores it after create (affinity label keys merged)."""
    PodStrategy().prepare_for_create(p)
    return p


# ---------------------------------------------------------------------------- PodTopologySpread
def spread(max_skew: int = 1, key: str = ZONE, when: str = "DoNotSchedule", **extra: object) -> Obj:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def web(name: str, version: str, where: str | None = None, **kwargs: object) -> Obj:
    return pod(name, labels={"app": "web", "version": version}, node_name=where, **kwargs)  # type: ignore[arg-type]


def test_spread_match_label_keys_count_only_pods_with_the_incoming_pods_values() -> None:
    old = [web("o1", "v1", "a1"), web("o2", "v1", "a2")]
    plain = web("n", "v2", spread=[spread()])
    assert fits(PodTopologySpread(), plain, ZONED, old) == ["b1"]
    by_version = web("n", "v2", spread=[spread(matchLabelKeys=["version"])])
    assert fits(PodTopologySpread(), by_version, ZONED, old) == ["a1", "a2", "b1"]
    # a key the incoming pod has no label for is ignored
    unlabelled = pod("n", labels={"app": "web"}, spread=[spread(matchLabelKeys=["version"])])
    assert fits(PodTopologySpread(), unlabelled, ZONED, old) == ["b1"]
    # an absent labelSelector still selects nothing
    no_selector = web("n", "v1", spread=[{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                          "matchLabelKeys": ["version"]}])
    assert fits(PodTopologySpread(), no_selector, ZONED, old) == ["a1", "a2", "b1"]


def test_spread_match_label_keys_in_scores() -> None:
    old = [web("o1", "v1", "a1"), web("o2", "v1", "a2")]
    plain = scores(PodTopologySpread(), web("n", "v2", spread=[spread(when="ScheduleAnyway")]), ZONED, old)
    assert plain["b1"] > plain["a1"]
    keyed = scores(PodTopologySpread(), web("n", "v2", spread=[spread(when="ScheduleAnyway",
                                                                       matchLabelKeys=["version"])]), ZONED, old)
    assert keyed == {"a1": 100, "a2": 100, "b1": 100}


def test_spread_min_domains_takes_the_global_minimum_as_zero() -> None:
    two_zones = [web("w1", "v1", "a1"), web("w2", "v1", "b1")]
    assert fits(PodTopologySpread(), web("n", "v1", spread=[spread()]), ZONED, two_zones) == ["a1", "a2", "b1"]
    # only 2 domains but 3 wanted: the minimum counts as 0, and every zone already has 1
    wants_three = web("n", "v1", spread=[spread(minDomains=3)])
    st = filter_status(PodTopologySpread(), wants_three, "a1", ZONED, two_zones)
    assert reasons(st) == [SPREAD_REASON]
    assert fits(PodTopologySpread(), wants_three, ZONED, two_zones) == []
    # enough domains: minDomains changes nothing
    assert fits(PodTopologySpread(), web("n", "v1", spread=[spread(minDomains=2)]), ZONED, two_zones) == [
        "a1", "a2", "b1"]
    # an empty cluster of too few domains still takes the first pods (0 + 1 - 0 <= 1)
    assert fits(PodTopologySpread(), wants_three, ZONED) == ["a1", "a2", "b1"]


def test_spread_node_affinity_policy() -> None:
    existing = [web("w1", "v1", "a1")]
    # Honor (default): only zone a counts, its minimum is 1 (b1 is left to NodeAffinity's filter)
    honor = web("n", "v1", spread=[spread()], node_selector={ZONE: "a"})
    assert fits(PodTopologySpread(), honor, ZONED, existing) == ["a1", "a2", "b1"]
    explicit = web("n", "v1", spread=[spread(nodeAffinityPolicy="Honor")], node_selector={ZONE: "a"})
    assert fits(PodTopologySpread(), explicit, ZONED, existing) == ["a1", "a2", "b1"]
    # Ignore: zone b counts (0 pods) although the pod may not go there
    ignore = web("n", "v1", spread=[spread(nodeAffinityPolicy="Ignore")], node_selector={ZONE: "a"})
    assert fits(PodTopologySpread(), ignore, ZONED, existing) == ["b1"]


def test_spread_node_taints_policy() -> None:
    nodes = [node("a1", labels={ZONE: "a"}), node("b1", labels={ZONE: "b"}, taints=NO_TAINT)]
    existing = [web("w1", "v1", "a1")]
    # Ignore (default): the tainted zone b counts with 0 pods
    assert fits(PodTopologySpread(), web("n", "v1", spread=[spread()]), nodes, existing) == ["b1"]
    # Honor: a node with a taint the pod does not tolerate does not count
    honor = web("n", "v1", spread=[spread(nodeTaintsPolicy="Honor")])
    assert fits(PodTopologySpread(), honor, nodes, existing) == ["a1", "b1"]
    tolerates = web("n", "v1", spread=[spread(nodeTaintsPolicy="Honor")],
                    tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}])
    assert fits(PodTopologySpread(), tolerates, nodes, existing) == ["b1"]
    # PreferNoSchedule taints never exclude a node
    soft = [node("a1", labels={ZONE: "a"}),
            node("b1", labels={ZONE: "b"}, taints=[{"key": "k", "effect": "PreferNoSchedule"}])]
    assert fits(PodTopologySpread(), honor, soft, existing) == ["b1"]


def test_spread_node_taints_policy_in_scores() -> None:
    nodes = [node("a1", labels={ZONE: "a"}), node("a2", labels={ZONE: "a"}),
             node("b1", labels={ZONE: "b"}, taints=NO_TAINT)]
    existing = [web("w1", "v1", "a1"), web("w2", "v1", "b1")]
    # only the feasible nodes are scored; b1's pod counts unless Honor leaves b1 out
    ignore = scores(PodTopologySpread(), web("n", "v1", spread=[spread(key=HOST, when="ScheduleAnyway")]),
                    nodes, existing)
    assert ignore["a2"] > ignore["a1"]
    honor = scores(PodTopologySpread(), web("n", "v1", spread=[spread(when="ScheduleAnyway",
                                                                      nodeTaintsPolicy="Honor")]), nodes, existing)
    assert honor["a1"] == honor["a2"]


# ---------------------------------------------------------------------------- InterPodAffinity
def term(**extra: object) -> Obj:
    return {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOST, **extra}


def required(kind: str, *terms: Obj) -> Obj:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def preferred(kind: str, weight: int, t: Obj) -> Obj:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "podAffinityTerm": t}]}}


NAMESPACES = [namespace("default"), namespace("prod", team="data"), namespace("dev", team="data", env="dev"),
              namespace("other")]
DBS = [pod("db", ns="prod", labels={"app": "db"}, node_name="a1"),
       pod("db", ns="other", labels={"app": "db"}, node_name="a2")]


@pytest.mark.parametrize(("t", "allowed"), [
    (term(), ["a1", "a2", "b1"]),  # neither namespaces nor selector: the pod's own namespace
    (term(namespaceSelector={"matchLabels": {"team": "data"}}), ["a2", "b1"]),
    (term(namespaceSelector={"matchLabels": {"env": "dev"}}), ["a1", "a2", "b1"]),
    (term(namespaceSelector={}), ["b1"]),  # {}: every namespace
    (term(namespaces=["other"], namespaceSelector={"matchLabels": {"team": "data"}}), ["b1"]),  # merged
    (term(namespaces=["other"]), ["a1", "b1"]),
])
def test_anti_affinity_namespace_selector(t: Obj, allowed: list[str]) -> None:
    p = pod("p", affinity=required("podAntiAffinity", t))
    assert fits(InterPodAffinity(), p, ZONED, DBS, NAMESPACES) == allowed


def test_affinity_namespace_selector_and_the_first_pod_of_a_group() -> None:
    p = pod("p", affinity=required("podAffinity", term(namespaceSelector={"matchLabels": {"team": "data"}})))
    assert fits(InterPodAffinity(), p, ZONED, DBS, NAMESPACES) == ["a1"]
    # no pod matches anywhere: a pod matching its own term (its namespace selected) may start the group
    own = pod("db", ns="dev", labels={"app": "db"},
              affinity=required("podAffinity", term(namespaceSelector={"matchLabels": {"team": "data"}})))
    assert fits(InterPodAffinity(), own, ZONED, [], NAMESPACES) == ["a1", "a2", "b1"]
    unselected = pod("db", ns="other", labels={"app": "db"},
                     affinity=required("podAffinity", term(namespaceSelector={"matchLabels": {"team": "data"}})))
    assert fits(InterPodAffinity(), unselected, ZONED, [], NAMESPACES) == []


def test_existing_pods_anti_affinity_namespace_selector_is_symmetric() -> None:
    guard = pod("guard", ns="other", node_name="a1",
                affinity=required("podAntiAffinity", term(namespaceSelector={"matchLabels": {"team": "data"}})))
    in_prod = pod("db", ns="prod", labels={"app": "db"})
    st = filter_status(InterPodAffinity(), in_prod, "a1", ZONED, [guard], NAMESPACES)
    assert reasons(st) == ["node(s) didn't satisfy existing pods anti-affinity rules"]
    in_default = pod("db", ns="default", labels={"app": "db"})
    assert fits(InterPodAffinity(), in_default, ZONED, [guard], NAMESPACES) == ["a1", "a2", "b1"]


def test_preferred_terms_namespace_selector() -> None:
    p = pod("p", affinity=preferred("podAffinity", 10, term(namespaceSelector={"matchLabels": {"team": "data"}})))
    assert scores(InterPodAffinity(), p, ZONED, DBS, NAMESPACES) == {"a1": 100, "a2": 0, "b1": 0}
    fan = pod("fan", ns="other", node_name="b1",
              affinity=preferred("podAffinity", 10, term(namespaceSelector={"matchLabels": {"team": "data"}})))
    incoming = pod("db", ns="prod", labels={"app": "db"})
    assert scores(InterPodAffinity(), incoming, ZONED, [fan], NAMESPACES) == {"a1": 0, "a2": 0, "b1": 100}
    # without the namespace's labels known, nothing is selected
    assert scores(InterPodAffinity(), incoming, ZONED, [fan]) == {}


def rolling(name: str, hash_: str, where: str | None = None, kind: str = "podAntiAffinity", **t: object) -> Obj:
    labels = {"app": "db", "pod-template-hash": hash_}
    return created(pod(name, labels=labels, node_name=where, affinity=required(kind, term(**t))))


def test_merge_of_match_and_mismatch_label_keys_on_create() -> None:
    p = rolling("p", "h1", matchLabelKeys=["pod-template-hash", "absent"], mismatchLabelKeys=["app"])
    merged = p["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert merged["labelSelector"] == {"matchLabels": {"app": "db"}, "matchExpressions": [
        {"key": "pod-template-hash", "operator": "In", "values": ["h1"]},
        {"key": "app", "operator": "NotIn", "values": ["db"]}]}
    # preferred terms too; a term without labelSelector is left alone
    spec_affinity = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"topologyKey": HOST, "labelSelector": {}, "matchLabelKeys": ["a"]}},
        {"weight": 1, "podAffinityTerm": {"topologyKey": HOST, "matchLabelKeys": ["a"]}}]}}
    q = created(pod("q", labels={"a": "1"}, affinity=spec_affinity))
    terms = q["spec"]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert terms[0]["podAffinityTerm"]["labelSelector"] == {
        "matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}
    assert "labelSelector" not in terms[1]["podAffinityTerm"]


def test_match_label_keys_in_required_anti_affinity_and_its_symmetry() -> None:
    old = [rolling("old", "h1", "a1", matchLabelKeys=["pod-template-hash"])]
    # a new revision ignores the old pods: it may share their node
    new = rolling("new", "h2", matchLabelKeys=["pod-template-hash"])
    assert fits(InterPodAffinity(), new, ZONED, old) == ["a1", "a2", "b1"]
    same = rolling("same", "h1", matchLabelKeys=["pod-template-hash"])
    assert fits(InterPodAffinity(), same, ZONED, old) == ["a2", "b1"]
    # an old pod's term (merged with its own hash) still keeps its revision away, and only it
    plain_same = created(pod("x", labels={"app": "db", "pod-template-hash": "h1"}))
    assert fits(InterPodAffinity(), plain_same, ZONED, old) == ["a2", "b1"]
    plain_new = created(pod("y", labels={"app": "db", "pod-template-hash": "h2"}))
    assert fits(InterPodAffinity(), plain_new, ZONED, old) == ["a1", "a2", "b1"]


def test_mismatch_label_keys_in_required_affinity_and_preferred_terms() -> None:
    existing = [pod("t1", labels={"app": "db", "tenant": "t1"}, node_name="a1"),
                pod("t2", labels={"app": "db", "tenant": "t2"}, node_name="b1")]
    # join a db of another tenant only
    p = created(pod("p", labels={"tenant": "t1"}, affinity=required("podAffinity", term(mismatchLabelKeys=["tenant"]))))
    assert fits(InterPodAffinity(), p, ZONED, existing) == ["b1"]
    q = created(pod("q", labels={"tenant": "t1"},
                    affinity=preferred("podAffinity", 50, term(matchLabelKeys=["tenant"], topologyKey=ZONE))))
    assert scores(InterPodAffinity(), q, ZONED, existing) == {"a1": 100, "a2": 100, "b1": 0}


# ---------------------------------------------------------------------------- validation
def spec_with(**fields: object) -> Obj:
    return {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Always", **fields}


def messages(spec: Obj) -> list[str]:
    return [f"{path}: {msg}" if value is None else f"{path}: {value!r}: {msg}"
            for path, value, msg in validate_pod_spec(spec)]


def test_topology_spread_validation() -> None:
    tsc = "spec.topologySpreadConstraints"
    assert messages(spec_with(topologySpreadConstraints=[spread(minDomains=2, matchLabelKeys=["version"],
                                                                nodeAffinityPolicy="Ignore",
                                                                nodeTaintsPolicy="Honor")])) == []
    assert messages(spec_with(topologySpreadConstraints=[spread(when="ScheduleAnyway", minDomains=0)])) == [
        f"{tsc}[0].minDomains: 0: must be greater than zero",
        f"{tsc}[0].minDomains: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"]
    assert messages(spec_with(topologySpreadConstraints=[spread(nodeAffinityPolicy="Always",
                                                                nodeTaintsPolicy="honor")])) == [
        f'{tsc}[0].nodeAffinityPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"',
        f'{tsc}[0].nodeTaintsPolicy: Unsupported value: "honor": supported values: "Honor", "Ignore"']
    assert messages(spec_with(topologySpreadConstraints=[spread(matchLabelKeys=["app", "bad key"])])) == [
        f"{tsc}[0].matchLabelKeys[0]: 'app': exists in both matchLabelKeys and labelSelector",
        f"{tsc}[0].matchLabelKeys[1]: 'bad key': name part must consist of alphanumeric characters, '-', '_' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
    no_selector = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["v"]}
    assert messages(spec_with(topologySpreadConstraints=[no_selector])) == [
        f"{tsc}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"]
    assert messages(spec_with(topologySpreadConstraints=[spread(max_skew=0, when="Sometimes", key=""),
                                                         spread(), spread()])) == [
        f"{tsc}[0].maxSkew: 0: must be greater than zero",
        f"{tsc}[0].topologyKey: Required value: can not be empty",
        f'{tsc}[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: "DoNotSchedule", '
        '"ScheduleAnyway"',
        f"{tsc}[1].{{topologyKey, whenUnsatisfiable}}: Duplicate value: \"{{{ZONE}, DoNotSchedule}}\""]


def test_pod_affinity_validation() -> None:
    anti = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    ok = term(namespaceSelector={"matchLabels": {"team": "data"}}, matchLabelKeys=["h"], mismatchLabelKeys=["t"])
    assert messages(spec_with(affinity=required("podAntiAffinity", ok))) == []
    assert messages(spec_with(affinity=required("podAntiAffinity", term(matchLabelKeys=["h"],
                                                                        mismatchLabelKeys=["h"])))) == [
        f"{anti}.matchLabelKeys[0]: 'h': exists in both matchLabelKeys and mismatchLabelKeys"]
    no_selector = {"topologyKey": HOST, "matchLabelKeys": ["h"], "mismatchLabelKeys": ["t"]}
    assert messages(spec_with(affinity=required("podAntiAffinity", no_selector))) == [
        f"{anti}.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        f"{anti}.mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not set"]
    bad_ns = term(namespaces=["Bad_NS"], namespaceSelector={"matchExpressions": [{"key": "a", "operator": "Nope"}]})
    got = messages(spec_with(affinity=required("podAffinity", bad_ns)))
    prefix = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    assert [m.split(":")[0] for m in got] == [f"{prefix}.namespaceSelector", f"{prefix}.namespace"]
    weighted = preferred("podAffinity", 0, {"labelSelector": {}, "topologyKey": ""})
    pref = "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
    got = messages(spec_with(affinity=weighted))
    assert got[:2] == [f"{pref}.weight: 0: must be in the range 1-100",
                       f"{pref}.podAffinityTerm.topologyKey: Required value: can not be empty"]


def test_match_label_keys_also_in_the_selector_is_refused_after_the_merge() -> None:
    # the user's own key in the selector plus the merged expression: Kubernetes reports it at the
    # term's path indexed by the key's position
    p = created(pod("p", labels={"app": "db"}, affinity=required("podAntiAffinity", term(matchLabelKeys=["app"]))))
    causes = PodStrategy().validate(p, None)
    anti = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    assert (f"{anti}[0]", "app", "exists in both matchLabelKeys and labelSelector") in causes
    # a pod without the label: nothing merged, nothing refused (as in Kubernetes)
    q = created(pod("q", affinity=required("podAntiAffinity", term(matchLabelKeys=["app"]))))
    assert not [c for c in PodStrategy().validate(q, None) if "matchLabelKeys" in c[2]]
