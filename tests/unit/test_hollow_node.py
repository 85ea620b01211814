"""The hollow-node simulator's pure parts: pod addresses from a podCIDR and the reported pod status."""

from __future__ import annotations

import pytest

from minik8s.hollownode.hollow import PodIPs, is_running, node_ip, pod_status


def test_addresses_skip_network_and_gateway_are_unique_and_reused_after_release() -> None:
    ips = PodIPs("10.64.3.0/29")  # .0 network, .1 the bridge, .7 broadcast: .2 to .6 for pods
    got = [ips.assign(f"uid-{i}") for i in range(5)]
    assert got == [f"10.64.3.{n}" for n in range(2, 7)]
    assert ips.assign("uid-0") == "10.64.3.2"  # idempotent per pod
    with pytest.raises(RuntimeError):
        ips.assign("uid-5")
    ips.release("uid-3")
    assert ips.assign("uid-5") == "10.64.3.5"


def test_keep_adopts_addresses_inside_the_cidr_only() -> None:
    ips = PodIPs("10.64.3.0/24")
    assert ips.keep("a", "10.64.3.9") and not ips.keep("b", "10.65.0.9") and not ips.keep("c", "bogus")
    assert ips.assign("a") == "10.64.3.9"


def test_node_ips_come_from_the_benchmarking_range() -> None:
    assert node_ip(0) == "198.18.0.1" and node_ip(300) == "198.18.1.45"


def test_pod_status_is_running_and_ready_with_fake_container_ids() -> None:
    pod = {"metadata": {"uid": "1234-abcd"},
           "spec": {"initContainers": [{"name": "init", "image": "busybox"}],
                    "containers": [{"name": "app", "image": "nginx"}, {"name": "side", "image": "busybox"}]},
           "status": {"phase": "Pending", "qosClass": "BestEffort",
                      "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "t0"}]}}
    status = pod_status(pod, "10.64.0.2", "198.18.0.1", "2026-01-01T00:00:00Z")
    assert status["phase"] == "Running" and status["podIP"] == "10.64.0.2" and status["hostIP"] == "198.18.0.1"
    assert status["podIPs"] == [{"ip": "10.64.0.2"}] and status["qosClass"] == "BestEffort"
    assert [c["type"] for c in status["conditions"]] == ["PodScheduled", "PodReadyToStartContainers", "Initialized",
                                                         "ContainersReady", "Ready"]
    assert all(c["status"] == "True" for c in status["conditions"])
    apps = status["containerStatuses"]
    assert [c["name"] for c in apps] == ["app", "side"] and all(c["ready"] and "running" in c["state"] for c in apps)
    assert len({c["containerID"] for c in apps}) == 2 and apps[0]["containerID"].startswith("hollow://")
    assert status["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    assert is_running({"status": status}) and not is_running(pod)
