"""Scheduler plugins and the framework, on plain node/pod dicts (no services)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from minik8s.api.base import Obj
from minik8s.scheduler.framework import (
    Code,
    CycleState,
    Diagnosis,
    FilterPlugin,
    FitError,
    Framework,
    Plugin,
    PluginRow,
    PreFilterPlugin,
    PreScorePlugin,
    SchedulingError,
    ScorePlugin,
    Status,
    default_normalize,
    fit_error_message,
)
from minik8s.scheduler.nodeinfo import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    NodeInfo,
    PodInfo,
    Resource,
    Snapshot,
    normalize_image,
    pod_requests,
)
from minik8s.scheduler.plugins import (
    DEFAULT_PLUGINS,
    ImageLocality,
    InterPodAffinity,
    NodeAffinity,
    NodeName,
    NodePorts,
    NodeReady,
    NodeResourcesBalancedAllocation,
    NodeResourcesFit,
    NodeResourcesLeastAllocated,
    NodeUnschedulable,
    PodTopologySpread,
    SelectorSpread,
    TaintToleration,
)
from minik8s.scheduler.plugins.helpers import requirement_matches, toleration_matches

GI = 1024**3
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


# ---------------------------------------------------------------------------- builders
def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str | None = "110", labels: dict[str, str] | None = None,
         taints: list[Obj] | None = None, ready: str | None = "True", unschedulable: bool = False,
         images: list[Obj] | None = None) -> Obj:
    alloc = {"cpu": cpu, "memory": memory}
    if pods is not None:
        alloc["pods"] = pods
    status: Obj = {"allocatable": alloc, "conditions": [] if ready is None else [{"type": "Ready", "status": ready}]}
    if images:
        status["images"] = images
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, **(labels or {})}}, "spec": spec, "status": status}


def pod(name: str, ns: str = "default", cpu: str | None = None, memory: str | None = None, *,
        labels: dict[str, str] | None = None, node_name: str | None = None, host_port: int | None = None,
        protocol: str = "TCP", host_ip: str | None = None, tolerations: list[Obj] | None = None,
        affinity: Obj | None = None, node_selector: dict[str, str] | None = None, owner_uid: str | None = None,
        spread: list[Obj] | None = None, init: list[Obj] | None = None, image: str = "busybox",
        extra: dict[str, str] | None = None) -> Obj:
    requests: Obj = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    requests.update(extra or {})
    container: Obj = {"name": "c", "image": image, "resources": {"requests": requests} if requests else {}}
    if host_port:
        port: Obj = {"containerPort": 80, "hostPort": host_port, "protocol": protocol}
        if host_ip:
            port["hostIP"] = host_ip
        container["ports"] = [port]
    spec: Obj = {"containers": [container], "schedulerName": "default-scheduler"}
    if node_name:
        spec["nodeName"] = node_name
    if tolerations:
        spec["tolerations"] = tolerations
    if affinity:
        spec["affinity"] = affinity
    if node_selector:
        spec["nodeSelector"] = node_selector
    if spread:
        spec["topologySpreadConstraints"] = spread
    if init:
        spec["initContainers"] = init
    meta: Obj = {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": labels or {}}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                    "uid": owner_uid, "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def run_filter(plugin: Plugin, incoming: Obj, target: str, nodes: list[Obj], pods: Sequence[Obj] = ()) -> Status:
    """PreFilter (if any) + Filter of one plugin against the node named ``target``."""
    snapshot = Snapshot.build(nodes, pods)
    state = CycleState(snapshot)
    info = PodInfo(incoming)
    if isinstance(plugin, PreFilterPlugin):
        status = plugin.pre_filter(state, info)
        if status.is_skip():
            return Status.success()
        if not status.is_success():
            return status
    assert isinstance(plugin, FilterPlugin)
    node_info = snapshot.get(target)
    assert node_info is not None
    return plugin.filter(state, info, node_info)


def run_score(plugin: ScorePlugin, incoming: Obj, nodes: list[Obj], pods: Sequence[Obj] = ()) -> dict[str, int]:
    """PreScore (if any) + Score + NormalizeScore of one plugin over every node."""
    snapshot = Snapshot.build(nodes, pods)
    state = CycleState(snapshot)
    info = PodInfo(incoming)
    if isinstance(plugin, PreScorePlugin):
        status = plugin.pre_score(state, info, snapshot.nodes)
        if status.is_skip():
            return {n.name: 0 for n in snapshot.nodes}
        assert status.is_success(), status
    scores = {n.name: plugin.score(state, info, n) for n in snapshot.nodes}
    plugin.normalize_score(state, info, scores)
    return scores


def reasons(status: Status) -> list[str]:
    return list(status.reasons)


# ---------------------------------------------------------------------------- pod requests
def test_pod_requests_sum_containers_and_max_init_containers() -> None:
    spec = {
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "200m", "memory": "100Mi"}}},
                       {"name": "b", "resources": {"requests": {"cpu": "300m"}}}],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1", "memory": "50Mi"}}}],
    }
    total, non_zero = pod_requests(spec)
    assert total.milli_cpu == 1000  # max(200m+300m, 1)
    assert total.memory == 100 * 1024**2  # max(100Mi, 50Mi)
    # scoring: container b has no memory request and counts as 200Mi
    assert non_zero.memory == 100 * 1024**2 + DEFAULT_MEMORY_REQUEST
    assert non_zero.milli_cpu == 1000


def test_pod_without_requests_counts_defaults_only_for_scoring() -> None:
    info = PodInfo(pod("p"))
    assert info.requests == Resource()
    assert info.non_zero_requests.milli_cpu == DEFAULT_MILLI_CPU_REQUEST
    assert info.non_zero_requests.memory == DEFAULT_MEMORY_REQUEST


def test_bad_quantity_is_a_pod_error() -> None:
    info = PodInfo(pod("p", cpu="lots"))
    assert info.errors and "invalid resource request" in info.errors[0]
    with pytest.raises(SchedulingError):
        Framework(DEFAULT_PLUGINS).schedule(info, Snapshot.build([node("n1")]))


# ---------------------------------------------------------------------------- NodeResourcesFit
def test_resources_fit() -> None:
    nodes = [node("n1", cpu="2", memory="4Gi")]
    assert run_filter(NodeResourcesFit(), pod("p", cpu="2", memory="4Gi"), "n1", nodes).is_success()
    st = run_filter(NodeResourcesFit(), pod("p", cpu="2500m"), "n1", nodes)
    assert st.code == Code.UNSCHEDULABLE and reasons(st) == ["Insufficient cpu"]
    st = run_filter(NodeResourcesFit(), pod("p", cpu="3", memory="5Gi"), "n1", nodes)
    assert reasons(st) == ["Insufficient cpu", "Insufficient memory"]


def test_resources_fit_counts_pods_already_on_the_node() -> None:
    nodes = [node("n1", cpu="2", memory="4Gi")]
    existing = [pod("a", cpu="1500m", node_name="n1"), pod("b", memory="3Gi", node_name="n1")]
    assert reasons(run_filter(NodeResourcesFit(), pod("p", cpu="600m"), "n1", nodes, existing)) == ["Insufficient cpu"]
    assert run_filter(NodeResourcesFit(), pod("p", cpu="500m"), "n1", nodes, existing).is_success()
    assert reasons(run_filter(NodeResourcesFit(), pod("p", memory="2Gi"), "n1", nodes, existing)) == \
        ["Insufficient memory"]


def test_resources_fit_zero_request_fits_a_full_node_and_pod_count_limit() -> None:
    nodes = [node("n1", cpu="1", pods="2")]
    full = [pod("a", cpu="1", node_name="n1")]
    assert run_filter(NodeResourcesFit(), pod("p"), "n1", nodes, full).is_success()
    two = [pod("a", node_name="n1"), pod("b", node_name="n1")]
    st = run_filter(NodeResourcesFit(), pod("p"), "n1", nodes, two)
    assert reasons(st) == ["Too many pods"]


def test_resources_fit_init_containers_and_extended_resources() -> None:
    nodes = [node("n1", cpu="2")]
    init = [{"name": "init", "resources": {"requests": {"cpu": "3"}}}]
    assert reasons(run_filter(NodeResourcesFit(), pod("p", cpu="100m", init=init), "n1", nodes)) == ["Insufficient cpu"]
    st = run_filter(NodeResourcesFit(), pod("p", extra={"nvidia.com/gpu": "1"}), "n1", nodes)
    assert reasons(st) == ["Insufficient nvidia.com/gpu"]
    gpu_node = node("g", cpu="2")
    gpu_node["status"]["allocatable"]["nvidia.com/gpu"] = "2"
    assert run_filter(NodeResourcesFit(), pod("p", extra={"nvidia.com/gpu": "2"}), "g", [gpu_node]).is_success()


def test_resources_fit_node_without_pods_allocatable_has_no_pod_limit() -> None:
    nodes = [node("n1", pods=None)]
    many = [pod(f"p{i}", node_name="n1") for i in range(200)]
    assert run_filter(NodeResourcesFit(), pod("p"), "n1", nodes, many).is_success()


# ---------------------------------------------------------------------------- node-level filters
def test_node_unschedulable() -> None:
    nodes = [node("n1", unschedulable=True)]
    st = run_filter(NodeUnschedulable(), pod("p"), "n1", nodes)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and reasons(st) == ["node(s) were unschedulable"]
    tol = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    assert run_filter(NodeUnschedulable(), pod("p", tolerations=tol), "n1", nodes).is_success()
    assert run_filter(NodeUnschedulable(), pod("p"), "n2", [node("n2")]).is_success()


@pytest.mark.parametrize(("ready", "taint_key"), [("False", "node.kubernetes.io/not-ready"),
                                                  (None, "node.kubernetes.io/not-ready"),
                                                  ("Unknown", "node.kubernetes.io/unreachable")])
def test_node_ready(ready: str | None, taint_key: str) -> None:
    nodes = [node("n1", ready=ready)]
    st = run_filter(NodeReady(), pod("p"), "n1", nodes)
    assert reasons(st) == [f"node(s) had untolerated taint {{{taint_key}: }}"]
    tol: list[Obj] = [{"key": taint_key, "operator": "Exists", "effect": "NoSchedule"}]
    assert run_filter(NodeReady(), pod("p", tolerations=tol), "n1", nodes).is_success()
    # a NoExecute toleration (what every pod gets for 300 s) does not tolerate NoSchedule
    no_execute: list[Obj] = [{"key": taint_key, "operator": "Exists", "effect": "NoExecute",
                              "tolerationSeconds": 300}]
    assert not run_filter(NodeReady(), pod("p", tolerations=no_execute), "n1", nodes).is_success()
    assert run_filter(NodeReady(), pod("p"), "ok", [node("ok", ready="True")]).is_success()


def test_node_name() -> None:
    nodes = [node("n1"), node("n2")]
    assert run_filter(NodeName(), pod("p", node_name="n1"), "n1", nodes).is_success()
    assert reasons(run_filter(NodeName(), pod("p", node_name="n1"), "n2", nodes)) == \
        ["node(s) didn't match the requested node name"]
    assert run_filter(NodeName(), pod("p"), "n2", nodes).is_success()


def test_node_ports() -> None:
    nodes = [node("n1")]
    used = [pod("a", host_port=8080, node_name="n1")]
    reason = ["node(s) didn't have free ports for the requested pod ports"]
    assert reasons(run_filter(NodePorts(), pod("p", host_port=8080), "n1", nodes, used)) == reason
    assert run_filter(NodePorts(), pod("p", host_port=8081), "n1", nodes, used).is_success()
    assert run_filter(NodePorts(), pod("p", host_port=8080, protocol="UDP"), "n1", nodes, used).is_success()
    assert run_filter(NodePorts(), pod("p"), "n1", nodes, used).is_success()
    # specific IPs: different addresses do not conflict, the wildcard conflicts with both
    by_ip = [pod("a", host_port=53, host_ip="10.0.0.1", node_name="n1")]
    assert run_filter(NodePorts(), pod("p", host_port=53, host_ip="10.0.0.2"), "n1", nodes, by_ip).is_success()
    assert not run_filter(NodePorts(), pod("p", host_port=53, host_ip="10.0.0.1"), "n1", nodes, by_ip).is_success()
    assert not run_filter(NodePorts(), pod("p", host_port=53), "n1", nodes, by_ip).is_success()


# ---------------------------------------------------------------------------- NodeAffinity
AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"


def required(*terms: Obj) -> Obj:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, op: str, *values: str) -> Obj:
    req: Obj = {"key": key, "operator": op}
    if values:
        req["values"] = list(values)
    return {"matchExpressions": [req]}


def test_node_selector() -> None:
    nodes = [node("ssd", labels={"disk": "ssd"}), node("hdd", labels={"disk": "hdd"})]
    p = pod("p", node_selector={"disk": "ssd"})
    assert run_filter(NodeAffinity(), p, "ssd", nodes).is_success()
    st = run_filter(NodeAffinity(), p, "hdd", nodes)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and reasons(st) == [AFFINITY_REASON]


@pytest.mark.parametrize(("term", "fits"), [
    (expr("disk", "In", "ssd", "nvme"), True),
    (expr("disk", "In", "hdd"), False),
    (expr("disk", "NotIn", "hdd"), True),
    (expr("disk", "NotIn", "ssd"), False),
    (expr("missing", "NotIn", "x"), True),
    (expr("disk", "Exists"), True),
    (expr("missing", "Exists"), False),
    (expr("missing", "DoesNotExist"), True),
    (expr("disk", "DoesNotExist"), False),
    (expr("cores", "Gt", "8"), True),
    (expr("cores", "Gt", "16"), False),
    (expr("cores", "Lt", "32"), True),
    (expr("cores", "Lt", "16"), False),
    (expr("disk", "Gt", "1"), False),  # label is not an integer
    (expr("cores", "Gt", "1", "2"), False),  # malformed: Gt takes exactly one value
    (expr("disk", "Bogus", "ssd"), False),
    ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}, True),
    ({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}, False),
    ({}, False),  # an empty term matches nothing
])
def test_required_node_affinity_operators(term: Obj, fits: bool) -> None:
    nodes = [node("n1", labels={"disk": "ssd", "cores": "16"})]
    assert run_filter(NodeAffinity(), pod("p", affinity=required(term)), "n1", nodes).is_success() is fits


def test_required_node_affinity_terms_are_ored_and_expressions_anded() -> None:
    nodes = [node("n1", labels={"a": "1", "b": "2"})]
    both = {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]},
                                 {"key": "b", "operator": "In", "values": ["3"]}]}
    assert not run_filter(NodeAffinity(), pod("p", affinity=required(both)), "n1", nodes).is_success()
    assert run_filter(NodeAffinity(), pod("p", affinity=required(both, expr("b", "In", "2"))), "n1",
                      nodes).is_success()
    # nodeSelector and affinity must both hold
    p = pod("p", affinity=required(expr("a", "In", "1")), node_selector={"b": "9"})
    assert not run_filter(NodeAffinity(), p, "n1", nodes).is_success()


def test_preferred_node_affinity_score() -> None:
    nodes = [node("a", labels={"zone": "z1", "disk": "ssd"}), node("b", labels={"zone": "z1"}), node("c")]
    pref = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 80, "preference": expr("disk", "In", "ssd")},
        {"weight": 20, "preference": expr("zone", "In", "z1")}]}}
    assert run_score(NodeAffinity(), pod("p", affinity=pref), nodes) == {"a": 100, "b": 20, "c": 0}
    assert run_score(NodeAffinity(), pod("p"), nodes) == {"a": 0, "b": 0, "c": 0}


def test_requirement_matches_direct() -> None:
    assert requirement_matches({"key": "k", "operator": "In", "values": ["v"]}, {"k": "v"})
    assert not requirement_matches({"key": "k", "operator": "In", "values": []}, {"k": "v"})


# ---------------------------------------------------------------------------- TaintToleration
def test_taint_toleration_filter() -> None:
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    nodes = [node("n1", taints=taints)]
    st = run_filter(TaintToleration(), pod("p"), "n1", nodes)
    assert reasons(st) == ["node(s) had untolerated taint {dedicated: gpu}"]
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    for tol in ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
                {"key": "dedicated", "operator": "Exists"},
                {"operator": "Exists"},
                {"key": "dedicated", "value": "gpu"}):
        assert run_filter(TaintToleration(), pod("p", tolerations=[tol]), "n1", nodes).is_success(), tol
    for tol in ({"key": "dedicated", "operator": "Equal", "value": "cpu"},
                {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"},
                {"key": "other", "operator": "Exists"}):
        assert not run_filter(TaintToleration(), pod("p", tolerations=[tol]), "n1", nodes).is_success(), tol


def test_taint_toleration_no_execute_filters_prefer_no_schedule_does_not() -> None:
    nodes = [node("x", taints=[{"key": "k", "effect": "NoExecute"}]),
             node("y", taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}])]
    assert reasons(run_filter(TaintToleration(), pod("p"), "x", nodes)) == ["node(s) had untolerated taint {k: }"]
    assert run_filter(TaintToleration(), pod("p"), "y", nodes).is_success()


def test_taint_toleration_score() -> None:
    soft = {"key": "k", "value": "v", "effect": "PreferNoSchedule"}
    nodes = [node("clean"), node("one", taints=[soft]),
             node("two", taints=[soft, {"key": "k2", "effect": "PreferNoSchedule"}])]
    assert run_score(TaintToleration(), pod("p"), nodes) == {"clean": 100, "one": 50, "two": 0}
    tol = [{"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"}]
    assert run_score(TaintToleration(), pod("p", tolerations=tol), nodes) == {"clean": 100, "one": 100, "two": 0}
    assert run_score(TaintToleration(), pod("p"), [node("a"), node("b")]) == {"a": 100, "b": 100}


def test_toleration_matches_empty_effect_matches_all() -> None:
    assert toleration_matches({"key": "k", "operator": "Exists"}, {"key": "k", "effect": "NoExecute"})
    assert not toleration_matches({"key": "k", "operator": "Weird"}, {"key": "k", "effect": "NoExecute"})


# ---------------------------------------------------------------------------- InterPodAffinity
def anti(key: str, value: str, topology: str = HOST, namespaces: list[str] | None = None) -> Obj:
    term: Obj = {"labelSelector": {"matchLabels": {key: value}}, "topologyKey": topology}
    if namespaces:
        term["namespaces"] = namespaces
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def affine(key: str, value: str, topology: str = ZONE) -> Obj:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {key: value}}, "topologyKey": topology}]}}


ZONED = [node("a1", labels={ZONE: "a"}), node("a2", labels={ZONE: "a"}), node("b1", labels={ZONE: "b"})]


def test_required_anti_affinity_by_hostname() -> None:
    existing = [pod("web-0", labels={"app": "web"}, node_name="a1")]
    p = pod("web-1", labels={"app": "web"}, affinity=anti("app", "web"))
    st = run_filter(InterPodAffinity(), p, "a1", ZONED, existing)
    assert reasons(st) == ["node(s) didn't match pod anti-affinity rules"]
    assert run_filter(InterPodAffinity(), p, "a2", ZONED, existing).is_success()


def test_required_anti_affinity_by_zone_and_namespace() -> None:
    existing = [pod("db", labels={"app": "db"}, node_name="a1")]
    p = pod("p", affinity=anti("app", "db", ZONE))
    assert not run_filter(InterPodAffinity(), p, "a2", ZONED, existing).is_success()
    assert run_filter(InterPodAffinity(), p, "b1", ZONED, existing).is_success()
    # a pod in another namespace is not matched by a term without namespaces
    other_ns = [pod("db", ns="other", labels={"app": "db"}, node_name="a1")]
    assert run_filter(InterPodAffinity(), p, "a2", ZONED, other_ns).is_success()
    p2 = pod("p", affinity=anti("app", "db", ZONE, namespaces=["other"]))
    assert not run_filter(InterPodAffinity(), p2, "a2", ZONED, other_ns).is_success()


def test_existing_pods_anti_affinity_is_symmetric() -> None:
    existing = [pod("loner", labels={"app": "loner"}, node_name="a1", affinity=anti("app", "web"))]
    p = pod("web", labels={"app": "web"})
    st = run_filter(InterPodAffinity(), p, "a1", ZONED, existing)
    assert reasons(st) == ["node(s) didn't satisfy existing pods anti-affinity rules"]
    assert run_filter(InterPodAffinity(), p, "a2", ZONED, existing).is_success()
    assert run_filter(InterPodAffinity(), pod("db", labels={"app": "db"}), "a1", ZONED, existing).is_success()


def test_required_affinity() -> None:
    existing = [pod("cache", labels={"app": "cache"}, node_name="b1")]
    p = pod("web", affinity=affine("app", "cache"))
    assert run_filter(InterPodAffinity(), p, "b1", ZONED, existing).is_success()
    st = run_filter(InterPodAffinity(), p, "a1", ZONED, existing)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert reasons(st) == ["node(s) didn't match pod affinity rules"]
    # no matching pod anywhere: only a pod that matches its own term may start the group
    assert not run_filter(InterPodAffinity(), p, "a1", ZONED).is_success()
    self_affine = pod("c0", labels={"app": "cache"}, affinity=affine("app", "cache"))
    assert run_filter(InterPodAffinity(), self_affine, "a1", ZONED).is_success()
    # the node must have the topology key
    assert not run_filter(InterPodAffinity(), self_affine, "n", [node("n")]).is_success()


def test_preferred_pod_affinity_score() -> None:
    existing = [pod("cache", labels={"app": "cache"}, node_name="b1"),
                pod("noisy", labels={"app": "noisy"}, node_name="a1")]
    pref = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "cache"}},
                                                   "topologyKey": ZONE}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "noisy"}},
                                                   "topologyKey": HOST}}]}}
    scores = run_score(InterPodAffinity(), pod("p", affinity=pref), ZONED, existing)
    assert scores == {"b1": 100, "a2": 50, "a1": 0}


def test_existing_pods_preferred_terms_score_the_incoming_pod() -> None:
    likes_web = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}}]}}
    existing = [pod("fan", node_name="a2", affinity=likes_web)]
    scores = run_score(InterPodAffinity(), pod("w", labels={"app": "web"}), ZONED, existing)
    assert scores == {"a1": 0, "a2": 100, "b1": 0}


def test_invalid_affinity_selector_is_an_error() -> None:
    bad = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Nope"}]}, "topologyKey": HOST}]}}
    with pytest.raises(SchedulingError):
        Framework(DEFAULT_PLUGINS).schedule(PodInfo(pod("p", affinity=bad)), Snapshot.build(ZONED))


# ---------------------------------------------------------------------------- PodTopologySpread
def tsc(max_skew: int, key: str, when: str = "DoNotSchedule", app: str = "web") -> Obj:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": app}}}


def test_topology_spread_filter() -> None:
    existing = [pod("w0", labels={"app": "web"}, node_name="a1"), pod("w1", labels={"app": "web"}, node_name="a2")]
    p = pod("w2", labels={"app": "web"}, spread=[tsc(1, ZONE)])
    # zone a has 2, zone b has 0: a third in zone a would make skew 3
    st = run_filter(PodTopologySpread(), p, "a1", ZONED, existing)
    assert reasons(st) == ["node(s) didn't match pod topology spread constraints"]
    assert run_filter(PodTopologySpread(), p, "b1", ZONED, existing).is_success()
    # maxSkew 2 allows zone a again? 2 + 1 - 0 = 3 > 2: no; maxSkew 3: yes
    p3 = pod("w2", labels={"app": "web"}, spread=[tsc(3, ZONE)])
    assert run_filter(PodTopologySpread(), p3, "a1", ZONED, existing).is_success()
    # a pod that does not match its own selector does not add itself
    other = pod("x", labels={"app": "other"}, spread=[tsc(2, ZONE)])
    assert run_filter(PodTopologySpread(), other, "a1", ZONED, existing).is_success()


def test_topology_spread_missing_label_and_node_affinity_scope() -> None:
    nodes = [*ZONED, node("nolabel")]
    p = pod("w", labels={"app": "web"}, spread=[tsc(1, ZONE)])
    st = run_filter(PodTopologySpread(), p, "nolabel", nodes)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert reasons(st) == ["node(s) didn't match pod topology spread constraints (missing required label)"]
    # domains outside the pod's nodeSelector do not count towards the minimum
    existing = [pod("w0", labels={"app": "web"}, node_name="a1")]
    only_a = pod("w", labels={"app": "web"}, spread=[tsc(1, ZONE)], node_selector={ZONE: "a"})
    assert run_filter(PodTopologySpread(), only_a, "a2", ZONED, existing).is_success()


def test_topology_spread_score() -> None:
    existing = [pod("w0", labels={"app": "web"}, node_name="a1"), pod("w1", labels={"app": "web"}, node_name="a2")]
    p = pod("w2", labels={"app": "web"}, spread=[tsc(1, ZONE, "ScheduleAnyway")])
    scores = run_score(PodTopologySpread(), p, ZONED, existing)
    assert scores["b1"] == 100 and scores["a1"] == scores["a2"] < scores["b1"]
    # ScheduleAnyway never filters
    assert run_filter(PodTopologySpread(), p, "a1", ZONED, existing).is_success()


# ---------------------------------------------------------------------------- SelectorSpread
def test_selector_spread_by_owner() -> None:
    nodes = [node("n1"), node("n2"), node("n3")]
    existing = [pod("r0", owner_uid="rs1", node_name="n1"), pod("r1", owner_uid="rs1", node_name="n1"),
                pod("r2", owner_uid="rs1", node_name="n2"), pod("x", owner_uid="other", node_name="n3")]
    scores = run_score(SelectorSpread(), pod("r3", owner_uid="rs1"), nodes, existing)
    assert scores == {"n1": 0, "n2": 50, "n3": 100}


def test_selector_spread_by_labels_and_zones() -> None:
    nodes = [node("a1", labels={ZONE: "a"}), node("a2", labels={ZONE: "a"}), node("b1", labels={ZONE: "b"})]
    existing = [pod("p0", labels={"app": "x"}, node_name="a1")]
    scores = run_score(SelectorSpread(), pod("p1", labels={"app": "x"}), nodes, existing)
    # a2 has no peer but shares zone a with a1: 1/3 * 100 + 2/3 * 0
    assert scores == {"a1": 0, "a2": 33, "b1": 100}
    # no labels, no owner: nothing to spread
    assert run_score(SelectorSpread(), pod("bare"), nodes, existing) == {"a1": 0, "a2": 0, "b1": 0}


# ---------------------------------------------------------------------------- resource scores
def test_least_allocated_score() -> None:
    nodes = [node("big", cpu="4", memory="8Gi"), node("small", cpu="2", memory="4Gi")]
    existing = [pod("a", cpu="1", memory="2Gi", node_name="small")]
    scores = run_score(NodeResourcesLeastAllocated(), pod("p", cpu="1", memory="2Gi"), nodes, existing)
    assert scores == {"big": 75, "small": 0}
    # a pod without requests counts as 100m / 200Mi
    scores = run_score(NodeResourcesLeastAllocated(), pod("p"), [node("n", cpu="1", memory="1Gi")])
    assert scores == {"n": (90 + 80) // 2}


def test_balanced_allocation_score() -> None:
    nodes = [node("even", cpu="4", memory="4Gi"), node("skewed", cpu="4", memory="16Gi")]
    scores = run_score(NodeResourcesBalancedAllocation(), pod("p", cpu="2", memory="2Gi"), nodes)
    assert scores["even"] == 100
    assert scores["skewed"] == int((1 - abs(0.5 - 0.125) / 2) * 100)


def test_image_locality_score() -> None:
    big = 500 * 1024 * 1024
    nodes = [node("has", images=[{"names": ["docker.io/library/busybox:latest"], "sizeBytes": big}]), node("hasnt")]
    scores = run_score(ImageLocality(), pod("p", image="busybox"), nodes)
    assert scores["has"] > scores["hasnt"] == 0
    assert normalize_image("busybox") == "docker.io/library/busybox:latest"
    assert normalize_image("me/app:1") == "docker.io/me/app:1"
    assert normalize_image("registry.local:5000/app") == "registry.local:5000/app:latest"


# ---------------------------------------------------------------------------- message format
def test_fit_error_message_format() -> None:
    diag = Diagnosis(node_statuses={
        "n1": Status.unschedulable("Insufficient cpu"),
        "n2": Status.unschedulable("node(s) didn't match Pod's node affinity/selector"),
        "n3": Status.unschedulable("node(s) didn't match Pod's node affinity/selector"),
    })
    assert fit_error_message(3, diag) == \
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."
    assert fit_error_message(0, Diagnosis()) == "0/0 nodes are available."
    both = Diagnosis(node_statuses={"n1": Status.unschedulable("Insufficient cpu", "Insufficient memory"),
                                    "n2": Status.unschedulable("Insufficient cpu")})
    assert fit_error_message(2, both) == "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
    assert fit_error_message(4, Diagnosis(pre_filter_msg="something broke")) == \
        "0/4 nodes are available: something broke."


def test_schedule_reports_fit_error_with_counts() -> None:
    nodes = [node("n1", cpu="1"), node("n2", cpu="1", labels={"disk": "ssd"}), node("n3", cpu="8")]
    p = pod("p", cpu="2", node_selector={"disk": "ssd"})
    with pytest.raises(FitError) as err:
        Framework(DEFAULT_PLUGINS).schedule(PodInfo(p), Snapshot.build(nodes))
    assert str(err.value) == \
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."
    assert err.value.diagnosis.unschedulable_plugins == {"NodeAffinity", "NodeResourcesFit"}
    with pytest.raises(FitError) as err:
        Framework(DEFAULT_PLUGINS).schedule(PodInfo(p), Snapshot.build([]))
    assert str(err.value) == "0/0 nodes are available."


def test_filters_stop_at_first_failure_in_row_order() -> None:
    nodes = [node("n1", cpu="1", unschedulable=True, taints=[{"key": "k", "effect": "NoSchedule"}])]
    with pytest.raises(FitError) as err:
        Framework(DEFAULT_PLUGINS).schedule(PodInfo(pod("p", cpu="2")), Snapshot.build(nodes))
    assert str(err.value) == "0/1 nodes are available: 1 node(s) were unschedulable."


# ---------------------------------------------------------------------------- framework behaviour
def test_schedule_picks_best_node_and_breaks_ties_round_robin() -> None:
    fw = Framework(DEFAULT_PLUGINS)
    snap = Snapshot.build([node("n1"), node("n2"), node("n3")])
    picks = [fw.schedule(PodInfo(pod(f"p{i}")), snap).node for i in range(6)]
    assert picks == ["n1", "n2", "n3", "n1", "n2", "n3"]
    busy = Snapshot.build([node("n1"), node("n2")], [pod("x", cpu="3", memory="6Gi", node_name="n1")])
    assert fw.schedule(PodInfo(pod("p", cpu="500m")), busy).node == "n2"


def test_schedule_single_feasible_node_skips_scoring() -> None:
    fw = Framework(DEFAULT_PLUGINS)
    snap = Snapshot.build([node("n1", unschedulable=True), node("n2")])
    result = fw.schedule(PodInfo(pod("p")), snap)
    assert result.node == "n2" and result.feasible == 1 and result.scores == {}


def test_profile_rows_and_weights() -> None:
    class Prefer(ScorePlugin):
        name = "PreferLast"

        def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
            return 100 if node.name == "n3" else 0

    rows = [*DEFAULT_PLUGINS, PluginRow(Prefer, weight=50)]
    fw = Framework(rows)
    assert fw.schedule(PodInfo(pod("p")), Snapshot.build([node("n1"), node("n2"), node("n3")])).node == "n3"
    with pytest.raises(ValueError):
        Framework([PluginRow(NodePorts), PluginRow(NodePorts)])


def test_out_of_range_score_is_an_error() -> None:
    class Wild(ScorePlugin):
        name = "Wild"

        def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
            return 1000

    with pytest.raises(SchedulingError):
        Framework([PluginRow(Wild)]).schedule(PodInfo(pod("p")), Snapshot.build([node("n1"), node("n2")]))


def test_default_normalize() -> None:
    scores = {"a": 2, "b": 4, "c": 0}
    default_normalize(scores)
    assert scores == {"a": 50, "b": 100, "c": 0}
    scores = {"a": 2, "b": 4, "c": 0}
    default_normalize(scores, reverse=True)
    assert scores == {"a": 50, "b": 0, "c": 100}


def test_assumed_pods_count_like_bound_ones() -> None:
    info = NodeInfo(node("n1", cpu="1"))
    info.add_pod(PodInfo(pod("a", cpu="800m", host_port=80, node_name="n1")))
    assert info.requested.milli_cpu == 800 and info.port_conflicts(PodInfo(pod("b", host_port=80)).host_ports)
    info.remove_pod("default/a")
    assert info.requested.milli_cpu == 0 and not info.used_ports
    assert Resource.from_list({"cpu": "1.5", "memory": "1Gi", "pods": "10"}) == Resource(1500, GI)
