"""Pure kubelet logic: back-off, flags, container translation, pod status, log/exec lookups."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from minik8s.api.base import Obj
from minik8s.host.errors import ConfigError
from minik8s.kubelet import naming
from minik8s.kubelet.backoff import Backoff
from minik8s.kubelet.config import check_cidr, parse_ip_list, parse_node_labels, parse_taints
from minik8s.kubelet.container_spec import (
    command_and_args,
    container_env,
    expand,
    milli_cpu_to_quota,
    milli_cpu_to_shares,
    oom_score_adj,
    port_bindings,
    resolve_port,
    resource_config,
)
from minik8s.kubelet.network.bridge import gateway_of, ip_in_cidr
from minik8s.kubelet.runtime import ContainerInfo, ExecSession, parse_docker_time, split_image
from minik8s.kubelet.server import LookupError_, exit_status, find_container
from minik8s.kubelet.status import ContainerView, PodView, compute_pod_status, normalise, pod_phase
from minik8s.kubelet.sync import should_restart
from minik8s.kubelet.volumes import VolumeError, VolumeManager


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# ---------------------------------------------------------------- back-off
def test_backoff_first_failure_is_retried_at_once_then_doubles_to_the_cap() -> None:
    clock = Clock()
    b = Backoff(10, 40, clock)
    assert not b.in_backoff_since("k", clock.now)  # first crash: restart now
    assert b.next("k", clock.now) == 10
    clock.now += 1  # crashed again one second later
    assert b.in_backoff_since("k", clock.now) and b.remaining("k", clock.now) == pytest.approx(10)
    clock.now += 10
    assert not b.in_backoff_since("k", clock.now - 10)
    assert [b.next("k", clock.now + i) for i in range(4)] == [20, 40, 40, 40]


def test_backoff_resets_after_running_twice_the_maximum() -> None:
    clock = Clock()
    b = Backoff(10, 300, clock)
    b.next("k", clock.now)
    b.next("k", clock.now + 1)
    assert b.delay("k") == 20
    later = clock.now + 700  # ran fine for more than 2 × maximum (10 minutes)
    clock.now = later
    assert not b.in_backoff_since("k", later)
    assert b.next("k", later) == 10
    b.forget_prefix("k")
    assert b.delay("k") == 0


# ---------------------------------------------------------------- flags
def test_flag_parsers() -> None:
    assert parse_node_labels("a=1, b=two,,") == {"a": "1", "b": "two"}
    assert parse_taints("gpu=yes:NoSchedule,dedicated:NoExecute") == [
        {"key": "gpu", "value": "yes", "effect": "NoSchedule"}, {"key": "dedicated", "effect": "NoExecute"}]
    assert parse_ip_list("10.96.0.10") == ["10.96.0.10"]
    assert check_cidr("10.244.1.7/24") == "10.244.1.0/24"
    for bad in (lambda: parse_node_labels("novalue"), lambda: parse_taints("k=v:Sometimes"),
                lambda: parse_ip_list("dns"), lambda: check_cidr("10.0.0.0/30"), lambda: check_cidr("x")):
        with pytest.raises(ConfigError):
            bad()
    assert gateway_of("10.244.3.0/24") == "10.244.3.1"
    assert ip_in_cidr("10.244.3.9", "10.244.3.0/24") and not ip_in_cidr(None, "10.244.3.0/24")


# ---------------------------------------------------------------- container translation
def test_cpu_and_memory_translation_follows_kubernetes() -> None:
    assert milli_cpu_to_shares(0) == 2 and milli_cpu_to_shares(1) == 2 and milli_cpu_to_shares(100) == 102
    assert milli_cpu_to_shares(1000) == 1024
    assert milli_cpu_to_quota(250) == 25000 and milli_cpu_to_quota(5) == 1000 and milli_cpu_to_quota(0) == 0
    pod: Obj = {"spec": {"containers": []}}
    c = {"name": "a", "resources": {"limits": {"cpu": "1500m", "memory": "128Mi"}, "requests": {"cpu": "100m"}}}
    pod["spec"]["containers"] = [c]
    cfg = resource_config(pod, c, 8 * 2**30)
    assert cfg["cpu_quota"] == 150000 and cfg["cpu_period"] == 100000 and cfg["cpu_shares"] == 102
    assert cfg["mem_limit"] == cfg["memswap_limit"] == 128 * 2**20
    only_limit = {"name": "b", "resources": {"limits": {"cpu": "1"}}}
    assert resource_config({"spec": {"containers": [only_limit]}}, only_limit, 0)["cpu_shares"] == 1024
    best_effort = {"name": "c"}
    assert resource_config({"spec": {"containers": [best_effort]}}, best_effort, 0) == {
        "cpu_shares": 2, "oom_score_adj": 1000}
    guaranteed = {"name": "g", "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                             "requests": {"cpu": "1", "memory": "1Gi"}}}
    assert oom_score_adj({"containers": [guaranteed]}, guaranteed, 8 * 2**30) == -997
    assert resource_config({"spec": {"containers": [guaranteed]}}, guaranteed, 8 * 2**30, 0)["oom_score_adj"] == 0
    burst = {"name": "b", "resources": {"requests": {"memory": "4Gi"}}}
    assert oom_score_adj({"containers": [burst]}, burst, 8 * 2**30) == 500


def test_env_command_and_args() -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u1", "labels": {"app": "web"}},
           "spec": {"nodeName": "n1"}}
    c = {"name": "a", "env": [
        {"name": "A", "value": "x"}, {"name": "B", "value": "$(A)-y-$(NOPE)-$$(A)"},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}}],
        "resources": {"limits": {"memory": "64Mi"}},
        "command": ["sh", "-c"], "args": ["echo $(B) $(POD)"]}
    env = container_env(pod, c, host_ip="192.0.2.2", pod_ip="10.244.0.5")
    assert env == {"A": "x", "B": "x-y-$(NOPE)-$(A)", "POD": "p", "IP": "10.244.0.5", "APP": "web", "MEM": "64"}
    assert command_and_args(c, env) == (["sh", "-c"], ["echo x-y-$(NOPE)-$(A) p"])
    assert command_and_args({"name": "x"}, {}) == (None, None)
    assert expand("$$(A)", {"A": "1"}) == "$(A)"


def test_ports_and_probes() -> None:
    spec = {"containers": [{"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080},
                                                   {"containerPort": 53, "protocol": "UDP", "name": "dns"},
                                                   {"containerPort": 9000, "hostPort": 9000, "hostIP": "127.0.0.1"}]}]}
    exposed, bindings = port_bindings(spec)
    assert bindings == {"80/tcp": ("0.0.0.0", 8080), "9000/tcp": ("127.0.0.1", 9000)}
    assert exposed == [(80, "tcp"), (9000, "tcp")]
    c = spec["containers"][0]
    assert resolve_port(c, "dns") == 53 and resolve_port(c, 81) == 81 and resolve_port(c, "8081") == 8081
    assert resolve_port(c, "nope") is None


def test_names_labels_and_images() -> None:
    pod = {"metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
           "spec": {"terminationGracePeriodSeconds": 5}}
    labels = naming.labels("n1", pod, "app", 3, "abc")
    assert labels[naming.RESTART_COUNT] == "3" and labels[naming.NODE] == "n1" and labels[naming.GRACE_PERIOD] == "5"
    assert labels[naming.MANAGED] == "true" and labels[naming.CONTAINER_HASH] == "abc"
    assert naming.container_name("POD", "web", "default", "u-1", 0) == "k8s_POD_web_default_u-1_0"
    assert naming.spec_hash({"name": "a", "image": "x", "env": [1]}) == naming.spec_hash({"name": "a", "image": "x"})
    assert naming.spec_hash({"name": "a", "image": "x"}) != naming.spec_hash({"name": "a", "image": "y"})
    assert split_image("busybox") == ("busybox", "latest")
    assert split_image("127.0.0.1:5000/a/b:v1") == ("127.0.0.1:5000/a/b", "v1")
    assert split_image("127.0.0.1:5000/a") == ("127.0.0.1:5000/a", "latest")
    assert split_image("a@sha256:00") == ("a", "sha256:00")
    assert parse_docker_time("0001-01-01T00:00:00Z") is None
    t = parse_docker_time("2024-01-02T03:04:05.123456789Z")
    assert t is not None and t.microsecond == 123456


# ---------------------------------------------------------------- status
def info(cid: str, state: str, restart: int = 0, exit_code: int = 0, name: str = "a", **kw: Any) -> ContainerInfo:
    return ContainerInfo(id=cid, name=f"k8s_{name}_{cid}", state=state, exit_code=exit_code,
                         labels={naming.CONTAINER_NAME: name, naming.RESTART_COUNT: str(restart)},
                         started_at=kw.pop("started_at", "2024-01-01T00:00:00Z"),
                         finished_at=kw.pop("finished_at", None if state == "running" else "2024-01-01T00:00:05Z"),
                         image_id="sha256:1", **kw)


def running_sandbox() -> ContainerInfo:
    return ContainerInfo(id="pause", name="k8s_POD", state="running", labels={naming.CONTAINER_NAME: "POD"},
                         ip="10.244.0.7")


def pod(policy: str = "Always", names: tuple[str, ...] = ("a",), status: Obj | None = None) -> Obj:
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
            "spec": {"restartPolicy": policy, "containers": [{"name": n, "image": "img"} for n in names]},
            "status": status or {}}


def test_status_of_a_running_pod() -> None:
    view = PodView(containers={"a": ContainerView(info("c2", "running", 1), info("c1", "exited", 0, 3))},
                   sandbox=running_sandbox(), pod_ip="10.244.0.7", ready={"a": True}, started={"a": True})
    st = compute_pod_status(pod(), view, "192.0.2.2", now="2024-01-01T00:01:00Z")
    assert st["phase"] == "Running" and st["podIP"] == "10.244.0.7" and st["hostIP"] == "192.0.2.2"
    cs = st["containerStatuses"][0]
    assert cs["state"] == {"running": {"startedAt": "2024-01-01T00:00:00Z"}} and cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["exitCode"] == 3 and cs["lastState"]["terminated"]["reason"] == "Error"
    assert cs["containerID"] == "docker://c2" and cs["ready"] is True and cs["imageID"] == "docker://sha256:1"
    conds = {c["type"]: c for c in st["conditions"]}
    assert conds["Ready"]["status"] == "True" and conds["PodReadyToStartContainers"]["status"] == "True"
    assert conds["PodScheduled"]["status"] == "True" and st["qosClass"] == "BestEffort"
    # a later status keeps lastTransitionTime while the condition does not change
    again = compute_pod_status(pod(status=normalise(st)), view, "192.0.2.2", now="2024-01-01T00:09:00Z")
    assert normalise(again) == normalise(st)
    view.ready["a"] = False
    unready = compute_pod_status(pod(status=normalise(st)), view, "192.0.2.2", now="2024-01-01T00:09:00Z")
    ready = next(c for c in unready["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["lastTransitionTime"] == "2024-01-01T00:09:00Z"
    assert ready["message"] == "containers with unready status: [a]"


def test_status_while_crash_looping_and_when_finished() -> None:
    dead = info("c1", "exited", 2, 1)
    view = PodView(containers={"a": ContainerView(dead, None)}, sandbox=running_sandbox(), pod_ip="10.244.0.7",
                   waiting={"a": ("CrashLoopBackOff", "back-off 20s restarting failed container=a")})
    st = compute_pod_status(pod(), view, "h")
    cs = st["containerStatuses"][0]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff" and cs["restartCount"] == 2
    assert cs["lastState"]["terminated"]["exitCode"] == 1 and st["phase"] == "Running"
    done = PodView(containers={"a": ContainerView(info("c1", "exited", 0, 0), None)})
    st = compute_pod_status(pod("Never"), done, "h")
    assert st["phase"] == "Succeeded" and st["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "PodCompleted"
    # terminal phases never change back
    st2 = compute_pod_status(pod("Never", status={"phase": "Failed"}), done, "h")
    assert st2["phase"] == "Failed"
    oom = info("c9", "exited", 0, 137, oom_killed=True)
    assert compute_pod_status(pod("Never"), PodView(containers={"a": ContainerView(oom)}), "h")[
        "containerStatuses"][0]["state"]["terminated"]["reason"] == "OOMKilled"


def test_status_waiting_for_the_first_start() -> None:
    st = compute_pod_status(pod(names=("a", "b")), PodView(waiting={"b": ("ErrImagePull", "no")}), "h")
    assert st["phase"] == "Pending"
    a, b = st["containerStatuses"]
    assert a["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert b["state"]["waiting"] == {"reason": "ErrImagePull", "message": "no"}


def test_init_containers_status() -> None:
    p = pod(names=("app",))
    p["spec"]["initContainers"] = [{"name": "i1", "image": "x"}, {"name": "i2", "image": "x"}]
    view = PodView(init_containers={"i1": ContainerView(info("i1", "exited", 0, 0, "i1")),
                                    "i2": ContainerView(info("i2", "running", 0, 0, "i2"))},
                   sandbox=running_sandbox(), pod_ip="10.244.0.7")
    st = compute_pod_status(p, view, "h")
    assert st["phase"] == "Pending"
    assert [s["ready"] for s in st["initContainerStatuses"]] == [True, False]
    assert st["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    init = next(c for c in st["conditions"] if c["type"] == "Initialized")
    assert init["status"] == "False" and init["message"] == "containers with incomplete status: [i2]"
    p["spec"]["restartPolicy"] = "Never"
    view.init_containers["i2"] = ContainerView(info("i2", "exited", 0, 1, "i2"))
    assert compute_pod_status(p, view, "h")["phase"] == "Failed"


@pytest.mark.parametrize(("policy", "states", "terminal", "phase"), [
    ("Always", [("running", 0)], False, "Running"),
    ("Always", [("terminated", 1)], False, "Running"),
    ("Always", [("terminated", 1)], True, "Failed"),
    ("Always", [("terminated", 0)], True, "Succeeded"),
    ("OnFailure", [("terminated", 0), ("terminated", 0)], False, "Succeeded"),
    ("OnFailure", [("terminated", 0), ("terminated", 1)], False, "Running"),
    ("Never", [("terminated", 0), ("terminated", 1)], False, "Failed"),
    ("Never", [("terminated", 0), ("running", 0)], False, "Running"),
    ("Never", [("waiting", 0), ("running", 0)], False, "Pending"),
])
def test_pod_phase(policy: str, states: list[tuple[str, int]], terminal: bool, phase: str) -> None:
    statuses = []
    for i, (state, code) in enumerate(states):
        body: Obj = {"exitCode": code} if state == "terminated" else {}
        statuses.append({"name": f"c{i}", "state": {state: body}, "lastState": {}})
    spec = {"restartPolicy": policy, "containers": [{"name": s["name"]} for s in statuses]}
    assert pod_phase(spec, statuses, terminal) == phase


def test_restart_rule() -> None:
    failed, ok = info("x", "exited", exit_code=1), info("y", "exited", exit_code=0)
    assert should_restart("Always", ok) and should_restart("OnFailure", failed)
    assert not should_restart("OnFailure", ok) and not should_restart("Never", failed)


# ---------------------------------------------------------------- volumes
async def test_volumes(tmp_path: Path) -> None:
    vm = VolumeManager(tmp_path / "root")
    host = tmp_path / "host" / "made"
    p = {"metadata": {"uid": "u1"}, "spec": {"volumes": [
        {"name": "scratch", "emptyDir": {}},
        {"name": "h", "hostPath": {"path": str(host), "type": "DirectoryOrCreate"}}]}}
    paths = await vm.setup(p)
    assert Path(paths["scratch"]) == tmp_path / "root" / "pods" / "u1" / "volumes" / "scratch"
    assert host.is_dir() and vm.known_uids() == ["u1"]
    c = {"name": "a", "volumeMounts": [{"name": "scratch", "mountPath": "/s"},
                                       {"name": "h", "mountPath": "/h", "readOnly": True, "subPath": "sub"}]}
    assert VolumeManager.binds(c, paths) == [f"{paths['scratch']}:/s:rw", f"{host}/sub:/h:ro"]
    with pytest.raises(VolumeError):
        VolumeManager.binds({"name": "a", "volumeMounts": [{"name": "nope", "mountPath": "/x"}]}, paths)
    with pytest.raises(VolumeError):
        await vm.setup({"metadata": {"uid": "u2"}, "spec": {"volumes": [
            {"name": "f", "hostPath": {"path": str(tmp_path / "missing"), "type": "File"}}]}})
    with pytest.raises(VolumeError):
        await vm.setup({"metadata": {"uid": "u3"}, "spec": {"volumes": [{"name": "cm", "configMap": {"name": "x"}}]}})
    await vm.cleanup("u1")
    assert not (tmp_path / "root" / "pods" / "u1").exists() and host.is_dir()


async def test_sub_path_of_an_empty_dir_has_the_volume_mode(tmp_path: Path) -> None:
    """A missing subPath is made with the volume root's mode (kubelet's SafeMakeDir), not 0755 from
    the umask: a non-root container can write into a subPath of an emptyDir (bitnami charts)."""
    vm = VolumeManager(tmp_path / "root")
    gid = os.getgid()
    paths = await vm.setup({"metadata": {"uid": "u1"}, "spec": {"securityContext": {"fsGroup": gid},
                                                                 "volumes": [{"name": "e", "emptyDir": {}}]}})
    c = {"name": "a", "volumeMounts": [{"name": "e", "mountPath": "/conf", "subPath": "app-conf-dir/x"}]}
    old = os.umask(0o022)
    try:
        assert VolumeManager.binds(c, paths) == [f"{paths['e']}/app-conf-dir/x:/conf:rw"]
    finally:
        os.umask(old)
    for made in (Path(paths["e"]) / "app-conf-dir", Path(paths["e"]) / "app-conf-dir" / "x"):
        assert stat.S_IMODE(made.stat().st_mode) == 0o777 | stat.S_ISGID, oct(made.stat().st_mode)
        assert made.stat().st_gid == gid
    await vm.cleanup("u1")


# ---------------------------------------------------------------- server lookups
class Source:
    def __init__(self, pod_: Obj | None) -> None:
        self._pod = pod_

    def pod(self, namespace: str, name: str) -> Obj | None:
        return self._pod

    def pods(self) -> list[Obj]:
        return [self._pod] if self._pod else []

    def pod_status(self, pod_: Obj) -> Obj:
        return pod_.get("status") or {}


def test_find_container_follows_the_kubelet_rules() -> None:
    running = {"name": "a", "containerID": "docker://new", "state": {"running": {}},
               "lastState": {"terminated": {"containerID": "docker://old", "exitCode": 1}}}
    p = pod(status={"containerStatuses": [running]})
    assert find_container(Source(p), "ns", "p", "a") == "new"
    assert find_container(Source(p), "ns", "p", "a", previous=True) == "old"
    assert find_container(Source(p), "ns", "p", "a", running=True) == "new"
    waiting = {"name": "a", "containerID": "docker://old", "state": {"waiting": {"reason": "CrashLoopBackOff"}},
               "lastState": {"terminated": {"containerID": "docker://old"}}}
    assert find_container(Source(pod(status={"containerStatuses": [waiting]})), "ns", "p", "a") == "old"
    fresh = {"name": "a", "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {}}
    cases = [(None, "a", False, 404), (p, "b", False, 400),
             (pod(status={"containerStatuses": [fresh]}), "a", False, 400),
             (pod(status={"containerStatuses": [fresh]}), "a", True, 400)]
    for src, name, prev, code in cases:
        with pytest.raises(LookupError_) as exc:
            find_container(Source(src), "ns", "p", name, previous=prev)
        assert exc.value.code == code
    assert exit_status(0, ["true"]) == {"metadata": {}, "status": "Success"}
    failed = exit_status(3, ["sh", "-c", "exit 3"])
    assert failed["reason"] == "NonZeroExitCode" and failed["details"]["causes"] == [
        {"reason": "ExitCode", "message": "3"}]
    assert failed["message"].startswith("command terminated with non-zero exit code")


async def test_exec_session_demultiplexes_docker_streams() -> None:
    ours, theirs = socket.socketpair()
    frames = b"".join(bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data
                      for stream, data in [(1, b"out"), (2, b"err"), (1, b"")])
    theirs.sendall(frames[:5])
    theirs.sendall(frames[5:])
    theirs.close()
    session = ExecSession(None, "id", ours, tty=False)  # type: ignore[arg-type]
    got = []
    while (item := await session.read()) is not None:
        got.append(item)
    session.close()
    assert got == [(1, b"out"), (2, b"err"), (1, b"")]


# ---------------------------------------------------------------- stats
def test_cgroup_usage_v1_and_v2(tmp_path: Path) -> None:
    from minik8s.kubelet.stats import cgroup_usage

    v1 = tmp_path / "v1"
    (v1 / "cpuacct" / "docker" / "abc").mkdir(parents=True)
    (v1 / "cpuacct" / "docker" / "abc" / "cpuacct.usage").write_text("123456789\n")
    mem = v1 / "memory" / "docker" / "abc"
    mem.mkdir(parents=True)
    (mem / "memory.usage_in_bytes").write_text("1000\n")
    (mem / "memory.stat").write_text("rss 600\ntotal_inactive_file 300\n")
    assert cgroup_usage("abc", v1) == (123456789, 1000, 700)
    v2 = tmp_path / "v2" / "system.slice" / "docker-def.scope"
    v2.mkdir(parents=True)
    (v2 / "cpu.stat").write_text("usage_usec 5000\nuser_usec 4000\n")
    (v2 / "memory.current").write_text("2048\n")
    (v2 / "memory.stat").write_text("anon 1024\ninactive_file 48\n")
    assert cgroup_usage("def", tmp_path / "v2") == (5_000_000, 2048, 2000)
    assert cgroup_usage("nope", tmp_path / "v2") == (None, None, None)


def test_cpu_rates_average_over_at_least_the_sample_gap() -> None:
    from minik8s.kubelet.stats import SAMPLE_GAP, StatsProvider

    stats = StatsProvider(None, "n", lambda: [], lambda pod: {})  # type: ignore[arg-type]
    ms = 1_000_000  # nanoseconds of CPU
    assert stats._rate("c", 100.0, 0) is None  # no earlier sample
    # 0.2 s later no sample is SAMPLE_GAP old yet: the oldest one is the base (100 ms in 0.2 s)
    assert stats._rate("c", 100.2, 100 * ms) == pytest.approx(500 * ms, rel=1e-6)
    # a sample SAMPLE_GAP old exists (100.0): it is the base, not the newer one at 100.2
    assert stats._rate("c", 100.0 + SAMPLE_GAP, 300 * ms) == pytest.approx(300 * ms, rel=1e-6)
    # 101.2: the base is 100.2, the newest sample at least SAMPLE_GAP old
    assert stats._rate("c", 101.2, 400 * ms) == pytest.approx(300 * ms, rel=1e-6)
    # a counter that went back (a new container under the same key) starts again
    assert stats._rate("c", 102.5, 5) is None


async def test_overlapping_summaries_keep_each_others_cpu_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    """A summary that sees no pod yet (the apiserver's scraper) overlapping one that sees a new pod:
    the first must not forget the second's first sample, or the pod has no ``usageNanoCores``."""
    import time

    from minik8s.kubelet import stats as stats_module

    monkeypatch.setattr(stats_module, "SAMPLE_GAP", 0.05)
    monkeypatch.setattr(stats_module, "node_cpu_nanoseconds", lambda: int(time.monotonic() * 1e9))
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u1"}, "status": {}}
    calls = iter([[], [pod]])
    status = {"containerStatuses": [{"name": "c", "containerID": "docker://cid",
                                     "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}
    provider = stats_module.StatsProvider(None, "n", lambda: next(calls), lambda p: status)  # type: ignore[arg-type]

    async def usage(cid: str) -> tuple[int, int, int, float]:
        now = time.monotonic()
        return int(now * 1e8), 100, 50, now

    monkeypatch.setattr(provider, "_usage", usage)
    first, second = await asyncio.gather(provider.summary(), provider.summary())
    assert first["pods"] == []
    assert second["pods"][0]["cpu"]["usageNanoCores"] > 0
