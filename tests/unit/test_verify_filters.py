"""The Molecule verify playbooks' filters (molecule/default/filter_plugins/minik8s_verify.py)
meet half-built objects without raising: an ``until:`` loop must keep waiting on them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "molecule" / "default" / "filter_plugins" / "minik8s_verify.py"


@pytest.fixture(scope="module")
def f() -> ModuleType:
    spec = importlib.util.spec_from_file_location("minik8s_verify", PLUGIN)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


READY = {"conditions": [{"type": "Ready", "status": "True"}]}
PODS = json.dumps({"kind": "PodList", "items": [
    {"metadata": {"name": "unbound"}, "spec": {}, "status": {"phase": "Pending"}},  # just created
    {"metadata": {"name": "no-status"}, "spec": {"nodeName": "n1"}},  # bound, no status yet
    {"metadata": {"name": "leaving", "deletionTimestamp": "2026-01-01T00:00:00Z"},
     "spec": {"nodeName": "n3"}, "status": READY},
    {"metadata": {"name": "ok", "labels": {"app": "x"}}, "spec": {"nodeName": "n1"},
     "status": {**READY, "podIP": "10.244.1.2", "containerStatuses": [{"containerID": "docker://a"}]}},
    {"metadata": {"name": "victim"}, "spec": {"nodeName": "n3"}, "status": READY},
]})


def test_items_tolerate_no_output(f: ModuleType) -> None:
    assert f.kube_items("") == [] and f.kube_items("not json") == [] and f.kube_items(None) == []
    node = {"kind": "Node", "metadata": {"name": "n1"}}
    assert f.kube_items(json.dumps(node)) == [node]
    assert f.kube_object("Error from server") == {}


def test_pods_between_creation_and_scheduling(f: ModuleType) -> None:
    items = f.kube_items(PODS)
    assert f.kube_names(f.kube_ready(f.kube_off_node(f.kube_live(items), "n3"))) == ["ok"]
    assert f.kube_names(f.kube_on_node(items, "n3")) == ["leaving", "victim"]
    assert f.kube_pluck(f.kube_bound(f.kube_live(items)), "spec.nodeName") == ["n1", "n1", "n3"]
    assert f.kube_pluck(items, "status.podIP") == [None, None, None, "10.244.1.2", None]
    assert f.kube_pluck(items, "status.containerStatuses", []) == [[], [], [], [{"containerID": "docker://a"}], []]
    assert f.kube_names(f.kube_labelled(items, "app", "x")) == ["ok"]


def test_endpoints_without_subsets(f: ModuleType) -> None:
    assert f.kube_addresses('{"kind": "Endpoints", "metadata": {"name": "s"}}') == []
    assert f.kube_addresses('{"kind": "Endpoints", "subsets": [{"notReadyAddresses": [{"ip": "1"}]}]}') == []
    ep = {"kind": "Endpoints", "subsets": [{"addresses": [{"ip": "10.244.1.2", "nodeName": "n1"}]}]}
    assert f.kube_pluck(f.kube_addresses(json.dumps(ep)), "nodeName") == ["n1"]


def test_dig(f: ModuleType) -> None:
    assert f.kube_dig({"spec": {"taints": None}}, "spec.taints", []) == []
    assert f.kube_dig({"spec": "x"}, "spec.podCIDR") is None
    assert f.kube_dig({"spec": {"podCIDR": "10.244.0.0/24"}}, "spec.podCIDR") == "10.244.0.0/24"
    assert f.kube_condition({}, "Reachable") == ""
    assert f.kube_condition({"status": {"conditions": None}}, "Reachable") == ""
    reachable = {"status": {"conditions": [{"type": "Reachable", "status": "False"}]}}
    assert f.kube_condition(reachable, "Reachable") == "False"
    assert set(f.FilterModule().filters()) >= {"kube_items", "kube_ready", "kube_off_node", "kube_addresses"}
