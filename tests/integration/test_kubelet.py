"""Issue 3: the kubelet runs real pods on the real Docker Engine, against a real apiserver and etcd.

One kubelet process (``python -m minik8s kubelet``) serves the module: its own node name,
Docker network (subnet from 10.244.200.0/24 upward, the first one no Docker network
uses), root dir and short back-offs/periods.  Pods are created already bound
(``spec.nodeName``).  Everything created in Docker carries ``minik8s.io/node=<node>`` and
is removed at the end.  Traffic goes only to loopback and to the pods' containers.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import time
from collections.abc import Awaitable
from pathlib import Path

import docker
import httpx
import pytest

from minik8s.client.rest import Client
from tests.support.kubelet import (
    BUSYBOX,
    KubeletProcess,
    conditions,
    create_pod,
    cstatus,
    docker_client,
    events_of,
    exec_ws,
    get_pod,
    pod_body,
    pod_log,
    wait_phase,
)
from tests.support.processes import APIServer, free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker


# ---------------------------------------------------------------------------- node
async def test_node_registered_and_lease_renewed(kubelet: KubeletProcess, client: Client) -> None:
    node = await client.get(client.kind("v1", "Node"), kubelet.node)
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == kubelet.node
    assert labels["kubernetes.io/os"] == "linux" and labels["kubernetes.io/arch"] == "amd64"
    assert labels["zone"] == "z1" and labels["minik8s.io/test"] == "kubelet"
    assert {"key": "minik8s.io/test", "value": "yes", "effect": "PreferNoSchedule"} in node["spec"]["taints"]
    assert node["spec"]["podCIDR"] == kubelet.cidr
    status = node["status"]
    assert status["capacity"]["cpu"] == str(os.cpu_count())
    assert status["capacity"]["memory"].endswith("Ki") and status["capacity"]["pods"] == "110"
    assert status["allocatable"]["pods"] == "110"
    assert {"type": "InternalIP", "address": "127.0.0.1"} in status["addresses"]
    assert {"type": "Hostname", "address": kubelet.node} in status["addresses"]
    assert status["daemonEndpoints"]["kubeletEndpoint"]["Port"] == kubelet.port
    info = status["nodeInfo"]
    assert info["kubeletVersion"] == "v1.32.0-minik8s" and info["containerRuntimeVersion"].startswith("docker://")
    assert info["operatingSystem"] == "linux" and info["architecture"] == "amd64" and info["kernelVersion"]
    conds = {c["type"]: c for c in status["conditions"]}
    assert conds["Ready"]["status"] == "True" and conds["Ready"]["reason"] == "KubeletReady"
    for t in ("MemoryPressure", "DiskPressure", "PIDPressure"):
        assert conds[t]["status"] == "False"
    leases = client.kind("coordination.k8s.io/v1", "Lease")
    first = await client.get(leases, kubelet.node, "kube-node-lease")
    assert first["spec"]["holderIdentity"] == kubelet.node and first["spec"]["leaseDurationSeconds"] == 8

    async def renewed() -> bool:
        lease = await client.get(leases, kubelet.node, "kube-node-lease")
        return bool(lease["spec"]["renewTime"] != first["spec"]["renewTime"])
    await wait_for(renewed, 10, what="lease renewal")
    heartbeat = conds["Ready"]["lastHeartbeatTime"]

    async def status_posted() -> bool:
        n = await client.get(client.kind("v1", "Node"), kubelet.node)
        ready = next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
        return bool(ready["lastHeartbeatTime"] != heartbeat)
    await wait_for(status_posted, 10, what="node status update")


# ---------------------------------------------------------------------------- pods
async def test_pod_runs_with_shared_localhost_volume_and_limits(kubelet: KubeletProcess, client: Client,
                                                                namespace: str, apiserver: APIServer) -> None:
    host_port = free_port()
    body = pod_body("web", kubelet.node, [
        {"name": "web", "image": BUSYBOX,
         "command": ["sh", "-c", "mkdir -p /data/www && echo hello-from-web > /data/www/index.html && "
                                 "exec httpd -f -p 8080 -h /data/www"],
         "ports": [{"containerPort": 8080, "hostPort": host_port}],
         "env": [{"name": "GREETING", "value": "hi"}, {"name": "POD_NAME",
                                                       "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
         "resources": {"limits": {"cpu": "500m", "memory": "64Mi"}, "requests": {"cpu": "250m"}},
         "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
        {"name": "fetcher", "image": BUSYBOX, "workingDir": "/shared",
         "command": ["sh", "-c"],
         "args": ["while true; do timeout 5 wget -q -O- http://127.0.0.1:8080/ | sed 's/^/http:/'; "
                  "cat www/index.html | sed 's/^/file:/'; sleep 1; done"],
         "volumeMounts": [{"name": "data", "mountPath": "/shared", "readOnly": True}]},
    ], volumes=[{"name": "data", "emptyDir": {}}])
    started = time.monotonic()
    created = await create_pod(client, namespace, body)
    pod = await wait_phase(client, namespace, "web", "Running", 30)
    print(f"\npod create -> Running: {time.monotonic() - started:.2f}s")
    uid = created["metadata"]["uid"]
    status = pod["status"]
    assert ipaddress.ip_address(status["podIP"]) in ipaddress.ip_network(kubelet.cidr)
    assert status["podIPs"] == [{"ip": status["podIP"]}] and status["hostIP"] == "127.0.0.1"
    assert status["startTime"] and status["qosClass"] == "Burstable"
    for name in ("web", "fetcher"):
        cs = cstatus(pod, name)
        assert cs["state"]["running"]["startedAt"] and cs["restartCount"] == 0
        assert cs["containerID"].startswith("docker://") and cs["imageID"].startswith("docker://sha256:")
        assert cs["image"] == BUSYBOX

    async def ready() -> bool:
        return conditions(await get_pod(client, namespace, "web")).get("Ready") == "True"
    await wait_for(ready, 10, what="Ready")
    # localhost between containers and the shared emptyDir, seen through the apiserver's log proxy
    await wait_for(lambda: _contains(pod_log(apiserver, namespace, "web", container="fetcher"),
                                     "http:hello-from-web", "file:hello-from-web"), 20, what="fetcher output")
    tail = await pod_log(apiserver, namespace, "web", container="fetcher", tailLines=2, timestamps=True)
    lines = tail.strip().splitlines()
    assert len(lines) == 2 and lines[0][:4].isdigit() and "T" in lines[0].split()[0]
    # the hostPort is published on the pause container (loopback only)
    async with httpx.AsyncClient(trust_env=False) as http:
        assert (await http.get(f"http://127.0.0.1:{host_port}/", timeout=5)).text.strip() == "hello-from-web"
    # Docker view: labels, names, limits, network/ipc namespace of the pause container
    containers = {c.labels["io.kubernetes.container.name"]: c for c in kubelet.containers(**{
        "io.kubernetes.pod.uid": uid})}
    assert set(containers) == {"POD", "web", "fetcher"}
    pause, web = containers["POD"], containers["web"]
    assert pause.name == f"k8s_POD_web_{namespace}_{uid}_0" and web.name == f"k8s_web_web_{namespace}_{uid}_0"
    assert web.labels["io.kubernetes.pod.namespace"] == namespace and web.labels["minik8s.io/managed"] == "true"
    assert web.labels["io.kubernetes.container.restartCount"] == "0"
    host = web.attrs["HostConfig"]
    assert host["CpuQuota"] == 50000 and host["CpuPeriod"] == 100000 and host["Memory"] == 64 * 1024 * 1024
    assert host["CpuShares"] == 256
    assert host["NetworkMode"] == f"container:{pause.id}" and host["IpcMode"] == f"container:{pause.id}"
    assert pause.attrs["HostConfig"]["PortBindings"]["8080/tcp"][0]["HostPort"] == str(host_port)
    assert pause.attrs["NetworkSettings"]["Networks"][kubelet.network]["IPAddress"] == status["podIP"]
    assert "GREETING=hi" in web.attrs["Config"]["Env"] and "POD_NAME=web" in web.attrs["Config"]["Env"]
    assert containers["fetcher"].attrs["Config"]["WorkingDir"] == "/shared"
    assert (kubelet.root / "pods" / uid / "volumes" / "data" / "www" / "index.html").exists()
    # resource usage for the autoscaler (Summary API on the kubelet itself)
    async with httpx.AsyncClient(trust_env=False) as http:
        summary = (await http.get(f"http://127.0.0.1:{kubelet.port}/stats/summary", timeout=10)).json()
    assert summary["node"]["nodeName"] == kubelet.node and summary["node"]["memory"]["workingSetBytes"] > 0
    mine = next(p for p in summary["pods"] if p["podRef"]["uid"] == uid)
    assert {c["name"] for c in mine["containers"]} == {"web", "fetcher"}
    assert mine["memory"]["workingSetBytes"] > 0 and mine["cpu"]["usageCoreNanoSeconds"] > 0
    assert mine["cpu"]["usageNanoCores"] >= 0
    # events of the kubelet
    reasons = {(e["reason"], e["source"]["component"]) for e in await events_of(client, namespace, "web")}
    for reason in ("Pulled", "Created", "Started"):
        assert (reason, "kubelet") in reasons
    # the hostname of the pod is its name; exec through the apiserver (v5 and v4)
    out, err, st = await exec_ws(apiserver, namespace, "web", "web", ["sh", "-c", "hostname; echo oops >&2; exit 3"])
    assert out.decode().strip() == "web" and err.decode().strip() == "oops"
    assert st["status"] == "Failure" and st["reason"] == "NonZeroExitCode"
    assert st["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]
    out, _, st = await exec_ws(apiserver, namespace, "web", "fetcher", ["cat"], stdin=b"through stdin\n")
    assert out == b"through stdin\n" and st == {"metadata": {}, "status": "Success"}
    out, _, st = await exec_ws(apiserver, namespace, "web", "fetcher", ["ls", "/shared/www"],
                               protocol="v4.channel.k8s.io")
    assert out.decode().split() == ["index.html"] and st["status"] == "Success"
    _, err, st = await exec_ws(apiserver, namespace, "web", "fetcher", ["sh", "-c", "echo x > /shared/y"])
    assert st["status"] == "Failure" and b"Read-only" in err


async def _contains(text: Awaitable[str], *needles: str) -> bool:
    got = await text
    return all(n in got for n in needles)


async def test_logs_follow_and_errors(kubelet: KubeletProcess, client: Client, namespace: str,
                                      apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("ticker", kubelet.node, [
        {"name": "tick", "image": BUSYBOX, "command": ["sh", "-c", "i=0; while true; do echo tick-$i; "
                                                                   "i=$((i+1)); sleep 0.3; done"]}]))
    await wait_phase(client, namespace, "ticker", "Running")
    got = ""
    async with httpx.AsyncClient(base_url=apiserver.url, timeout=10) as http:
        async with http.stream("GET", f"/api/v1/namespaces/{namespace}/pods/ticker/log",
                               params={"follow": "true", "tailLines": "1"}) as resp:
            assert resp.status_code == 200
            async for chunk in resp.aiter_text():
                got += chunk
                if got.count("tick-") >= 4:
                    break
    numbers = [int(x.split("-")[1]) for x in got.split() if x.startswith("tick-")]
    assert numbers == sorted(numbers) and len(numbers) >= 4
    assert "400" in await pod_log(apiserver, namespace, "ticker", container="nope")
    assert "previous terminated container" in await pod_log(apiserver, namespace, "ticker", previous=True)
    assert "tick-0" in await pod_log(apiserver, namespace, "ticker", limitBytes=100)


async def test_crash_loop_back_off(kubelet: KubeletProcess, client: Client, namespace: str,
                                   apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("crasher", kubelet.node, [
        {"name": "crash", "image": BUSYBOX, "command": ["sh", "-c", "echo boom-$(date +%s%N); exit 3"]}]))
    seen: set[str] = set()
    messages: set[str] = set()

    async def restarted() -> bool:
        pod = await get_pod(client, namespace, "crasher")
        cs = cstatus(pod, "crash")
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            seen.add(waiting["reason"])
            messages.add(waiting.get("message") or "")
        return cs.get("restartCount", 0) >= 4 and "CrashLoopBackOff" in seen
    await wait_for(restarted, 40, interval=0.1, what="4 restarts with CrashLoopBackOff")
    pod = await get_pod(client, namespace, "crasher")
    assert pod["status"]["phase"] == "Running"  # restartPolicy Always: crash-looping pods are Running
    last = cstatus(pod, "crash")["lastState"]["terminated"]
    assert last["exitCode"] == 3 and last["reason"] == "Error" and last["startedAt"] and last["finishedAt"]
    assert any("back-off 2s" in m or "back-off 4s" in m for m in messages), messages  # the delay doubles
    assert "boom-" in await pod_log(apiserver, namespace, "crasher", previous=True)
    # only the newest dead container of each restart chain is kept (plus the current one)
    uid = pod["metadata"]["uid"]
    app = [c for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid})
           if c.labels["io.kubernetes.container.name"] == "crash"]
    assert 1 <= len(app) <= 2
    reasons = {e["reason"] for e in await events_of(client, namespace, "crasher")}
    assert "BackOff" in reasons
    backoff = [e for e in await events_of(client, namespace, "crasher") if e["reason"] == "BackOff"]
    assert "Back-off restarting failed container crash" in backoff[0]["message"]


async def test_restart_policies(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    await create_pod(client, namespace, pod_body("ok-never", kubelet.node, [
        {"name": "a", "image": BUSYBOX, "command": ["true"]}], restartPolicy="Never"))
    await create_pod(client, namespace, pod_body("fail-never", kubelet.node, [
        {"name": "a", "image": BUSYBOX, "command": ["sh", "-c", "exit 2"]},
        {"name": "b", "image": BUSYBOX, "command": ["true"]}], restartPolicy="Never"))
    await create_pod(client, namespace, pod_body("flaky-onfailure", kubelet.node, [
        {"name": "a", "image": BUSYBOX,
         "command": ["sh", "-c", "if [ -f /d/once ]; then exit 0; fi; touch /d/once; exit 1"],
         "volumeMounts": [{"name": "d", "mountPath": "/d"}]}],
        restartPolicy="OnFailure", volumes=[{"name": "d", "emptyDir": {}}]))
    pod = await wait_phase(client, namespace, "ok-never", "Succeeded")
    term = cstatus(pod, "a")["state"]["terminated"]
    assert term["reason"] == "Completed" and term["exitCode"] == 0
    assert conditions(pod)["Ready"] == "False"
    pod = await wait_phase(client, namespace, "fail-never", "Failed")
    assert cstatus(pod, "a")["state"]["terminated"]["exitCode"] == 2 and cstatus(pod, "a")["restartCount"] == 0
    pod = await wait_phase(client, namespace, "flaky-onfailure", "Succeeded")
    assert cstatus(pod, "a")["restartCount"] == 1
    assert cstatus(pod, "a")["lastState"]["terminated"]["exitCode"] == 1
    # a finished pod keeps no running sandbox (stopped right after the status write that says Succeeded)
    uid = pod["metadata"]["uid"]

    async def all_stopped() -> bool:
        return not [c for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid}) if c.status == "running"]
    await wait_for(all_stopped, 10, what="no running container of a finished pod")


async def test_init_containers_run_first(kubelet: KubeletProcess, client: Client, namespace: str,
                                         apiserver: APIServer) -> None:
    mount = [{"name": "d", "mountPath": "/d"}]
    await create_pod(client, namespace, pod_body("inits", kubelet.node, [
        {"name": "app", "image": BUSYBOX, "command": ["sh", "-c", "cat /d/log; exec sleep 600"],
         "volumeMounts": mount}],
        initContainers=[
            {"name": "first", "image": BUSYBOX, "command": ["sh", "-c", "sleep 1; echo first > /d/log"],
             "volumeMounts": mount},
            {"name": "second", "image": BUSYBOX, "command": ["sh", "-c", "echo second >> /d/log"],
             "volumeMounts": mount}],
        volumes=[{"name": "d", "emptyDir": {}}]))

    async def initialising() -> bool:
        pod = await get_pod(client, namespace, "inits")
        return pod["status"].get("phase") == "Pending" and conditions(pod).get("Initialized") == "False"
    await wait_for(initialising, 10, what="Pending while the init containers run")
    pod = await wait_phase(client, namespace, "inits", "Running")
    assert conditions(pod)["Initialized"] == "True"
    assert [s["state"]["terminated"]["reason"] for s in pod["status"]["initContainerStatuses"]] == [
        "Completed", "Completed"]
    await wait_for(lambda: _contains(pod_log(apiserver, namespace, "inits"), "first\nsecond"), 10,
                   what="init output")


async def test_liveness_probe_restarts(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    await create_pod(client, namespace, pod_body("live", kubelet.node, [
        {"name": "sick", "image": BUSYBOX,
         "command": ["sh", "-c", "touch /tmp/ok; sleep 2; rm /tmp/ok; exec sleep 600"],
         "livenessProbe": {"exec": {"command": ["cat", "/tmp/ok"]}, "periodSeconds": 1, "failureThreshold": 2}},
        {"name": "healthy", "image": BUSYBOX, "command": ["httpd", "-f", "-p", "8081", "-h", "/"],
         "ports": [{"name": "http", "containerPort": 8081}],
         "livenessProbe": {"tcpSocket": {"port": "http"}, "initialDelaySeconds": 1, "periodSeconds": 1,
                           "failureThreshold": 2}},
    ]))

    async def restarted() -> bool:
        return bool(cstatus(await get_pod(client, namespace, "live"), "sick").get("restartCount", 0) >= 1)
    await wait_for(restarted, 30, what="liveness restart")
    pod = await get_pod(client, namespace, "live")
    assert cstatus(pod, "healthy")["restartCount"] == 0
    assert cstatus(pod, "sick")["lastState"]["terminated"]["exitCode"] in (137, 143)
    events = await events_of(client, namespace, "live")
    unhealthy = [e for e in events if e["reason"] == "Unhealthy"]
    assert unhealthy and unhealthy[0]["message"].startswith("Liveness probe failed")
    assert unhealthy[0]["involvedObject"]["fieldPath"] == "spec.containers{sick}"
    assert any(e["reason"] == "Killing" and "failed liveness probe" in e["message"] for e in events)


async def test_readiness_probe_drives_ready(kubelet: KubeletProcess, client: Client, namespace: str,
                                            apiserver: APIServer) -> None:
    await create_pod(client, namespace, pod_body("ready", kubelet.node, [
        {"name": "web", "image": BUSYBOX,
         "command": ["sh", "-c", "mkdir -p /www; exec httpd -f -p 8080 -h /www"],
         "readinessProbe": {"httpGet": {"path": "/index.html", "port": 8080}, "periodSeconds": 1,
                            "failureThreshold": 1}},
        {"name": "side", "image": BUSYBOX, "command": ["sleep", "600"]},
    ]))
    pod = await wait_phase(client, namespace, "ready", "Running")
    await asyncio.sleep(1.5)
    pod = await get_pod(client, namespace, "ready")
    assert conditions(pod)["Ready"] == "False" and conditions(pod)["ContainersReady"] == "False"
    assert cstatus(pod, "web")["ready"] is False and cstatus(pod, "side")["ready"] is True
    ready_cond = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert ready_cond["reason"] == "ContainersNotReady" and "[web]" in ready_cond["message"]
    _, _, st = await exec_ws(apiserver, namespace, "ready", "web", ["sh", "-c", "echo up > /www/index.html"])
    assert st["status"] == "Success"

    async def is_ready() -> bool:
        return conditions(await get_pod(client, namespace, "ready")).get("Ready") == "True"
    await wait_for(is_ready, 15, what="Ready=True")
    await exec_ws(apiserver, namespace, "ready", "web", ["rm", "/www/index.html"])

    async def unready() -> bool:
        return conditions(await get_pod(client, namespace, "ready")).get("Ready") == "False"
    await wait_for(unready, 15, what="Ready=False again")


async def test_graceful_delete(kubelet: KubeletProcess, client: Client, namespace: str, tmp_path: Path) -> None:
    marker_dir = tmp_path / "out"
    created = await create_pod(client, namespace, pod_body("graceful", kubelet.node, [
        {"name": "app", "image": BUSYBOX,
         "command": ["sh", "-c", "trap 'echo got-TERM >> /out/marker; exit 0' TERM; "
                                 "while true; do sleep 0.2; done"],
         "lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "echo started > /out/poststart"]}},
                       "preStop": {"exec": {"command": ["sh", "-c", "echo pre-stop >> /out/marker"]}}},
         "volumeMounts": [{"name": "out", "mountPath": "/out"}, {"name": "scratch", "mountPath": "/scratch"}]},
    ], terminationGracePeriodSeconds=20,
        volumes=[{"name": "out", "hostPath": {"path": str(marker_dir), "type": "DirectoryOrCreate"}},
                 {"name": "scratch", "emptyDir": {}}]))
    uid = created["metadata"]["uid"]
    await wait_phase(client, namespace, "graceful", "Running")
    assert marker_dir.is_dir() and (kubelet.root / "pods" / uid).exists()
    assert (marker_dir / "poststart").read_text().strip() == "started"
    started = time.monotonic()
    await client.delete(client.kind("v1", "Pod"), "graceful", namespace)

    async def gone() -> bool:
        try:
            await get_pod(client, namespace, "graceful")
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__ == "NotFound"
        return False
    await wait_for(gone, 20, what="pod object removed")
    assert time.monotonic() - started < 10  # the container exited on SIGTERM, not after 20 s
    assert (marker_dir / "marker").read_text().split() == ["pre-stop", "got-TERM"]
    assert kubelet.containers(**{"io.kubernetes.pod.uid": uid}) == []
    assert not (kubelet.root / "pods" / uid).exists()
    assert any(e["reason"] == "Killing" for e in await events_of(client, namespace, "graceful"))


async def test_missing_image_does_not_harm_other_pods(kubelet: KubeletProcess, client: Client,
                                                      namespace: str) -> None:
    # a registry on loopback that refuses connections: the pull fails at once, without leaving the machine
    await create_pod(client, namespace, pod_body("pull-fails", kubelet.node, [
        {"name": "app", "image": "127.0.0.1:1/minik8s/missing:v1"}]))
    await create_pod(client, namespace, pod_body("never-pull", kubelet.node, [
        {"name": "app", "image": "minik8s/missing:never", "imagePullPolicy": "Never"}]))
    await create_pod(client, namespace, pod_body("fine", kubelet.node, [
        {"name": "app", "image": BUSYBOX, "command": ["sleep", "600"]}]))
    reasons: set[str] = set()

    async def pull_reasons() -> bool:
        pod = await get_pod(client, namespace, "pull-fails")
        reason = ((cstatus(pod, "app").get("state") or {}).get("waiting") or {}).get("reason")
        if reason:
            reasons.add(reason)
        return {"ErrImagePull", "ImagePullBackOff"} <= reasons
    await wait_for(pull_reasons, 20, interval=0.1, what="ErrImagePull then ImagePullBackOff")
    await wait_phase(client, namespace, "fine", "Running")
    pod = await get_pod(client, namespace, "pull-fails")
    assert pod["status"]["phase"] == "Pending"
    never = await get_pod(client, namespace, "never-pull")
    assert cstatus(never, "app")["state"]["waiting"]["reason"] == "ErrImageNeverPull"
    events = await events_of(client, namespace, "pull-fails")
    assert any(e["reason"] == "Pulling" for e in events)
    assert any(e["reason"] == "Failed" and "Failed to pull image" in e["message"] for e in events)
    assert any(e["reason"] == "BackOff" and "Back-off pulling image" in e["message"] for e in events)


async def test_orphan_containers_are_removed(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    labels = {"minik8s.io/managed": "true", "minik8s.io/node": kubelet.node,
              "io.kubernetes.pod.uid": "0000-orphan", "io.kubernetes.pod.name": "ghost",
              "io.kubernetes.pod.namespace": namespace, "io.kubernetes.container.name": "POD",
              "io.kubernetes.container.restartCount": "0"}
    orphan = docker_client().containers.run("minik8s/pause:latest", detach=True, network_mode="none", labels=labels,
                                      name=f"k8s_POD_ghost_{namespace}_0000-orphan_0")

    async def removed() -> bool:
        return not kubelet.containers(**{"io.kubernetes.pod.uid": "0000-orphan"})
    try:
        await wait_for(removed, 20, what="orphan removed")
    finally:
        try:
            orphan.remove(force=True)
        except docker.errors.NotFound:
            pass


async def test_kubelet_restart_adopts_containers(kubelet: KubeletProcess, client: Client, namespace: str) -> None:
    created = await create_pod(client, namespace, pod_body("steady", kubelet.node, [
        {"name": "app", "image": BUSYBOX,
         "command": ["sh", "-c", "if [ -f /d/ran ]; then exec sleep 600; fi; touch /d/ran; exit 1"],
         "volumeMounts": [{"name": "d", "mountPath": "/d"}],
         "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 1}}],
        volumes=[{"name": "d", "emptyDir": {}}]))
    uid = created["metadata"]["uid"]

    async def settled() -> bool:
        pod = await get_pod(client, namespace, "steady")
        cs = cstatus(pod, "app")
        return bool(cs.get("restartCount") == 1 and "running" in (cs.get("state") or {})
                    and conditions(pod).get("Ready") == "True")
    await wait_for(settled, 30, what="one restart then running and ready")
    before = {c.id: c.status for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid})}
    kubelet.stop()
    await asyncio.sleep(1)
    assert {c.id: c.status for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid})} == before
    kubelet.start()
    await asyncio.sleep(5)  # more than two sync periods
    after = {c.id: c.status for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid})}
    assert after == before  # adopted: nothing recreated, nothing duplicated
    pod = await get_pod(client, namespace, "steady")
    assert cstatus(pod, "app")["restartCount"] == 1 and pod["status"]["phase"] == "Running"
    assert conditions(pod)["Ready"] == "True"


async def test_pods_survive_an_apiserver_outage(kubelet: KubeletProcess, client: Client, namespace: str,
                                                apiserver: APIServer) -> None:
    created = await create_pod(client, namespace, pod_body("survivor", kubelet.node, [
        {"name": "app", "image": BUSYBOX, "command": ["sleep", "600"]}]))
    await wait_phase(client, namespace, "survivor", "Running")
    uid = created["metadata"]["uid"]
    running = {c.id for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid}) if c.status == "running"}
    apiserver.stop()
    try:
        await asyncio.sleep(6)
        assert {c.id for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid})
                if c.status == "running"} == running
        assert kubelet.proc is not None and kubelet.proc.poll() is None
    finally:
        apiserver.start()
    await create_pod(client, namespace, pod_body("after-outage", kubelet.node, [
        {"name": "app", "image": BUSYBOX, "command": ["sleep", "600"]}]))
    await wait_phase(client, namespace, "after-outage", "Running", 40)
    assert {c.id for c in kubelet.containers(**{"io.kubernetes.pod.uid": uid}) if c.status == "running"} == running
