"""``minik8s controller-manager`` as a real process: starts from a kubeconfig, stops on SIGTERM, and a
restart resyncs from the API without duplicating work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from minik8s.client.rest import Client
from tests.support.controllers import pods, replicaset
from tests.support.processes import ROOT, APIServer
from tests.support.waiting import wait_for


def _kubeconfig(path: Path, server: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": server}}],
        "users": [{"name": "test", "user": {}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    }))
    return path


def _start(kubeconfig: Path, log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen([sys.executable, "-m", "minik8s", "controller-manager", "--kubeconfig", str(kubeconfig),
                             "--controllers", "replicaset,garbagecollector", "--concurrent-workers", "2"],
                            stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


async def test_process_restart_resyncs_without_duplicating(client: Client, namespace: str, apiserver: APIServer,
                                                           tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", apiserver.url)
    log = tmp_path / "controller-manager.log"
    rs_rt, pod_rt = client.kind("apps/v1", "ReplicaSet"), client.kind("v1", "Pod")
    proc = _start(kubeconfig, log)
    try:
        await client.create(rs_rt, replicaset("web", 3, {"app": "web"}), namespace)

        async def count(n: int) -> bool:
            return len(await pods(client, namespace)) == n

        await wait_for(lambda: count(3), timeout=20, what="3 pods from the process")
        before = sorted(p["metadata"]["uid"] for p in await pods(client, namespace))
        proc.terminate()
        assert proc.wait(10) == 0
        proc = _start(kubeconfig, log)
        await wait_for(lambda: "caches synced" in log.read_text(), timeout=20, what="restarted controller-manager")
        await wait_for(lambda: count(3), what="still 3 pods")
        after = sorted(p["metadata"]["uid"] for p in await pods(client, namespace))
        assert after == before  # the restart neither created nor deleted anything
        await client.delete(pod_rt, (await pods(client, namespace))[0]["metadata"]["name"], namespace)
        await wait_for(lambda: count(3), what="replacement after restart")
        assert sorted(p["metadata"]["uid"] for p in await pods(client, namespace)) != before
    finally:
        proc.terminate()
        proc.wait(10)
    text = log.read_text()
    assert "controller-manager" in text and "Traceback" not in text
