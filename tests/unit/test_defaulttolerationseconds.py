"""The DefaultTolerationSeconds admission plugin (Kubernetes' plugin/pkg/admission/defaulttolerationseconds)."""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.api.taints import TAINT_NOT_READY, TAINT_UNREACHABLE
from minik8s.apiserver.admission import AdmissionConfig, admit_pod
from minik8s.apiserver.defaulttolerationseconds import PLUGIN_NAME, DefaultTolerationSeconds

NOT_READY_300 = {"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
UNREACHABLE_300 = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}


def pod(tolerations: list[Obj] | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}


def test_a_pod_without_tolerations_gets_both_with_300_seconds() -> None:
    p = pod()
    assert DefaultTolerationSeconds().admit(p)
    assert p["spec"]["tolerations"] == [NOT_READY_300, UNREACHABLE_300]


def test_the_flags_set_the_seconds() -> None:
    p = pod([])
    DefaultTolerationSeconds(not_ready_seconds=10, unreachable_seconds=0).admit(p)
    assert [(t["key"], t["tolerationSeconds"]) for t in p["spec"]["tolerations"]] == [
        (TAINT_NOT_READY, 10), (TAINT_UNREACHABLE, 0)]


def test_own_tolerations_come_first_and_stay() -> None:
    own = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
    p = pod([own])
    DefaultTolerationSeconds().admit(p)
    assert p["spec"]["tolerations"] == [own, NOT_READY_300, UNREACHABLE_300]


def test_a_pod_that_already_tolerates_the_taint_keeps_its_own() -> None:
    five = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
    p = pod([five])
    DefaultTolerationSeconds().admit(p)
    assert p["spec"]["tolerations"] == [five, NOT_READY_300]
    # no effect covers NoExecute; any operator or value counts, the seconds are the pod's own
    forever = {"key": TAINT_NOT_READY, "operator": "Equal", "value": "x"}
    p = pod([forever])
    DefaultTolerationSeconds().admit(p)
    assert p["spec"]["tolerations"] == [forever, UNREACHABLE_300]


def test_an_empty_key_tolerates_both_and_nothing_is_added() -> None:
    everything = {"operator": "Exists"}
    p = pod([everything])
    assert not DefaultTolerationSeconds().admit(p)
    assert p["spec"]["tolerations"] == [everything]
    no_execute = {"operator": "Exists", "effect": "NoExecute"}
    p = pod([no_execute])
    assert not DefaultTolerationSeconds().admit(p)


def test_other_effects_do_not_count() -> None:
    no_schedule = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoSchedule"}
    p = pod([no_schedule])
    DefaultTolerationSeconds().admit(p)
    assert p["spec"]["tolerations"] == [no_schedule, NOT_READY_300, UNREACHABLE_300]


def test_daemonset_pods_keep_their_tolerations_without_seconds() -> None:
    from minik8s.controllers.daemonset import add_daemon_tolerations

    spec: Obj = {"containers": []}
    add_daemon_tolerations(spec)
    before = list(spec["tolerations"])
    p = {"spec": spec}
    assert not DefaultTolerationSeconds().admit(p)
    assert p["spec"]["tolerations"] == before
    assert all("tolerationSeconds" not in t for t in before)


class NoAPI:
    """admit_pod's ``api`` argument; DefaultTolerationSeconds never reads the API."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the API was used: {name}")


async def test_admit_pod_runs_the_plugin_on_create_and_update_unless_disabled() -> None:
    only = AdmissionConfig(plugins=frozenset({PLUGIN_NAME}))  # Priority, also on by default, reads the API
    p = pod()
    await admit_pod(NoAPI(), p, only)
    assert p["spec"]["tolerations"] == [NOT_READY_300, UNREACHABLE_300]
    old = pod()
    p = pod()
    await admit_pod(NoAPI(), p, only, old)  # UPDATE: Kubernetes' plugin handles it too
    assert p["spec"]["tolerations"] == [NOT_READY_300, UNREACHABLE_300]
    p = pod()
    await admit_pod(NoAPI(), p, AdmissionConfig(plugins=frozenset()))
    assert "tolerations" not in p["spec"]
